"""Means from summary statistics: the one-sample t interval and Welch's unpaired contrast."""

from __future__ import annotations

import math

from evaldelta.stats._distributions import t_ppf, t_sf
from evaldelta.stats._results import ConfidenceInterval, Estimate, UnpairedResult
from evaldelta.stats._validate import (
    check_confidence,
    check_count,
    check_mean,
    check_sd,
    warn_degenerate,
)

NAN = float("nan")


def t_critical(confidence: float, df: float) -> float:
    """Two-sided Student t critical value for ``confidence`` on ``df`` degrees of freedom.

    ``scipy.stats.t.ppf(0.5 + confidence / 2, df)``; nan unless ``df > 0``.
    """
    return t_ppf(0.5 + confidence / 2.0, df)


def mean_t(n: int, mean: float, sd: float, confidence: float = 0.95) -> Estimate:
    """A mean of case scores with its standard error and Student t interval.

    Method: ``se = sd / sqrt(n)`` and the t interval on ``n - 1`` degrees of freedom, as
    ``scipy.stats.t.interval(confidence, n - 1, loc=mean, scale=se)`` (equivalently
    ``scipy.stats.ttest_1samp(x, 0).confidence_interval(confidence)``). ``sd`` is the sample
    standard deviation with ``ddof = 1``. With ``n < 2`` the standard error is undefined
    (nan, with a DegenerateDataWarning); with ``n = 0`` the estimate is too.
    """
    n = check_count("n", n)
    m = check_mean("mean", mean, n)
    s = check_sd("sd", sd, n)
    conf = check_confidence(confidence)
    if n < 2:
        warn_degenerate(f"A t interval needs n >= 2; got n = {n}. Returning nan.")
        return Estimate(m if n == 1 else NAN, NAN, ConfidenceInterval(NAN, NAN), n, "t")
    df = float(n - 1)
    se = s / math.sqrt(n)
    if se == 0.0:
        warn_degenerate(
            f"Every one of the {n} scores is {m:g} (sd = 0): a t interval would have zero "
            "width, a certainty a finite sample cannot give; returning nan."
        )
        return Estimate(m, 0.0, ConfidenceInterval(NAN, NAN), n, "t", df=df)
    half = t_critical(conf, df) * se
    return Estimate(m, se, ConfidenceInterval(m - half, m + half), n, "t", df=df)


def welch(
    mean_baseline: float,
    sd_baseline: float,
    n_baseline: int,
    mean_candidate: float,
    sd_candidate: float,
    n_candidate: int,
    confidence: float = 0.95,
) -> UnpairedResult:
    """Welch's unequal-variance t contrast of two independent means, candidate minus baseline.

    Method: Welch (1947), "The generalization of Student's problem when several different
    population variances are involved", Biometrika 34:28-35, with Welch-Satterthwaite degrees
    of freedom; matches ``scipy.stats.ttest_ind_from_stats(mean_candidate, sd_candidate,
    n_candidate, mean_baseline, sd_baseline, n_baseline, equal_var=False)`` and the interval of
    ``scipy.stats.ttest_ind(candidate, baseline, equal_var=False).confidence_interval()``.
    Standard deviations use ``ddof = 1``. Undefined (nan, with a DegenerateDataWarning) when
    an arm has fewer than 2 cases or both standard deviations are 0.
    """
    n_b = check_count("n_baseline", n_baseline)
    m_b = check_mean("mean_baseline", mean_baseline, n_b)
    s_b = check_sd("sd_baseline", sd_baseline, n_b)
    n_c = check_count("n_candidate", n_candidate)
    m_c = check_mean("mean_candidate", mean_candidate, n_c)
    s_c = check_sd("sd_candidate", sd_candidate, n_c)
    conf = check_confidence(confidence)
    method = "welch t (unpaired)"
    d = m_c - m_b
    nan_ci = ConfidenceInterval(NAN, NAN)
    if n_b < 2 or n_c < 2:
        warn_degenerate(
            "Welch's t needs at least 2 cases per arm "
            f"(n_baseline={n_b}, n_candidate={n_c}); returning nan."
        )
        return UnpairedResult(d, NAN, nan_ci, NAN, method, conf)
    v_b, v_c = s_b * s_b / n_b, s_c * s_c / n_c
    se = math.sqrt(v_b + v_c)
    if se == 0.0:
        warn_degenerate(
            "Welch's t is undefined when both standard deviations are 0; returning nan."
        )
        return UnpairedResult(d, 0.0, nan_ci, NAN, method, conf)
    df = (v_b + v_c) ** 2 / (v_b * v_b / (n_b - 1) + v_c * v_c / (n_c - 1))
    statistic = d / se
    pvalue = 2.0 * t_sf(abs(statistic), df)
    half = t_critical(conf, df) * se
    return UnpairedResult(
        d, se, ConfidenceInterval(d - half, d + half), pvalue, method, conf, statistic, df
    )
