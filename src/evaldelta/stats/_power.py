"""Sample sizes and minimum detectable effects: paired t (noncentral t) and exact McNemar."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np

from evaldelta.stats._distributions import (
    binom_cdf,
    binom_pmf,
    binom_ppf,
    binom_sf,
    nct_sf,
    norm_isf,
    norm_ppf,
    t_isf,
)
from evaldelta.stats._results import PowerResult
from evaldelta.stats._validate import (
    check_alternative,
    check_count,
    check_positive,
    check_probability,
    check_real,
    warn_degenerate,
)

_MAX_N = 1e12
_MIN_N = 2.0  # a t test needs at least one degree of freedom


def _check_power_alpha(power: object, alpha: object) -> tuple[float, float]:
    pw = check_probability("power", power)
    al = check_probability("alpha", alpha)
    if pw <= al:
        raise ValueError(f"power must exceed alpha = {al!r}; got power = {pw!r}.")
    return pw, al


def _t_power(d: float, nobs: float, df: float, alpha: float, alternative: str) -> float:
    """Power of a t test with noncentrality ``d * sqrt(nobs)``, as statsmodels' ttest_power."""
    nc = d * math.sqrt(nobs)
    a = alpha / 2.0 if alternative == "two-sided" else alpha
    out = 0.0
    if alternative in ("two-sided", "larger"):
        out += nct_sf(t_isf(a, df), df, nc)
    if alternative in ("two-sided", "smaller"):
        # P(T_nc < -c) written as P(T_{-nc} > c): scipy's nct.cdf returns nan far in the
        # lower tail of a large positive nc (e.g. nc 11, df 2), where the sf form gives ~0.
        out += nct_sf(t_isf(a, df), df, -nc)
    return out


def _paired_power(d: float, n: float, alpha: float, alternative: str) -> float:
    return _t_power(d, n, n - 1.0, alpha, alternative)


def _two_sample_power(d: float, n: float, alpha: float, alternative: str) -> float:
    # Equal arms of n: effective nobs 1 / (1/n + 1/n) = n / 2, df = 2n - 2 (TTestIndPower).
    return _t_power(d, n / 2.0, 2.0 * n - 2.0, alpha, alternative)


def _solve_n(f: Callable[[float], float], target: float) -> float:
    """Smallest real n >= 2 with power f(n) = target, by bracketing and brentq."""
    if f(_MIN_N) >= target:
        return _MIN_N
    hi = 4.0
    while f(hi) < target:
        hi *= 2.0
        if hi > _MAX_N:
            raise ValueError(
                f"The effect is too small to reach power {target!r} with fewer than "
                f"{_MAX_N:.0e} cases."
            )
    return _brentq(lambda n: f(n) - target, _MIN_N, hi, xtol=1e-10, rtol=1e-12)


def _brentq(
    f: Callable[[float], float], lo: float, hi: float, *, xtol: float, rtol: float
) -> float:
    """``scipy.optimize.brentq``, imported on first use (0.3 s that compare never needs)."""
    from scipy import optimize

    return float(optimize.brentq(f, lo, hi, xtol=xtol, rtol=rtol))


def _z(alpha: float, alternative: str) -> float:
    return norm_isf(alpha / 2.0 if alternative == "two-sided" else alpha)


def _check_direction(effect: float, alternative: str) -> None:
    if effect == 0.0:
        raise ValueError("effect must be non-zero; got 0.")
    if alternative == "larger" and effect < 0.0:
        raise ValueError(f"alternative 'larger' needs a positive effect; got {effect!r}.")
    if alternative == "smaller" and effect > 0.0:
        raise ValueError(f"alternative 'smaller' needs a negative effect; got {effect!r}.")


def required_pairs(
    effect: float,
    sd: float,
    power: float = 0.8,
    alpha: float = 0.05,
    alternative: str = "two-sided",
) -> PowerResult:
    """Pairs needed for a paired t test to detect a mean delta ``effect`` (score units).

    Method: exact power of the one-sample/paired t test from the noncentral t distribution
    (``scipy.stats.nct``, noncentrality ``(effect / sd) sqrt(n)``, df ``n - 1``) solved for n
    with ``scipy.optimize.brentq``, as
    ``statsmodels.stats.power.TTestPower().solve_power(effect_size=effect / sd, power=power,
    alpha=alpha, alternative=alternative)``; ``n`` is its ceiling (at least 2).
    ``n_normal = ((z_a + z_b) sd / effect)^2`` is the normal approximation.
    ``unpaired_n_per_arm`` is the ceiling of the two-sample t solution with equal arms and the
    same sd (``TTestIndPower().solve_power(..., ratio=1)``). ``alternative`` follows
    statsmodels: ``"larger"`` needs ``effect > 0``, ``"smaller"`` needs ``effect < 0``.
    """
    eff = check_real("effect", effect)
    s = check_positive("sd", sd)
    pw, al = _check_power_alpha(power, alpha)
    alt = check_alternative(alternative)
    _check_direction(eff, alt)
    d = eff / s
    n_exact = _solve_n(lambda n: _paired_power(d, n, al, alt), pw)
    n_unpaired = _solve_n(lambda n: _two_sample_power(d, n, al, alt), pw)
    n_normal = ((_z(al, alt) + norm_ppf(pw)) * s / eff) ** 2
    return PowerResult(
        math.ceil(n_exact),
        n_exact,
        n_normal,
        math.ceil(n_unpaired),
        eff,
        pw,
        al,
        alt,
        "paired t (noncentral t)",
    )


def _connor_n(delta: float, psi: float, z_a: float, z_b: float) -> float:
    return (z_a * math.sqrt(psi) + z_b * math.sqrt(max(0.0, psi - delta * delta))) ** 2 / (
        delta * delta
    )


def _check_discordant(p_only_candidate: float, p_only_baseline: float) -> tuple[float, float]:
    p01 = check_probability("p_only_candidate", p_only_candidate, open_interval=False)
    p10 = check_probability("p_only_baseline", p_only_baseline, open_interval=False)
    if p01 + p10 > 1.0:
        raise ValueError(
            "p_only_candidate + p_only_baseline must not exceed 1; got "
            f"{p01!r} + {p10!r} = {p01 + p10!r}."
        )
    return p01, p10


def _critical_counts(
    d: np.ndarray, alpha: float, alternative: str
) -> tuple[np.ndarray, np.ndarray]:
    """For ``D`` discordant pairs, the rejection region of the exact McNemar test on ``b``.

    Returns ``(low, high)``: the test rejects when ``b <= low`` or ``b >= high`` (``b`` the
    baseline-only count, Binomial(D, 1/2) under the null). Two-sided: the exact binomial
    test's p-value ``min(1, 2 P(X <= min(b, D - b)))`` is at most ``alpha``; "larger" (the
    candidate wins more): ``P(X <= b) <= alpha``; "smaller": ``P(X >= b) <= alpha``.
    """
    tail = alpha / 2.0 if alternative == "two-sided" else alpha
    k = binom_ppf(tail, d, 0.5)  # smallest k with cdf(k) >= tail
    k = np.where(binom_cdf(k, d, 0.5) > tail * (1 + 1e-12), k - 1, k)
    low = k if alternative in ("two-sided", "larger") else np.full_like(k, -1.0)
    high = d - k if alternative in ("two-sided", "smaller") else d + 1.0
    return low, high


@functools.lru_cache(maxsize=16)
def _critical_table(alpha: float, alternative: str, size: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_critical_counts` for ``D = 0 .. size - 1``, kept (read-only) for reuse.

    The region for ``D`` discordant pairs does not depend on ``n``, and each entry is
    computed on its own (Boost's binomial, element by element), so a slice of a larger table
    is the smaller one exactly. The search for n (:func:`_exact_n`) evaluates the power at
    n, n + 1, ...: with the table kept, the costly quantiles are computed once, not per n.
    """
    low, high = _critical_counts(np.arange(size, dtype=float), alpha, alternative)
    low.setflags(write=False)
    high.setflags(write=False)
    return low, high


def _table_size(n: int) -> int:
    return 1 << max(6, n.bit_length())  # a power of two above n


@functools.lru_cache(maxsize=16)
def _reject_table(q: float, alpha: float, alternative: str, size: int) -> np.ndarray:
    """``P(reject | D)`` for ``D = 0 .. size - 1`` when ``b ~ Binomial(D, q)`` (read-only).

    Like the regions (:func:`_critical_table`) it does not depend on ``n`` and is computed
    element by element, so the search for n reuses it across n exactly.
    """
    d = np.arange(size, dtype=float)
    low, high = _critical_table(alpha, alternative, size)
    reject = np.where(low < 0, 0.0, binom_cdf(low, d, q)) + np.where(
        high > d, 0.0, binom_sf(high - 1.0, d, q)
    )
    reject.setflags(write=False)
    return reject


def mcnemar_exact_power(
    n: int,
    p_only_candidate: float,
    p_only_baseline: float,
    alpha: float = 0.05,
    alternative: str = "two-sided",
) -> float:
    """The power of the exact McNemar test with ``n`` pairs.

    Method: the number of discordant pairs is ``D ~ Binomial(n, psi)``, ``psi = p01 + p10``;
    given ``D``, the baseline-only count is ``b ~ Binomial(D, p10 / psi)`` and the exact
    test (:func:`mcnemar_exact`: a binomial test at 1/2) rejects on the region of
    :func:`_critical_counts`. Power is ``sum_D P(D) P(reject | D)`` (exact enumeration; cf.
    Schork and Williams 1980, "Number of observations required for the comparison of two
    correlated proportions", Communications in Statistics B 9:349-357).
    """
    n_pairs = check_count("n", n)
    p01, p10 = _check_discordant(p_only_candidate, p_only_baseline)
    _, al = _check_power_alpha(0.5, alpha)
    alt = check_alternative(alternative)
    psi = p01 + p10
    if n_pairs == 0 or psi == 0.0:
        return 0.0
    d = np.arange(n_pairs + 1, dtype=float)
    reject = _reject_table(p10 / psi, al, alt, _table_size(n_pairs))[: n_pairs + 1]
    return float(np.sum(binom_pmf(d, n_pairs, psi) * reject))


def _exact_n(p01: float, p10: float, power: float, alpha: float, alt: str, start: int) -> int:
    """The smallest n at which the exact McNemar test reaches ``power`` (found from ``start``).

    Exact power is not monotone in n (it saw-tooths as the rejection region steps), so the
    answer is the first n that reaches the target, searched upward from a start at or below
    it (Connor's normal approximation, lowered until its power is below the target).
    """
    lo = max(1, start)
    while lo > 1 and mcnemar_exact_power(lo, p01, p10, alpha, alt) >= power:
        lo = max(1, lo // 2)
    n = lo
    while mcnemar_exact_power(n, p01, p10, alpha, alt) < power:
        n += 1
        if n > 50 * max(start, 100):  # pragma: no cover - power always grows to 1 in n
            raise RuntimeError("the exact McNemar power did not reach its target")
    return n


def required_pairs_mcnemar(
    p_only_candidate: float,
    p_only_baseline: float,
    power: float = 0.8,
    alpha: float = 0.05,
    alternative: str = "two-sided",
) -> PowerResult:
    """Pairs needed for the exact McNemar test to detect a difference in discordance.

    Method: ``n`` is the smallest number of pairs at which the exact McNemar test (the one
    compare reports) reaches ``power`` (:func:`mcnemar_exact_power`, exact enumeration).
    Beside it, ``n_normal`` is Connor (1987), "Sample size for testing differences in
    proportions for the paired-sample design", Biometrics 43:207-211, the normal
    approximation ``[z_a sqrt(psi) + z_b sqrt(psi - delta^2)]^2 / delta^2`` with
    discordance ``psi = p01 + p10`` and ``delta = p01 - p10`` (candidate-only minus
    baseline-only); at Connor's n the exact test has less power than asked (seed 002: 312
    pairs give 76.4%, and 80% is first reached at 337). ``n_exact`` is the same as ``n``.
    There is no unpaired counterpart (``unpaired_n_per_arm`` is None).
    """
    p01, p10 = _check_discordant(p_only_candidate, p_only_baseline)
    pw, al = _check_power_alpha(power, alpha)
    alt = check_alternative(alternative)
    delta = p01 - p10
    if delta == 0.0:
        raise ValueError(
            "p_only_candidate and p_only_baseline must differ (delta = 0 cannot be "
            f"detected); both are {p01!r}."
        )
    _check_direction(delta, alt)
    connor = _connor_n(delta, p01 + p10, _z(al, alt), norm_ppf(pw))
    n = _exact_n(p01, p10, pw, al, alt, math.floor(connor))
    return PowerResult(
        n, float(n), connor, None, delta, pw, al, alt, "exact mcnemar (connor 1987 beside)"
    )


def mde_paired_t(
    n: int,
    sd: float,
    power: float = 0.8,
    alpha: float = 0.05,
    alternative: str = "two-sided",
) -> float:
    """Minimum detectable mean delta (score units) for a paired t test with ``n`` pairs.

    Method: the exact noncentral-t power (as :func:`required_pairs`) solved for the effect
    size with ``scipy.optimize.brentq``, times ``sd``; matches
    ``statsmodels.stats.power.TTestPower().solve_power(nobs=n, effect_size=None, power=power,
    alpha=alpha, alternative=alternative) * sd``. Negative for ``alternative="smaller"``.
    """
    n_pairs = check_count("n", n)
    if n_pairs < 2:
        raise ValueError(f"n must be at least 2 pairs for a paired t test; got {n!r}.")
    s = check_positive("sd", sd)
    pw, al = _check_power_alpha(power, alpha)
    alt = check_alternative(alternative)
    sign = -1.0 if alt == "smaller" else 1.0

    def gap(d: float) -> float:
        return _paired_power(sign * d, float(n_pairs), al, alt) - pw

    hi = 1.0
    while gap(hi) < 0.0:
        hi *= 2.0
    d = _brentq(gap, 1e-12, hi, xtol=1e-14, rtol=1e-12)
    return sign * d * s


def mde_mcnemar(n: int, p_discordant: float, power: float = 0.8, alpha: float = 0.05) -> float:
    """Minimum detectable paired difference ``delta = p01 - p10`` for McNemar with ``n`` pairs.

    Method: the smallest ``delta`` in ``(0, psi]`` at which the exact McNemar test
    (:func:`mcnemar_exact_power`, two-sided) reaches ``power`` with ``n`` pairs at
    discordance ``psi = p_discordant`` (``p01 = (psi + delta) / 2``), found by bisection
    (``scipy.optimize.brentq``) on the power, which grows with ``delta``. The answer is
    positive (the test is symmetric). If even ``delta = psi`` (every discordant pair one way)
    does not reach the power, no effect is detectable: nan with a DegenerateDataWarning.
    """
    n_pairs = check_count("n", n)
    if n_pairs < 1:
        raise ValueError(f"n must be at least 1 pair; got {n!r}.")
    psi = check_probability("p_discordant", p_discordant, open_interval=False)
    if psi == 0.0:
        raise ValueError("p_discordant must be positive; got 0 (no pair can disagree).")
    pw, al = _check_power_alpha(power, alpha)

    def gap(d: float) -> float:
        return mcnemar_exact_power(n_pairs, (psi + d) / 2.0, (psi - d) / 2.0, al) - pw

    if gap(psi) < 0.0:
        warn_degenerate(
            f"With n = {n_pairs} pairs and discordance {psi:.3g}, no difference is detectable "
            f"at power {pw:.3g} (the exact McNemar test); returning nan."
        )
        return float("nan")
    if gap(1e-12) >= 0.0:
        return 0.0
    return _brentq(gap, 1e-12, psi, xtol=1e-12, rtol=1e-10)
