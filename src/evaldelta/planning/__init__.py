"""Planning: what sample would settle the question, and drawing it.

:mod:`evaldelta.planning.plan` sizes a comparison (pairs per slice, detectable effects),
:mod:`evaldelta.planning.allocation` spreads a budget of cases over slices, and
:mod:`evaldelta.planning.sampling` draws a stratified, weighted sample of a traffic log.
"""

from typing import TYPE_CHECKING

from evaldelta._util._lazy import lazy_names

if TYPE_CHECKING:  # the names, for type checkers; at run time each loads on first use
    from evaldelta.planning.plan import (
        PLAN_SCHEMA_VERSION,
        Allocation,
        PairPlan,
        Plan,
        SliceAllocation,
        SlicePlan,
        allocate,
        check_design,
        plan_from_comparison,
        plan_from_pilot,
        plan_from_summary,
    )
    from evaldelta.planning.sampling import Band, SampleResult, StratumSample, parse_band, sample

# Loaded on first use: ``evaldelta sample`` needs the sampler, not the planner's imports
_WHERE = {
    "PLAN_SCHEMA_VERSION": "evaldelta.planning.plan",
    "Allocation": "evaldelta.planning.plan",
    "PairPlan": "evaldelta.planning.plan",
    "Plan": "evaldelta.planning.plan",
    "SliceAllocation": "evaldelta.planning.plan",
    "SlicePlan": "evaldelta.planning.plan",
    "allocate": "evaldelta.planning.plan",
    "check_design": "evaldelta.planning.plan",
    "plan_from_comparison": "evaldelta.planning.plan",
    "plan_from_pilot": "evaldelta.planning.plan",
    "plan_from_summary": "evaldelta.planning.plan",
    "Band": "evaldelta.planning.sampling",
    "SampleResult": "evaldelta.planning.sampling",
    "StratumSample": "evaldelta.planning.sampling",
    "parse_band": "evaldelta.planning.sampling",
    "sample": "evaldelta.planning.sampling",
}

__all__ = [
    "PLAN_SCHEMA_VERSION",
    "Allocation",
    "Band",
    "PairPlan",
    "Plan",
    "SampleResult",
    "SliceAllocation",
    "SlicePlan",
    "StratumSample",
    "allocate",
    "check_design",
    "parse_band",
    "plan_from_comparison",
    "plan_from_pilot",
    "plan_from_summary",
    "sample",
]

__getattr__, __dir__ = lazy_names("evaldelta.planning", _WHERE, globals())
