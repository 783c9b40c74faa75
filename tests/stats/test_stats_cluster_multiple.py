import math
import warnings

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.multitest import multipletests

import evaldelta.stats as es
from evaldelta.stats import (
    DegenerateDataWarning,
    clustered_se,
    clustered_se_from_summary,
    holm,
)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_holm_matches_statsmodels(seed: int) -> None:
    rng = np.random.default_rng(seed)
    p = rng.uniform(0, 0.2, size=7).tolist()
    # statsmodels.stats.multitest.multipletests(p, method="holm")[1]
    ref = multipletests(p, method="holm")[1]
    assert holm(p) == pytest.approx(tuple(ref))


def test_holm_nan_passes_through_and_is_not_counted() -> None:
    p = [0.01, float("nan"), 0.04, 0.03]
    ref = multipletests([0.01, 0.04, 0.03], method="holm")[1]
    out = holm(p)
    assert math.isnan(out[1])
    assert (out[0], out[2], out[3]) == pytest.approx(tuple(ref))
    assert holm([]) == ()
    assert holm([0.9, 0.8]) == pytest.approx(tuple(multipletests([0.9, 0.8], method="holm")[1]))


def test_holm_validation() -> None:
    with pytest.raises(ValueError, match=r"pvalues\[1\]"):
        holm([0.1, 1.5])
    with pytest.raises(ValueError, match=r"pvalues\[0\]"):
        holm([-0.1])


def test_clustered_se_singletons_equal_sem() -> None:
    rng = np.random.default_rng(5)
    x = rng.normal(size=30)
    # scipy.stats.sem(x) (ddof=1): with one case per cluster the cross term is 0
    assert clustered_se(x.tolist(), list(range(30))) == pytest.approx(stats.sem(x))


def test_clustered_se_against_statsmodels_ols_cluster() -> None:
    rng = np.random.default_rng(9)
    groups = np.repeat(np.arange(12), rng.integers(2, 8, size=12))
    effects = rng.normal(size=12)[groups]
    y = effects + rng.normal(size=groups.size)
    n = y.size
    # CR1 is what statsmodels computes: OLS(y, const).fit(cov_type="cluster") has
    #   V = G/(G-1) * (N-1)/(N-K) * (1/N^2) * sum_g (sum_i e_ig)^2, with K = 1.
    fit = sm.OLS(y, np.ones(n)).fit(cov_type="cluster", cov_kwds={"groups": groups})
    assert clustered_se(y.tolist(), groups.tolist()) == pytest.approx(float(fit.bse[0]), rel=1e-10)


def test_clustered_mean_equal_sizes_is_statsmodels_cr1_with_t_on_g_minus_1() -> None:
    rng = np.random.default_rng(9)
    groups = np.repeat(np.arange(12), 5)
    y = rng.normal(size=12)[groups] + rng.normal(size=groups.size)
    sizes = [5] * 12
    sums = [float(y[groups == c].sum()) for c in range(12)]
    # with equal sizes CR2 = CR1 and the Bell-McCaffrey df are G - 1; statsmodels
    # use_t=True gives t intervals on G - 1 = 11 df for clustered errors
    fit = sm.OLS(y, np.ones(y.size)).fit(
        cov_type="cluster", cov_kwds={"groups": groups}, use_t=True
    )
    with pytest.warns(es.ReliabilityWarning, match="Only 12 clusters"):
        est = es.clustered_mean(sizes, sums, float(np.sum(y * y)), confidence=0.95)
    low, high = fit.conf_int(alpha=0.05)[0]
    assert (est.ci.low, est.ci.high) == pytest.approx((low, high), rel=1e-10)
    assert est.df == pytest.approx(11, rel=1e-12)
    assert est.se == pytest.approx(float(fit.bse[0]), rel=1e-10)


def _cr2_from_definition(y: np.ndarray, groups: np.ndarray) -> tuple[float, float]:
    """CR2 and Bell-McCaffrey df from the matrices of Imbens and Kolesar (2016), section 4.

    ``V = (X'X)^-1 sum_g X_g' A_g e_g e_g' A_g X_g (X'X)^-1`` with
    ``A_g = (I - H_gg)^(-1/2)``; df = ``(sum lambda)^2 / sum lambda^2`` over the eigenvalues
    of ``G'G``, whose column g is ``(I - H)_g' A_g X_g (X'X)^-1``. Matrix square roots by
    scipy.linalg.sqrtm and inverses by numpy.linalg.inv, independently of evaldelta.
    """
    from scipy.linalg import sqrtm

    n = y.size
    x = np.ones((n, 1))
    xtx_inv = np.linalg.inv(x.T @ x)
    h = x @ xtx_inv @ x.T
    e = y - h @ y
    meat = np.zeros((1, 1))
    cols = []
    m = np.eye(n) - h
    for g in np.unique(groups):
        idx = np.flatnonzero(groups == g)
        a_g = np.linalg.inv(np.real(sqrtm(np.eye(idx.size) - h[np.ix_(idx, idx)])))
        v = x[idx].T @ a_g @ e[idx]
        meat += np.outer(v, v)
        cols.append(m[idx].T @ a_g @ x[idx] @ xtx_inv[:, 0])
    variance = float((xtx_inv @ meat @ xtx_inv)[0, 0])
    lam = np.linalg.eigvalsh(np.column_stack(cols).T @ np.column_stack(cols))
    return variance, float(lam.sum() ** 2 / np.sum(lam**2))


def test_clustered_mean_unequal_sizes_is_cr2_with_bell_mccaffrey_df() -> None:
    rng = np.random.default_rng(10)
    sizes = [3, 17, 5, 9, 2, 11, 4]
    groups = np.repeat(np.arange(len(sizes)), sizes)
    y = rng.normal(size=len(sizes))[groups] + rng.normal(size=groups.size)
    sums = [float(y[groups == c].sum()) for c in range(len(sizes))]
    variance, df = _cr2_from_definition(y, groups)
    with pytest.warns(es.ReliabilityWarning, match="Only 7 clusters"):
        est = es.clustered_mean(sizes, sums, float(np.sum(y * y)), confidence=0.95)
    assert est.se == pytest.approx(math.sqrt(variance), rel=1e-9)
    assert est.df == pytest.approx(df, rel=1e-9)
    assert df < len(sizes) - 1  # unequal sizes: fewer effective df than G - 1
    half = stats.t.ppf(0.975, df) * math.sqrt(variance)
    assert (est.ci.low, est.ci.high) == pytest.approx((y.mean() - half, y.mean() + half))


def test_clustered_mean_warns_on_very_unequal_clusters() -> None:
    sizes = [200] + [2] * 30  # one cluster holds most cases
    sums = [100.0] + [1.0] * 30
    with pytest.warns(es.ReliabilityWarning, match="very unequal"):
        es.clustered_mean(sizes, sums, 100.0 + 30.0)


def _korn_graubard(y: np.ndarray, groups: np.ndarray, df: float, variance: float):  # type: ignore[no-untyped-def]
    """R survey::svyciprop(method = "beta")'s steps, written with scipy.stats (Korn and
    Graubard 1998): n.eff = p (1 - p) / V, times (qt(a/2, n - 1) / qt(a/2, df))^2, then
    qbeta(a/2, n.eff p, n.eff (1 - p) + 1) and qbeta(1 - a/2, n.eff p + 1, n.eff (1 - p))."""
    p = float(y.mean())
    n_eff = p * (1 - p) / variance
    n_eff *= (stats.t.ppf(0.025, y.size - 1) / stats.t.ppf(0.025, df)) ** 2
    low = stats.beta.ppf(0.025, n_eff * p, n_eff * (1 - p) + 1)
    high = stats.beta.ppf(0.975, n_eff * p + 1, n_eff * (1 - p))
    return low, high


def test_clustered_proportion_equal_sizes_is_korn_graubard_on_cr1() -> None:
    # equal sizes: V is statsmodels' CR1 variance (the design's with-replacement variance)
    # and df = G - 1, the inputs svyciprop takes from a one-stage cluster design
    rng = np.random.default_rng(31)
    groups = np.repeat(np.arange(24), 6)
    q = rng.beta(3 * 0.8, 3 * 0.2, size=24)  # cluster rates near 0.8, icc 0.25
    y = (rng.random(groups.size) < q[groups]).astype(float)
    fit = sm.OLS(y, np.ones(y.size)).fit(cov_type="cluster", cov_kwds={"groups": groups})
    assert y.mean() * (1 - y.mean()) / float(fit.bse[0]) ** 2 < y.size  # n* below n: no cap
    sums = [float(y[groups == c].sum()) for c in range(24)]
    with pytest.warns(es.ReliabilityWarning, match="fewer than 50 clusters"):
        est = es.clustered_proportion([6] * 24, sums, float(y.sum()), confidence=0.95)
    low, high = _korn_graubard(y, groups, 23.0, float(fit.bse[0]) ** 2)
    assert (est.ci.low, est.ci.high) == pytest.approx((low, high), rel=1e-9)
    assert est.estimate == pytest.approx(y.mean()) and est.df == pytest.approx(23.0)
    assert 0.0 <= est.ci.low < est.estimate < est.ci.high <= 1.0
    # clusters that vary less than independent cases would (n* above n): n* is capped at n,
    # where svyciprop is not, so the interval is that of n independent cases
    sums = [4.0, 4.0, 4.0, 3.0, 5.0, 4.0] * 4
    with pytest.warns(es.ReliabilityWarning, match="fewer than 50 clusters"):
        est = es.clustered_proportion([6] * 24, sums, sum(sums))
    fit = sm.OLS(
        np.concatenate([[1.0] * int(k) + [0.0] * (6 - int(k)) for k in sums]), np.ones(144)
    ).fit(cov_type="cluster", cov_kwds={"groups": groups})
    p = 96 / 144
    assert p * (1 - p) / float(fit.bse[0]) ** 2 > 144  # uncapped n* would exceed n
    n_eff = 144 * (stats.t.ppf(0.025, 143) / stats.t.ppf(0.025, 23.0)) ** 2
    assert est.ci.low == pytest.approx(stats.beta.ppf(0.025, n_eff * p, n_eff * (1 - p) + 1))


def test_clustered_proportion_unequal_sizes_takes_cr2_and_bell_mccaffrey_df() -> None:
    rng = np.random.default_rng(32)
    sizes = [3, 17, 5, 9, 2, 11, 4, 25, 8, 6, 14, 3, 7, 19, 5, 10, 2, 12, 6, 9, 30]
    groups = np.repeat(np.arange(len(sizes)), sizes)
    q = rng.beta(2.7, 0.3, size=len(sizes))  # a rate near 0.9, icc 0.25
    y = (rng.random(groups.size) < q[groups]).astype(float)
    variance, df = _cr2_from_definition(y, groups)
    sums = [float(y[groups == c].sum()) for c in range(len(sizes))]
    with pytest.warns(es.ReliabilityWarning, match="fewer than 50 clusters"):
        est = es.clustered_proportion(sizes, sums, float(y.sum()))
    low, high = _korn_graubard(y, groups, df, variance)
    assert (est.ci.low, est.ci.high) == pytest.approx((low, high), rel=1e-9)
    assert est.se == pytest.approx(math.sqrt(variance), rel=1e-9)
    assert 0.0 <= est.ci.low < est.estimate < est.ci.high <= 1.0


def test_clustered_proportion_at_the_edges() -> None:
    # every case passed: V = 0 and the cases are the unit (n* = n = 60), scaled by
    # (t_59 / t_11)^2 for G - 1 = 11 df; the lower limit is scipy.stats.beta.ppf(0.025,
    # n.eff, 1), the upper 1
    with pytest.warns(es.ReliabilityWarning, match="Only 12 clusters"):
        est = es.clustered_proportion([5] * 12, [5.0] * 12, 60.0)
    with pytest.warns(es.ReliabilityWarning, match="fewer than 50 clusters"):
        es.clustered_proportion([5] * 20, [4.0] * 20, 80.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # 50 clusters of a mild rate: nothing to say
        es.clustered_proportion([5] * 50, [4.0, 3.0] * 25, 175.0)
    n_eff = 60 * (stats.t.ppf(0.975, 59) / stats.t.ppf(0.975, 11)) ** 2
    assert est.ci.high == 1.0
    assert est.ci.low == pytest.approx(stats.beta.ppf(0.025, n_eff, 1.0), rel=1e-9)
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        es.clustered_proportion([2, 2], [3.0, 4.0], 25.0)


def test_clustered_se_from_summary_agrees() -> None:
    rng = np.random.default_rng(1)
    clusters = rng.integers(0, 6, size=40)
    x = rng.binomial(1, 0.7, size=40).astype(float)
    labels = sorted(set(clusters.tolist()))
    sizes = [int(np.sum(clusters == c)) for c in labels]
    sums = [float(x[clusters == c].sum()) for c in labels]
    direct = clustered_se(x.tolist(), clusters.tolist())
    summary = clustered_se_from_summary(sizes, sums, float(np.sum(x * x)))
    assert summary == pytest.approx(direct, rel=1e-9)


def test_clustered_se_degenerate() -> None:
    with pytest.warns(DegenerateDataWarning):
        assert math.isnan(clustered_se([1.0, 0.0, 1.0], ["a", "a", "a"]))
    with pytest.warns(DegenerateDataWarning):
        assert math.isnan(clustered_se([1.0], ["a"]))
    with pytest.warns(DegenerateDataWarning):
        assert math.isnan(clustered_se([], []))
    with pytest.warns(DegenerateDataWarning):
        assert math.isnan(clustered_se_from_summary([5], [3.0], 3.0))


def test_clustered_se_validation() -> None:
    with pytest.raises(ValueError, match="same length"):
        clustered_se([1.0, 2.0], ["a"])
    with pytest.raises(ValueError, match="finite"):
        clustered_se([1.0, float("inf")], ["a", "b"])
    with pytest.raises(ValueError, match=r"cluster_sizes\[1\]"):
        clustered_se_from_summary([2, -1], [1.0, 1.0], 2.0)
    with pytest.raises(ValueError, match="sum_squares"):
        clustered_se_from_summary([2, 2], [2.0, 2.0], 1.0)
    with pytest.raises(ValueError, match="same length"):
        clustered_se_from_summary([2, 2], [2.0], 4.0)


def test_public_api_is_curated() -> None:
    assert sorted(es.__all__) == sorted(set(es.__all__))
    for name in es.__all__:
        obj = getattr(es, name)
        assert obj.__doc__, name
    assert "wilson_interval" in es.__all__ and "DegenerateDataWarning" in es.__all__
    assert not [n for n in dir(es) if not n.startswith("_") and n not in es.__all__]
