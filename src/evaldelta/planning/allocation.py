"""Allocate a budget of cases over slices: a floor per slice, then Neyman allocation.

Used by ``evaldelta plan`` (sds from a pilot) and ``evaldelta sample`` (equal sds: in
proportion to traffic, capped at the rows each slice has).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from evaldelta.errors import UsageError

__all__ = ["Allocation", "SliceAllocation", "allocate", "allocate_counts"]

NAN = math.nan


@dataclass(frozen=True)
class SliceAllocation:
    """One slice of an :class:`Allocation`.

    ``halfwidth_now`` / ``halfwidth_after`` are the expected interval half-widths
    ``z * sd / sqrt(n)`` of the slice's paired delta at ``n_now`` and at ``n``.
    """

    slice: str
    weight: float
    sd: float
    available: int | None
    floor: int
    n: int
    taken_whole: bool
    n_now: int | None
    halfwidth_now: float | None
    halfwidth_after: float


@dataclass(frozen=True)
class Allocation:
    """A budget of cases over slices: a floor per slice, then Neyman on the remainder.

    ``standardized_halfwidth_*`` is ``z * sqrt(sum_k w_k^2 sd_k^2 / n_k)``, the expected
    half-width of the fixed-mix delta under the (normalized) weights.
    """

    budget: int
    total: int
    method: str
    confidence: float
    slices: tuple[SliceAllocation, ...]
    standardized_halfwidth_now: float | None
    standardized_halfwidth_after: float
    notes: tuple[str, ...] = ()


def _neyman_quotas(
    remainder: float, scores: dict[str, float], caps: dict[str, float]
) -> dict[str, float]:
    """Real quotas proportional to ``scores`` summing to ``remainder``, each at most its cap.

    Slices whose quota exceeds their cap are fixed at the cap and the rest is re-spread
    over the others (water-filling), until no quota exceeds its cap.
    """
    quotas = dict.fromkeys(scores, 0.0)
    active = {k for k in scores if caps[k] > 0}
    left = remainder
    while active and left > 1e-9:
        total = sum(scores[k] for k in active)
        if total <= 0:
            share = dict.fromkeys(active, left / len(active))
        else:
            share = {k: left * scores[k] / total for k in active}
        over = {k for k in active if share[k] > caps[k] - quotas[k]}
        if not over:
            for k in active:
                quotas[k] += share[k]
            break
        for k in over:
            left -= caps[k] - quotas[k]
            quotas[k] = caps[k]
        active -= over
    return quotas


def _round_largest_remainder(
    quotas: dict[str, float], total: int, caps: dict[str, float]
) -> dict[str, int]:
    """Integers summing to ``total``: floors, then +1 to the largest fractional parts.

    Ties break by slice name, so the result is deterministic.
    """
    base = {k: math.floor(q + 1e-9) for k, q in quotas.items()}
    left = total - sum(base.values())
    order = sorted(quotas, key=lambda k: (-(quotas[k] - base[k]), k))
    for k in order:
        if left <= 0:
            break
        if base[k] + 1 <= caps[k]:
            base[k] += 1
            left -= 1
    return base


MAX_BUDGET = 2**53  # beyond it, the float shares of largest remainder lose whole cases


def _check_arguments(weights: Mapping[str, float], sds: Mapping[str, float], budget: int) -> None:
    """One-line errors for an allocation that cannot be made."""
    if not weights:
        raise UsageError("the allocation needs at least one slice")
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise UsageError(f"the budget must be a positive whole number of cases, not {budget!r}")
    if budget > MAX_BUDGET:
        raise UsageError(
            f"the budget of {budget:,} cases is more than this allocation can count exactly "
            f"({MAX_BUDGET:,}, the largest whole number a float holds)"
        )
    total_w = sum(weights.values())
    if not all(math.isfinite(w) and w >= 0 for w in weights.values()) or total_w <= 0:
        raise UsageError("slice weights must be finite, non-negative and not all zero")
    for k in weights:
        s = sds.get(k)
        if s is None or not math.isfinite(s) or s < 0:
            raise UsageError(f"slice {k!r} needs a finite sd >= 0 for the allocation, not {s}")


def _slice_row(
    k: str,
    weight: float,
    sd: float,
    floor: int,
    n: int,
    available: Mapping[str, int] | None,
    n_now: Mapping[str, int] | None,
    z: float,
) -> SliceAllocation:
    now = None if n_now is None else n_now.get(k)
    return SliceAllocation(
        slice=k,
        weight=weight,
        sd=sd,
        available=None if available is None else int(available[k]),
        floor=floor,
        n=n,
        taken_whole=available is not None and n >= available[k],
        n_now=now,
        halfwidth_now=_halfwidth(z, sd, now) if now is not None else None,
        halfwidth_after=_halfwidth(z, sd, n),
    )


def allocate(
    weights: Mapping[str, float],
    sds: Mapping[str, float],
    budget: int,
    floor: int | Mapping[str, int] = 300,
    *,
    available: Mapping[str, int] | None = None,
    n_now: Mapping[str, int] | None = None,
    confidence: float = 0.95,
) -> Allocation:
    """Spread ``budget`` cases over slices: a floor per slice, the rest by Neyman allocation.

    Method: each slice first gets ``min(floor, available)`` (a slice with fewer rows than its
    floor is taken whole); the remaining cases go ``n_k`` proportional to ``w_k * sd_k``, the
    Neyman (1934) allocation that minimizes the variance of the weighted (fixed-mix)
    estimate ``sum_k w_k^2 sd_k^2 / n_k`` for a fixed total (Neyman 1934, "On the two
    different aspects of the representative method", JRSS 97:558-625; Cochran 1977,
    Sampling Techniques, section 5.5). A slice never gets more than its available rows (its
    excess is re-spread over the others); quotas become integers by largest remainder, so
    the counts sum to the budget exactly (or to all available rows, if fewer). With all
    ``sd`` equal this is proportional allocation. Half-widths are ``z * sd / sqrt(n)`` with
    ``z`` the two-sided normal quantile of ``confidence``.
    """
    # scipy.stats.norm.isf, from scipy.special: imported here, as `sample` needs only counts
    from evaldelta.stats._distributions import norm_isf

    counts, notes = allocate_counts(weights, sds, budget, floor, available=available)
    w, floors = _shares(weights), _floors(weights, floor)
    z = norm_isf((1.0 - confidence) / 2.0)
    rows = [_slice_row(k, w[k], sds[k], floors[k], counts[k], available, n_now, z) for k in weights]
    return Allocation(
        budget=budget,
        total=sum(counts.values()),
        method="floor per slice, then Neyman allocation (n_k proportional to w_k sd_k)",
        confidence=confidence,
        slices=tuple(rows),
        standardized_halfwidth_now=(
            _std_halfwidth(z, rows, now=True) if n_now is not None else None
        ),
        standardized_halfwidth_after=_std_halfwidth(z, rows, now=False),
        notes=notes,
    )


def allocate_counts(
    weights: Mapping[str, float],
    sds: Mapping[str, float],
    budget: int,
    floor: int | Mapping[str, int] = 300,
    *,
    available: Mapping[str, int] | None = None,
) -> tuple[dict[str, int], tuple[str, ...]]:
    """:func:`allocate`'s cases per slice and its notes, without the half-widths."""
    names = list(weights)
    _check_arguments(weights, sds, budget)
    w, floors = _shares(weights), _floors(weights, floor)
    caps = _caps(weights, available)
    first = {k: int(min(floors[k], caps[k])) for k in names}
    notes: list[str] = []
    if sum(first.values()) > budget:
        raise UsageError(
            f"the budget of {budget} cases is below the floors' total of {sum(first.values())} "
            f"({len(names)} slices); raise the budget or lower the floor"
        )
    room = {k: caps[k] - first[k] for k in names}
    remainder = budget - sum(first.values())
    capacity = sum(room.values())
    if capacity < remainder:
        notes.append(
            f"only {int(sum(caps.values()))} rows are available, fewer than the budget of "
            f"{budget}; every row is taken"
        )
        remainder = int(capacity)
    scores = {k: w[k] * sds[k] for k in names}
    if remainder > 0 and sum(scores[k] for k in names if room[k] > 0) <= 0:
        notes.append("every weight x sd is 0; the remainder is spread in proportion to weight")
        scores = dict(w)
    quotas = _neyman_quotas(float(remainder), scores, room)
    extra = _round_largest_remainder(quotas, remainder, room)
    counts = {k: first[k] + extra[k] for k in names}
    total, available_rows = sum(counts.values()), sum(caps.values())
    if total != (budget if available_rows >= budget else int(available_rows)):
        raise RuntimeError(f"allocation of {budget} cases came to {total}; this is a bug")
    return counts, tuple(notes)


def _shares(weights: Mapping[str, float]) -> dict[str, float]:
    """The weights normalized to sum to 1."""
    total = sum(weights.values())
    return {k: weights[k] / total for k in weights}


def _floors(weights: Mapping[str, float], floor: int | Mapping[str, int]) -> dict[str, int]:
    floors = {k: int(floor[k] if isinstance(floor, Mapping) else floor) for k in weights}
    if any(f < 0 for f in floors.values()):
        raise UsageError("the floor must be a non-negative number of cases")
    return floors


def _caps(weights: Mapping[str, float], available: Mapping[str, int] | None) -> dict[str, float]:
    return {k: float(available[k]) if available is not None else math.inf for k in weights}


def _halfwidth(z: float, sd: float, n: int) -> float:
    """``z * sd / sqrt(n)``; NaN for n = 0 (no cases, no interval), never 0 or infinity."""
    return z * sd / math.sqrt(n) if n > 0 else NAN


def _std_halfwidth(z: float, rows: list[SliceAllocation], *, now: bool) -> float:
    var = 0.0
    for r in rows:
        n = r.n_now if now else r.n
        if r.weight == 0:
            continue
        if not n:
            return NAN
        var += r.weight**2 * r.sd**2 / n
    return z * math.sqrt(var)
