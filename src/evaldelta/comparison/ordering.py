"""The one order of every report's slices, and which mix a headline quotes.

Below the reports because the Comparison uses them too: the share sweeps it holds
(:mod:`evaldelta.comparison._settle`) start with the worst slice of this order, and every
format (``report/``) lists slices in it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from evaldelta.comparison.model import ArmSlice, PairComparison, SliceDelta, Standardized
from evaldelta.stats import BreakEven

__all__ = [
    "MIN_RANKED_N",
    "SliceOrder",
    "headline_standardized",
    "order_rule",
    "ordered_slices",
    "sign_flip",
]


def headline_standardized(pair: PairComparison) -> Standardized:
    """The mix a headline quotes: the traffic mix when there is one, else the chosen mix."""
    traffic = [s for s in pair.standardized if s.mix == "traffic"]
    return traffic[0] if traffic else pair.standardized[0]


MIN_RANKED_N = 10  # slices with fewer pairs come after the rest in the one order


@dataclass(frozen=True)
class SliceOrder:
    """Every slice of a pair in the one order of every report (:func:`ordered_slices`).

    ``ranked`` slices have at least ``minimum`` pairs (unpaired: scored cases in each arm)
    and an interval; ``few`` have an interval but fewer cases; ``undefined`` have none.
    """

    slices: tuple[SliceDelta, ...]
    minimum: int
    ranked: int
    few: int
    undefined: int

    def rule(self, paired: bool = True) -> str:
        """The order in words, as every format states it beside its table."""
        few = self.few > 0
        out = order_rule(self.minimum, paired, few=few and self.ranked > 0, undefined=False)
        if few and not self.ranked:
            unit = "pairs" if paired else "scored cases in each arm"
            out += f"; every slice has fewer than {self.minimum} {unit}"
        return out + ("; slices without an interval last" if self.undefined else "")

    def cut(self, shown: int, where: str) -> str:
        """What a table showing the first ``shown`` rows left out, and where the rest are."""
        left = len(self.slices) - shown
        if left <= 0:
            return f"all {len(self.slices)} slices shown"
        noun = "slice is" if left == 1 else "slices are"
        return f"{shown} of {len(self.slices)} slices shown; the other {left} {noun} {where}"


def order_rule(
    minimum: int = MIN_RANKED_N, paired: bool = True, *, few: bool = True, undefined: bool = True
) -> str:
    """The one ordering rule of the per-slice tables, plots and lists, in words.

    ``few`` and ``undefined`` say whether the slices have any with fewer than ``minimum``
    cases, or without an interval: the rule names those parts only when they apply.
    """
    unit = "pairs" if paired else "scored cases in each arm"
    out = (
        "worst first, by the upper end of each interval (the most gain the data allow), "
        "lowest first"
    )
    if few:
        out += f"; slices with fewer than {minimum} {unit} after the others"
    if undefined:
        out += "; slices without an interval last"
    return out


def _slice_n(d: SliceDelta, pair: PairComparison, arms: Sequence[ArmSlice]) -> int:
    """Paired slices: their pairs. Unpaired: the smaller arm's scored cases."""
    if d.basis == "paired":
        return d.n_pairs
    counts = {a.arm: a.scored_cases for a in arms if a.slice == d.slice}
    return min(counts.get(pair.baseline, 0), counts.get(pair.candidate, 0))


def ordered_slices(
    pair: PairComparison, arms: Sequence[ArmSlice], minimum: int = MIN_RANKED_N
) -> SliceOrder:
    """The pair's slices in the one order of every format (issue 24.3).

    Worst evidence first: the lowest upper end of the interval, the most of a gain the data
    still allow. Ranking by the point estimate put slices of one or two pairs at +0.0 on top
    of SWE-bench Verified; so slices with fewer than ``minimum`` cases follow the others (in
    the same order), and slices without an interval come last. Ties: the point estimate,
    then the name.
    """

    def key(d: SliceDelta) -> tuple[int, float, float, str]:
        res = d.main
        if res is None or not math.isfinite(res.ci.high):
            est = res.estimate if res is not None and math.isfinite(res.estimate) else math.inf
            return (2, math.inf, est, d.slice)
        group = 0 if _slice_n(d, pair, arms) >= minimum else 1
        return (group, res.ci.high, res.estimate, d.slice)

    keys = {d.slice: key(d) for d in pair.slices}
    ordered = tuple(sorted(pair.slices, key=lambda d: keys[d.slice]))
    groups = [keys[d.slice][0] for d in ordered]
    return SliceOrder(ordered, minimum, groups.count(0), groups.count(1), groups.count(2))


def sign_flip(b: BreakEven) -> float | None:
    """The share at which the delta changes sign; None when no share in [0, 1] makes it.

    A flip at 0% or 100% where the delta only reaches zero (the slice, or the rest of the
    mix, has no difference at all) is not a change of sign, so it is not reported.
    """
    if b.sign_flip is None or abs(b.slice_delta) <= 1e-12 or abs(b.rest_delta) <= 1e-12:
        return None
    return b.sign_flip
