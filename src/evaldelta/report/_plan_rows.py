"""The plan section of the reports: what sample would settle each open slice, formatted.

A slice is open when its interval contains zero, or, when a gate policy ran, when the rule
that bounds its delta (``max_regression``, found by ``Rule.margin_on``, never by name) is
inconclusive. The numbers are the Comparison's and the Verdict's: each paired slice's plan
against zero (``SliceDelta.plan``) and, for an inconclusive rule, its plan against the
gate's ``-margin`` (``RuleResult.plan``), both computed in :mod:`evaldelta.comparison._settle`.
This module only chooses which applies and formats it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evaldelta.comparison.model import SliceDelta, SlicePlan
from evaldelta.report._format import fmt_delta

if TYPE_CHECKING:
    from evaldelta.gating import RuleResult, Verdict

__all__ = ["PLAN_NOTE", "PLAN_SEQUENTIAL", "PlanRow", "inconclusive_slices", "plan_rows"]

PLAN_NOTE = (
    "Pairs to settle: the paired n at which this slice's own interval would clear the bound "
    "b if the observed delta d and its spread held (b = −margin where the gate's "
    "max_regression rule is inconclusive, else 0): the paired t interval d ± t(n−1)·s/√n "
    "for scores, or the paired pass/fail interval (Newcombe 1998, or Wald if chosen) on the "
    "2×2 table scaled to n; never fewer than the slice has while its interval contains b. "
    "Pairs to detect: the paired n that detects d at 80% power, alpha 0.05 two-sided "
    "(paired t from the noncentral t, or the exact McNemar test with Connor's 1987 normal "
    "approximation beside it), the same arithmetic as `evaldelta plan`; MDE: the smallest "
    "delta detectable at today's n. n/a when the observed delta sits on the bound or the "
    "slice has no spread to estimate from."
)

# a sequential comparison's plan: the figures above are a fixed design's, not the sequence's
PLAN_SEQUENTIAL = (
    "These are a fixed design's pairs (a fixed-sample interval), not a confidence "
    "sequence's: the sequence is wider on the same cases, so it settles a slice later."
)


@dataclass(frozen=True)
class PlanRow:
    """What sample would settle one open slice (all numbers formatted)."""

    slice: str
    why: str
    n_now: str
    observed: str
    bound: str
    n_settle: str
    mde: str
    n_detect: str
    method: str


def inconclusive_slices(
    verdict: Verdict | None, metric: str, by: str, candidate: str
) -> dict[str, RuleResult]:
    """Slices whose delta-bounding rule was inconclusive for this pair, with its result."""
    from evaldelta.gating.rules import rule_of

    if verdict is None or verdict.metric != metric or verdict.by != by:
        return {}
    out = {}
    for r in verdict.rules:
        rule = rule_of(r.rule)
        if (
            rule is not None
            and rule.margin_on == "slice"
            and r.outcome == "inconclusive"
            and r.candidate == candidate
            and r.slice is not None
        ):
            out[r.slice] = r
    return out


def _count(value: float) -> str:
    return f"{math.ceil(value):,}" if math.isfinite(value) else "n/a"


def _method(plan: SlicePlan) -> str:
    if plan.test == "paired_t":
        return "paired t (noncentral t)"
    normal = plan.pairs_to_detect_normal
    return "exact McNemar" + (
        f" (Connor 1987 normal approx.: {_count(normal)})" if normal is not None else ""
    )


def _row(d: SliceDelta, why: str, plan: SlicePlan, gate: bool, binary: bool) -> PlanRow:
    if d.paired is None:  # pragma: no cover - callers pass paired slices only
        raise RuntimeError(f"plan row for an unpaired slice {d.slice!r}")
    return PlanRow(
        slice=d.slice,
        why=why,
        n_now=f"{d.n_pairs:,}",
        observed=fmt_delta(d.paired.estimate, binary),
        bound=("gate " + fmt_delta(plan.bound, binary)) if gate else "zero",
        n_settle=_count(plan.pairs_to_settle),
        mde=fmt_delta(plan.mde, binary) if math.isfinite(plan.mde) else "n/a",
        n_detect=_count(plan.pairs_to_detect),
        method=_method(plan),
    )


def plan_rows(
    slices: Sequence[SliceDelta], *, binary: bool, inconclusive: dict[str, RuleResult]
) -> list[PlanRow]:
    """One row per open paired slice, in the given order (see the module doc)."""
    rows = []
    for d in slices:
        res = d.paired
        if res is None or not math.isfinite(res.ci.low):
            continue
        gate = inconclusive.get(d.slice)
        if gate is not None and gate.plan is not None:
            rows.append(_row(d, "gate inconclusive", gate.plan, gate.bound is not None, binary))
        elif d.plan is not None and res.ci.low <= 0 <= res.ci.high:
            # a gate rule on it (if any) is settled; the open question is zero
            rows.append(_row(d, "interval contains zero", d.plan, False, binary))
    return rows
