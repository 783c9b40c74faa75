"""Clustered standard errors of a mean: CR1 with a t interval on G - 1 degrees of freedom.

Cases that share a source (several questions on one passage) are not independent; Miller
(2024, "Adding Error Bars to Evals", arXiv:2411.00640) recommends cluster-robust standard
errors for evals. With few clusters the plain sandwich estimator (CR0) is biased down and a
normal interval undercovers (Cameron, Gelbach and Miller 2008, "Bootstrap-based
improvements for inference with clustered errors", REStat 90:414-427; Cameron and Miller
2015, "A practitioner's guide to cluster-robust inference", J. Human Resources 50:317-372):
evaldelta uses CR1, the G/(G-1) small-sample factor, with Student t on G - 1 degrees of
freedom, exactly as ``statsmodels`` ``OLS(y, 1).fit(cov_type="cluster", use_t=True)``, and
warns below 20 clusters or when cluster sizes are very unequal.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

import numpy as np

from evaldelta.stats._means import t_critical
from evaldelta.stats._results import ConfidenceInterval, Estimate, ReliabilityWarning
from evaldelta.stats._validate import check_confidence, check_count, check_real, warn_degenerate

NAN = float("nan")
MIN_CLUSTERS = 20  # below this, the warning of Cameron, Gelbach and Miller (2008)
UNEQUAL_CV = 1.0  # coefficient of variation of cluster sizes above which sizes are "very unequal"


def _cr1(sq_cluster_resid: float, n: int, clusters: int) -> float:
    """CR1 variance of a mean: ``G / (G - 1) * sum_c S_c^2 / n^2`` (S_c: a cluster's residuals)."""
    return clusters / (clusters - 1) * sq_cluster_resid / (n * n)


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
    """A mean with its CR1 clustered standard error and a t interval on G - 1 df.

    Method: :func:`clustered_se_from_summary` (CR1), and ``mean +/- t_{G-1} * SE``, as
    ``statsmodels`` ``OLS(x, ones).fit(cov_type="cluster", cov_kwds={"groups": g},
    use_t=True).conf_int()`` (which uses G - 1 degrees of freedom for clustered errors).
    Warns (ReliabilityWarning) with fewer than 20 clusters (Cameron, Gelbach and Miller
    2008) or when the cluster sizes' coefficient of variation exceeds 1.
    """
    conf = check_confidence(confidence)
    se = clustered_se_from_summary(cluster_sizes, cluster_sums, sum_squares)
    sizes = np.asarray(list(cluster_sizes), dtype=float)
    n, g = int(sizes.sum()), int(sizes.size)
    mean = float(sum(cluster_sums)) / n if n else NAN
    if not math.isfinite(se):
        return Estimate(mean, NAN, ConfidenceInterval(NAN, NAN), n, "cr1 clustered t")
    _warn_reliability(sizes)
    half = t_critical(conf, g - 1) * se
    return Estimate(
        mean, se, ConfidenceInterval(mean - half, mean + half), n, "cr1 clustered t", df=g - 1
    )


def _warn_reliability(sizes: np.ndarray) -> None:
    import warnings

    g = int(sizes.size)
    if g < MIN_CLUSTERS:
        warnings.warn(
            f"Only {g} clusters: a clustered interval (CR1, t on {g - 1} df) on fewer than "
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
