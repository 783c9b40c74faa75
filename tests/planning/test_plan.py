"""evaldelta.planning.plan: the issue's numbers, the 40-ticket pilot, allocation, n/a cases."""

from __future__ import annotations

import math

import pytest
from scipy.stats import norm
from statsmodels.stats.power import TTestIndPower, TTestPower

from evaldelta.demo import data_path
from evaldelta.errors import UsageError
from evaldelta.planning.plan import allocate, plan_from_pilot, plan_from_summary
from evaldelta.stats import mcnemar_exact_power


@pytest.mark.parametrize(("effect", "paired", "unpaired"), [(0.5, 40, 77), (0.25, 154, 305)])
def test_issue_numbers_sd_1_1(effect: float, paired: int, unpaired: int) -> None:
    # Issue: sd 1.1, 80% power, alpha 0.05 -> paired 40 / 154, unpaired 77 / 305 per arm.
    plan = plan_from_summary(effect, sd=1.1)
    s = plan.pairs[0].overall
    assert (s.n_required, s.unpaired_n_per_arm) == (paired, unpaired)
    # TTestPower().solve_power(effect_size=effect/1.1, power=0.8, alpha=0.05)
    assert s.n_required == math.ceil(
        TTestPower().solve_power(effect_size=effect / 1.1, power=0.8, alpha=0.05)
    )
    # TTestIndPower().solve_power(effect_size=effect/1.1, power=0.8, alpha=0.05, ratio=1)
    assert s.unpaired_n_per_arm == math.ceil(
        TTestIndPower().solve_power(effect_size=effect / 1.1, power=0.8, alpha=0.05, ratio=1)
    )
    assert s.method == "paired t (noncentral t)" and plan.source == "sd"


def _connor(p01: float, p10: float, power: float = 0.8, alpha: float = 0.05) -> int:
    # Connor (1987): n = [z_a sqrt(psi) + z_b sqrt(psi - delta^2)]^2 / delta^2
    psi, delta = p01 + p10, p01 - p10
    z_a, z_b = norm.ppf(1 - alpha / 2), norm.ppf(power)
    return math.ceil((z_a * math.sqrt(psi) + z_b * math.sqrt(psi - delta**2)) ** 2 / delta**2)


def test_forty_ticket_pilot() -> None:
    # Seed 002: 1 ticket only the incumbent passes, 3 only the candidate, of 40.
    with data_path("seed002.csv") as path:
        plan = plan_from_pilot([path], 0.05, baseline="incumbent")
    pair = plan.pairs[0]
    assert (pair.baseline, pair.candidate) == ("incumbent", "candidate")
    s = pair.overall
    assert s.n_now == 40 and s.kind == "binary"
    assert s.method == "exact mcnemar (connor 1987 beside)"
    assert s.p_only_candidate == pytest.approx(3 / 40) and s.p_only_baseline == pytest.approx(
        1 / 40
    )
    # exact McNemar reaches 80% first at 337 pairs; Connor's approximation says 312
    assert s.n_required == 337 and mcnemar_exact_power(337, 3 / 40, 1 / 40) >= 0.8
    assert math.ceil(s.n_normal) == _connor(3 / 40, 1 / 40) == 312
    # 4 discordant pairs out of 40: even all of them one way is not detectable at 80%.
    assert math.isnan(s.mde)
    assert any("no difference is detectable" in n for n in s.notes)
    # unpaired contrast: two-sample t at the arms' pooled sd on the same 40 cases
    sd_b, sd_c = math.sqrt(0.85 * 0.15 * 40 / 39), math.sqrt(0.9 * 0.1 * 40 / 39)
    pooled = math.sqrt((sd_b**2 + sd_c**2) / 2)
    assert s.unpaired_sd == pytest.approx(pooled)
    assert s.unpaired_n_per_arm == math.ceil(
        TTestIndPower().solve_power(effect_size=0.05 / pooled, power=0.8, alpha=0.05)
    )


def test_binary_slice_without_discordance_is_nan_not_zero() -> None:
    with data_path("seed002.csv") as path:
        plan = plan_from_pilot([path], 0.05, baseline="incumbent")
    refund = next(s for s in plan.pairs[0].slices if s.slice == "refund_request")
    assert refund.discordance == 0
    assert math.isnan(refund.mde) and math.isnan(refund.n_required)
    assert any("b = c = 0" in n for n in refund.notes)


def test_mde_only_without_effect_and_mde_inverts_required_n() -> None:
    with data_path("seed004.csv") as path:
        plan = plan_from_pilot([path], baseline="always_strong", candidates=["cascade"])
    ext = next(s for s in plan.pairs[0].slices if s.slice == "extraction")
    assert ext.effect is None and ext.n_required is None and ext.unpaired_n_per_arm is None
    # TTestPower().solve_power(nobs=150, effect_size=None, power=0.8, alpha=0.05) * sd
    ref = TTestPower().solve_power(nobs=150, effect_size=None, power=0.8, alpha=0.05) * ext.sd
    assert ext.mde == pytest.approx(ref, rel=1e-4)
    # the sd of per-case deltas is paired.se * sqrt(n): the seed's extraction sd ~ 0.46
    assert 0.3 < ext.sd < 0.6 and ext.n_now == 150
    back = plan_from_summary(ext.mde, sd=ext.sd).pairs[0].overall
    assert back.n_required_exact == pytest.approx(150, rel=1e-9)


def test_binary_n_is_the_exact_test_s_with_connor_beside() -> None:
    plan = plan_from_summary(p_only_candidate=0.2, p_only_baseline=0.1)
    s = plan.pairs[0].overall
    assert math.ceil(s.n_normal) == _connor(0.2, 0.1) and s.effect == pytest.approx(0.1)
    assert mcnemar_exact_power(int(s.n_required), 0.2, 0.1) >= 0.8
    assert mcnemar_exact_power(int(s.n_required) - 1, 0.2, 0.1) < 0.8
    assert plan.kind == "binary" and s.unpaired_n_per_arm is None


def test_one_sided_binary_mde_uses_alpha_not_half() -> None:
    from evaldelta.planning.plan import _mde_connor

    two = _mde_connor(400, 0.3, 0.8, 0.05, "two-sided")
    larger = _mde_connor(400, 0.3, 0.8, 0.05, "larger")
    smaller = _mde_connor(400, 0.3, 0.8, 0.05, "smaller")
    assert 0 < larger < two and smaller == -larger


def test_effect_larger_than_discordance_is_undefined() -> None:
    with data_path("seed002.csv") as path:
        plan = plan_from_pilot([path], 0.2, baseline="incumbent")
    s = plan.pairs[0].overall
    assert math.isnan(s.n_required)
    assert any("cannot arise from a discordance" in n for n in s.notes)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"sd": 1.1}, "--sd needs --effect"),
        ({}, "give a pilot"),
        ({"p_only_candidate": 0.1}, "both --p-only-candidate"),
        ({"sd": 1.0, "p_only_candidate": 0.1, "p_only_baseline": 0.2, "effect": 0.1}, "not both"),
        ({"p_only_candidate": 0.1, "p_only_baseline": 0.1}, "must differ"),
        ({"p_only_candidate": 0.2, "p_only_baseline": 0.1, "effect": 0.3}, "do not also give"),
        ({"sd": -1.0, "effect": 0.1}, "positive"),
        ({"sd": 1.0, "effect": 0.0}, "non-zero"),
        ({"sd": 1.0, "effect": 0.1, "power": 0.01}, "power"),
        ({"sd": 1.0, "effect": -0.1, "alternative": "larger"}, "positive effect"),
        ({"sd": 1.0, "effect": 0.1, "budget": 100}, "--traffic"),
    ],
)
def test_summary_usage_errors(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        plan_from_summary(**kwargs)  # type: ignore[arg-type]


# -- allocation ---------------------------------------------------------------------------


def test_allocation_floor_then_neyman_hand_computed() -> None:
    w = {"a": 0.5, "b": 0.3, "c": 0.2}
    sd = {"a": 1.0, "b": 2.0, "c": 0.5}
    res = allocate(w, sd, 1000, 100)
    # remainder 700 by w*sd = 0.5, 0.6, 0.1 (sum 1.2): 291.67, 350, 58.33
    # largest remainder: 291 + 350 + 58 = 699, the last case to a (0.67 > 0.33)
    got = {s.slice: s.n for s in res.slices}
    assert got == {"a": 100 + 292, "b": 100 + 350, "c": 100 + 58}
    assert res.total == 1000
    z = norm.ppf(0.975)
    for s in res.slices:
        assert s.halfwidth_after == pytest.approx(z * sd[s.slice] / math.sqrt(s.n))
        assert s.halfwidth_now is None and not s.taken_whole
    std = z * math.sqrt(sum(w[k] ** 2 * sd[k] ** 2 / got[k] for k in w))
    assert res.standardized_halfwidth_after == pytest.approx(std)


def test_allocation_weights_on_any_scale_and_budget_sums_exactly() -> None:
    w = {f"s{i}": float(i + 1) for i in range(7)}
    sd = {k: 0.3 + 0.1 * i for i, k in enumerate(w)}
    for budget in (2100, 2101, 2999, 5003):
        a = allocate(w, sd, budget, 300)
        b = allocate({k: v * 1000 for k, v in w.items()}, sd, budget, 300)
        assert a.total == budget == sum(s.n for s in a.slices)
        assert [s.n for s in a.slices] == [s.n for s in b.slices]
        assert all(s.n >= 300 for s in a.slices)


def test_allocation_caps_at_available_and_respreads() -> None:
    res = allocate(
        {"small": 0.5, "big": 0.5}, {"small": 1.0, "big": 1.0}, 1000, 300,
        available={"small": 120, "big": 10_000},
    )  # fmt: skip
    got = {s.slice: s for s in res.slices}
    assert got["small"].n == 120 and got["small"].taken_whole
    assert got["big"].n == 880 and not got["big"].taken_whole


def test_allocation_more_budget_than_rows_takes_all() -> None:
    res = allocate({"a": 1, "b": 1}, {"a": 1, "b": 1}, 500, 10, available={"a": 50, "b": 60})
    assert res.total == 110 and all(s.taken_whole for s in res.slices)
    assert any("every row is taken" in n for n in res.notes)


def test_allocation_now_and_after_from_current_n() -> None:
    res = allocate({"a": 1, "b": 1}, {"a": 1.0, "b": 0.0}, 700, 300, n_now={"a": 100, "b": 0})
    got = {s.slice: s for s in res.slices}
    z = norm.ppf(0.975)
    assert got["a"].n == 400 and got["b"].n == 300  # b has sd 0: only its floor
    assert got["a"].halfwidth_now == pytest.approx(z / 10)
    assert math.isnan(got["b"].halfwidth_now)  # no cases now: undefined, not 0
    assert math.isnan(res.standardized_halfwidth_now)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (({"a": 1, "b": 1}, {"a": 1, "b": 1}, 500, 300), "below the floors"),
        (({"a": 1}, {"a": math.nan}, 500, 10), "finite sd"),
        (({"a": 0}, {"a": 1}, 500, 10), "not all zero"),
        (({"a": 1}, {"a": 1}, 0, 10), "positive whole number"),
        (({}, {}, 10, 1), "at least one slice"),
    ],
)
def test_allocation_errors(args: tuple[object, ...], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        allocate(*args)  # type: ignore[arg-type]


def test_pilot_allocation_on_seed004() -> None:
    from evaldelta.sources._mix import read_mix

    with data_path("seed004.csv") as path, data_path("traffic004.csv") as traffic:
        weights = read_mix(traffic)
        plan = plan_from_pilot(
            [path], baseline="always_strong", candidates=["cascade"],
            traffic=weights, budget=3000,
        )  # fmt: skip
    a = plan.allocation
    assert a is not None and a.total == 3000
    got = {s.slice: s for s in a.slices}
    # extraction: 3% of traffic but by far the largest sd -> the most cases beyond its floor
    assert max(got.values(), key=lambda s: s.n).slice == "extraction"
    assert all(s.n >= 300 for s in a.slices)
    assert got["extraction"].n_now == 150
    assert got["extraction"].halfwidth_after < got["extraction"].halfwidth_now
