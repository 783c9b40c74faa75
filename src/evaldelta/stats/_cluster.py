"""Clustered standard errors of a mean (Miller 2024)."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

import numpy as np

from evaldelta.stats._validate import check_count, check_real, warn_degenerate

NAN = float("nan")


def _finish(variance: float, n: int, clusters: int) -> float:
    if n < 2 or clusters < 2:
        warn_degenerate(
            "A clustered standard error needs at least 2 cases in at least 2 clusters "
            f"(n = {n}, clusters = {clusters}); returning nan."
        )
        return NAN
    # never negative: cross >= -SS, so SE^2 >= SS / (n^2 (n - 1))
    return math.sqrt(max(variance, 0.0))


def clustered_se(scores: Sequence[float], clusters: Sequence[Hashable]) -> float:
    """Cluster-robust standard error of the mean of ``scores``.

    Method: Miller (2024), "Adding Error Bars to Evals: A Statistical Approach to Language
    Model Evaluations", arXiv:2411.00640, clustered standard errors:
    ``SE^2 = s^2 / n + (1 / n^2) sum_c sum_i sum_{j != i} (x_ic - xbar)(x_jc - xbar)`` with
    ``s^2`` the n - 1 sample variance. With one case per cluster it is ``scipy.stats.sem``.
    Undefined (nan, with a DegenerateDataWarning) for n < 2 or a single cluster.
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
    ss = float(np.dot(resid, resid))
    cross = sum(s * s for s in sums.values()) - ss
    return _finish(ss / (n - 1) / n + cross / (n * n), n, len(sums))


def clustered_se_from_summary(
    cluster_sizes: Sequence[int], cluster_sums: Sequence[float], sum_squares: float
) -> float:
    """Miller (2024) clustered standard error from per-cluster counts and sums.

    Method: the same estimator as :func:`clustered_se` (Miller 2024, arXiv:2411.00640) from
    sufficient statistics, so a database can reduce rows first: with ``n = sum n_c``,
    ``mean = sum S_c / n``, ``SS = sum_squares - n mean^2``,
    ``cross = sum_c (S_c - n_c mean)^2 - SS``: ``SE^2 = SS / (n - 1) / n + cross / n^2``.
    ``sum_squares`` is the total sum of squared scores. Undefined (nan, with a
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
    ss = max(ss, 0.0)
    cross = sum((s - k * mean) ** 2 for s, k in zip(sums, sizes, strict=True)) - ss
    return _finish(ss / (n - 1) / n + cross / (n * n), n, len(sizes))
