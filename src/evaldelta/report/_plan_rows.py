"""The plan section of the reports: what sample would settle each open slice.

A slice is open when its interval contains zero, or, when a gate policy ran, when its
``max_regression`` rule is inconclusive. For each open paired slice two numbers, labelled:

- **pairs to settle**: the paired n at which the slice's own interval would clear the bound
  ``b`` it is open against (the gate's ``-margin`` when its rule is inconclusive, else
  zero), if the observed delta ``d`` and its spread held: the paired t interval with
  ``t_{n-1}`` (``stats.pairs_to_clear_t``) or the paired binary interval on the 2x2 table
  scaled to n (``stats.pairs_to_clear_paired_binary``, Newcombe 1998 or Wald, whichever the
  slice used). Never fewer than the slice has while its interval contains the bound;
- **pairs to detect**: the paired n that detects ``d`` at 80% power, alpha 0.05 two-sided
  (``stats.required_pairs``, exact noncentral t; ``stats.required_pairs_mcnemar``, exact
  McNemar power, with Connor's 1987 normal approximation beside it), and the minimum
  detectable effect at today's n.

Pure arithmetic on the Comparison's numbers through :mod:`evaldelta.stats`; no I/O.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from evaldelta import stats
from evaldelta.comparison.model import SliceDelta
from evaldelta.gating import Verdict
from evaldelta.report._format import fmt_delta

__all__ = ["PLAN_NOTE", "PlanRow", "inconclusive_slices", "plan_rows"]

POWER = 0.8
ALPHA = 0.05

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


def _quiet_result(fn: Callable[[], stats.PowerResult]) -> stats.PowerResult | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn()
        except (ValueError, ArithmeticError):
            return None


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


def pairs_to_settle(d: SliceDelta, bound: float, sd: float, confidence: float) -> float:
    """Pairs at which ``d``'s own interval would clear ``bound`` (see the module doc).

    NaN when undefined, and at least ``n_now + 1`` while the interval contains the bound.
    """
    res = d.paired
    if res is None:
        return math.nan
    if d.table is not None and res.interval is not None:
        t = d.table
        n = stats.pairs_to_clear_paired_binary(
            t.both_pass,
            t.only_baseline,
            t.only_candidate,
            t.both_fail,
            bound,
            confidence,
            res.interval,
        )
    elif math.isfinite(sd) and sd > 0:
        n = stats.pairs_to_clear_t(res.estimate, bound, sd, confidence)
    else:
        return math.nan
    if not math.isfinite(n):
        return math.nan
    if math.isfinite(res.ci.low) and res.ci.low <= bound <= res.ci.high:
        n = max(n, d.n_pairs + 1.0)
    return n


def _row(
    d: SliceDelta, why: str, bound: float | None, binary: bool, single: bool, confidence: float
) -> PlanRow:
    if d.paired is None:  # pragma: no cover - callers pass paired slices only
        raise RuntimeError(f"plan row for an unpaired slice {d.slice!r}")
    est, n = d.paired.estimate, d.n_pairs
    sd, psi = _sd_and_discordance(d, single)
    b = bound if bound is not None else 0.0
    settle = pairs_to_settle(d, b, sd, confidence)
    if single and d.table is not None and psi is not None:
        t = d.table
        power = _quiet_result(
            lambda: stats.required_pairs_mcnemar(t.only_candidate / n, t.only_baseline / n)
        )
        detect = math.nan if power is None else float(power.n)
        mde = _quiet(lambda: stats.mde_mcnemar(n, psi))
        method = "exact McNemar" + (
            f" (Connor 1987 normal approx.: {_count(power.n_normal)})" if power else ""
        )
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
