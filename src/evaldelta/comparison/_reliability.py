"""Repeat reliability from the engine's counts of cases: pass@k, pass^k, and the spread.

Pure. Each (arm, slice) cell ``(attempts, passes) -> cases`` is expanded to the per-case
counts :func:`evaldelta.stats.repeat_reliability` takes (the cases are anonymous: equal
counts give equal estimates), and each pair's cells ``(n_b, c_b, n_c, c_c) -> cases`` to
the shared cases of :func:`evaldelta.stats.pass_hat_k_slices` (Holm across the slices) and
:func:`evaldelta.stats.pass_hat_k_paired` (every case). ``k`` is ``--k`` or the largest
number of attempts every compared arm has on some case; cases with fewer are ``short``.
A graded metric gets :class:`~evaldelta.stats.RepeatSpread` from the summed moments, the
same figures :func:`evaldelta.stats.repeat_spread` gives on the per-case values.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, TypeVar

from evaldelta import stats
from evaldelta.comparison._reliability_model import (
    ArmReliability,
    ArmSpread,
    IdenticalRepeats,
    MetricReliability,
    PassHatDelta,
    Reliability,
)
from evaldelta.evidence import ALL, RepeatEvidence, RepeatSpreadMoments
from evaldelta.stats._results import ConfidenceInterval, Estimate, PairedResult

if TYPE_CHECKING:
    from evaldelta.stats import RepeatCounts, RepeatSpread

__all__ = ["IDENTICAL_SHARE", "identical_notes", "reliability"]

IDENTICAL_SHARE = 0.9  # an arm whose repeats are this share identical gets a note
IDENTICAL_MIN_CASES = 5
K = TypeVar("K", bound=tuple[int, ...])


def _merge(parts: Iterable[Mapping[K, int]]) -> dict[K, int]:
    out: dict[K, int] = {}
    for part in parts:
        for key, n in part.items():
            out[key] = out.get(key, 0) + n
    return out


def _expand(cells: Mapping[K, int]) -> list[K]:
    """One entry per case, in a fixed order."""
    return [key for key in sorted(cells) for _ in range(cells[key])]


def _counts(cells: Mapping[tuple[int, int], int]) -> RepeatCounts:
    cases = _expand(cells)
    return stats.RepeatCounts(tuple(c[0] for c in cases), tuple(c[1] for c in cases))


def _pair_counts(
    cells: Mapping[tuple[int, int, int, int], int],
) -> tuple[RepeatCounts, RepeatCounts]:
    cases = _expand(cells)
    base = stats.RepeatCounts(tuple(c[0] for c in cases), tuple(c[1] for c in cases))
    cand = stats.RepeatCounts(tuple(c[2] for c in cases), tuple(c[3] for c in cases))
    return base, cand


def common_k(repeats: Sequence[RepeatEvidence], arms: Sequence[str]) -> int:
    """The largest number of attempts every compared arm has on some case (0: none)."""
    tops = []
    for r in (r for r in repeats if r.binary):
        for arm in arms:
            cells = r.cells.get(arm, {})
            tops.append(max((n for s in cells.values() for n, _ in s), default=0))
    return min(tops, default=0)


def _arm(
    arm: str, name: str, cells: Mapping[tuple[int, int], int], k: int, conf: float
) -> ArmReliability:
    counts = _counts(cells)
    shares = [p / n for n, p in zip(counts.attempts, counts.passes, strict=True) if n]
    rate = sum(shares) / len(shares) if shares else math.nan
    r = stats.repeat_reliability(counts.attempts, counts.passes, k, conf)
    return ArmReliability(arm, name, rate, len(shares), r.pass_at_k, r.pass_hat_k,
                          r.always_pass, r.always_fail, r.mixed, r.cases, r.short)  # fmt: skip


def _binary(r: RepeatEvidence, arms: Sequence[str], k: int, conf: float) -> MetricReliability:
    names = sorted({s for arm in arms for s in r.cells.get(arm, {})})
    several = len(names) > 1 or (names and names[0] != ALL)
    rows = []
    for arm in arms:
        cells = r.cells.get(arm, {})
        for name in names if several else []:
            rows.append(_arm(arm, name, cells.get(name, {}), k, conf))
        rows.append(_arm(arm, ALL, _merge(cells.values()), k, conf))
    pairs = []
    for cand in arms[1:]:
        per = r.pairs.get(cand, {})
        if several:
            found = stats.pass_hat_k_slices(
                {s: _pair_counts(per.get(s, {})) for s in names}, k, conf
            )
            for s in names:
                delta = _clipped(found.deltas[s])
                pairs.append(PassHatDelta(cand, s, delta, found.holm[s], found.short[s]))
        merged = _merge(per.values())
        base, other = _pair_counts(merged)
        whole = _clipped(stats.pass_hat_k_paired(base, other, k, conf))
        short = sum(n for key, n in merged.items() if key[0] < k or key[2] < k)
        pairs.append(PassHatDelta(cand, ALL, whole, math.nan, short))
    return MetricReliability(r.metric, r.by, True, tuple(rows), tuple(pairs))


def _clipped(res: PairedResult) -> PairedResult:
    """A pass^k delta's interval clipped to [-1, 1], where a difference of rates lies."""
    ci = res.ci
    if math.isnan(ci.low):
        return res
    return dataclasses.replace(res, ci=ConfidenceInterval(max(-1.0, ci.low), min(1.0, ci.high)))


def spread_from_moments(m: RepeatSpreadMoments, conf: float) -> RepeatSpread:
    """:func:`stats.repeat_spread`'s figures from the summed per-case moments."""
    n = m.cases
    mean = m.sd_total / n if n else math.nan
    var = (m.sd_sumsq - n * mean * mean) / (n - 1) if n >= 2 else math.nan
    est = stats.mean_t(n, mean, math.sqrt(max(var, 0.0)) if n >= 2 else math.nan, conf)
    ci = est.ci
    if not math.isnan(ci.low):
        ci = ConfidenceInterval(max(0.0, ci.low), ci.high)
    mean_sd = Estimate(est.estimate, est.se, ci, n, "t over cases (clipped at 0)", df=est.df)
    pooled = math.sqrt(m.within_ss / m.within_df) if m.within_df else math.nan
    return stats.RepeatSpread(mean_sd, pooled, n, m.short, conf)


def _graded(r: RepeatEvidence, arms: Sequence[str], conf: float) -> MetricReliability:
    rows = []
    for arm in arms:
        per = r.spread.get(arm, {})
        for name in sorted(per):
            sp = spread_from_moments(per[name], conf)
            rows.append(ArmSpread(arm, name, sp.mean_sd, sp.pooled_sd, sp.cases, sp.short))
    return MetricReliability(r.metric, r.by, False, spread=tuple(rows))


def reliability(
    repeats: Sequence[RepeatEvidence], arms: Sequence[str], confidence: float, k: int | None
) -> Reliability | None:
    """Every metric's repeat reliability; None without repeats (or k below 2)."""
    if not repeats:
        return None
    chosen = k if k is not None else common_k(repeats, arms)
    if k is None and chosen < 2 and not any(not r.binary for r in repeats):
        return None
    metrics = []
    with warnings.catch_warnings():  # undefined intervals show as n/a in the table
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        warnings.simplefilter("ignore", stats.ReliabilityWarning)
        for r in repeats:
            if r.binary and chosen >= 1:
                metrics.append(_binary(r, arms, chosen, confidence))
            elif not r.binary:
                metrics.append(_graded(r, arms, confidence))
    identical = tuple(
        IdenticalRepeats(a, n, same, same / n)
        for a, (n, same) in repeats[0].identical.items()
        if n and a in arms
    )
    return Reliability(chosen, "--k" if k is not None else "repeats", tuple(metrics), identical)


def identical_notes(found: Reliability | None) -> list[str]:
    """A note per arm whose repeats are mostly byte-identical (a cache, temperature 0)."""
    if found is None:
        return []
    return [
        f"repeats of {i.arm} are identical on {i.share:.0%} of cases: a cache or temperature "
        "0; pass^k and the per-case means treat them as independent draws"
        for i in found.identical
        if i.cases >= IDENTICAL_MIN_CASES and i.share >= IDENTICAL_SHARE
    ]
