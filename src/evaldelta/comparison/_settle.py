"""What sample would settle each open slice, and the share sweeps: computed with the Comparison.

The reports print these numbers (the HTML plan rows and sweep panels) and the JSON carries
them, so they are computed once, here, when the Comparison is built, not while rendering.

Every paired slice with an interval gets its plan against zero (the reports show it where
the interval contains zero); the gate adds, for the slices its ``max_regression`` rule finds
inconclusive, the pairs to settle against its ``-margin`` (:func:`slice_plan` with that bound
and the slice's plan, in :mod:`evaldelta.gating.rules.max_regression`): only that figure
depends on the gate, so the costly search for pairs to detect runs once, here.

- **pairs to settle**: the paired n at which the slice's own interval would clear the bound
  ``b`` if the observed delta ``d`` and its spread held: the paired t interval with
  ``t_{n-1}`` (``stats.pairs_to_clear_t``) or the paired binary interval on the 2x2 table
  scaled to n (``stats.pairs_to_clear_paired_binary``, Newcombe 1998 or Wald, whichever the
  slice used). Never fewer than the slice has while its interval contains the bound;
- **pairs to detect**: the paired n that detects ``d`` at 80% power, alpha 0.05 two-sided
  (``stats.required_pairs``, exact noncentral t; ``stats.required_pairs_mcnemar``, exact
  McNemar power, with Connor's 1987 normal approximation beside it), and the minimum
  detectable effect at today's n.

The sweeps: the headline mix's most relevant slices (:func:`sweep_choice`), each swept from
0 to 100% of the mix by :func:`evaldelta.stats.share_sweep`.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable, Sequence

from evaldelta import stats
from evaldelta.comparison._planning_model import ShareSweep, SlicePlan, SweepPoint, SweepReason
from evaldelta.comparison.model import ArmSlice, PairComparison, SliceDelta
from evaldelta.comparison.ordering import headline_standardized, ordered_slices, sign_flip

__all__ = [
    "SWEEP_PANELS",
    "pairs_to_settle",
    "share_sweeps",
    "slice_plan",
    "sweep_choice",
    "with_plans",
]

SWEEP_POINTS = 101  # shares 0%, 1%, ..., 100%
SWEEP_PANELS = 4  # slices swept, by relevance


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


def _sd_and_discordance(d: SliceDelta) -> tuple[float, float | None]:
    """The per-pair sd of the delta, and (single-attempt pass/fail) the discordant share."""
    res = d.paired
    n = d.n_pairs
    if res is None or n == 0:
        return math.nan, None
    if d.table is not None:
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


def slice_plan(
    d: SliceDelta, confidence: float, bound: float = 0.0, known: SlicePlan | None = None
) -> SlicePlan | None:
    """The plan of one paired slice against ``bound``; None for a slice without pairs.

    ``known``, a plan of the same slice against another bound, lends its pairs to detect and
    MDE (they do not depend on the bound, and the exact McNemar search is the costly part).
    """
    res = d.paired
    if res is None or not math.isfinite(res.ci.low):
        return None
    sd, psi = _sd_and_discordance(d)
    settle = pairs_to_settle(d, bound, sd, confidence)
    if known is not None:
        return dataclasses.replace(known, bound=bound, pairs_to_settle=settle)
    n = d.n_pairs
    if d.table is not None and psi is not None:
        t = d.table
        power = _quiet_result(
            lambda: stats.required_pairs_mcnemar(t.only_candidate / n, t.only_baseline / n)
        )
        return SlicePlan(
            bound=bound,
            pairs_to_settle=settle,
            pairs_to_detect=math.nan if power is None else float(power.n),
            pairs_to_detect_normal=None if power is None else power.n_normal,
            mde=_quiet(lambda: stats.mde_mcnemar(n, psi)),
            sd=sd,
            test="exact_mcnemar",
        )
    return SlicePlan(
        bound=bound,
        pairs_to_settle=settle,
        pairs_to_detect=_quiet(lambda: stats.required_pairs(abs(res.estimate), sd).n),
        pairs_to_detect_normal=None,
        mde=_quiet(lambda: stats.mde_paired_t(n, sd)),
        sd=sd,
        test="paired_t",
    )


WORST: SweepReason = "worst slice"
NEAREST: SweepReason = "nearest break-even"
LARGEST: SweepReason = "largest weight x delta"
NEXT: SweepReason = "next largest weight x delta"


def sweep_choice(
    pair: PairComparison, arms: Sequence[ArmSlice], limit: int = SWEEP_PANELS
) -> list[tuple[stats.BreakEven, tuple[SweepReason, ...]]]:
    """The slices to sweep, by relevance, each with why it was chosen.

    The worst slice (first of :func:`~evaldelta.comparison.ordering.ordered_slices` among
    the mix's slices), the one nearest its break-even (when any share flips the sign), then
    by ``|w_k d_k|``, the slice's weight times its delta: its pull on the standardized delta.
    Issue 24.9: the first four in list order left out seed 004's extraction, the slice its
    story is about.
    """
    std = headline_standardized(pair)
    by_name = {b.slice: b for b in std.break_even}
    if not by_name:
        return []
    weights = std.delta.weights
    reasons: dict[str, list[SweepReason]] = {}
    worst = next((d.slice for d in ordered_slices(pair, arms).slices if d.slice in by_name), None)
    if worst is not None:
        reasons.setdefault(worst, []).append(WORST)

    def distance(b: stats.BreakEven) -> float:
        flip = sign_flip(b)
        return abs(flip - b.share) if flip is not None else math.inf

    nearest = min(std.break_even, key=lambda b: (distance(b), b.slice))
    if math.isfinite(distance(nearest)):
        reasons.setdefault(nearest.slice, []).append(NEAREST)

    def pull(name: str) -> float:
        return abs(weights.get(name, 0.0) * std.slice_deltas.get(name, 0.0))

    by_pull = sorted(by_name, key=lambda k: (-pull(k), k))
    if by_pull and pull(by_pull[0]) > 0:
        reasons.setdefault(by_pull[0], []).append(LARGEST)
    chosen = list(reasons)[:limit]
    chosen += [k for k in by_pull if k not in chosen][: max(0, limit - len(chosen))]
    return [(by_name[k], tuple(reasons.get(k, [NEXT]))) for k in chosen]


def share_sweeps(
    pair: PairComparison, arms: Sequence[ArmSlice], confidence: float
) -> tuple[ShareSweep, ...]:
    """The headline mix's most relevant slices, swept (:func:`sweep_choice` chooses)."""
    if len(pair.slices) == 1 or not pair.standardized:
        return ()  # every mix gives the one slice all the weight
    std = headline_standardized(pair)
    est, ses = std.slice_deltas, std.slice_ses
    if not std.break_even or not est:
        return ()
    weights = {k: std.delta.weights[k] for k in est if k in std.delta.weights}
    shares = [i / (SWEEP_POINTS - 1) for i in range(SWEEP_POINTS)]
    out = []
    for b, why in sweep_choice(pair, arms):
        flip = sign_flip(b)
        points = sorted({*shares, b.share, *([flip] if flip is not None else [])})
        curve = stats.share_sweep(
            est, ses, weights, b.slice, points, confidence=confidence, df=std.mix_df
        )
        out.append(
            ShareSweep(
                slice=b.slice,
                mix=std.mix,
                share=b.share,
                delta=b.delta,
                sign_flip=flip,
                interval_flips=b.interval_flips,
                why=why,
                curve=tuple(SweepPoint(*p) for p in curve),
            )
        )
    return tuple(out)


def with_plans(pair: PairComparison, arms: Sequence[ArmSlice], confidence: float) -> PairComparison:
    """The pair with each paired slice's plan against zero and the headline mix's sweeps."""
    slices = tuple(dataclasses.replace(d, plan=slice_plan(d, confidence)) for d in pair.slices)
    pair = dataclasses.replace(pair, slices=slices)
    return dataclasses.replace(pair, share_sweeps=share_sweeps(pair, arms, confidence))
