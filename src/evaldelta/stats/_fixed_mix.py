"""Fixed-mix intervals for pass/fail slices that neither vanish nor swell (issue 24, item 5).

A directly standardized rate or delta ``sum_k w_k x_k`` has variance ``sum_k w_k^2 v_k``.
The plug-in slice variance ``p (1 - p) / n`` is 0 for a slice at 0% or 100% (or with no
discordant pair), and a slice's score-interval half-width (Wilson, Newcombe) is wide on a
small slice: combined over several small slices it gave an interval wider than the all-cases
one for the same estimate (seed 002: [-10.1, +20.1] against [-6.9, +17.6]) and coverage up
to 1.000. Here each slice gets pseudo-counts, the total of which is that of a single
adjusted interval however many slices the mix has:

- a rate: Price and Bonett (2004), "An improved confidence interval for a linear function
  of binomial proportions", Computational Statistics & Data Analysis 45:449-456: with ``m``
  proportions in the linear function, ``2/m`` successes and ``4/m`` trials are added to
  each (Agresti and Coull's ``+2/+4`` when ``m = 1``; Agresti and Caffo's ``+1/+2`` per
  arm for a difference of two); the interval is centred on the adjusted combination;
- a paired delta: Bonett and Price (2012), "Adjusted Wald confidence interval for a
  difference of binomial proportions based on paired data", Journal of Educational and
  Behavioral Statistics 37:479-488, add 1 to each discordant cell and 2 to ``n``; spread
  over ``m`` slices as Price and Bonett spread theirs, ``1/m`` and ``2/m`` per slice.
  Fagerland, Lydersen and Laake (2014, Statistics in Medicine 33:2850-2875) recommend the
  Bonett-Price interval for a single paired table.

The critical value is the normal quantile, as in both papers: Student t on a
Satterthwaite df (with a df of ``2 (b_k + c_k)`` per paired slice) was measured too and
over-covered (0.98 on the small, weakly discordant mixes of docs/calibration.md), the power
the pseudo-counts had already paid for. A delta's interval (paired, or unpaired over the
``2m`` proportions) is centred on the observed delta, the centre the report's break-even
shares move; a standardized rate's on Price and Bonett's adjusted combination.

How many discordant pairs a paired fixed-mix delta rests on once weighted
(:func:`effective_discordant`): the variance of slice ``k`` is, to first order, a Poisson
count of its discordant pairs ``D_k`` over ``n_k^2``, whose relative variance ``1 / E D_k``
is that of a variance estimate on ``f_k = 2 E D_k`` degrees of freedom (a chi-square on
``f`` has relative variance ``2 / f``); Satterthwaite's (1946, Biometrics Bulletin
2:110-114) df of the weighted sum, halved, is then the effective number of discordant pairs
(``D_k`` estimated with its pseudo-count). Below ``MIN_DISCORDANT``, or with fewer
discordant pairs than that in all, the delta warns, as Newcombe's paired interval does
(coverage in docs/calibration.md).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence

from evaldelta.stats._proportions import z_critical
from evaldelta.stats._results import (
    ConfidenceInterval,
    FixedMix,
    FrozenDict,
    ReliabilityWarning,
)
from evaldelta.stats._standardize import _check_weights
from evaldelta.stats._thresholds import MIN_DISCORDANT
from evaldelta.stats._validate import check_confidence, check_count, check_nonnegative

__all__ = [
    "adjusted_linear_proportions",
    "bonett_price_paired",
    "effective_discordant",
    "paired_mix_slices",
    "rate_mix_slices",
    "satterthwaite_df",
    "standardized_paired_delta",
    "standardized_rate",
    "standardized_rate_difference",
]

NAN = float("nan")
Counts = Mapping[str, tuple[float, int]]
Tables = Mapping[str, tuple[int, int, int, int]]


def satterthwaite_df(parts: Sequence[float], dfs: Sequence[float]) -> float:
    """Welch-Satterthwaite degrees of freedom of a sum of independent variance parts.

    Method: Satterthwaite (1946), Biometrics Bulletin 2:110-114: ``(sum u_k)^2 /
    sum (u_k^2 / f_k)`` for parts ``u_k`` estimated on ``f_k`` degrees of freedom; with two
    parts ``s_k^2 / n_k`` on ``n_k - 1`` it is Welch's df of ``scipy.stats.ttest_ind(...,
    equal_var=False)``. Parts of zero are left out; ``inf`` when every part is 0 or every
    ``f_k`` is infinite.
    """
    if len(parts) != len(dfs):
        raise ValueError(
            f"parts and dfs must have the same length; got {len(parts)} and {len(dfs)}."
        )
    total = 0.0
    denominator = 0.0
    for i, (u, f) in enumerate(zip(parts, dfs, strict=True)):
        u = check_nonnegative(f"parts[{i}]", u)
        if not f > 0:
            raise ValueError(f"dfs[{i}] must be positive; got {f!r}.")
        total += u
        if u > 0.0 and math.isfinite(f):
            denominator += u * u / f
    if denominator <= 0.0:
        return math.inf
    return total * total / denominator


def adjusted_linear_proportions(
    terms: Sequence[tuple[float, float, int]],
    confidence: float = 0.95,
    bounds: tuple[float, float] | None = None,
) -> tuple[float, float, float, ConfidenceInterval]:
    """A linear function ``sum_i c_i p_i`` of independent proportions, Price-Bonett adjusted.

    ``terms`` are ``(coefficient, successes, n)`` with ``n > 0``. Method: Price and Bonett
    (2004): with ``m`` terms, ``p~_i = (x_i + 2/m) / (n_i + 4/m)``, centre
    ``sum c_i p~_i``, ``se^2 = sum c_i^2 p~_i (1 - p~_i) / (n_i + 4/m)`` and the interval
    ``centre +/- z se`` (with two terms ``+1, -1`` it is Agresti and Caffo's, statsmodels'
    ``confint_proportions_2indep(method="agresti-caffo")``). Returns ``(estimate, centre,
    se, interval)``; ``estimate`` is ``sum c_i x_i / n_i``, unadjusted. ``bounds`` clips the
    interval to the parameter's range.
    """
    conf = check_confidence(confidence)
    if not terms:
        raise ValueError("terms must hold at least one (coefficient, successes, n).")
    m = len(terms)
    estimate = center = variance = 0.0
    for i, (coef, x, n) in enumerate(terms):
        n = check_count(f"terms[{i}] n", n)
        x = check_nonnegative(f"terms[{i}] successes", x)
        if n == 0 or x > n:
            raise ValueError(f"terms[{i}] needs 0 <= successes <= n and n > 0; got {x!r}, {n!r}.")
        p = (x + 2.0 / m) / (n + 4.0 / m)
        estimate += coef * x / n
        center += coef * p
        variance += coef * coef * p * (1.0 - p) / (n + 4.0 / m)
    se = math.sqrt(variance)
    half = z_critical(conf) * se
    low, high = center - half, center + half
    if bounds is not None:
        low, high = max(low, bounds[0]), min(high, bounds[1])
    return estimate, center, se, ConfidenceInterval(low, high)


def bonett_price_paired(
    only_baseline: float, only_candidate: float, n: float, pseudo: float = 1.0
) -> tuple[float, float]:
    """Bonett and Price's (2012) adjusted paired delta and its standard error.

    ``(c~ - b~, sqrt((b~ + c~ - (c~ - b~)^2) / (n + 2 pseudo)))`` with ``b~ = (b + pseudo) /
    (n + 2 pseudo)`` and ``c~`` likewise, for candidate minus baseline (``b``: pairs only
    the baseline passed, ``c``: only the candidate). ``pseudo = 1`` is their interval
    ``centre +/- z se`` (as R ``contingencytables::Wald_CI_BonettPrice_paired_2x2``); a
    fixed mix of ``m`` slices gives each ``pseudo = 1/m``.
    """
    total = n + 2.0 * pseudo
    b = (only_baseline + pseudo) / total
    c = (only_candidate + pseudo) / total
    return c - b, math.sqrt(max(0.0, b + c - (c - b) ** 2) / total)


def _split(
    weights: Mapping[str, float], present: Mapping[str, int]
) -> tuple[list[str], list[str], float, dict[str, float]]:
    """``(used, dropped, dropped share, weights renormalized over used)`` of checked weights.

    A slice with positive weight is used when it has cases (``present``), else dropped.
    """
    checked = _check_weights(weights)
    used = [k for k, w in checked.items() if w > 0.0 and present.get(k, 0) > 0]
    dropped = [k for k, w in checked.items() if w > 0.0 and present.get(k, 0) <= 0]
    dropped_weight = sum(checked[k] for k in dropped) / sum(checked.values())
    used_total = sum(checked[k] for k in used)
    norm = {k: checked[k] / used_total for k in used}
    return used, dropped, dropped_weight, norm


def _empty(method: str, dropped: list[str], dropped_weight: float) -> FixedMix:
    return FixedMix(
        NAN,
        NAN,
        ConfidenceInterval(NAN, NAN),
        FrozenDict({}),
        (),
        tuple(dropped),
        dropped_weight,
        method,
    )


def standardized_rate(
    counts: Counts, weights: Mapping[str, float], confidence: float = 0.95
) -> FixedMix:
    """A directly standardized pass rate ``sum_k w_k p_k``, Price-Bonett adjusted.

    ``counts`` is ``{slice: (passed, n)}``. Method: :func:`adjusted_linear_proportions` on
    the slices with positive weight and cases (weights renormalized over them), clipped to
    [0, 1]; the module docstring says why. Slices with weight but no case are dropped and
    their share of the weight reported, as :func:`evaldelta.stats.fixed_mix` does.
    """
    present = {k: int(v[1]) for k, v in counts.items()}
    used, dropped, dropped_weight, norm = _split(weights, present)
    method = "direct standardization (Price-Bonett 2004 adjusted)"
    if not used:
        return _empty(method, dropped, dropped_weight)
    terms = [(norm[k], float(counts[k][0]), int(counts[k][1])) for k in used]
    est, center, se, ci = adjusted_linear_proportions(terms, confidence, (0.0, 1.0))
    return FixedMix(
        est, se, ci, FrozenDict(norm), tuple(used), tuple(dropped), dropped_weight, method,
        center=center,
    )  # fmt: skip


def standardized_rate_difference(
    baseline: Counts, candidate: Counts, weights: Mapping[str, float], confidence: float = 0.95
) -> FixedMix:
    """Candidate minus baseline standardized rate, arms on independent cases (unpaired).

    Method: the standard error of :func:`adjusted_linear_proportions` on the ``2m``
    proportions with coefficients ``+w_k`` (candidate) and ``-w_k`` (baseline), Price and
    Bonett's (2004) own setting; the interval ``delta +/- z se`` is centred on the delta
    itself, as the paired one is (the break-even shares move the same centre), and clipped
    to [-1, 1]. A slice is used when both arms have cases in it.
    """
    present = {k: min(int(baseline.get(k, (0, 0))[1]), int(candidate.get(k, (0, 0))[1]))
               for k in set(baseline) | set(candidate)}  # fmt: skip
    used, dropped, dropped_weight, norm = _split(weights, present)
    method = "direct standardization, unpaired (Price-Bonett 2004 adjusted)"
    if not used:
        return _empty(method, dropped, dropped_weight)
    terms = [(norm[k], float(candidate[k][0]), int(candidate[k][1])) for k in used]
    terms += [(-norm[k], float(baseline[k][0]), int(baseline[k][1])) for k in used]
    est, _, se, _ = adjusted_linear_proportions(terms, confidence, (-1.0, 1.0))
    half = z_critical(check_confidence(confidence)) * se
    ci = ConfidenceInterval(max(-1.0, est - half), min(1.0, est + half))
    return FixedMix(
        est, se, ci, FrozenDict(norm), tuple(used), tuple(dropped), dropped_weight, method
    )


def standardized_paired_delta(
    tables: Tables, weights: Mapping[str, float], confidence: float = 0.95
) -> FixedMix:
    """A directly standardized paired delta ``sum_k w_k (c_k - b_k) / n_k`` and its interval.

    ``tables`` is ``{slice: (both_pass, only_baseline, only_candidate, both_fail)}``.
    Method (module docstring): each slice's standard error is Bonett and Price's (2012) with
    ``1/m`` added to each discordant cell (:func:`bonett_price_paired`), the interval
    ``delta +/- z sqrt(sum_k w_k^2 se_k^2)``, clipped to [-1, 1]. When the discordant pairs
    of the used slices, or their effective number once weighted
    (:func:`effective_discordant`), are fewer than ``MIN_DISCORDANT`` a ReliabilityWarning
    says so, as :func:`paired_proportions` does.
    """
    conf = check_confidence(confidence)
    cells: dict[str, tuple[int, int, int, int]] = {}
    for name, table in tables.items():
        a, b, c, d = (check_count(f"tables[{name!r}][{i}]", v) for i, v in enumerate(table))
        cells[name] = (a, b, c, d)
    present = {k: sum(v) for k, v in cells.items()}
    used, dropped, dropped_weight, norm = _split(weights, present)
    method = "direct standardization, paired (Bonett-Price 2012 adjusted)"
    if not used:
        return _empty(method, dropped, dropped_weight)
    slices = paired_mix_slices({k: cells[k] for k in used})
    estimate = sum(norm[k] * slices[k][0] for k in used)
    se = math.sqrt(sum((norm[k] * slices[k][1]) ** 2 for k in used))
    discordant = sum(cells[k][1] + cells[k][2] for k in used)
    worth = _effective(slices, norm)
    if min(worth, discordant) < MIN_DISCORDANT:
        warnings.warn(
            f"the fixed-mix paired delta rests on {discordant} discordant pairs, about "
            f"{worth:.1f} once weighted (fewer than {MIN_DISCORDANT}): its interval's "
            "coverage is not assured there (docs/calibration.md)",
            ReliabilityWarning,
            stacklevel=2,
        )
    half = z_critical(conf) * se
    ci = ConfidenceInterval(max(-1.0, estimate - half), min(1.0, estimate + half))
    return FixedMix(
        estimate, se, ci, FrozenDict(norm), tuple(used), tuple(dropped), dropped_weight, method
    )


def paired_mix_slices(tables: Tables) -> dict[str, tuple[float, float, float]]:
    """Each slice of a paired fixed mix: ``(delta, se, f)`` as :func:`standardized_paired_delta`.

    ``tables`` holds the ``m`` used slices' 2x2 tables; ``se`` is Bonett and Price's with
    ``1/m`` per discordant cell and ``f = 2 (b + c + 2/m)`` the df its variance is worth
    (module docstring), which :func:`effective_discordant` combines.
    """
    m = len(tables)
    out = {}
    for k, (a, b, c, d) in tables.items():
        n = a + b + c + d
        out[k] = ((c - b) / n, bonett_price_paired(b, c, n, 1.0 / m)[1], 2.0 * (b + c + 2.0 / m))
    return out


def rate_mix_slices(
    baseline: Counts, candidate: Counts, used: Sequence[str]
) -> dict[str, tuple[float, float, float]]:
    """Each slice of an unpaired fixed-mix difference: ``(delta, se, df)``, Price-Bonett.

    ``se`` is the standard error of ``p~_c - p~_b`` with ``2/(2m)`` successes and ``4/(2m)``
    trials added to each of the ``2m`` proportions, ``df`` Welch's for the two (reported,
    not used by the normal interval).
    """
    m = 2 * len(used)
    out = {}
    for k in used:
        parts, dfs = [], []
        for x, n in (candidate[k], baseline[k]):
            p = (x + 2.0 / m) / (n + 4.0 / m)
            parts.append(p * (1.0 - p) / (n + 4.0 / m))
            dfs.append(float(max(n - 1, 1)))
        delta = candidate[k][0] / candidate[k][1] - baseline[k][0] / baseline[k][1]
        out[k] = (delta, math.sqrt(sum(parts)), satterthwaite_df(parts, dfs))
    return out


def _effective(
    slices: Mapping[str, tuple[float, float, float]], norm: Mapping[str, float]
) -> float:
    parts = [(norm[k] * slices[k][1]) ** 2 for k in norm]
    return satterthwaite_df(parts, [slices[k][2] for k in norm]) / 2.0


def effective_discordant(tables: Tables, weights: Mapping[str, float]) -> float:
    """The discordant pairs a paired fixed-mix delta is worth once weighted.

    Satterthwaite's (1946) df of ``sum_k w_k^2 se_k^2`` with ``2 (b_k + c_k + 2/m)`` per
    slice (:func:`paired_mix_slices`), halved (module docstring); ``inf`` with no variance.
    ``tables`` are the used slices', ``weights`` over them (renormalized here).
    """
    checked = _check_weights(weights)
    total = sum(checked[k] for k in tables)
    norm = {k: checked[k] / total for k in tables}
    return _effective(paired_mix_slices(tables), norm)
