import math

import numpy as np
import pytest
from statsmodels.stats.proportion import (
    confint_proportions_2indep,
    proportion_confint,
    proportions_ztest,
)

from evaldelta.stats import (
    ConfidenceInterval,
    DegenerateDataWarning,
    newcombe_unpaired,
    proportion,
    wilson_interval,
)


@pytest.mark.parametrize(
    ("k", "n", "conf"),
    [(0, 10, 0.95), (3, 10, 0.95), (10, 10, 0.95), (34, 40, 0.9), (855, 900, 0.99), (1, 2, 0.5)],
)
def test_wilson_matches_statsmodels(k: int, n: int, conf: float) -> None:
    # statsmodels.stats.proportion.proportion_confint(k, n, alpha=1-conf, method="wilson")
    low, high = proportion_confint(k, n, alpha=1 - conf, method="wilson")
    ci = wilson_interval(k, n, conf)
    assert ci.low == pytest.approx(low, abs=1e-12)
    assert ci.high == pytest.approx(high, abs=1e-12)


def test_proportion_matches_statsmodels_and_binomial_se() -> None:
    est = proportion(34, 40)
    low, high = proportion_confint(34, 40, method="wilson")
    assert est.estimate == pytest.approx(34 / 40)
    assert est.se == pytest.approx(math.sqrt(0.85 * 0.15 / 40))
    assert (est.ci.low, est.ci.high) == pytest.approx((low, high))
    assert est.n == 40
    assert est.method == "wilson"


def test_wilson_n_zero_is_nan_with_warning() -> None:
    with pytest.warns(DegenerateDataWarning):
        ci = wilson_interval(0, 0)
    assert math.isnan(ci.low) and math.isnan(ci.high)
    with pytest.warns(DegenerateDataWarning):
        est = proportion(0, 0)
    assert math.isnan(est.estimate) and math.isnan(est.se)


@pytest.mark.parametrize(
    ("s_b", "n_b", "s_c", "n_c"),
    [(792, 900, 855, 900), (855, 900, 792, 900), (48, 80, 56, 70), (0, 10, 0, 20), (5, 5, 0, 7)],
)
def test_newcombe_unpaired_matches_statsmodels(s_b: int, n_b: int, s_c: int, n_c: int) -> None:
    # statsmodels computes p1 - p2, so the candidate goes first:
    # confint_proportions_2indep(s_c, n_c, s_b, n_b, method="newcomb", compare="diff")
    low, high = confint_proportions_2indep(s_c, n_c, s_b, n_b, method="newcomb", compare="diff")
    if (s_b + s_c) in (0, n_b + n_c):
        with pytest.warns(DegenerateDataWarning):
            res = newcombe_unpaired(s_b, n_b, s_c, n_c)
    else:
        res = newcombe_unpaired(s_b, n_b, s_c, n_c)
    assert res.estimate == pytest.approx(s_c / n_c - s_b / n_b)
    assert res.ci.low == pytest.approx(low, abs=1e-10)
    assert res.ci.high == pytest.approx(high, abs=1e-10)


def test_newcombe_unpaired_paper_table_ii() -> None:
    # Newcombe (1998) Stat Med 17:873-890, Table II, method 10, examples (a) 56/70 - 48/80
    # -> 0.0524 to 0.3339 and (b) 9/10 - 3/10 -> 0.1705 to 0.8090 (four decimals, as printed).
    a = newcombe_unpaired(48, 80, 56, 70)
    assert (a.ci.low, a.ci.high) == pytest.approx((0.0524, 0.3339), abs=5e-5)
    b = newcombe_unpaired(3, 10, 9, 10)
    assert (b.ci.low, b.ci.high) == pytest.approx((0.1705, 0.8090), abs=5e-5)


def test_newcombe_unpaired_seed_000_short_factual() -> None:
    # seeds/000 + examples/compare-000.txt: v1 855/900, v2 792/900 -> -7.0 pts [-9.6, -4.5].
    res = newcombe_unpaired(855, 900, 792, 900)
    assert round(res.estimate, 3) == -0.070
    assert round(res.ci.low, 3) == -0.096
    assert round(res.ci.high, 3) == -0.045


def test_newcombe_unpaired_pvalue_is_pooled_z_test() -> None:
    # statsmodels.stats.proportion.proportions_ztest([s_c, s_b], [n_c, n_b]) (pooled variance)
    stat, p = proportions_ztest(np.array([532, 560]), np.array([700, 700]))
    res = newcombe_unpaired(560, 700, 532, 700)
    assert res.statistic == pytest.approx(stat)
    assert res.pvalue == pytest.approx(p)
    # se is the unpooled Wald standard error
    assert res.se == pytest.approx(math.sqrt(0.8 * 0.2 / 700 + 0.76 * 0.24 / 700))


def test_newcombe_unpaired_degenerate() -> None:
    with pytest.warns(DegenerateDataWarning):
        res = newcombe_unpaired(0, 0, 3, 10)
    assert math.isnan(res.estimate) and math.isnan(res.pvalue)
    assert isinstance(res.ci, ConfidenceInterval)


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((-1, 10), "successes"),
        ((3, -10), "n"),
        ((11, 10), "successes"),
        ((2.5, 10.5), "n"),
        ((float("nan"), 10), "successes"),
        ((3, 10, 1.0), "confidence"),
        ((3, 10, 0.0), "confidence"),
        ((3, 10, float("inf")), "confidence"),
    ],
)
def test_wilson_validation(args: tuple[float, ...], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        wilson_interval(*args)  # type: ignore[arg-type]


def test_newcombe_unpaired_validation() -> None:
    with pytest.raises(ValueError, match="successes_candidate"):
        newcombe_unpaired(3, 10, 12, 10)
    with pytest.raises(ValueError, match="n_baseline"):
        newcombe_unpaired(3, -1, 2, 10)
    with pytest.raises(ValueError, match="confidence"):
        newcombe_unpaired(3, 10, 2, 10, confidence=1.5)


def test_proportion_is_wilson_edged_by_the_poisson_limit_near_0_and_n() -> None:
    # Brown, Cai and DasGupta (2001), section 4.1.1: at 1..x* successes the lower limit is the
    # one-sided Poisson limit chi2.ppf(alpha, 2x) / (2n) (alpha = 0.05 for a 95% interval),
    # symmetrically for failures; x* = 3 here. Elsewhere it is statsmodels' Wilson.
    from scipy.stats import chi2
    from statsmodels.stats.proportion import proportion_confint

    for n in (10, 50, 1000):
        for k in range(n + 1):
            if 4 <= k <= n - 4 and k not in (n // 2,):
                continue
            lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
            if 1 <= k <= 3:
                lo = min(lo, chi2.ppf(0.05, 2 * k) / (2 * n))
            if 1 <= n - k <= 3:
                hi = max(hi, 1 - chi2.ppf(0.05, 2 * (n - k)) / (2 * n))
            got = proportion(k, n).ci
            assert (got.low, got.high) == pytest.approx((lo, hi), abs=1e-12), (k, n)


def test_modified_wilson_covers_where_plain_wilson_does_not() -> None:
    # exact coverage by summing scipy binomial probabilities: plain Wilson at n = 10 and a
    # true rate of 0.01 covers 0.904 (Brown, Cai and DasGupta 2001, fig. 5 shows the dip);
    # the Poisson edge lifts it above 0.93
    from scipy.stats import binom
    from statsmodels.stats.proportion import proportion_confint

    n, p = 10, 0.01
    plain = sum(
        binom.pmf(k, n, p)
        for k in range(n + 1)
        if proportion_confint(k, n, method="wilson")[0]
        <= p
        <= proportion_confint(k, n, method="wilson")[1]
    )
    mine = sum(
        binom.pmf(k, n, p)
        for k in range(n + 1)
        if proportion(k, n).ci.low <= p <= proportion(k, n).ci.high
    )
    assert plain == pytest.approx(0.904, abs=0.001)
    assert mine > 0.93
