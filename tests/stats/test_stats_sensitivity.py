"""Break-even shares of a fixed-mix delta (issue 13, seed 000's open question).

Reference values are the seed's own published slice rates and production weights
(seeds/000: v1 0.950/0.800/0.680/0.200, v2 0.880/0.760/0.650/0.950, w = 0.45/0.30/0.20/0.05,
"production-weighted v1: 0.814, v2: 0.802"), solved by hand below, and the fixed-mix
delta of statsmodels-free arithmetic at the solved shares.
"""

from __future__ import annotations

import math

import pytest
from scipy import stats as sps

from evaldelta.stats import break_even, delta_at_share

V1 = {"short_factual": 0.95, "multi_turn": 0.80, "tool_use": 0.68, "long_context": 0.20}
V2 = {"short_factual": 0.88, "multi_turn": 0.76, "tool_use": 0.65, "long_context": 0.95}
W = {"short_factual": 0.45, "multi_turn": 0.30, "tool_use": 0.20, "long_context": 0.05}
D = {k: V2[k] - V1[k] for k in V1}


def test_seed_000_long_context_break_even_share() -> None:
    # Seed 000: production-weighted v2 - v1 = 0.802 - 0.814 = -1.2 pts.
    ses = dict.fromkeys(D, 0.01)
    res = break_even(D, ses, W, "long_context")
    assert res.share == pytest.approx(0.05)
    assert res.delta == pytest.approx(-0.012, abs=1e-12)
    # By hand: the other three slices mixed among themselves,
    # A = (0.45 * -0.07 + 0.30 * -0.04 + 0.20 * -0.03) / 0.95, and D(s) = 0.75 s + A (1 - s).
    a = (0.45 * -0.07 + 0.30 * -0.04 + 0.20 * -0.03) / 0.95
    assert res.rest_delta == pytest.approx(a, abs=1e-12)
    assert res.sign_flip == pytest.approx(a / (a - 0.75), abs=1e-12)
    assert res.sign_flip == pytest.approx(0.06496, abs=1e-5)  # 5% -> 6.5% of traffic
    delta, _, _ = delta_at_share(D, ses, W, "long_context", res.sign_flip)
    assert delta == pytest.approx(0.0, abs=1e-12)


def test_interval_flips_are_where_an_end_crosses_zero() -> None:
    ses = {"short_factual": 0.02, "multi_turn": 0.03, "tool_use": 0.03, "long_context": 0.06}
    res = break_even(D, ses, W, "long_context")
    z = sps.norm.ppf(0.975)
    assert res.interval_flips, res
    for s in res.interval_flips:
        d, low, high = delta_at_share(D, ses, W, "long_context", s)
        # direct: the other slices' weights rescaled to (1 - s), variance sum w^2 se^2
        w = {k: (W[k] / 0.95) * (1 - s) for k in W if k != "long_context"} | {"long_context": s}
        d_ref = sum(w[k] * D[k] for k in W)
        se_ref = math.sqrt(sum(w[k] ** 2 * ses[k] ** 2 for k in W))
        assert d == pytest.approx(d_ref, abs=1e-12)
        assert min(abs(d_ref - z * se_ref), abs(d_ref + z * se_ref)) == pytest.approx(0, abs=1e-9)
        assert min(abs(low), abs(high)) == pytest.approx(0, abs=1e-9)
    # the sign flip lies between the interval's two crossings
    assert res.sign_flip is not None
    assert res.interval_flips[0] < res.sign_flip < res.interval_flips[-1]


def test_no_share_flips_a_slice_that_agrees_with_the_rest() -> None:
    d = {"a": -0.05, "b": -0.02}
    res = break_even(d, {"a": 0.01, "b": 0.01}, {"a": 0.5, "b": 0.5}, "b")
    assert res.sign_flip is None
    assert res.interval_flips == ()


def test_the_only_slice_has_nothing_to_trade_against() -> None:
    res = break_even({"a": 0.1}, {"a": 0.02}, {"a": 1.0}, "a")
    assert res.sign_flip is None and res.interval_flips == ()
    assert math.isnan(res.rest_delta)


def test_bad_arguments_are_errors() -> None:
    with pytest.raises(ValueError, match="needs a weight"):
        break_even(D, dict.fromkeys(D, 0.01), W, "nope")
    with pytest.raises(ValueError, match="share"):
        delta_at_share(D, dict.fromkeys(D, 0.01), W, "long_context", 1.5)


def test_a_bound_other_than_zero_moves_every_crossing_to_the_bound() -> None:
    # A gate's [standardized] margin of 2 points: the rule compares D(s) with -0.02.
    ses = {"short_factual": 0.02, "multi_turn": 0.03, "tool_use": 0.03, "long_context": 0.06}
    res = break_even(D, ses, W, "long_context", bound=-0.02)
    assert res.bound == -0.02 and res.delta == pytest.approx(-0.012, abs=1e-12)
    # By hand: D(s) = 0.75 s + A (1 - s) = -0.02  <=>  s = (A + 0.02) / (A - 0.75)
    a = (0.45 * -0.07 + 0.30 * -0.04 + 0.20 * -0.03) / 0.95
    assert res.sign_flip == pytest.approx((a + 0.02) / (a - 0.75), abs=1e-12)
    assert res.sign_flip == pytest.approx(0.04003, abs=1e-5)  # 5% -> 4.0% of traffic
    assert res.slice_delta == pytest.approx(0.75) and res.rest_delta == pytest.approx(a)
    z = sps.norm.ppf(0.975)
    assert res.interval_flips, res
    for s in res.interval_flips:
        # direct: (D(s) + 0.02)^2 = z^2 V(s) with the other weights rescaled to (1 - s)
        w = {k: (W[k] / 0.95) * (1 - s) for k in W if k != "long_context"} | {"long_context": s}
        d_ref = sum(w[k] * D[k] for k in W)
        se_ref = math.sqrt(sum(w[k] ** 2 * ses[k] ** 2 for k in W))
        assert (d_ref + 0.02) ** 2 == pytest.approx(z**2 * se_ref**2, abs=1e-12)


def test_share_sweep_is_the_fixed_mix_at_each_rescaled_share() -> None:
    from evaldelta.stats import fixed_mix, share_sweep

    ses = {"short_factual": 0.02, "multi_turn": 0.03, "tool_use": 0.03, "long_context": 0.06}
    curve = share_sweep(D, ses, W, "long_context", [0.0, 0.05, 0.3, 1.0])
    assert [c[0] for c in curve] == [0.0, 0.05, 0.3, 1.0]
    for s, d, low, high in curve:
        w = {k: (W[k] / 0.95) * (1 - s) for k in W if k != "long_context"} | {"long_context": s}
        ref = fixed_mix(D, ses, w)  # direct standardization at the moved weights
        assert d == pytest.approx(ref.estimate, abs=1e-12)
        assert (low, high) == pytest.approx((ref.ci.low, ref.ci.high), abs=1e-12)
    assert curve[1][1] == pytest.approx(-0.012, abs=1e-12)  # today's share: seed 000's -1.2
    assert curve[-1][1] == pytest.approx(0.75)  # all traffic long_context: its own delta
