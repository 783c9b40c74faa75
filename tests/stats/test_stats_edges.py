"""Issue 11's edges: rates stay rates, no zero-width intervals, results that serialize."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint

import evaldelta.stats as es


def _all_results() -> list[object]:
    return [
        es.proportion(3, 10),
        es.proportion_of_means(12, 0.8, 0.3, 36),
        es.paired_proportions(10, 2, 5, 3),
        es.paired_means([1.0, 2.0, 3.0], [1.5, 2.0, 4.0]),
        es.welch(1.0, 0.5, 10, 1.2, 0.4, 12),
        es.fixed_mix({"a": 0.5, "b": 0.7}, {"a": 0.1, "b": 0.2}, {"a": 1.0, "b": 3.0}),
        es.standardize(
            {"x": {"s1": (3, 10), "s2": (5, 10)}, "y": {"s1": (4, 10), "s2": (6, 10)}},
            {"s1": 1, "s2": 2},
        ),
        es.simpson_check(
            {"x": {"s1": (3, 10), "s2": (8, 10)}, "y": {"s1": (4, 10), "s2": (9, 10)}}, "x", "y"
        ),
        es.required_pairs(0.5, 1.1),
        es.required_pairs_mcnemar(0.2, 0.1),
        es.mcnemar_exact(3, 1),
        es.clustered_mean([3, 4, 5], [2.0, 3.0, 1.0], 6.0),
    ]


def test_every_result_converts_with_asdict_and_json() -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", es.StatisticsWarning)
        results = _all_results()
    for result in results:
        data = dataclasses.asdict(result)  # type: ignore[call-overload]
        assert json.loads(json.dumps(data, allow_nan=True)) is not None
    with pytest.raises(TypeError, match="read-only"):
        results[5].weights["a"] = 2.0  # type: ignore[attr-defined,index]


@pytest.mark.parametrize(
    ("n", "mean", "sd", "attempts"),
    [(60, 0.8, 0.35, 180), (60, 0.174, 0.2, 180), (60, 1.0, 0.0, 180), (5, 0.0, 0.0, 15)],
)
def test_rates_with_repeats_stay_inside_0_and_1(
    n: int, mean: float, sd: float, attempts: int
) -> None:
    est = es.proportion_of_means(n, mean, sd, attempts)
    assert 0.0 <= est.ci.low <= est.estimate <= est.ci.high <= 1.0
    assert est.ci.high > est.ci.low  # never zero width on a finite sample


def test_rates_with_repeats_use_wilson_at_the_effective_n() -> None:
    # se of case means 0.35/sqrt(60): n_eff = p(1-p)/se^2, clipped to [60, 180]
    est = es.proportion_of_means(60, 0.8, 0.35, 180)
    se = 0.35 / math.sqrt(60)
    n_eff = min(180.0, max(60.0, 0.8 * 0.2 / se**2))
    # statsmodels.stats.proportion.proportion_confint(0.8 * n_eff, n_eff, method="wilson"),
    # written out: the Wilson (1927) score interval
    z = sps.norm.ppf(0.975)
    center = (0.8 + z * z / (2 * n_eff)) / (1 + z * z / n_eff)
    half = z / (1 + z * z / n_eff) * math.sqrt(0.8 * 0.2 / n_eff + z * z / (4 * n_eff**2))
    assert (est.ci.low, est.ci.high) == pytest.approx((center - half, center + half))
    # all case means 1: n_eff = n (the cases agree; repeats add nothing)
    assert es.proportion_of_means(60, 1.0, 0.0, 180).df == 60


def test_rates_with_repeats_fall_back_to_cases_when_few_cases_pass() -> None:
    # 30 cases x 5 repeats, one case passed once: the case means' spread says the repeats
    # are nearly independent (n_eff 149 of 150), which no single passing case can show
    x = np.zeros(30)
    x[0] = 0.2
    mean, sd = float(x.mean()), float(x.std(ddof=1))
    kish = es.proportion_of_means(30, mean, sd, 150)
    thin = es.proportion_of_means(30, mean, sd, 150, minority_cases=1)
    assert kish.df > 140 and thin.df == 30  # the cases are the unit
    assert "fewer than 5 cases" in thin.method
    # statsmodels' plain Wilson at n = 30 and 0.2 passes: the tool's interval is never
    # narrower there (it widens Wilson at 1-3 passes, Brown, Cai and DasGupta 2001 4.1.1)
    _, wh = proportion_confint(0.2, 30, alpha=0.05, method="wilson")
    assert thin.ci.high >= wh - 1e-12 and thin.ci.high > kish.ci.high
    # at 5 or more cases with each outcome the Kish effective n stands
    assert es.proportion_of_means(30, mean, sd, 150, minority_cases=5).df == kish.df
    with pytest.raises(ValueError, match="minority_cases"):
        es.proportion_of_means(30, mean, sd, 150, minority_cases=-1)


def test_identical_deltas_give_no_interval_not_a_zero_width_one() -> None:
    with pytest.warns(es.DegenerateDataWarning, match="sd = 0"):
        res = es.paired_means([5.0, 5.0], [4.0, 4.0])
    assert res.estimate == -1.0 and math.isnan(res.ci.low) and math.isnan(res.ci.high)
    with pytest.warns(es.DegenerateDataWarning, match="sd = 0"):
        est = es.mean_t(10, 4.0, 0.0)
    assert math.isnan(est.ci.low)


def test_paired_binary_interval_has_width_with_no_discordant_pair() -> None:
    # a 3-pair concordant slice: the interval has width, and says what it rests on
    with pytest.warns(es.ReliabilityWarning, match="fewer than 5 discordant pairs"):
        res = es.paired_proportions(3, 0, 0, 0)
    assert res.estimate == 0.0 and res.ci.high - res.ci.low > 0.5


@pytest.mark.parametrize("seed", [0, 1])
def test_asdict_of_a_random_standardization_round_trips_its_numbers(seed: int) -> None:
    rng = np.random.default_rng(seed)
    counts = {arm: {f"s{k}": (int(rng.integers(0, 10)), 10) for k in range(4)} for arm in "ab"}
    res = es.standardize(counts, {f"s{k}": float(rng.uniform(0.1, 1)) for k in range(4)})
    data = json.loads(json.dumps(dataclasses.asdict(res)))
    assert data["rates"]["a"]["standardized"]["estimate"] == pytest.approx(
        res.rates["a"].standardized.estimate
    )
