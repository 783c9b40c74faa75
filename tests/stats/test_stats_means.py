import math

import numpy as np
import pytest
from scipy import stats

from evaldelta.stats import DegenerateDataWarning, mean_t, welch


def test_mean_t_matches_scipy() -> None:
    rng = np.random.default_rng(7)
    x = rng.normal(3.0, 1.2, size=25)
    est = mean_t(x.size, float(x.mean()), float(x.std(ddof=1)), 0.9)
    # scipy.stats.ttest_1samp(x, 0).confidence_interval(0.9)
    ci = stats.ttest_1samp(x, 0.0).confidence_interval(0.9)
    assert (est.ci.low, est.ci.high) == pytest.approx((ci.low, ci.high))
    # scipy.stats.t.interval(0.9, n - 1, loc=mean, scale=sem)
    low, high = stats.t.interval(0.9, x.size - 1, loc=x.mean(), scale=stats.sem(x))
    assert (est.ci.low, est.ci.high) == pytest.approx((low, high))
    assert est.se == pytest.approx(stats.sem(x))
    assert est.df == x.size - 1


@pytest.mark.parametrize("n", [0, 1])
def test_mean_t_small_n_is_nan(n: int) -> None:
    with pytest.warns(DegenerateDataWarning):
        est = mean_t(n, 0.5, 0.1)
    assert math.isnan(est.se) and math.isnan(est.ci.low)
    assert math.isnan(est.estimate) == (n == 0)


def test_mean_t_validation() -> None:
    with pytest.raises(ValueError, match="sd"):
        mean_t(10, 0.5, -0.1)
    with pytest.raises(ValueError, match="mean"):
        mean_t(10, float("inf"), 0.1)
    with pytest.raises(ValueError, match="confidence"):
        mean_t(10, 0.5, 0.1, confidence=-0.2)
    with pytest.raises(ValueError, match="n"):
        mean_t(-3, 0.5, 0.1)


def test_welch_matches_scipy_from_stats_and_interval() -> None:
    rng = np.random.default_rng(3)
    base = rng.normal(4.3, 0.9, size=30)
    cand = rng.normal(4.0, 1.5, size=45)
    res = welch(
        float(base.mean()), float(base.std(ddof=1)), base.size,
        float(cand.mean()), float(cand.std(ddof=1)), cand.size,
        confidence=0.9,
    )  # fmt: skip
    # scipy.stats.ttest_ind_from_stats(cand..., base..., equal_var=False)
    ref = stats.ttest_ind_from_stats(
        cand.mean(), cand.std(ddof=1), cand.size, base.mean(), base.std(ddof=1), base.size,
        equal_var=False,
    )  # fmt: skip
    assert res.statistic == pytest.approx(ref.statistic)
    assert res.pvalue == pytest.approx(ref.pvalue)
    full = stats.ttest_ind(cand, base, equal_var=False)
    ci = full.confidence_interval(0.9)
    assert (res.ci.low, res.ci.high) == pytest.approx((ci.low, ci.high))
    assert res.df == pytest.approx(full.df)
    assert res.estimate == pytest.approx(cand.mean() - base.mean())


def test_welch_seed_002_contrast() -> None:
    # examples/compare-002.txt: unpaired view +5.0 pts [-9.9, +19.9] (Welch) on 0/1 data:
    # incumbent 34/40, candidate 36/40.
    base = np.array([1.0] * 34 + [0.0] * 6)
    cand = np.array([1.0] * 36 + [0.0] * 4)
    res = welch(
        float(base.mean()), float(base.std(ddof=1)), 40,
        float(cand.mean()), float(cand.std(ddof=1)), 40,
    )  # fmt: skip
    ci = stats.ttest_ind(cand, base, equal_var=False).confidence_interval()
    assert (res.ci.low, res.ci.high) == pytest.approx((ci.low, ci.high))
    assert round(res.ci.low, 3) == -0.099
    assert round(res.ci.high, 3) == 0.199


def test_welch_degenerate() -> None:
    with pytest.warns(DegenerateDataWarning):
        res = welch(0.5, 0.1, 1, 0.6, 0.1, 10)
    assert math.isnan(res.pvalue) and math.isnan(res.se)
    with pytest.warns(DegenerateDataWarning):
        res = welch(0.5, 0.0, 10, 0.6, 0.0, 10)
    assert math.isnan(res.pvalue)
    assert res.estimate == pytest.approx(0.1)


def test_welch_validation() -> None:
    with pytest.raises(ValueError, match="sd_candidate"):
        welch(0.5, 0.1, 10, 0.6, -0.1, 10)
    with pytest.raises(ValueError, match="n_baseline"):
        welch(0.5, 0.1, 2.5, 0.6, 0.1, 10)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="mean_baseline"):
        welch(float("nan"), 0.1, 10, 0.6, 0.1, 10)


def test_undefined_sd_is_accepted_only_when_it_must_be_undefined():
    import math

    from evaldelta.stats import DegenerateDataWarning, mean_t, paired_means_from_summary, welch

    with pytest.warns(DegenerateDataWarning):
        one = mean_t(1, 3.0, math.nan)
    assert one.estimate == 3.0 and math.isnan(one.se)
    with pytest.warns(DegenerateDataWarning):
        none = mean_t(0, math.nan, math.nan)
    assert math.isnan(none.estimate)
    with pytest.warns(DegenerateDataWarning):
        assert math.isnan(paired_means_from_summary(1, 0.5, math.nan).se)
    with pytest.warns(DegenerateDataWarning):
        assert math.isnan(welch(1.0, math.nan, 1, 2.0, 0.5, 10).se)
    with pytest.raises(ValueError, match="sd must be finite"):
        mean_t(5, 3.0, math.nan)
