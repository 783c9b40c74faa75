"""The sequential gate, vectorised over simulated paths: the decisions gating/verdict.py makes.

``bench/sequential.py`` simulates thousands of monitored releases, each looked at hundreds of
times; calling ``gate.evaluate`` on ``from_deltas({slice: stats.anytime_paired(...)})`` at
every look would take hours. This module computes the same decisions from a few O(n)
capital paths per rule (:func:`anytime_rule`) and applies the gate's family-wise step
(:func:`holm`, as ``gating/verdict.py _adjust_fails``). :func:`real_outcome` is the real
gate on the same data; the bench checks the two agree on sample paths and at every look
that decides, and ``tests/gating/test_sequential_gate.py`` checks them at every look of
seeded runs.

Why a few capital paths decide a rule. The sequence at level ``1 - alpha`` rules out a grid
mean ``m`` once ``K+_s(m)/2`` or ``K-_s(m)/2`` has reached ``1/alpha``; ``K+`` is
nonincreasing and ``K-`` nondecreasing in ``m`` (stats/_sequential.py), so with its ends
read as the library reads them (``grid[last inside] + step``, ``grid[first inside] - step``):

- the upper end lies below the bound ``b`` iff the first grid point ``g`` whose reported
  end would reach ``b`` is ruled out from above: ``max_s K-_s(g) >= 2/alpha``;
- the lower end lies at or above ``b`` iff the last grid point ``g'`` whose reported lower
  end would fall below ``b`` is ruled out from below: ``max_s K+_s(g') >= 2/alpha``;

(for a non-empty sequence; an empty one, probability below alpha, makes a zero-width
interval, which the gate calls inconclusive: every look that decides is re-checked with the
real gate, which would show it). The fail p-value is the library's own
(``betting_pvalue_path``), 1 where the estimate is at or above the bound
(``stats.fail_pvalue``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

from evaldelta import stats
from evaldelta.gating import evaluate
from evaldelta.gating.policy import parse_policy
from evaldelta.gating.synthetic import from_deltas
from evaldelta.stats import _sequential as seq

__all__ = [
    "ALPHA",
    "CONF",
    "RulePath",
    "anytime_rule",
    "fixed_fails",
    "holm",
    "real_outcome",
    "verdict_outcome",
]

CONF = 0.95
ALPHA = 1.0 - CONF  # the gate's alpha: 1 - comparison.confidence, the same float
HALF = ALPHA / 2.0  # a rule fails when its Holm-adjusted p is at most this
MIN_INFORMATIVE = 10  # the policy's default min_informative


@dataclass(frozen=True)
class RulePath:
    """One rule's state after each observation (last axis), for every path (leading axes).

    ``p`` the fail p-value the gate adjusts (1 where the rule cannot fail: too few
    informative pairs, or an estimate at or above the bound); ``fail`` the interval's upper
    end below the bound; ``passed`` its lower end at or above the bound (each False where
    the rule cannot decide).
    """

    p: np.ndarray
    fail: np.ndarray
    passed: np.ndarray


def _edge_points(lo: float, hi: float, bound: float) -> tuple[int | None, int | None]:
    """The grid indices whose ruling-out decides the ends against ``bound`` (module doc).

    ``(above, below)``: ``above`` None when every upper end lies below the bound (always
    fails), ``below`` None when no lower end reaches it (never passes), -1 when every one
    does (always passes).
    """
    grid = seq._grid()
    step = grid[1] - grid[0]
    high = np.minimum(grid + step, 1.0) * (hi - lo) + lo  # the upper end if j is the last inside
    low = np.maximum(grid - step, 0.0) * (hi - lo) + lo  # the lower end if j is the first
    above = int(np.argmax(high >= bound)) if np.any(high >= bound) else None
    below = int(np.argmax(low >= bound)) - 1 if np.any(low >= bound) else None
    return above, below


def anytime_rule(
    values: np.ndarray, lo: float, hi: float, bound: float, *, informative: bool = False
) -> RulePath:
    """A rule judging the mean of ``values`` (time on the last axis) in ``[lo, hi]`` against
    ``bound`` with the anytime sequence at :data:`CONF`; ``informative``: a paired delta,
    undecidable below :data:`MIN_INFORMATIVE` nonzero deltas (``min_informative``)."""
    x = np.asarray(values, dtype=float)
    y = (x - lo) / (hi - lo)
    bets = seq._bets(y, ALPHA)
    grid = seq._grid()
    limit = math.log(1.0 / ALPHA)
    half = math.log(0.5)
    above, below = _edge_points(lo, hi, bound)
    if above is None:
        fail = np.ones(x.shape, dtype=bool)
    else:
        down = seq._log_capital_at(y, float(grid[above]), bets, up=False)
        fail = np.maximum.accumulate(down, axis=-1) + half >= limit
    if below is None or below < 0:
        passed = np.full(x.shape, below is not None)
    else:
        up = seq._log_capital_at(y, float(grid[below]), bets, up=True)
        passed = np.maximum.accumulate(up, axis=-1) + half >= limit
    p = stats.betting_pvalue_path(x, lo, hi, bound, greater=False, alpha=ALPHA)
    t = np.arange(1, x.shape[-1] + 1)
    estimate = np.cumsum(x, axis=-1) / t
    p = np.where(estimate >= bound, 1.0, p)
    if informative:
        ok = np.cumsum(x != 0.0, axis=-1) >= MIN_INFORMATIVE
        p, fail, passed = np.where(ok, p, 1.0), fail & ok, passed & ok
    return RulePath(p, fail, passed)


def holm(p: np.ndarray) -> np.ndarray:
    """Holm-adjusted p-values along the last axis (the same floats as ``stats.holm``)."""
    m = p.shape[-1]
    order = np.argsort(p, axis=-1, kind="stable")
    ranked = np.take_along_axis(p, order, axis=-1)
    adjusted = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * ranked), axis=-1)
    out = np.empty_like(adjusted)
    np.put_along_axis(out, order, adjusted, axis=-1)
    return out


def verdict_outcome(p: np.ndarray, fail: np.ndarray, passed: np.ndarray) -> np.ndarray:
    """The gate's outcome from every rule's state (rules on the last axis): 'fail' when a
    rule fails after Holm's adjustment, 'pass' when every rule passes, else 'inconclusive'."""
    failed = np.any(fail & (holm(p) <= HALF), axis=-1)
    every = np.all(passed, axis=-1)
    return np.where(failed, "fail", np.where(every, "pass", "inconclusive"))


def fixed_fails(
    a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray, bound: float, rules: int
) -> np.ndarray:
    """Whether the fixed-sample gate fails some slice (slices on the last axis), Newcombe.

    Holm rejects some rule iff the smallest p-value is at most ``HALF / rules`` (its first
    step); for Newcombe's interval that p-value is at most ``q`` iff the upper end at the
    normal quantile ``z_{1-q}`` lies below the bound (the interval widens with z). A rule
    needs ``MIN_INFORMATIVE`` discordant pairs to be judged.
    """
    from _calibration_core import newcombe_paired

    z = float(sps.norm.isf(HALF / rules))
    with np.errstate(invalid="ignore", divide="ignore"):
        _, high = newcombe_paired(a, b, c, d, z)
    return np.any(((b + c) >= MIN_INFORMATIVE) & (high < bound), axis=-1)


def real_outcome(
    policy: str,
    deltas: Mapping[str, Sequence[float]],
    delta_range: tuple[float, float],
    candidate: Mapping[str, Sequence[float]] | None = None,
    scale: tuple[float, float] = (1.0, 5.0),
    kind: str = "graded",
) -> str:
    """The real gate's outcome on anytime results of ``deltas`` (and the candidate's values,
    for ``min_score``): ``gate.evaluate(policy, from_deltas({...}))``."""
    results = {s: stats.anytime_paired(v, *delta_range, CONF) for s, v in deltas.items()}
    means = None
    if candidate is not None:
        means = {s: stats.anytime_mean(v, *scale, CONF) for s, v in candidate.items()}
    comparison = from_deltas(results, kind=kind, candidate_estimates=means, confidence=CONF)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return str(evaluate(parse_policy(policy, "bench policy"), comparison).outcome)


def real_fixed_outcome(policy: str, tables: Mapping[str, tuple[int, int, int, int]]) -> str:
    """The real gate's outcome on fixed-sample Newcombe results of 2x2 tables (a, b, c, d)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = {s: stats.paired_proportions(*t) for s, t in tables.items()}
        comparison = from_deltas(results, kind="binary", confidence=CONF)
        return str(evaluate(parse_policy(policy, "bench policy"), comparison).outcome)
