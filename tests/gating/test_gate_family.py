"""The gate's Holm family is every rule evaluated, an inconclusive one included (issue 24).

Item 15: rules with fewer than ``min_informative`` informative pairs used to leave the
family, which then shrank to the decidable (often extreme) slices: identical releases at the
margin with sparse graded slices failed 0.041 of the time at K = 50. Item 14: a paired t on
pass/fail repeats over fewer than 30 cases is inconclusive. Reference values: Holm's
adjusted p-values from ``statsmodels.stats.multitest.multipletests(p, method="holm")``, the
one-sided t p-value from ``scipy.stats.t.cdf``, and the false-fail bound from
``scipy.stats.binom.ppf``.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

from evaldelta import stats
from evaldelta.gating import FAIL, INCONCLUSIVE, evaluate
from evaldelta.gating.policy import parse_policy
from evaldelta.gating.synthetic import from_deltas

POLICY = "[defaults]\nmax_regression = 0.0\n"


def _paired(n: int, mean: float, sd: float, informative: int) -> stats.PairedResult:
    return stats.paired_means_from_summary(n, mean, sd, informative=informative)


def test_an_inconclusive_rule_stays_in_the_family():
    # slice b alone fails (one-sided p 0.0178 < 0.025); slice a rests on 5 informative pairs
    # and cannot be decided. With a in the family (p = 1), Holm doubles b's p-value:
    # multipletests([1.0, p_b], method="holm")[1] -> [1.0, 2 p_b] = 0.0356 > 0.025
    p_b = float(sps.t.cdf(-0.5 / (1.8 / np.sqrt(60)), 59))
    assert 0.0125 < p_b < 0.025
    with pytest.warns(stats.ReliabilityWarning):
        a = _paired(40, -0.1, 0.5, informative=5)
    deltas = {"a": a, "b": _paired(60, -0.5, 1.8, informative=40)}
    verdict = evaluate(parse_policy(POLICY, "p.toml"), from_deltas(deltas))
    rules = {r.slice: r for r in verdict.rules}
    assert verdict.family == 2
    assert rules["a"].outcome == INCONCLUSIVE and rules["a"].p_fail is None
    expected = multipletests([1.0, p_b], method="holm")[1][1]
    assert rules["b"].p_fail == pytest.approx(p_b)
    assert rules["b"].p_fail_adjusted == pytest.approx(expected)
    assert rules["b"].outcome == INCONCLUSIVE and rules["b"].leaning == FAIL
    assert "across 2 rules" in rules["b"].sentence
    # alone, b fails: the family was what protected it
    alone = evaluate(parse_policy(POLICY, "p.toml"), from_deltas({"b": deltas["b"]}))
    assert alone.outcome == FAIL


def _sparse_at_margin(rng: np.random.Generator, k: int) -> dict[str, stats.PairedResult]:
    """K slices of 60 pairs, 85% identical, true mean delta exactly -0.15 (the margin)."""
    values, probs = np.array([-3.0, -2.0, -1.0, 1.0, 2.0]), [0.2, 0.2, 0.35, 0.15, 0.1]
    out = {}
    for i in range(k):
        moved = rng.random(60) >= 0.85
        d = np.where(moved, rng.choice(values, size=60, p=probs), 0.0)
        out[f"s{i}"] = stats.paired_means(np.zeros(60), d)
    return out


def test_identical_releases_at_the_margin_fail_at_most_half_alpha_with_sparse_slices():
    # each slice's nonzero deltas average -1, so its mean is -0.15 = -margin: a fail is a
    # false fail. About half the slices rest on fewer than 10 informative pairs.
    rng = np.random.default_rng(20261224)
    policy = parse_policy("[defaults]\nmax_regression = 0.15\n", "p.toml")
    gates, failed = 150, 0
    for _ in range(gates):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", stats.StatisticsWarning)
            deltas = _sparse_at_margin(rng, 50)
        failed += evaluate(policy, from_deltas(deltas)).outcome == FAIL
    # 99.9% quantile of Binomial(150, 0.025): scipy.stats.binom.ppf(0.999, 150, 0.025) = 11
    assert failed <= sps.binom.ppf(0.999, gates, 0.025)


def test_pass_fail_repeats_on_fewer_than_30_cases_are_inconclusive():
    with pytest.warns(stats.ReliabilityWarning, match="fewer than 30 cases"):
        small = stats.paired_means_from_summary(
            20, -0.4, 0.3, informative=18, pass_fail_repeats=True
        )
    big = stats.paired_means_from_summary(30, -0.4, 0.3, informative=25, pass_fail_repeats=True)
    comparison = from_deltas({"small": small, "big": big}, kind="binary")
    metric = dataclasses.replace(comparison.metrics[0], repeated=True)
    comparison = dataclasses.replace(comparison, metrics=(metric,))
    verdict = evaluate(parse_policy(POLICY, "p.toml"), comparison)
    rules = {r.slice: r for r in verdict.rules}
    assert rules["small"].outcome == INCONCLUSIVE
    assert "rests on 20 cases, fewer than 30" in rules["small"].sentence
    assert rules["big"].outcome == FAIL
    assert verdict.family == 2
