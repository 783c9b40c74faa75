"""The plan section of the reports: what sample would settle each open slice.

A slice is open when its interval contains zero, or, when a gate policy ran, when its
``max_regression`` rule is inconclusive. For each open paired slice two numbers, labelled:

- **pairs to settle**: the paired n at which the interval would clear the bound ``b`` the
  slice is open against (the gate's ``-margin`` when its rule is inconclusive, else zero),
  if the observed delta ``d`` and the per-pair sd ``s`` held: the half-width
  ``z s / sqrt(n)`` falls below ``|d - b|`` at ``n = ceil((z s / |d - b|)^2)`` (normal
  approximation; ``z`` the interval's quantile; ``s = sqrt(psi - d^2)`` for binary pairs
  with discordant share ``psi``);
- **pairs to detect**: the paired n that detects ``d`` at 80% power, alpha 0.05 two-sided
  (``stats.required_pairs``, exact noncentral t; ``stats.required_pairs_mcnemar``, Connor
  1987, for binary pairs), beside the minimum detectable effect at today's n.

Pure arithmetic on the Comparison's numbers through :mod:`evaldelta.stats`; no I/O.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from scipy.stats import norm

from evaldelta import stats
from evaldelta.gate import Verdict
from evaldelta.model import SliceDelta
from evaldelta.report._format import fmt_delta

__all__ = ["PLAN_NOTE", "PlanRow", "inconclusive_slices", "plan_rows"]

POWER = 0.8
ALPHA = 0.05

PLAN_NOTE = (
    "Pairs to settle: the paired n at which the interval's half-width z·s/√n would fall "
    "below |d − b|, so the interval clears the bound b, if the observed delta d and per-pair "
    "sd s held: n = ⌈(z·s / |d − b|)²⌉ (b = −margin where the gate's max_regression rule "
    "is inconclusive, else 0; z the interval's normal quantile; s = √(ψ − d²) for pass/fail "
    "pairs with discordant share ψ). Pairs to detect: the paired n that detects d at 80% "
    "power, alpha 0.05 two-sided (paired t from the noncentral t, or McNemar after Connor "
    "1987), the same arithmetic as `evaldelta plan`; MDE: the smallest delta detectable at "
    "today's n. n/a when the observed delta sits on the bound or the slice has no spread to "
    "estimate from."
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
) -> dict[str, float | None]:
    """Slices whose ``max_regression`` rule was inconclusive for this pair, with the bound."""
    if verdict is None or verdict.metric != metric or verdict.by != by:
        return {}
    return {
        r.slice: r.bound
        for r in verdict.rules
        if r.rule == "max_regression"
        and r.outcome == "inconclusive"
        and r.candidate == candidate
        and r.slice is not None
    }


def _quiet(fn: Callable[[], float]) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return float(fn())
        except (ValueError, ArithmeticError):
            return math.nan


def _count(value: float) -> str:
    return f"{math.ceil(value):,}" if math.isfinite(value) else "n/a"


def _sd_and_discordance(d: SliceDelta, single: bool) -> tuple[float, float | None]:
    """The per-pair sd of the delta, and (binary pairs) the discordant share psi."""
    res = d.paired
    n = d.n_pairs
    if res is None or n == 0:
        return math.nan, None
    if single and d.table is not None:
        psi = (d.table.only_baseline + d.table.only_candidate) / n
        delta = (d.table.only_candidate - d.table.only_baseline) / n
        return math.sqrt(max(psi - delta * delta, 0.0)), psi
    return res.se * math.sqrt(n), None


def pairs_to_settle(estimate: float, bound: float, sd: float, confidence: float) -> float:
    """``(z sd / |estimate - bound|)^2``, unrounded; NaN when undefined (see module doc)."""
    gap = abs(estimate - bound)
    if not (math.isfinite(gap) and math.isfinite(sd)) or gap == 0 or sd <= 0:
        return math.nan
    z = float(norm.ppf(0.5 + confidence / 2))
    return (z * sd / gap) ** 2


def _row(
    d: SliceDelta, why: str, bound: float | None, binary: bool, single: bool, confidence: float
) -> PlanRow:
    if d.paired is None:  # pragma: no cover - callers pass paired slices only
        raise RuntimeError(f"plan row for an unpaired slice {d.slice!r}")
    est, n = d.paired.estimate, d.n_pairs
    sd, psi = _sd_and_discordance(d, single)
    b = bound if bound is not None else 0.0
    settle = pairs_to_settle(est, b, sd, confidence)
    if single and d.table is not None and psi is not None:
        t = d.table
        detect = _quiet(
            lambda: stats.required_pairs_mcnemar(t.only_candidate / n, t.only_baseline / n).n
        )
        mde = _quiet(lambda: stats.mde_mcnemar(n, psi))
        method = "McNemar (Connor 1987)"
    else:
        detect = _quiet(lambda: stats.required_pairs(abs(est), sd).n)
        mde = _quiet(lambda: stats.mde_paired_t(n, sd))
        method = "paired t (noncentral t)"
    return PlanRow(
        slice=d.slice,
        why=why,
        n_now=f"{n:,}",
        observed=fmt_delta(est, binary),
        bound=("gate " + fmt_delta(b, binary)) if bound is not None else "zero",
        n_settle=_count(settle),
        mde=fmt_delta(mde, binary) if math.isfinite(mde) else "n/a",
        n_detect=_count(detect),
        method=method,
    )


def plan_rows(
    slices: Sequence[SliceDelta],
    *,
    binary: bool,
    single: bool,
    confidence: float,
    inconclusive: dict[str, float | None],
) -> list[PlanRow]:
    """One row per open paired slice, in the given order (see the module doc)."""
    rows = []
    for d in slices:
        res = d.paired
        if res is None or not math.isfinite(res.ci.low):
            continue
        contains_zero = res.ci.low <= 0 <= res.ci.high
        if d.slice in inconclusive:
            bound = inconclusive[d.slice]
            why = "gate inconclusive"
        elif contains_zero:
            bound = None  # a gate rule on it (if any) is settled; the open question is zero
            why = "interval contains zero"
        else:
            continue
        rows.append(_row(d, why, bound, binary, single, confidence))
    return rows
