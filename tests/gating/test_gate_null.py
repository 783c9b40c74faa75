"""Under the null, the gate fails identical releases at most alpha/2 of the time.

Both arms are drawn from the same distribution (true paired delta 0 >= -margin), so every
"fail" is a false fail. Per rule (``fail_adjust = "none"``): a fail needs the interval's
upper bound below -margin <= 0, which a two-sided 95% interval does with probability at most
0.025. Per gate: with K slices each with its own rule, the fail decisions are Holm-adjusted
(the default), so the whole gate fails at most alpha/2 of the time for every K; without the
adjustment it fails far more often (the union of K tests). Tolerances are the 99.9% quantile
of Binomial(n, alpha/2) (scipy.stats.binom.ppf), so the test checks the claim, not the
code's own numbers. The point basis is shown failing about half of identical slices at
margin 0, which is why it is not the default.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

from evaldelta import stats
from evaldelta.comparison.model import Comparison
from evaldelta.gating import FAIL, evaluate
from evaldelta.gating.policy import parse_policy
from evaldelta.gating.synthetic import from_deltas

ALPHA = 0.05
N_SLICES = 2000
SEED = 20240501


def make_comparison(
    deltas: dict[str, stats.PairedResult],
    *,
    kind: str = "graded",
    candidate_estimates: dict[str, stats.Estimate] | None = None,
    confidence: float = 0.95,
) -> Comparison:
    """A hand-built Comparison: one metric, one slicing, baseline 'base' vs 'cand'."""
    return from_deltas(
        deltas,
        kind=kind,
        candidate_estimates=candidate_estimates,
        confidence=confidence,
        version="test",
    )


def _binary_null(rng: np.random.Generator, n: int, interval: str) -> dict[str, stats.PairedResult]:
    out = {}
    for i in range(N_SLICES):
        q = rng.beta(2.0, 1.0, size=n)  # case difficulty, shared by both arms
        b = rng.random(n) < q
        c = rng.random(n) < q
        cells = [int(np.sum(x)) for x in (b & c, b & ~c, ~b & c, ~b & ~c)]
        out[f"s{i}"] = stats.paired_proportions(*cells, confidence=1 - ALPHA, interval=interval)
    return out


def _graded_null(rng: np.random.Generator, n: int) -> dict[str, stats.PairedResult]:
    out = {}
    for i in range(N_SLICES):
        mu = rng.normal(4.0, 0.6, size=n)
        b = np.clip(np.round(mu + rng.normal(0.0, 0.5, n), 1), 1, 5)
        c = np.clip(np.round(mu + rng.normal(0.0, 0.5, n), 1), 1, 5)
        out[f"s{i}"] = stats.paired_means(b, c, confidence=1 - ALPHA)
    return out


def _fail_count(deltas: dict[str, stats.PairedResult], margin: float, basis: str) -> int:
    """Per-rule false fails: every slice judged on its own (no adjustment across slices)."""
    policy = parse_policy(
        f'basis = "{basis}"\nfail_adjust = "none"\n[defaults]\nmax_regression = {margin}\n'
    )
    verdict = evaluate(policy, make_comparison(deltas))
    assert len(verdict.rules) == N_SLICES
    return sum(1 for r in verdict.rules if r.outcome == FAIL)


# The largest count of false fails a true rate of alpha/2 gives with probability 0.999.
LIMIT = int(binom.ppf(0.999, N_SLICES, ALPHA / 2))


@pytest.mark.parametrize(
    ("label", "margin"),
    [("newcombe", 0.0), ("newcombe", 0.02), ("wald", 0.0), ("wald", 0.02)],
)
def test_binary_null_false_fail_rate_at_most_half_alpha(label: str, margin: float) -> None:
    rng = np.random.default_rng([SEED, int(margin * 100), label == "wald"])
    deltas = _binary_null(rng, 150, label)
    fails = _fail_count(deltas, margin, "interval")
    assert fails <= LIMIT, (label, margin, fails / N_SLICES)
    if margin == 0.0:
        # The point basis fails about half of identical releases at margin 0.
        assert _fail_count(deltas, margin, "point") > 0.3 * N_SLICES


@pytest.mark.parametrize("margin", [0.0, 0.05])
def test_graded_null_false_fail_rate_at_most_half_alpha(margin: float) -> None:
    rng = np.random.default_rng([SEED, int(margin * 100), 7])
    deltas = _graded_null(rng, 100)
    fails = _fail_count(deltas, margin, "interval")
    assert fails <= LIMIT, (margin, fails / N_SLICES)
    if margin == 0.0:
        assert _fail_count(deltas, margin, "point") > 0.3 * N_SLICES


def test_the_limit_is_the_binomial_quantile() -> None:
    # scipy.stats.binom.ppf(0.999, 2000, 0.025) = 73, i.e. a rate of 0.0365
    assert LIMIT == 73


GATES = 400  # replications per K: each one gate over K null slices


def _gate_fail_rate(kind: str, k: int, adjust: str, seed: int) -> float:
    """The share of identical releases, each gated over ``k`` slices, whose gate FAILS."""
    rng = np.random.default_rng([SEED, seed, k])
    policy = parse_policy(f'fail_adjust = "{adjust}"\n[defaults]\nmax_regression = 0.0\n')
    failed = 0
    for _ in range(GATES):
        deltas = {}
        for i in range(k):
            if kind == "binary":
                q = rng.beta(2.0, 1.0, size=150)
                b, c = rng.random(150) < q, rng.random(150) < q
                cells = [int(np.sum(x)) for x in (b & c, b & ~c, ~b & c, ~b & ~c)]
                deltas[f"s{i}"] = stats.paired_proportions(*cells, confidence=1 - ALPHA)
            else:
                mu = rng.normal(4.0, 0.6, size=60)
                x = np.clip(mu + rng.normal(0.0, 0.5, 60), 1, 5)
                y = np.clip(mu + rng.normal(0.0, 0.5, 60), 1, 5)
                deltas[f"s{i}"] = stats.paired_means(x, y, confidence=1 - ALPHA)
        verdict = evaluate(policy, make_comparison(deltas))
        failed += verdict.outcome == FAIL
    return failed / GATES


GATE_LIMIT = binom.ppf(0.999, GATES, ALPHA / 2) / GATES  # 21 of 400 = 0.0525


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["binary", "graded"])
@pytest.mark.parametrize("k", [1, 5, 20, 50])
def test_identical_releases_fail_the_gate_at_most_half_alpha_whatever_the_slices(
    kind: str, k: int
) -> None:
    rate = _gate_fail_rate(kind, k, "holm", seed=1)
    assert rate <= GATE_LIMIT, (kind, k, rate)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["binary", "graded"])
def test_without_the_adjustment_the_union_of_slices_fails_far_more(kind: str) -> None:
    # 20 rules each at alpha/2: the gate fails 1 - 0.975^20 = 40% of identical releases if
    # the slices were independent draws of the same test
    rate = _gate_fail_rate(kind, 20, "none", seed=2)
    assert rate > 4 * ALPHA / 2, (kind, rate)
