import math

import pytest

from evaldelta.stats import DegenerateDataWarning, fixed_mix, simpson_check, standardize

SEED_000 = {
    "v1": {
        "short_factual": (855, 900),
        "multi_turn": (560, 700),
        "tool_use": (408, 600),
        "long_context": (10, 50),
    },
    "v2": {
        "short_factual": (792, 900),
        "multi_turn": (532, 700),
        "tool_use": (390, 600),
        "long_context": (950, 1000),
    },
}
TRAFFIC = {"short_factual": 0.45, "multi_turn": 0.30, "tool_use": 0.20, "long_context": 0.05}
SEED_001 = {"A": {"easy": (81, 90), "hard": (2, 10)}, "B": {"easy": (10, 10), "hard": (27, 90)}}


def test_standardize_seed_000() -> None:
    # seeds/000 + examples/compare-000.txt: traffic mix v1 0.814 [0.799, 0.828],
    # v2 0.802 [0.786, 0.817]; pooled v1 0.815, v2 0.833 (2664/3200 = 0.8325 exactly).
    res = standardize(SEED_000, TRAFFIC)
    v1, v2 = res.rates["v1"], res.rates["v2"]
    assert round(v1.standardized.estimate, 3) == 0.814
    assert (round(v1.standardized.ci.low, 3), round(v1.standardized.ci.high, 3)) == (0.799, 0.828)
    # 0.8015 exactly: the seed rounds half up to 0.802 (Python's round gives 0.801)
    assert v2.standardized.estimate == pytest.approx(0.8015)
    assert abs(v2.standardized.estimate - 0.802) <= 0.0005 + 1e-12
    assert (round(v2.standardized.ci.low, 3), round(v2.standardized.ci.high, 3)) == (0.786, 0.817)
    assert v1.pooled == pytest.approx(1833 / 2250)
    assert round(v1.pooled, 3) == 0.815
    assert v2.pooled == 0.8325
    assert (v1.pooled_n, v2.pooled_n) == (2250, 3200)
    assert res.common_slices == tuple(TRAFFIC)
    assert res.dropped_slices == () and res.dropped_weight == 0.0
    # direct standardization by hand: sum_k w_k p_k
    assert v1.standardized.estimate == pytest.approx(
        0.45 * 0.95 + 0.30 * 0.80 + 0.20 * 0.68 + 0.05 * 0.20
    )


def test_standardize_weights_on_any_scale() -> None:
    a = standardize(SEED_000, TRAFFIC)
    b = standardize(SEED_000, {"short_factual": 45, "multi_turn": 30, "tool_use": 20,
                               "long_context": 5})  # fmt: skip
    for arm in ("v1", "v2"):
        sa, sb = a.rates[arm].standardized, b.rates[arm].standardized
        assert sa.estimate == pytest.approx(sb.estimate, rel=1e-12)
        assert sa.se == pytest.approx(sb.se, rel=1e-12)
    assert dict(a.weights) == pytest.approx(dict(b.weights))


def test_standardize_seed_001() -> None:
    # seeds/001: equal weights -> A 0.55, B 0.65; pooled A 0.83, B 0.37.
    res = standardize(SEED_001, {"easy": 1, "hard": 1})
    assert res.rates["A"].standardized.estimate == pytest.approx(0.55)
    assert res.rates["B"].standardized.estimate == pytest.approx(0.65)
    assert res.rates["A"].pooled == pytest.approx(0.83)
    assert res.rates["B"].pooled == pytest.approx(0.37)


def test_standardize_drops_slices_without_evidence() -> None:
    counts = {"x": {"a": (5, 10), "b": (3, 4)}, "y": {"a": (6, 10), "b": (0, 0)}}
    res = standardize(counts, {"a": 3, "b": 1, "c": 0})
    assert res.common_slices == ("a",)
    assert res.dropped_slices == ("b",)
    assert res.dropped_weight == pytest.approx(0.25)
    assert res.rates["x"].standardized.estimate == pytest.approx(0.5)
    assert res.rates["x"].standardized.dropped_weight == pytest.approx(0.25)
    assert res.rates["x"].pooled == pytest.approx(8 / 14)


def test_standardize_no_common_slice_warns() -> None:
    counts = {"x": {"a": (5, 10)}, "y": {"b": (6, 10)}}
    with pytest.warns(DegenerateDataWarning):
        res = standardize(counts, {"a": 1, "b": 1})
    assert math.isnan(res.rates["x"].standardized.estimate)
    assert res.dropped_weight == 1.0


def test_fixed_mix_formula_and_dropped() -> None:
    est = {"a": 0.9, "b": 0.5, "c": float("nan")}
    ses = {"a": 0.01, "b": 0.05, "c": 0.1}
    res = fixed_mix(est, ses, {"a": 2, "b": 2, "c": 1, "d": 5})
    assert res.used_slices == ("a", "b")
    assert res.dropped_slices == ("c", "d")
    assert res.dropped_weight == pytest.approx(0.6)
    assert dict(res.weights) == {"a": 0.5, "b": 0.5}
    assert res.estimate == pytest.approx(0.7)
    assert res.se == pytest.approx(math.sqrt(0.25 * 0.01**2 + 0.25 * 0.05**2))
    assert res.ci.low == pytest.approx(0.7 - 1.959963984540054 * res.se)


def test_fixed_mix_zero_se_is_fine() -> None:
    res = fixed_mix({"a": 1.0, "b": 0.5}, {"a": 0.0, "b": 0.1}, {"a": 1, "b": 1})
    assert res.used_slices == ("a", "b")


def test_fixed_mix_validation_and_degenerate() -> None:
    with pytest.raises(ValueError, match="positive weight"):
        fixed_mix({"a": 0.5}, {"a": 0.1}, {"a": 0, "b": 0})
    with pytest.raises(ValueError, match="weights\\['a'\\]"):
        fixed_mix({"a": 0.5}, {"a": 0.1}, {"a": -1, "b": 2})
    with pytest.raises(ValueError, match="weights\\['a'\\]"):
        fixed_mix({"a": 0.5}, {"a": 0.1}, {"a": float("inf")})
    with pytest.raises(ValueError, match="ses\\['a'\\]"):
        fixed_mix({"a": 0.5}, {"a": -0.1}, {"a": 1})
    with pytest.raises(ValueError, match="confidence"):
        fixed_mix({"a": 0.5}, {"a": 0.1}, {"a": 1}, confidence=0)
    with pytest.warns(DegenerateDataWarning):
        res = fixed_mix({}, {}, {"a": 1})
    assert math.isnan(res.estimate) and res.dropped_weight == 1.0


def test_standardize_validation() -> None:
    with pytest.raises(ValueError, match="total"):
        standardize({"x": {"a": (1, -2)}}, {"a": 1})
    with pytest.raises(ValueError, match="passed"):
        standardize({"x": {"a": (5, 2)}}, {"a": 1})
    with pytest.raises(ValueError, match="positive weight"):
        standardize({"x": {"a": (1, 2)}}, {"a": 0})
    with pytest.raises(ValueError, match="at least one arm"):
        standardize({}, {"a": 1})


def test_simpson_seed_000_is_mix_shift() -> None:
    # seeds/000: v2 worse on three of four slices, pooled +1.8 pts, traffic-weighted -1.2 pts.
    res = simpson_check(SEED_000, "v1", "v2", weights=TRAFFIC)
    assert res.pooled_delta == pytest.approx(0.8325 - 1833 / 2250)
    assert round(res.pooled_delta, 3) == 0.018
    assert res.standardized_delta is not None
    assert round(res.standardized_delta, 3) == -0.012
    assert res.slice_deltas["long_context"] == pytest.approx(0.75)
    assert res.mix_shift and not res.strict_reversal
    assert res.kind == "mix_shift"


def test_simpson_seed_001_is_reversal() -> None:
    # seeds/001: B better on both slices, pooled 0.37 vs 0.83.
    res = simpson_check(SEED_001, "A", "B")
    assert res.strict_reversal and res.mix_shift
    assert res.kind == "reversal"
    assert res.pooled_delta == pytest.approx(-0.46)
    assert res.standardized_delta == pytest.approx(0.10)


def test_simpson_none_and_validation() -> None:
    counts = {"x": {"a": (5, 10), "b": (5, 10)}, "y": {"a": (6, 10), "b": (7, 10)}}
    res = simpson_check(counts, "x", "y")
    assert res.kind == "none"
    with pytest.raises(ValueError, match="'z'"):
        simpson_check(counts, "x", "z")
    with pytest.raises(ValueError, match="differ"):
        simpson_check(counts, "x", "x")
    no_common = simpson_check({"x": {"a": (1, 2)}, "y": {"b": (1, 2)}}, "x", "y")
    assert no_common.standardized_delta is None and no_common.common_slices == ()


def test_simpson_check_graded_sums_match_direct_arithmetic():
    # Graded scores: the pair is (sum of case means, n). Reference: the deltas written out
    # by hand from the means, and numpy for the pooled means.
    import numpy as np

    base = {"easy": (4.5 * 90, 90), "hard": (2.0 * 10, 10)}
    cand = {"easy": (4.7 * 10, 10), "hard": (2.4 * 90, 90)}
    res = simpson_check({"a": base, "b": cand}, "a", "b", graded=True)
    assert res.slice_deltas["easy"] == pytest.approx(0.2)
    assert res.slice_deltas["hard"] == pytest.approx(0.4)
    pooled_a = np.average([4.5, 2.0], weights=[90, 10])
    pooled_b = np.average([4.7, 2.4], weights=[10, 90])
    assert res.pooled_delta == pytest.approx(pooled_b - pooled_a)
    assert res.strict_reversal and res.kind == "reversal"
    with pytest.raises(ValueError, match="must not exceed"):
        simpson_check({"a": base, "b": cand}, "a", "b")


def test_fixed_mix_interval_stays_inside_the_parameter_range() -> None:
    from scipy.stats import norm

    est, ses, w = {"a": 0.99, "b": 1.0}, {"a": 0.02, "b": 0.03}, {"a": 1.0, "b": 1.0}
    free = fixed_mix(est, ses, w)
    # direct standardization by hand: mean 0.995, se sqrt(0.25 * (0.02^2 + 0.03^2))
    se = math.sqrt(0.25 * (0.02**2 + 0.03**2))
    assert free.ci.high == pytest.approx(0.995 + norm.ppf(0.975) * se)
    assert free.ci.high > 1.0  # the unclipped normal interval claims impossible rates
    bounded = fixed_mix(est, ses, w, bounds=(0.0, 1.0))
    assert bounded.ci.high == 1.0
    assert bounded.ci.low == pytest.approx(free.ci.low) and bounded.estimate == free.estimate
    with pytest.raises(ValueError, match="bounds"):
        fixed_mix(est, ses, w, bounds=(1.0, 0.0))


def test_standardized_binomial_rates_stay_in_zero_one() -> None:
    res = standardize({"x": {"a": (10, 10), "b": (29, 30)}}, {"a": 1, "b": 1})
    rate = res.rates["x"].standardized
    assert rate.ci.high == 1.0  # unclipped: 0.983 + 1.96 * 0.016 = 1.015
    assert 0.0 <= rate.ci.low <= rate.ci.high <= 1.0
