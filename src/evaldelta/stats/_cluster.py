"""Clustered standard errors of a mean: CR1 (as statsmodels) and CR2 with Bell-McCaffrey df.

Cases that share a source (several questions on one passage) are not independent; Miller
(2024, "Adding Error Bars to Evals", arXiv:2411.00640) recommends cluster-robust standard
errors for evals. With few clusters the plain sandwich estimator (CR0) is biased down and a
normal interval undercovers (Cameron, Gelbach and Miller 2008, "Bootstrap-based
improvements for inference with clustered errors", REStat 90:414-427; Cameron and Miller
2015, "A practitioner's guide to cluster-robust inference", J. Human Resources 50:317-372).

:func:`clustered_se` is CR1, the G/(G-1) small-sample factor, exactly ``statsmodels``'
``OLS(y, 1).fit(cov_type="cluster")``. The interval (:func:`clustered_mean`) uses CR2, the
bias-reduced estimator of Bell and McCaffrey (2002, "Bias reduction in standard errors for
linear regression with multi-stage samples", Survey Methodology 28:169-181), with Student t
on their Satterthwaite degrees of freedom, as Imbens and Kolesar (2016, "Robust standard
errors in small samples: some practical advice", REStat 98:701-712) recommend: CR1 with t
on G - 1 df covers as little as 0.86 with 5 to 20 clusters of unequal size (cv 0.92;
docs/calibration.md), CR2 with Bell-McCaffrey df at least 0.937. With equal cluster sizes
the two coincide (CR2 = CR1 and the df are G - 1). Warns below 20 clusters or when cluster
sizes are very unequal.

A pass rate with clusters (:func:`clustered_proportion`) is not a symmetric t interval: on
pass/fail outcomes near 0 or 1 the t interval's skewness error dominates, and it covered
0.92 at 20 clusters of unequal size (cv 0.92) and a rate of 0.9 with no warning
(docs/calibration.md, issue 24, item 16). It takes Korn and Graubard's (1998) interval
instead, a Clopper-Pearson interval at the design's effective sample size, which stays in
[0, 1] and covered 0.958 there; it warns below ``MIN_RATE_CLUSTERS`` (50) clusters, where
strong clustering (icc 0.3) held it to 0.92.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

import numpy as np

from evaldelta.stats._distributions import beta_ppf
from evaldelta.stats._means import t_critical
from evaldelta.stats._results import ConfidenceInterval, Estimate, ReliabilityWarning
from evaldelta.stats._thresholds import MIN_CLUSTERS, MIN_RATE_CLUSTERS, UNEQUAL_CV
from evaldelta.stats._validate import check_confidence, check_count, check_real, warn_degenerate

NAN = float("nan")
METHOD = "cr2 clustered t (Bell-McCaffrey df)"


def _cr1(sq_cluster_resid: float, n: int, clusters: int) -> float:
    """CR1 variance of a mean: ``G / (G - 1) * sum_c S_c^2 / n^2`` (S_c: a cluster's residuals)."""
    return clusters / (clusters - 1) * sq_cluster_resid / (n * n)


def _cr2_bell_mccaffrey(sizes: np.ndarray, resid_sums: np.ndarray) -> tuple[float, float]:
    """CR2 variance of a mean and its Bell-McCaffrey degrees of freedom.

    For a mean (regression on a constant) cluster g's block of the hat matrix is
    ``J_g / n``, so ``(I - H_gg)^(-1/2)`` scales the sum of g's residuals by
    ``1 / sqrt(1 - n_g / n)`` and ``V = sum_g S_g^2 / (1 - n_g / n) / n^2``. The degrees of
    freedom are Satterthwaite's for ``V = e' B e`` under independent homoskedastic errors,
    ``(tr B)^2 / tr(B^2)`` (Bell and McCaffrey 2002), which with ``u_g = (I - H) 1_g`` and
    ``u_g' u_h = n_g [g = h] - n_g n_h / n`` needs only the G cluster sizes.
    """
    n = float(sizes.sum())
    a = 1.0 / ((1.0 - sizes / n) * n * n)
    variance = float(np.sum(a * resid_sums * resid_sums))
    cross = np.diag(sizes) - np.outer(sizes, sizes) / n
    df = float((a @ np.diag(cross)) ** 2 / np.sum(np.outer(a, a) * cross * cross))
    return variance, df


def _finish(variance: float, n: int, clusters: int) -> float:
    if n < 2 or clusters < 2:
        warn_degenerate(
            "A clustered standard error needs at least 2 cases in at least 2 clusters "
            f"(n = {n}, clusters = {clusters}); returning nan."
        )
        return NAN
    return math.sqrt(max(variance, 0.0))


def clustered_se(scores: Sequence[float], clusters: Sequence[Hashable]) -> float:
    """Cluster-robust (CR1) standard error of the mean of ``scores``.

    Method: ``SE^2 = G / (G - 1) * (1 / n^2) * sum_c (sum_{i in c} (x_i - xbar))^2``, the CR1
    estimator (Cameron and Miller 2015), which is ``statsmodels``' ``OLS(x, ones).fit(
    cov_type="cluster", cov_kwds={"groups": clusters}).bse[0]``; with one case per cluster
    it is ``scipy.stats.sem``. Undefined (nan, with a DegenerateDataWarning) for n < 2 or a
    single cluster.
    """
    try:
        x = np.asarray(scores, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"scores must be a sequence of numbers; got {scores!r}.") from exc
    if x.ndim != 1:
        raise ValueError(f"scores must be one-dimensional; got shape {x.shape}.")
    if len(clusters) != x.size:
        raise ValueError(
            f"scores and clusters must have the same length; got {x.size} and {len(clusters)}."
        )
    bad = ~np.isfinite(x)
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        raise ValueError(f"scores must be finite; got {x[index]!r} at position {index}.")
    n = int(x.size)
    sums: dict[Hashable, float] = {}
    if n:
        resid = x - float(np.mean(x))
        for label, r in zip(clusters, resid.tolist(), strict=True):
            sums[label] = sums.get(label, 0.0) + r
    if n < 2 or len(sums) < 2:
        return _finish(NAN, n, len(sums))
    return _finish(_cr1(sum(v * v for v in sums.values()), n, len(sums)), n, len(sums))


def clustered_se_from_summary(
    cluster_sizes: Sequence[int], cluster_sums: Sequence[float], sum_squares: float
) -> float:
    """CR1 clustered standard error from per-cluster counts and sums.

    Method: the same estimator as :func:`clustered_se` from sufficient statistics, so a
    database can reduce rows first: with ``n = sum n_c`` and ``mean = sum S_c / n``,
    ``SE^2 = G / (G - 1) * sum_c (S_c - n_c mean)^2 / n^2``. ``sum_squares`` (the total sum
    of squared scores) is checked for consistency with the sums. Undefined (nan, with a
    DegenerateDataWarning) for n < 2 or a single cluster.
    """
    if len(cluster_sizes) != len(cluster_sums):
        raise ValueError(
            "cluster_sizes and cluster_sums must have the same length; got "
            f"{len(cluster_sizes)} and {len(cluster_sums)}."
        )
    sizes = [check_count(f"cluster_sizes[{i}]", v) for i, v in enumerate(cluster_sizes)]
    for i, v in enumerate(sizes):
        if v == 0:
            raise ValueError(f"cluster_sizes[{i}] must be positive; got 0.")
    sums = [check_real(f"cluster_sums[{i}]", v) for i, v in enumerate(cluster_sums)]
    sq = check_real("sum_squares", sum_squares)
    n = sum(sizes)
    if n < 2 or len(sizes) < 2:
        return _finish(NAN, n, len(sizes))
    mean = sum(sums) / n
    ss = sq - n * mean * mean
    if ss < -1e-9 * max(1.0, abs(sq)):
        raise ValueError(
            f"sum_squares {sq!r} is smaller than n * mean^2 = {n * mean * mean!r}; the "
            "summaries are inconsistent."
        )
    resid = sum((s - k * mean) ** 2 for s, k in zip(sums, sizes, strict=True))
    return _finish(_cr1(resid, n, len(sizes)), n, len(sizes))


def clustered_mean(
    cluster_sizes: Sequence[int],
    cluster_sums: Sequence[float],
    sum_squares: float,
    confidence: float = 0.95,
) -> Estimate:
    """A mean with its CR2 clustered standard error and a t interval on Bell-McCaffrey df.

    Method: CR2 (Bell and McCaffrey 2002) and ``mean +/- t_df * SE`` with their
    Satterthwaite df (see :func:`_cr2_bell_mccaffrey`), Imbens and Kolesar's (2016)
    recommendation. With equal cluster sizes this is exactly ``statsmodels``
    ``OLS(x, ones).fit(cov_type="cluster", cov_kwds={"groups": g}, use_t=True)
    .conf_int()`` (CR1, t on G - 1 df). The summaries are validated as in
    :func:`clustered_se_from_summary`. Warns (ReliabilityWarning) with fewer than 20
    clusters (Cameron, Gelbach and Miller 2008) or when the cluster sizes' coefficient of
    variation exceeds 1.
    """
    conf = check_confidence(confidence)
    cr1 = clustered_se_from_summary(cluster_sizes, cluster_sums, sum_squares)
    sizes = np.asarray(list(cluster_sizes), dtype=float)
    n = int(sizes.sum())
    mean = float(sum(cluster_sums)) / n if n else NAN
    if not math.isfinite(cr1):
        return Estimate(mean, NAN, ConfidenceInterval(NAN, NAN), n, METHOD)
    resid = np.asarray([float(v) for v in cluster_sums]) - sizes * mean
    variance, df = _cr2_bell_mccaffrey(sizes, resid)
    se = math.sqrt(max(variance, 0.0))
    _warn_reliability(sizes)
    half = t_critical(conf, df) * se
    return Estimate(mean, se, ConfidenceInterval(mean - half, mean + half), n, METHOD, df=df)


def clustered_proportion(
    cluster_sizes: Sequence[int],
    cluster_sums: Sequence[float],
    sum_squares: float,
    confidence: float = 0.95,
) -> Estimate:
    """A pass rate with clusters: Korn and Graubard's (1998) interval on the CR2 variance.

    Method: Korn E L, Graubard B I (1998), "Confidence intervals for proportions with small
    expected number of positive counts estimated from survey data", Survey Methodology
    24:193-201, as R ``survey::svyciprop(method = "beta")`` computes it: the effective
    sample size ``n* = p (1 - p) / V``, scaled by ``(t_{n-1} / t_df)^2`` at the interval's
    quantile, and the Clopper-Pearson limits ``Beta(a/2; n* p, n* (1 - p) + 1)`` and
    ``Beta(1 - a/2; n* p + 1, n* (1 - p))``. ``V`` is the CR2 variance and ``df`` Bell and
    McCaffrey's (:func:`clustered_mean`), which with equal cluster sizes are the design's
    with-replacement variance and its G - 1 df, so there it is svyciprop's interval. ``n*``
    is at most ``n`` (svyciprop does not cap it: clusters cannot hold more evidence than
    independent cases) and is ``n`` when ``V`` is 0 (every case passed, or none): the cases are
    then the unit, as for repeats (:func:`evaldelta.stats.proportion_of_means`). The scores
    must lie in [0, 1] (pass/fail, or a case's share of passing repeats). Warns as
    :func:`clustered_mean` does, and also from 20 to ``MIN_RATE_CLUSTERS`` (50) clusters:
    with strong clustering (icc 0.3) and a rate of 0.9 it covered 0.92 at 20 clusters
    (docs/calibration.md).
    """
    conf = check_confidence(confidence)
    cr1 = clustered_se_from_summary(cluster_sizes, cluster_sums, sum_squares)
    sizes = np.asarray(list(cluster_sizes), dtype=float)
    n = int(sizes.sum())
    p = float(sum(cluster_sums)) / n if n else NAN
    if math.isfinite(p) and not -1e-12 <= p <= 1.0 + 1e-12:
        raise ValueError(f"a clustered proportion needs scores in [0, 1]; their mean is {p!r}.")
    method = "Korn-Graubard clustered (CR2 variance, Bell-McCaffrey df)"
    if not math.isfinite(cr1):
        return Estimate(p, NAN, ConfidenceInterval(NAN, NAN), n, method)
    p = min(max(p, 0.0), 1.0)
    resid = np.asarray([float(v) for v in cluster_sums]) - sizes * p
    variance, df = _cr2_bell_mccaffrey(sizes, resid)
    _warn_reliability(sizes)
    if MIN_CLUSTERS <= sizes.size < MIN_RATE_CLUSTERS:
        import warnings

        warnings.warn(
            f"Only {sizes.size} clusters: a clustered pass rate on fewer than "
            f"{MIN_RATE_CLUSTERS} clusters covers as little as 0.92 when the clusters differ "
            "strongly (intra-cluster correlation 0.3 at a rate of 0.9; docs/calibration.md).",
            ReliabilityWarning,
            stacklevel=2,
        )
    spread = p * (1.0 - p)
    n_eff = float(n) if variance <= 0.0 or spread <= 0.0 else min(float(n), spread / variance)
    n_eff *= (t_critical(conf, float(n - 1)) / t_critical(conf, df)) ** 2
    low, high = _clopper_pearson(p * n_eff, n_eff, conf)
    return Estimate(
        p, math.sqrt(max(variance, 0.0)), ConfidenceInterval(low, high), n, method, df=df
    )


def _clopper_pearson(x: float, n: float, conf: float) -> tuple[float, float]:
    """Clopper-Pearson limits for ``x`` of ``n`` (both may be fractional): beta quantiles."""
    a = (1.0 - conf) / 2.0
    low = 0.0 if x <= 0.0 else beta_ppf(a, x, n - x + 1.0)
    high = 1.0 if x >= n else beta_ppf(1.0 - a, x + 1.0, n - x)
    return low, high


def _warn_reliability(sizes: np.ndarray) -> None:
    import warnings

    g = int(sizes.size)
    if g < MIN_CLUSTERS:
        warnings.warn(
            f"Only {g} clusters: a clustered interval (CR2, Bell-McCaffrey df) on fewer than "
            f"{MIN_CLUSTERS} clusters may cover less than its nominal level.",
            ReliabilityWarning,
            stacklevel=3,
        )
    cv = float(sizes.std() / sizes.mean()) if g and sizes.mean() > 0 else 0.0
    if cv > UNEQUAL_CV:
        share = float(sizes.max() / sizes.sum())
        warnings.warn(
            f"Cluster sizes are very unequal (the largest holds {share:.0%} of the cases); "
            "a clustered interval may cover less than its nominal level.",
            ReliabilityWarning,
            stacklevel=3,
        )
