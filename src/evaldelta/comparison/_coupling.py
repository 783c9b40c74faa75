"""How far two arms' per-case outcomes moved together, and what that did to the paired SE.

For the cases both arms scored, with case values b (baseline) and c (candidate) and the
delta d = c - b, var(d) = var(b) + var(c) - 2 cov(b, c). Independent draws (cov = 0) would
give the delta the standard error sqrt((var(b) + var(c)) / n); the paired delta has
sqrt(var(d) / n). Their squared ratio is the sample size the pairing saves:
``variance_reduction`` = 1 - var(d) / (var(b) + var(c)). The realised correlation is
Pearson's on the case values, cov(b, c) / (sd(b) sd(c)). All of it comes from the sums the
engine already reduces per (pair, slice) (:class:`~evaldelta.evidence.PairSliceStats`: the
moments of b, c and d over the shared cases), so it is pure arithmetic here.

Every pair carries the figures. ``run --couple`` (:mod:`evaldelta.run.coupling`) records
``couple`` in each arm's pins; a pair whose two arms both say ``couple = true`` was coupled
by seed, and the reports show the figures for it: the correlation then includes what the
shared random draws add to what the cases themselves share.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from evaldelta.evidence import ALL, Moments, PairSliceStats
from evaldelta.sources._pins import PinValue

__all__ = ["Coupling", "SliceCoupling", "pair_coupling"]


@dataclass(frozen=True)
class SliceCoupling:
    """The arms' per-case outcomes on the ``n`` cases of one slice both scored (NaN: undefined).

    ``correlation``: Pearson's r of the two arms' case values (NaN when either arm is
    constant there); ``paired_se``: the paired delta's standard error, sd(d) / sqrt(n);
    ``independent_se``: what independent draws would give, sqrt((var(b) + var(c)) / n);
    ``variance_reduction``: 1 - (paired_se / independent_se)^2, the share of the sample
    the pairing saves (negative when the arms moved against each other).
    """

    slice: str
    n: int
    correlation: float
    paired_se: float
    independent_se: float
    variance_reduction: float


@dataclass(frozen=True)
class Coupling:
    """One pair's coupling: whether its arms were coupled by seed, and the figures.

    ``requested``: some arm of the pair was run with ``--couple``; ``coupled``: both arms
    sent the same seeds (each arm's pins say ``couple = true``, with one run seed, so arms
    of two coupled runs count when the runs share their seed); ``run_seed``: the run seed
    the per-(case, repeat) seeds derive from; ``not_coupled``: arms of the pair that were
    asked to couple and took no seed. ``overall`` is every shared case, ``slices`` each slice.
    """

    requested: bool
    coupled: bool
    run_seed: int | None
    not_coupled: tuple[str, ...]
    overall: SliceCoupling
    slices: tuple[SliceCoupling, ...]


def _variance(m: Moments) -> float:
    return m.sd**2 if m.n >= 2 else math.nan


def slice_coupling(p: PairSliceStats, name: str) -> SliceCoupling:
    """The figures of one (pair, slice) from its moments."""
    n = p.delta.n
    vb, vc, vd = _variance(p.base), _variance(p.cand), _variance(p.delta)
    nan = math.nan
    if n < 2:
        return SliceCoupling(name, n, nan, nan, nan, nan)
    both = vb + vc
    r = (both - vd) / (2.0 * math.sqrt(vb * vc)) if vb > 0 and vc > 0 else nan
    return SliceCoupling(
        slice=name,
        n=n,
        correlation=max(-1.0, min(1.0, r)) if math.isfinite(r) else nan,
        paired_se=math.sqrt(vd / n),
        independent_se=math.sqrt(both / n),
        variance_reduction=1.0 - vd / both if both > 0 else nan,
    )


def pair_coupling(
    slices: Sequence[PairSliceStats],
    pins: Mapping[str, Mapping[str, PinValue]],
    overall_name: str,
) -> Coupling:
    """The coupling of one pair from its per-slice stats (the ``ALL`` row is the overall)."""
    base, cand = slices[-1].baseline, slices[-1].candidate
    flags = {arm: pins.get(arm, {}).get("couple") for arm in (base, cand)}
    seeds = {pins.get(arm, {}).get("couple_run_seed") for arm in (base, cand)}
    seed = next(iter(seeds)) if len(seeds) == 1 else None
    overall = next(p for p in slices if p.slice == ALL)
    return Coupling(
        requested=any(v is not None for v in flags.values()),
        # two coupled runs with different run seeds sent different seeds: not coupled
        coupled=all(v is True for v in flags.values()) and len(seeds) == 1,
        run_seed=seed if isinstance(seed, int) and not isinstance(seed, bool) else None,
        not_coupled=tuple(arm for arm, v in flags.items() if v is False),
        overall=slice_coupling(overall, overall_name),
        slices=tuple(slice_coupling(p, p.slice) for p in slices if p.slice != ALL),
    )
