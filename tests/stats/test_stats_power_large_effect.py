"""Regression: power functions stay finite when the noncentrality is large.

scipy's ``nct.cdf(x, df, nc)`` returns nan far in the lower tail of a large positive nc
(``stats.nct.cdf(stats.t.ppf(0.025, 2), 2, 11)`` is nan); the two-sided power now uses the
equal ``nct.sf(t.isf(a, df), df, -nc)``. Found by ``evaldelta plan`` on seed 004 (paired sd
0.03 per slice, effect 0.25).
"""

import math

import pytest
from scipy import stats
from statsmodels.stats.power import TTestPower

from evaldelta.stats import mde_paired_t, required_pairs


def test_lower_tail_identity_where_scipy_is_finite() -> None:
    # P(T_nc < -c) = P(T_{-nc} > c); compare where scipy's cdf form is defined.
    for nc, df in [(0.5, 1), (3.0, 5), (8.0, 2), (20.0, 5)]:
        c = stats.t.isf(0.025, df)
        assert stats.nct.sf(c, df, -nc) == pytest.approx(stats.nct.cdf(-c, df, nc), rel=1e-9)


def test_mde_paired_t_large_n_small_sd_matches_statsmodels() -> None:
    # TTestPower().solve_power(nobs=650, effect_size=None, power=0.8, alpha=0.05) * 0.032
    ref = TTestPower().solve_power(nobs=650, effect_size=None, power=0.8, alpha=0.05) * 0.032
    ours = mde_paired_t(650, 0.032)
    assert ours == pytest.approx(ref, rel=1e-4)  # statsmodels' own solver tolerance
    # TTestPower().power(effect_size=ours / 0.032, nobs=650, alpha=0.05) is the asked power
    achieved = TTestPower().power(effect_size=ours / 0.032, nobs=650, alpha=0.05)
    assert achieved == pytest.approx(0.8, abs=1e-9)


def test_required_pairs_huge_effect_size_is_finite() -> None:
    # d = 0.25 / 0.032 = 7.8: statsmodels' solve_power fails to converge here (nan); check
    # the answer by the upper-tail power alone (the lower tail is < 1e-15 at these nc).
    d = 0.25 / 0.032
    res = required_pairs(0.25, 0.032)
    assert math.isfinite(res.n_exact)

    def upper(n: int) -> float:
        return float(stats.nct.sf(stats.t.isf(0.025, n - 1), n - 1, d * math.sqrt(n)))

    assert upper(res.n - 1) < 0.8 <= upper(res.n) + 1e-12
