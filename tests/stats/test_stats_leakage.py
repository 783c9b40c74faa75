"""The rubric leakage screen: exact McNemar of each criterion's split, Holm over the rubric."""

from __future__ import annotations

import math
import warnings

import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from evaldelta.stats import Asymmetry, DegenerateDataWarning, LeakageRule, criterion_asymmetry


def _one(table: tuple[int, int, int, int], rule: LeakageRule | None = None) -> Asymmetry:
    return criterion_asymmetry([table], rule)[0]


@pytest.mark.parametrize(("b", "c"), [(28, 0), (7, 2), (1, 1), (0, 6), (13, 4)])
def test_pvalue_is_scipy_binomtest(b: int, c: int) -> None:
    res = _one((10, b, c, 2))
    # scipy.stats.binomtest(b, b + c, 0.5).pvalue: the exact two-sided McNemar p
    assert res.pvalue == pytest.approx(stats.binomtest(b, b + c, 0.5).pvalue, rel=1e-9)
    assert (res.only_baseline, res.only_candidate, res.discordant) == (b, c, b + c)


def test_holm_over_the_criteria_is_statsmodels() -> None:
    tables = [(11, 28, 0, 1), (38, 0, 1, 1), (30, 7, 1, 2), (38, 1, 1, 0)]
    res = criterion_asymmetry(tables)
    raw = [stats.binomtest(t[1], t[1] + t[2], 0.5).pvalue for t in tables]
    # statsmodels.stats.multitest.multipletests(raw, method="holm")[1]
    ref = multipletests(raw, method="holm")[1]
    assert [r.pvalue_holm for r in res] == pytest.approx(list(ref), rel=1e-9)


def test_the_sign_off_split_by_hand() -> None:
    # the ticket demo's sign_off: 11 both pass, 28 only incumbent, 0 only candidate, 1 both fail
    res = _one((11, 28, 0, 1))
    assert res.baseline_rate == pytest.approx(39 / 40) and res.candidate_rate == pytest.approx(
        11 / 40
    )
    assert res.favoured == "baseline" and res.share == 1.0
    assert res.pvalue == pytest.approx(2 * 0.5**28)  # both all-one-way outcomes of 28 coins
    assert res.flagged


def test_swapping_the_arms_flags_the_other_side() -> None:
    res = _one((11, 28, 0, 1))
    swapped = _one((11, 0, 28, 1))
    assert swapped.favoured == "candidate" and swapped.flagged
    assert swapped.pvalue == res.pvalue
    assert (swapped.baseline_rate, swapped.candidate_rate) == (
        res.candidate_rate,
        res.baseline_rate,
    )


def test_a_balanced_criterion_is_not_flagged() -> None:
    res = _one((20, 10, 10, 0))
    assert res.favoured == "neither" and res.share == 0.5 and res.pvalue == 1.0
    assert not res.flagged


def test_each_condition_of_the_rule_is_needed() -> None:
    # six to none, one criterion: p = 2 / 2**6 = 0.03125 < 0.05 -> flagged
    assert _one((90, 6, 0, 4)).flagged
    # five to none: p = 2 / 2**5 = 0.0625 -> not flagged, however lopsided
    assert not _one((90, 5, 0, 5)).flagged
    # 19 of 25 discordant one way (share 0.76 < 0.8), p = 0.0146 -> not flagged
    lean = _one((75, 19, 6, 0))
    assert lean.pvalue < 0.05 and lean.share == pytest.approx(0.76) and not lean.flagged
    # a lopsided split where the favoured arm passes only 30/40 = 0.75 < 0.9 -> not flagged
    low = _one((2, 28, 0, 10))
    assert low.pvalue < 1e-6 and low.baseline_rate == 0.75 and not low.flagged
    # the thresholds are parameters
    assert _one((2, 28, 0, 10), LeakageRule(min_pass_rate=0.7)).flagged


def test_holm_can_withdraw_a_flag() -> None:
    # alone, six to none is flagged (0.03125); among four criteria Holm makes it 4 x 0.03125
    assert _one((90, 6, 0, 4)).flagged
    res = criterion_asymmetry([(90, 6, 0, 4), (100, 0, 0, 0), (100, 0, 0, 0), (99, 1, 0, 0)])
    assert res[0].pvalue_holm == pytest.approx(0.125) and not res[0].flagged


def test_no_pair_is_nan_with_a_warning() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = _one((0, 0, 0, 0))
    assert any(issubclass(w.category, DegenerateDataWarning) for w in caught)
    assert math.isnan(res.baseline_rate) and math.isnan(res.pvalue) and not res.flagged


@pytest.mark.parametrize(
    "kwargs", [{"min_pass_rate": 1.5}, {"min_share": 0.5}, {"alpha": -0.1}, {"alpha": "0.05"}]
)
def test_bad_rules_are_refused(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        LeakageRule(**kwargs)  # type: ignore[arg-type]


def test_bad_tables_are_refused() -> None:
    with pytest.raises(ValueError, match=r"tables\[0\]\[1\]"):
        criterion_asymmetry([(1, -2, 0, 0)])
    with pytest.raises(ValueError, match="four counts"):
        criterion_asymmetry([(1, 2, 3)])  # type: ignore[list-item]
