"""Planning: what sample would settle the question, and drawing it.

:mod:`evaldelta.planning.plan` sizes a comparison (pairs per slice, detectable effects),
:mod:`evaldelta.planning.allocation` spreads a budget of cases over slices, and
:mod:`evaldelta.planning.sampling` draws a stratified, weighted sample of a traffic log.
"""

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
