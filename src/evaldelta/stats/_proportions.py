"""Single proportions (Wilson) and the difference of two independent proportions (Newcombe)."""

from __future__ import annotations

import math

from evaldelta.stats._distributions import chi2_ppf, norm_ppf, norm_sf
from evaldelta.stats._results import ConfidenceInterval, Estimate, UnpairedResult
from evaldelta.stats._thresholds import MIN_MINORITY_CASES, POISSON_EDGE
from evaldelta.stats._validate import (
    check_confidence,
    check_count,
    check_nonnegative,
    warn_degenerate,
)

NAN = float("nan")


def z_critical(confidence: float) -> float:
    """Two-sided standard normal critical value for ``confidence`` (``scipy.stats.norm.ppf``)."""
    return norm_ppf(0.5 + confidence / 2.0)


def check_successes(name: str, successes: object, n: int) -> float:
    """Validate a success count (possibly a float sum) against its total ``n``."""
    out = check_nonnegative(name, successes)
    if out > n:
        raise ValueError(f"{name} must not exceed its total {n}; got {successes!r}.")
    return out


def _wilson(successes: float, n: float, z: float) -> tuple[float, float]:
    """Wilson score limits; ``n`` must be positive."""
    p = successes / n
    z2n = z * z / n
    center = (p + z2n / 2.0) / (1.0 + z2n)
    half = z / (1.0 + z2n) * math.sqrt(p * (1.0 - p) / n + z2n / (4.0 * n))
    # at p = 0 or 1 the score interval ends exactly at the boundary (rounding aside)
    low = 0.0 if successes <= 0 else max(0.0, center - half)
    high = 1.0 if successes >= n else min(1.0, center + half)
    return low, high


def _rate_limits(successes: float, n: float, z: float) -> tuple[float, float]:
    """Modified Wilson limits (see POISSON_EDGE); fractional counts are allowed."""
    low, high = _wilson(successes, n, z)
    alpha = 2.0 * norm_sf(z)  # the two-sided level's alpha, one-sided (BCD 2001)
    if 0.0 < successes <= POISSON_EDGE:
        low = min(low, chi2_ppf(alpha, 2.0 * successes) / (2.0 * n))
    failures = n - successes
    if 0.0 < failures <= POISSON_EDGE:
        high = max(high, 1.0 - chi2_ppf(alpha, 2.0 * failures) / (2.0 * n))
    return low, high


def wilson_interval(successes: float, n: int, confidence: float = 0.95) -> ConfidenceInterval:
    """Wilson score interval for a binomial proportion.

    Method: Wilson (1927), "Probable inference, the law of succession, and statistical
    inference", JASA 22:209-212; matches
    ``statsmodels.stats.proportion.proportion_confint(successes, n, method="wilson")``.
    With ``n = 0`` the interval is undefined: ``(nan, nan)`` and a DegenerateDataWarning.
    """
    n = check_count("n", n)
    s = check_successes("successes", successes, n)
    conf = check_confidence(confidence)
    if n == 0:
        warn_degenerate("The Wilson interval is undefined for n = 0; returning nan.")
        return ConfidenceInterval(NAN, NAN)
    low, high = _wilson(s, n, z_critical(conf))
    return ConfidenceInterval(low, high)


def proportion(successes: float, n: int, confidence: float = 0.95) -> Estimate:
    """A pass rate with its binomial standard error and the modified Wilson interval.

    Method: ``p = successes / n``, ``se = sqrt(p (1 - p) / n)`` (the binomial Wald standard
    error) and the Wilson (1927) score interval, as
    ``statsmodels.stats.proportion.proportion_confint(method="wilson")``, modified near 0
    and n as Brown, Cai and DasGupta (2001, section 4.1.1): with 1 to 3 successes the lower
    limit is at most the one-sided Poisson limit ``chi2.ppf(alpha, 2 x) / (2 n)``, and
    symmetrically for 1 to 3 failures (``POISSON_EDGE``; coverage in docs/calibration.md).
    With ``n = 0`` everything is nan with a DegenerateDataWarning.
    """
    n = check_count("n", n)
    s = check_successes("successes", successes, n)
    conf = check_confidence(confidence)
    if n == 0:
        warn_degenerate("A proportion is undefined for n = 0; returning nan.")
        return Estimate(NAN, NAN, ConfidenceInterval(NAN, NAN), 0, "wilson")
    p = s / n
    se = math.sqrt(p * (1.0 - p) / n)
    low, high = _rate_limits(s, n, z_critical(conf))
    return Estimate(p, se, ConfidenceInterval(low, high), n, "wilson")


def proportion_of_means(
    n: int,
    mean: float,
    sd: float,
    attempts: int,
    confidence: float = 0.95,
    minority_cases: int | None = None,
) -> Estimate:
    """A pass rate from the case means of repeated pass/fail attempts, kept inside [0, 1].

    Each case counts once: the rate is the mean ``p`` of ``n`` case means, and ``se =
    sd / sqrt(n)``. A t interval on case means runs past 0 and 1 ("0.800 [0.550, 1.050]");
    instead this is the modified Wilson interval of :func:`proportion` at the effective sample size
    ``n_eff = p (1 - p) / se^2``: the number of independent attempts that would give the same
    standard error (Kish 1965, *Survey Sampling*, the design effect ``deff = n_attempts /
    n_eff``), clipped to ``[n, attempts]`` (repeats that agree within a case are worth one
    attempt; independent ones are worth each). When every case mean is 0 or every one is 1,
    or ``n < 2``, ``n_eff = n``.

    ``minority_cases`` is the number of cases with the rarer outcome (cases that passed at
    least once, or failed at least once, whichever is fewer). Below ``MIN_MINORITY_CASES``
    (5) the spread of the case means cannot estimate the design effect: one case with a
    single pass in five makes the repeats look independent, and at a rate of 0.05 with
    within-case correlation 0.3 the interval covered 0.90. There ``n_eff = n``, the largest
    design effect repeats allow (``deff = attempts / n``), which keeps the interval honest
    (coverage at least 0.938 over the grid of ``bench/calibrate.py``).
    """
    n = check_count("n", n)
    attempts = check_count("attempts", attempts)
    conf = check_confidence(confidence)
    method = "wilson (effective n of repeated attempts)"
    if n == 0:
        warn_degenerate("A proportion is undefined for n = 0; returning nan.")
        return Estimate(NAN, NAN, ConfidenceInterval(NAN, NAN), 0, method)
    if not 0.0 <= mean <= 1.0:
        raise ValueError(f"mean must be a rate in [0, 1]; got {mean!r}.")
    if attempts < n:
        raise ValueError(f"attempts must be at least n = {n}; got {attempts!r}.")
    p = float(mean)
    spread = p * (1.0 - p)
    se = sd / math.sqrt(n) if n >= 2 and math.isfinite(sd) else NAN
    if minority_cases is not None:
        minority_cases = check_count("minority_cases", minority_cases)
    if spread <= 0.0 or not math.isfinite(se):
        n_eff = float(n)
    elif minority_cases is not None and minority_cases < MIN_MINORITY_CASES:
        n_eff = float(n)
        method = f"wilson (cases as the unit: fewer than {MIN_MINORITY_CASES} cases pass or fail)"
    elif se <= 0.0:
        n_eff = float(attempts)
    else:
        n_eff = min(float(attempts), max(float(n), spread / (se * se)))
    low, high = _rate_limits(p * n_eff, n_eff, z_critical(conf))
    shown_se = se if math.isfinite(se) else math.sqrt(spread / n_eff)
    return Estimate(p, shown_se, ConfidenceInterval(low, high), n, method, df=n_eff)


def newcombe_unpaired(
    successes_baseline: int,
    n_baseline: int,
    successes_candidate: int,
    n_candidate: int,
    confidence: float = 0.95,
) -> UnpairedResult:
    """Difference of two independent proportions, candidate minus baseline.

    Interval: Newcombe (1998), "Interval estimation for the difference between independent
    proportions: comparison of eleven methods", Statistics in Medicine 17:873-890, method 10
    (hybrid score: Wilson intervals of the two proportions combined by square-and-add), as
    ``statsmodels.stats.proportion.confint_proportions_2indep(successes_candidate,
    n_candidate, successes_baseline, n_baseline, method="newcomb", compare="diff")``.

    ``se`` is the unpooled Wald standard error ``sqrt(p_c (1-p_c)/n_c + p_b (1-p_b)/n_b)``.
    ``statistic`` and ``pvalue`` are the two-sided pooled two-proportion z test, as
    ``statsmodels.stats.proportion.proportions_ztest([s_c, s_b], [n_c, n_b])``; when every case
    in both arms has the same outcome the test is undefined (nan, with a
    DegenerateDataWarning).
    """
    n_b = check_count("n_baseline", n_baseline)
    n_c = check_count("n_candidate", n_candidate)
    s_b = check_successes("successes_baseline", successes_baseline, n_b)
    s_c = check_successes("successes_candidate", successes_candidate, n_c)
    conf = check_confidence(confidence)
    method = "newcombe hybrid score (unpaired)"
    if n_b == 0 or n_c == 0:
        warn_degenerate(
            "The difference of two proportions is undefined when an arm has n = 0 "
            f"(n_baseline={n_b}, n_candidate={n_c}); returning nan."
        )
        return UnpairedResult(NAN, NAN, ConfidenceInterval(NAN, NAN), NAN, method, conf)
    z = z_critical(conf)
    p_b, p_c = s_b / n_b, s_c / n_c
    d = p_c - p_b
    l_c, u_c = _wilson(s_c, n_c, z)
    l_b, u_b = _wilson(s_b, n_b, z)
    low = d - math.sqrt((p_c - l_c) ** 2 + (u_b - p_b) ** 2)
    high = d + math.sqrt((u_c - p_c) ** 2 + (p_b - l_b) ** 2)
    se = math.sqrt(p_c * (1.0 - p_c) / n_c + p_b * (1.0 - p_b) / n_b)
    pooled = (s_b + s_c) / (n_b + n_c)
    se0 = math.sqrt(pooled * (1.0 - pooled) * (1.0 / n_b + 1.0 / n_c))
    if se0 == 0.0:
        warn_degenerate(
            "The pooled z test is undefined when every case in both arms has the same "
            f"outcome (pooled rate {pooled!r}); returning a nan statistic and p-value."
        )
        statistic, pvalue = NAN, NAN
    else:
        statistic = d / se0
        pvalue = 2.0 * norm_sf(abs(statistic))
    return UnpairedResult(
        d, se, ConfidenceInterval(low, high), pvalue, method, conf, statistic=statistic
    )
