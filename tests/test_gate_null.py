"""Under the null, the interval-based gate fails a slice at most alpha/2 of the time.

Both arms are drawn from the same distribution (true paired delta 0 >= -margin), so every
"fail" is a false fail. A fail needs the interval's upper bound below -margin <= 0, which a
two-sided 95% interval does with probability at most 0.025. The tolerance is the 99.9%
quantile of Binomial(n_slices, alpha/2) (scipy.stats.binom.ppf), so the test is a check of
the claim, not of the code's own numbers. The point basis is shown failing about half of
identical slices at margin 0, which is why it is not the default.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

from evaldelta import stats
from evaldelta.gate import FAIL, evaluate
from evaldelta.model import (
    SCHEMA_VERSION,
    ArmSlice,
    Comparison,
    MetricResult,
    PairComparison,
    Pooled,
    SliceDelta,
    SlicingResult,
)
from evaldelta.policy import parse_policy

ALPHA = 0.05
N_SLICES = 2000
SEED = 20240501


def _arm(arm: str, name: str, est: stats.Estimate) -> ArmSlice:
    return ArmSlice(arm, name, est.n, est.n, est.n, 0, est.n, est, float("nan"), est.estimate)


def _delta(name: str, res: stats.PairedResult) -> SliceDelta:
    return SliceDelta(
        slice=name,
        basis="paired",
        n_pairs=res.n,
        baseline_mean=float("nan"),
        candidate_mean=float("nan"),
        paired=res,
        unpaired=None,
        pvalue_holm=None,
        table=None,
        informative=res.informative,
        informative_share=None,
        only_in_baseline=0,
        only_in_candidate=0,
        unscored_in_one=0,
    )


def make_comparison(
    deltas: dict[str, stats.PairedResult],
    *,
    kind: str = "graded",
    candidate_estimates: dict[str, stats.Estimate] | None = None,
    confidence: float = 0.95,
) -> Comparison:
    """A hand-built Comparison: one metric, one slicing, baseline 'base' vs 'cand'."""
    names = tuple(deltas)
    first = next(iter(deltas.values()))
    arms = tuple(_arm("cand", s, e) for s, e in (candidate_estimates or {}).items())
    pair = PairComparison(
        baseline="base",
        candidate="cand",
        shared_cases=sum(r.n for r in deltas.values()),
        paired_available=True,
        overall=_delta("(all cases)", first),
        slices=tuple(_delta(s, r) for s, r in deltas.items()),
        standardized=(),
        pooled=Pooled(0.0, 0.0, 0.0, 0.0, 0.0),
        simpson=None,
        only_in_baseline=(),
        only_in_candidate=(),
        discordant_total=0,
        discordant=(),
    )
    metric = MetricResult(
        "score", kind, False, "attempt", (SlicingResult("slice", names, arms, (pair,)),)
    )
    return Comparison(
        schema_version=SCHEMA_VERSION,
        evaldelta_version="test",
        inputs=(),
        baseline="base",
        candidates=("cand",),
        arms_present=("base", "cand"),
        confidence=confidence,
        interval="newcombe",
        mix="actual",
        traffic=None,
        metrics=(metric,),
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
    policy = parse_policy(f'basis = "{basis}"\n[defaults]\nmax_regression = {margin}\n')
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
