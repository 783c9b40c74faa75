"""Fixed-mix intervals for pass/fail slices (issue 24, item 5) and the new warnings (12, 14)."""

import math
import warnings

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import confint_proportions_2indep

from evaldelta.stats import (
    MIN_DISCORDANT,
    ReliabilityWarning,
    adjusted_linear_proportions,
    bonett_price_paired,
    break_even,
    effective_discordant,
    fixed_mix,
    paired_means_from_summary,
    paired_mix_slices,
    paired_proportions,
    satterthwaite_df,
    standardized_paired_delta,
    standardized_rate,
    standardized_rate_difference,
)

Z = stats.norm.ppf(0.975)


def test_bonett_price_paired_matches_published_cavo_2012() -> None:
    # Fagerland, Lydersen and Laake (2017), ch. 8; R contingencytables 3.0:
    # Wald_CI_BonettPrice_paired_2x2(rbind(c(59, 6), c(16, 80))) ->
    # "estimate = -0.0621 (95% CI -0.1195 to -0.0032)"; n12 = 6, n21 = 16, N = 161, the
    # difference n12 - n21: here candidate-only 6, baseline-only 16
    center, se = bonett_price_paired(16, 6, 161)
    assert center - Z * se == pytest.approx(-0.1195, abs=5e-5)
    assert center + Z * se == pytest.approx(-0.0032, abs=5e-5)


def test_price_bonett_two_proportions_is_agresti_caffo() -> None:
    # with m = 2 proportions Price and Bonett (2004) add 1 success and 1 failure to each:
    # statsmodels confint_proportions_2indep(7, 20, 3, 25, method="agresti-caffo")
    est, center, se, ci = adjusted_linear_proportions([(1.0, 7, 20), (-1.0, 3, 25)])
    low, high = confint_proportions_2indep(7, 20, 3, 25, method="agresti-caffo", compare="diff")
    assert est == pytest.approx(7 / 20 - 3 / 25)
    assert (ci.low, ci.high) == pytest.approx((low, high), abs=1e-12)
    assert center == pytest.approx(8 / 22 - 4 / 27) and se > 0


def test_satterthwaite_df_is_welchs() -> None:
    rng = np.random.default_rng(3)
    x, y = rng.normal(0, 1, 12), rng.normal(0, 3, 30)
    parts = [x.var(ddof=1) / x.size, y.var(ddof=1) / y.size]
    # scipy.stats.ttest_ind(x, y, equal_var=False).df (scipy >= 1.11)
    ref = stats.ttest_ind(x, y, equal_var=False).df
    assert satterthwaite_df(parts, [x.size - 1, y.size - 1]) == pytest.approx(ref)
    assert satterthwaite_df([0.0, 0.0], [3, 4]) == math.inf
    with pytest.raises(ValueError, match="dfs"):
        satterthwaite_df([1.0], [0])


def test_fixed_mix_with_dfs_is_the_t_interval_of_one_slice() -> None:
    # one slice, df n - 1: scipy.stats.t.interval(0.95, 14, loc=0.3, scale=0.1)
    res = fixed_mix({"a": 0.3}, {"a": 0.1}, {"a": 2.0}, dfs={"a": 14})
    low, high = stats.t.interval(0.95, 14, loc=0.3, scale=0.1)
    assert (res.ci.low, res.ci.high) == pytest.approx((low, high))
    assert res.df == pytest.approx(14)
    with pytest.raises(ValueError, match="dfs"):
        fixed_mix({"a": 0.3, "b": 0.1}, {"a": 0.1, "b": 0.1}, {"a": 1, "b": 1}, dfs={"a": 3})


def test_a_clean_slice_is_neither_exact_nor_inflated() -> None:
    # seed 002's slices: 9-11 pairs, 0-2 discordant. Each slice's SE is positive (a plug-in
    # SE is 0 with no discordant pair), and the equal-mix interval is narrower than the
    # combination of Newcombe half-widths it replaced, which gave [-10.4, +20.0] (width
    # 0.304) under the equal mix before issue 24
    tables = {
        "damaged_item": (8, 0, 1, 1),
        "delivery_delay": (7, 1, 1, 0),
        "refund_request": (9, 0, 0, 1),
        "wrong_item": (9, 0, 1, 1),
    }
    slices = paired_mix_slices(tables)
    assert all(se > 0 for _, se, _ in slices.values())
    with pytest.warns(ReliabilityWarning, match="discordant"):
        res = standardized_paired_delta(tables, dict.fromkeys(tables, 1.0))
    assert res.estimate == pytest.approx(np.mean([0.1, 0.0, 0.0, 1 / 11]))
    assert 0.0 < res.ci.high - res.ci.low < 0.27


def test_standardized_paired_delta_properties() -> None:
    rng = np.random.default_rng(7)
    for _ in range(20):
        tables = {}
        for k in range(int(rng.integers(2, 6))):
            n = int(rng.integers(20, 200))
            tables[f"s{k}"] = tuple(int(x) for x in rng.multinomial(n, [0.5, 0.1, 0.15, 0.25]))
        w = {k: float(rng.uniform(0.1, 3)) for k in tables}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ReliabilityWarning)
            res = standardized_paired_delta(tables, w)
            swapped = standardized_paired_delta(
                {k: (a, c, b, d) for k, (a, b, c, d) in tables.items()}, w
            )
            rescaled = standardized_paired_delta(tables, {k: 7.0 * v for k, v in w.items()})
        assert res.ci.low <= res.estimate <= res.ci.high
        assert swapped.estimate == pytest.approx(-res.estimate)
        assert (swapped.ci.low, swapped.ci.high) == pytest.approx((-res.ci.high, -res.ci.low))
        assert (rescaled.ci.low, rescaled.ci.high) == pytest.approx((res.ci.low, res.ci.high))


def test_one_slice_paired_delta_is_bonett_price_on_its_own_table() -> None:
    # m = 1: the pseudo-counts are Bonett and Price's own (1 per discordant cell) and the
    # half-width is theirs: Fagerland, Lydersen and Laake (2017), R contingencytables
    # Wald_CI_BonettPrice_paired_2x2(rbind(c(59, 6), c(16, 80))) gives -0.1195 to -0.0032,
    # a half-width of 0.05815; the interval is centred on the observed delta -10/161
    res = standardized_paired_delta({"all": (59, 16, 6, 80)}, {"all": 1.0})
    half = (-0.0032 - -0.1195) / 2
    assert (res.ci.low, res.ci.high) == pytest.approx(
        (-10 / 161 - half, -10 / 161 + half), abs=1e-4
    )
    assert res.df is None  # the papers' normal interval


def test_effective_discordant_is_the_discordant_count_for_one_slice() -> None:
    # one slice: Satterthwaite's df of a single part is that part's own, 2 (b + c + 2), so
    # the effective count is b + c + 2 (the pseudo-counts included)
    assert effective_discordant({"a": (50, 3, 5, 42)}, {"a": 1.0}) == pytest.approx(10.0)
    # two equal slices at equal weights: (u + u)^2 / (2 u^2 / f) = 2 f, halved: b + c + 1 each
    two = {"a": (50, 3, 5, 42), "b": (50, 5, 3, 42)}
    assert effective_discordant(two, {"a": 1, "b": 1}) == pytest.approx(2 * (8 + 1))
    # weight on one slice alone: the other's discordant pairs count for nothing
    lopsided = effective_discordant(two, {"a": 1e-9, "b": 1.0})
    assert lopsided == pytest.approx(8 + 1, rel=1e-6)


def test_paired_fixed_mix_warns_on_few_discordant_pairs() -> None:
    with pytest.warns(ReliabilityWarning, match="rests on 3 discordant pairs"):
        standardized_paired_delta({"a": (50, 1, 2, 47)}, {"a": 1.0})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        standardized_paired_delta({"a": (50, 3, 5, 42), "b": (40, 2, 4, 54)}, {"a": 1, "b": 1})


def test_standardized_rate_clean_slices_have_width() -> None:
    res = standardized_rate({"a": (0, 10), "b": (10, 10), "c": (5, 10)}, {"a": 1, "b": 1, "c": 1})
    assert res.estimate == pytest.approx(0.5)
    assert 0.0 < res.ci.low < res.ci.high < 1.0
    # Price and Bonett (2004), m = 3: p~ = (x + 2/3) / (n + 4/3), centre their mean,
    # se^2 = sum (1/3)^2 p~ (1 - p~) / (n + 4/3), centre +/- z se
    p = np.array([0 + 2 / 3, 10 + 2 / 3, 5 + 2 / 3]) / (10 + 4 / 3)
    se = np.sqrt(np.sum(p * (1 - p) / (10 + 4 / 3)) / 9)
    assert res.center == pytest.approx(p.mean())
    assert (res.ci.low, res.ci.high) == pytest.approx((p.mean() - Z * se, p.mean() + Z * se))
    diff = standardized_rate_difference({"a": (3, 10)}, {"a": (6, 10)}, {"a": 1})
    low, high = confint_proportions_2indep(6, 10, 3, 10, method="agresti-caffo", compare="diff")
    half = (high - low) / 2  # statsmodels' Agresti-Caffo half-width, centred on the delta
    assert (diff.ci.low, diff.ci.high) == pytest.approx((0.3 - half, 0.3 + half))


def test_break_even_with_df_reproduces_the_interval_at_todays_share() -> None:
    est = {"a": 0.05, "b": -0.02, "c": 0.01}
    ses = {"a": 0.03, "b": 0.02, "c": 0.04}
    w = {"a": 0.5, "b": 0.3, "c": 0.2}
    dfs = {"a": 9.0, "b": 30.0, "c": 12.0}
    mix = fixed_mix(est, ses, w, dfs=dfs)
    be = break_even(est, ses, w, "a", df=mix.df)
    from evaldelta.stats import delta_at_share

    d, low, high = delta_at_share(est, ses, w, "a", be.share, df=mix.df)
    assert (d, low, high) == pytest.approx((mix.estimate, mix.ci.low, mix.ci.high))
    for s in be.interval_flips:  # an end of the t interval is 0 there
        _, lo, hi = delta_at_share(est, ses, w, "a", s, df=mix.df)
        assert min(abs(lo), abs(hi)) == pytest.approx(0.0, abs=1e-9)


def test_newcombe_warns_below_five_discordant_pairs_only() -> None:
    # issue 24, item 12: all one way, 40 pairs at 5% discordance, Newcombe covers 0.893
    # (exact; docs/calibration.md); fewer than 5 discordant pairs now says so
    with pytest.warns(ReliabilityWarning, match=f"fewer than {MIN_DISCORDANT} discordant"):
        paired_proportions(20, 0, 4, 16)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        paired_proportions(20, 0, 5, 15)


def test_paired_t_on_pass_fail_repeats_warns_below_30_cases() -> None:
    # issue 24, item 14: 0.91 at 20 cases on the draws with 10+ informative pairs
    with pytest.warns(ReliabilityWarning, match="fewer than 30 cases"):
        paired_means_from_summary(20, 0.1, 0.3, informative=14, pass_fail_repeats=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        paired_means_from_summary(30, 0.1, 0.3, informative=14, pass_fail_repeats=True)
        paired_means_from_summary(20, 0.1, 0.3, informative=14)  # graded: no such warning
