import math

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
