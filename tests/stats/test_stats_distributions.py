"""Each function of ``evaldelta.stats._distributions`` equals the scipy.stats call it replaces.

Over a grid that includes the support's ends, 0 and n, tiny and infinite df, and nan; the
values must be identical (``assert_array_equal`` treats nan as equal to nan), because the
stats modules used to call scipy.stats and their pinned results must not move.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from evaldelta.stats import _distributions as dist

NAN, INF = math.nan, math.inf
XS = [-INF, -40.0, -8.5, -1.96, -1e-300, 0.0, 1e-300, 0.3, 1.0, 1.6448536269514722, 8.5, 40.0]
XS += [INF, NAN]
QS = [-0.1, 0.0, 1e-300, 1e-12, 0.001, 0.025, 0.05, 0.3, 0.5, 0.8, 0.975, 1 - 1e-12, 1.0, 1.1]
QS += [NAN]
DFS = [-1.0, 0.0, 1e-10, 0.1, 0.5, 1.0, 2.0, 2.5, 7.0, 30.0, 1e3, 1e8, INF, NAN]


def _same(ours: object, theirs: object) -> None:
    np.testing.assert_array_equal(np.asarray(ours, dtype=float), np.asarray(theirs, dtype=float))


@pytest.mark.parametrize("x", XS)
def test_normal_cdf_and_sf(x: float) -> None:
    _same(dist.norm_cdf(x), stats.norm.cdf(x))  # scipy.stats.norm.cdf(x)
    _same(dist.norm_sf(x), stats.norm.sf(x))  # scipy.stats.norm.sf(x)


@pytest.mark.parametrize("q", QS)
def test_normal_quantiles(q: float) -> None:
    _same(dist.norm_ppf(q), stats.norm.ppf(q))  # scipy.stats.norm.ppf(q)
    _same(dist.norm_isf(q), stats.norm.isf(q))  # scipy.stats.norm.isf(q)


@pytest.mark.parametrize("df", DFS)
def test_student_t(df: float) -> None:
    for x in XS:
        _same(dist.t_cdf(x, df), stats.t.cdf(x, df))  # scipy.stats.t.cdf(x, df)
        _same(dist.t_sf(x, df), stats.t.sf(x, df))  # scipy.stats.t.sf(x, df)
    for q in QS:
        _same(dist.t_ppf(q, df), stats.t.ppf(q, df))  # scipy.stats.t.ppf(q, df)
        _same(dist.t_isf(q, df), stats.t.isf(q, df))  # scipy.stats.t.isf(q, df)


@pytest.mark.parametrize("df", [*DFS, 4.0, 6.0, 2.0 * 2.75])
def test_chi2_ppf(df: float) -> None:
    for q in QS:
        _same(dist.chi2_ppf(q, df), stats.chi2.ppf(q, df))  # scipy.stats.chi2.ppf(q, df)


@pytest.mark.parametrize(("a", "b"), [(0.3, 7.0), (1.0, 1.0), (4.5, 0.8), (37.2, 3.1), (1e3, 2.0)])
def test_beta_ppf(a: float, b: float) -> None:
    for q in QS:
        _same(dist.beta_ppf(q, a, b), stats.beta.ppf(q, a, b))  # scipy.stats.beta.ppf(q, a, b)


@pytest.mark.parametrize("nc", [-11.0, -2.5, 0.0, 1e-9, 0.7, 3.0, 11.0, 40.0, NAN])
def test_noncentral_t_sf(nc: float) -> None:
    for x, df in itertools.product(XS, DFS):
        _same(dist.nct_sf(x, df, nc), stats.nct.sf(x, df, nc))  # scipy.stats.nct.sf(x, df, nc)


KS = [-INF, -2.0, -1.0, 0.0, 0.5, 1.0, 2.0, 3.0, 6.5, 7.0, 8.0, 49.0, 50.0, 99.0, 100.0]
KS += [101.0, 5e4, 99_999.0, 1e5, INF, NAN]
NS = [-1.0, 0.0, 1.0, 2.0, 2.5, 7.0, 100.0, 1e5, NAN]
PS = [-0.1, 0.0, 1e-9, 0.3, 0.5, 0.77, 1 - 1e-9, 1.0, 1.1, NAN]


@pytest.mark.parametrize("n", NS)
def test_binomial(n: float) -> None:
    k = np.array(KS)
    for p in PS:
        _same(dist.binom_cdf(k, n, p), stats.binom.cdf(k, n, p))  # scipy.stats.binom.cdf
        _same(dist.binom_sf(k, n, p), stats.binom.sf(k, n, p))  # scipy.stats.binom.sf
        _same(dist.binom_pmf(k, n, p), stats.binom.pmf(k, n, p))  # scipy.stats.binom.pmf
        q = np.array(QS)
        _same(dist.binom_ppf(q, n, p), stats.binom.ppf(q, n, p))  # scipy.stats.binom.ppf


def test_binomial_broadcasts_as_the_power_calls_it() -> None:
    # mcnemar_exact_power: every D from 0 to n pairs at once, as arrays
    d = np.arange(0.0, 401.0)
    k = stats.binom.ppf(0.025, d, 0.5)
    _same(dist.binom_ppf(0.025, d, 0.5), k)
    for q in (0.0, 0.2, 0.5, 1.0):
        _same(dist.binom_cdf(k - 1, d, q), stats.binom.cdf(k - 1, d, q))
        _same(dist.binom_sf(d - k - 1, d, q), stats.binom.sf(d - k - 1, d, q))
    _same(dist.binom_pmf(d, 400, 0.15), stats.binom.pmf(d, 400, 0.15))


def test_binomtest_half_small_n() -> None:
    for n in range(1, 61):
        for k in range(n + 1):  # scipy.stats.binomtest(k, n, 0.5).pvalue (two-sided)
            _same(dist.binomtest_half(k, n), stats.binomtest(k, n, 0.5).pvalue)


CENTRE = [(n // 2 + j, n) for n in (10**6, 10**8, 10**8 + 1, 4 * 10**8) for j in range(-3, 4)]


@pytest.mark.parametrize(
    ("k", "n"), [(0, 10**5), (10**5, 10**5), (31_000, 100_000), (69_000, 100_000), *CENTRE]
)
def test_binomtest_half_large_n(k: int, n: int) -> None:
    # scipy.stats.binomtest(k, n, 0.5).pvalue, including the outcomes that scipy counts as
    # equally likely (within a relative 1e-7) near the centre of a huge n
    _same(dist.binomtest_half(k, n), stats.binomtest(k, n, 0.5).pvalue)
