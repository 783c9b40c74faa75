"""How far one slice's share of the mix can move before a standardized delta changes.

A fixed-mix (directly standardized) delta is ``D = sum_k w_k d_k`` with variance
``V = sum_k w_k^2 se_k^2`` (independent slices; Fleiss, Levin and Paik 2003, *Statistical
Methods for Rates and Proportions*, section 19.3). Move slice ``j``'s share to ``s`` and
rescale the others in proportion, ``w_k(s) = w_k (1 - s) / (1 - w_j)``; then

    D(s) = s d_j + (1 - s) A,          A = sum_{k != j} w_k d_k / (1 - w_j)
    V(s) = s^2 se_j^2 + (1 - s)^2 B,   B = sum_{k != j} w_k^2 se_k^2 / (1 - w_j)^2

``D`` is linear in ``s``, so it changes sign once at most: at ``s* = A / (A - d_j)``. An end
of the normal interval ``D(s) +/- z sqrt(V(s))`` crosses zero where ``D(s)^2 = z^2 V(s)``, a
quadratic in ``s`` whose roots in [0, 1] are where the interval starts or stops excluding
zero. Against a bound ``b`` other than zero (a gate's ``-margin``) the same holds for
``D(s) - b``: since the shares sum to 1, ``D(s) - b = s (d_j - b) + (1 - s) (A - b)``, so
every delta is shifted by ``b`` and the variance is unchanged. This answers seed 000's open
question with numbers: the mix that shipping may move is a parameter, and these are the
shares at which the verdict it supports would change.

``df``: when the fixed-mix interval is Student t on Satterthwaite's df (pass/fail slices,
:mod:`evaldelta.stats._fixed_mix`), the critical value ``t_df`` replaces ``z`` and is held
at today's df as the share moves (the df itself changes with the weights; holding it keeps
the roots in closed form, and at today's share the interval is exactly the one reported).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from evaldelta.stats._means import t_critical
from evaldelta.stats._results import BreakEven
from evaldelta.stats._validate import check_confidence, check_nonnegative, check_real

__all__ = ["break_even", "delta_at_share", "share_sweep"]


def _parts(
    estimates: Mapping[str, float],
    ses: Mapping[str, float],
    weights: Mapping[str, float],
    name: str,
) -> tuple[float, float, float, float, float]:
    """``(w_j, d_j, se_j^2, A, B)`` over the slices with a weight, an estimate and an SE."""
    if name not in weights or name not in estimates or name not in ses:
        raise ValueError(f"slice {name!r} needs a weight, an estimate and a standard error")
    usable = {
        k: check_nonnegative(f"weights[{k!r}]", w)
        for k, w in weights.items()
        if k in estimates and k in ses
    }
    total = sum(usable.values())
    if total <= 0:
        raise ValueError("weights must contain at least one positive weight")
    share = usable[name] / total
    d_j = check_real(f"estimates[{name!r}]", estimates[name])
    v_j = check_nonnegative(f"ses[{name!r}]", ses[name]) ** 2
    rest = {k: w / total for k, w in usable.items() if k != name and w > 0}
    rest_total = sum(rest.values())
    if rest_total <= 0:
        return share, d_j, v_j, math.nan, math.nan
    a = sum(w * check_real(f"estimates[{k!r}]", estimates[k]) for k, w in rest.items())
    b = sum(w * w * check_nonnegative(f"ses[{k!r}]", ses[k]) ** 2 for k, w in rest.items())
    return share, d_j, v_j, a / rest_total, b / rest_total**2


def delta_at_share(
    estimates: Mapping[str, float],
    ses: Mapping[str, float],
    weights: Mapping[str, float],
    name: str,
    share: float,
    confidence: float = 0.95,
    df: float | None = None,
) -> tuple[float, float, float]:
    """The fixed-mix delta and its interval ``(delta, low, high)`` at a moved share.

    Slice ``name`` is at ``share`` and the other slices are rescaled in proportion (see the
    module docstring).
    """
    check_confidence(confidence)
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"share must lie in [0, 1], not {share}")
    _, d_j, v_j, a, b = _parts(estimates, ses, weights, name)
    if math.isnan(a):  # the only slice: its own delta whatever its share
        a, b = d_j, v_j
    d = share * d_j + (1.0 - share) * a
    half = _critical(confidence, df) * math.sqrt(share * share * v_j + (1.0 - share) ** 2 * b)
    return d, d - half, d + half


def share_sweep(
    estimates: Mapping[str, float],
    ses: Mapping[str, float],
    weights: Mapping[str, float],
    name: str,
    shares: Sequence[float],
    confidence: float = 0.95,
    df: float | None = None,
) -> tuple[tuple[float, float, float, float], ...]:
    """``(share, delta, low, high)`` at each of ``shares``: :func:`delta_at_share` in a row.

    The curve a sensitivity plot draws: slice ``name`` swept over ``shares``, the others
    rescaled in proportion.
    """
    out = []
    for s in shares:
        d, low, high = delta_at_share(estimates, ses, weights, name, float(s), confidence, df)
        out.append((float(s), d, low, high))
    return tuple(out)


def break_even(
    estimates: Mapping[str, float],
    ses: Mapping[str, float],
    weights: Mapping[str, float],
    name: str,
    confidence: float = 0.95,
    bound: float = 0.0,
    df: float | None = None,
) -> BreakEven:
    """Where slice ``name``'s share would flip the fixed-mix delta's sign or interval.

    ``estimates`` and ``ses`` are per-slice deltas and their standard errors, ``weights``
    the mix (any scale). Slices without an estimate or SE are left out of the mix, as
    :func:`evaldelta.stats.fixed_mix` leaves them out. With ``bound`` (a gate's
    ``-margin``), the shares are where the delta, or an end of its interval, crosses
    ``bound`` instead of zero (see the module docstring).
    """
    check_confidence(confidence)
    bound = check_real("bound", bound)
    share, d_j, v_j, a, b = _parts(estimates, ses, weights, name)
    if math.isnan(a):  # the only weighted slice: no other share to trade against
        return BreakEven(name, share, d_j, None, (), d_j, math.nan, bound)
    delta = share * d_j + (1.0 - share) * a
    d_j, a = d_j - bound, a - bound  # D(s) - bound, the same linear form
    flip = a / (a - d_j) if a != d_j else None
    sign_flip = flip if flip is not None and 0.0 <= flip <= 1.0 else None
    z2 = _critical(confidence, df) ** 2
    # (a' s + A)^2 - z^2 (v_j s^2 + B (1 - s)^2) = 0 with a' = d_j - A
    slope = d_j - a
    qa = slope * slope - z2 * (v_j + b)
    qb = 2.0 * slope * a + 2.0 * z2 * b
    qc = a * a - z2 * b
    roots = _quadratic_roots(qa, qb, qc)
    flips = tuple(sorted(r for r in roots if 0.0 <= r <= 1.0))
    return BreakEven(name, share, delta, sign_flip, flips, d_j + bound, a + bound, bound)


def _critical(confidence: float, df: float | None) -> float:
    """``z`` (no df) or Student ``t_df``, the fixed-mix interval's critical value."""
    return t_critical(confidence, math.inf if df is None else df)


def _quadratic_roots(a: float, b: float, c: float) -> list[float]:
    """Real roots of ``a s^2 + b s + c`` (a linear or constant one when ``a`` is 0)."""
    scale = max(abs(a), abs(b), abs(c))
    if scale == 0.0:
        return []
    a, b, c = a / scale, b / scale, c / scale
    if abs(a) < 1e-15:
        return [-c / b] if b != 0.0 else []
    disc = b * b - 4.0 * a * c
    if disc < 0.0:
        return []
    root = math.sqrt(disc)
    # the numerically stable pair (Press et al., Numerical Recipes, section 5.6)
    q = -0.5 * (b + math.copysign(root, b))
    out = [q / a]
    if q != 0.0:
        out.append(c / q)
    return sorted(set(out))
