"""The betting confidence sequence and its p-value (``stats/_sequential.py``): the paper's claims.

Waudby-Smith and Ramdas (2024), "Estimating means of bounded random variables by betting",
JRSS-B 86(1): the hedged capital process is a nonnegative supermartingale under the true
mean, so by Ville's inequality the set of means whose capital never reached ``1/alpha`` is a
``(1 - alpha)`` confidence sequence: it covers the mean at every look at once (time-uniform,
Theorem 3 / Proposition 4), its running intersection is nested, and ``1 / max_s K_s(m0)`` is
an anytime-valid p-value. Every simulation is seeded; a Monte Carlo rate is judged against
its target plus three binomial standard errors, ``3 sqrt(a (1 - a) / paths)``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from evaldelta import stats
from evaldelta.stats import _sequential as seq
from evaldelta.stats._sequential import (
    anytime_mean,
    anytime_paired,
    betting_pvalue,
    betting_pvalue_path,
    betting_sequence,
)

ALPHA = 0.05
PATHS = 500
N = 500


def _allowance(rate: float, paths: int) -> float:
    """Three binomial standard errors of a Monte Carlo rate at ``rate``."""
    return 3.0 * math.sqrt(rate * (1.0 - rate) / paths)


def _draw(name: str, rng: np.random.Generator, size: tuple[int, ...]) -> np.ndarray:
    """Observations of one setting (the true mean is :data:`MEANS`)."""
    if name.startswith("bernoulli"):
        return rng.binomial(1, MEANS[name], size).astype(float)
    if name == "beta scores":  # continuous in [0, 1], skewed: Beta(4, 1.5)
        return rng.beta(4.0, 1.5, size)
    if name == "graded 1-5":  # a 1-5 scale in steps of 0.1, mostly high
        return np.round(1.0 + 4.0 * rng.beta(5.0, 1.2, size), 1)
    # paired pass/fail deltas in [-1, 1], 90% zero: -1 w.p. 0.06, +1 w.p. 0.04
    return rng.choice([-1.0, 0.0, 1.0], size=size, p=[0.06, 0.90, 0.04])


MEANS = {
    "bernoulli 0.01": 0.01,
    "bernoulli 0.05": 0.05,
    "bernoulli 0.5": 0.5,
    "bernoulli 0.97": 0.97,
    "beta scores": 4.0 / 5.5,
    "graded 1-5": float("nan"),  # rounding moves it: computed exactly below
    "paired deltas, mostly 0": -0.02,
}
RANGES = {"graded 1-5": (1.0, 5.0), "paired deltas, mostly 0": (-1.0, 1.0)}


def _graded_mean() -> float:
    """E[round(1 + 4 B, 1)] for B ~ Beta(5, 1.2), by quadrature over the rounding cells."""
    from scipy import stats as sps

    levels = np.round(np.arange(1.0, 5.05, 0.1), 1)
    edges = np.clip((np.concatenate(([-np.inf], levels[:-1] + 0.05, [np.inf])) - 1.0) / 4.0, 0, 1)
    probs = np.diff(sps.beta.cdf(edges, 5.0, 1.2))
    return float((levels * probs).sum())


# --------------------------------------------------------------------------------------
# (a) time-uniform coverage
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(MEANS))
def test_the_sequence_covers_the_mean_at_every_look_at_once(name: str) -> None:
    """Over 500 seeded paths of 500 observations, the share of paths whose interval EVER
    misses the true mean is at most alpha + 3 binomial SEs (0.05 + 0.029).

    The intervals are nested (checked on every look of the first 20 paths here, and in
    :func:`test_intervals_are_nested_and_inside_the_range`), so a path misses at some look
    exactly when it misses at the last: the last look is read for every path.
    """
    rng = np.random.default_rng(20261226 + sorted(MEANS).index(name))
    lo, hi = RANGES.get(name, (0.0, 1.0))
    mean = _graded_mean() if name == "graded 1-5" else MEANS[name]
    paths = _draw(name, rng, (PATHS, N))
    missed = 0
    for i, x in enumerate(paths):
        last = betting_sequence(x, lo, hi, 1 - ALPHA, looks=[N]).last
        miss = not last.low <= mean <= last.high
        if i < 20:
            every = betting_sequence(x, lo, hi, 1 - ALPHA)
            ever = any(not ci.low <= mean <= ci.high for ci in every.intervals)
            assert ever == miss, f"path {i}: missing at some look but not the last"
            assert every.last == last
        missed += miss
    assert missed / PATHS <= ALPHA + _allowance(ALPHA, PATHS), (name, missed)


def test_the_capital_at_the_true_mean_rarely_ever_reaches_one_over_alpha() -> None:
    """Ville's inequality directly: ``max_t max(K+, K-)/2 >= 1/alpha`` on at most alpha of
    the paths (the event behind every miss), 2,000 paths of 1,000 paired deltas."""
    rng = np.random.default_rng(7)
    x = rng.choice([-1.0, 0.0, 1.0], size=(2000, 1000), p=[0.06, 0.90, 0.04])
    up = betting_pvalue_path(x, -1.0, 1.0, -0.02, greater=True, alpha=ALPHA)
    down = betting_pvalue_path(x, -1.0, 1.0, -0.02, greater=False, alpha=ALPHA)
    # the hedged capital max(K+, K-)/2 reaches 1/alpha iff one side's p falls to alpha/2
    reached = (np.minimum(up, down).min(axis=1) <= ALPHA / 2).mean()
    assert reached <= ALPHA + _allowance(ALPHA, 2000)


# --------------------------------------------------------------------------------------
# (b) nested, inside the range; the bisection reads what the grid scan reads
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(MEANS))
def test_intervals_are_nested_and_inside_the_range(name: str) -> None:
    rng = np.random.default_rng(11)
    lo, hi = RANGES.get(name, (0.0, 1.0))
    for x in _draw(name, rng, (5, 300)):
        res = betting_sequence(x, lo, hi, 0.95)
        assert res.looks == tuple(range(1, 301))
        for before, after in zip(res.intervals, res.intervals[1:], strict=False):
            assert before.low <= after.low <= after.high <= before.high
        assert all(lo <= ci.low <= ci.high <= hi for ci in res.intervals)


def _reference(x: np.ndarray, lo: float, hi: float, conf: float) -> list[tuple[float, float]]:
    """The sequence by the paper's plain recipe: every grid mean's hedged capital at every
    time (``_log_capital``, the full matrix), the running intersection, its grid ends."""
    alpha = 1 - conf
    y = (x - lo) / (hi - lo)
    grid = seq._grid()
    hedged = np.maximum(
        seq._log_capital(y, grid, alpha, up=True), seq._log_capital(y, grid, alpha, up=False)
    ) + math.log(0.5)
    inside = np.logical_and.accumulate(hedged < math.log(1 / alpha), axis=0)
    out = []
    for t, row in enumerate(inside):
        if not row.any():
            ci = seq._point(grid, int(np.argmin(hedged[t])), lo, hi)
        else:
            ci = seq._ends(grid, int(row.argmax()), len(row) - 1 - int(row[::-1].argmax()), lo, hi)
        out.append((ci.low, ci.high))
    return out


def test_bisection_and_block_scan_read_the_same_ends_as_the_full_grid() -> None:
    """One look is read by bisection (K+ nonincreasing, K- nondecreasing in the mean), many
    by a scan in blocks of 512 rows: both give exactly the plain full-grid ends."""
    rng = np.random.default_rng(3)
    cases = [
        (rng.binomial(1, 0.03, 700).astype(float), 0.0, 1.0),
        (rng.choice([-1.0, 0.0, 1.0], 600, p=[0.5, 0.2, 0.3]), -1.0, 1.0),
        (np.round(rng.uniform(1, 5, 90), 1), 1.0, 5.0),
        (np.zeros(40), -4.0, 4.0),
        (np.ones(25), 0.0, 1.0),
        (np.array([0.3]), 0.0, 1.0),
    ]
    for x, lo, hi in cases:
        for conf in (0.9, 0.95, 0.99):
            ref = _reference(x, lo, hi, conf)
            every = betting_sequence(x, lo, hi, conf)
            assert [(c.low, c.high) for c in every.intervals] == ref
            for k in {1, len(x) // 3 or 1, len(x)}:
                one = betting_sequence(x, lo, hi, conf, looks=[k]).last
                assert (one.low, one.high) == ref[k - 1]


def test_an_arm_mean_and_a_paired_delta_carry_the_last_interval_and_their_p_values() -> None:
    rng = np.random.default_rng(5)
    deltas = rng.choice([-1.0, 0.0, 1.0], 400, p=[0.1, 0.8, 0.1])
    res = anytime_paired(deltas, -1.0, 1.0)
    assert res.ci == betting_sequence(deltas, -1.0, 1.0).last
    assert res.ci_at(0.9) == betting_sequence(deltas, -1.0, 1.0, 0.9).last
    level = 1 - 0.95  # the bets' alpha is 1 - confidence, as the sequence's
    assert res.fail_pvalue(-0.05) == betting_pvalue(
        deltas, -1, 1, -0.05, greater=False, alpha=level
    )
    assert res.estimate < 0.01 and stats.fail_pvalue(res, 0.01) == res.fail_pvalue(0.01)
    assert res.estimate >= -0.05 and stats.fail_pvalue(res, -0.05) == 1.0  # at or above
    assert res.informative == int((deltas != 0).sum()) and math.isnan(res.se)
    scores = np.round(rng.uniform(3, 5, 200), 1)
    arm = anytime_mean(scores, 1.0, 5.0)
    assert arm.ci == betting_sequence(scores, 1.0, 5.0).last
    assert arm.fail_pvalue(4.5) == betting_pvalue(scores, 1, 5, 4.5, greater=False, alpha=level)


# --------------------------------------------------------------------------------------
# (c) the p-value: super-uniform at any stopping time, small under an alternative
# --------------------------------------------------------------------------------------

NULLS = {
    # name: (draw, lo, hi, null, greater): the true mean sits exactly at the null
    "bernoulli 0.5, mean <= 0.5": (lambda r, s: r.binomial(1, 0.5, s), 0.0, 1.0, 0.5, True),
    "bernoulli 0.05, mean >= 0.05": (lambda r, s: r.binomial(1, 0.05, s), 0.0, 1.0, 0.05, False),
    "paired deltas, mean >= 0 (the gate's side)": (
        lambda r, s: r.choice([-1.0, 0.0, 1.0], size=s, p=[0.07, 0.86, 0.07]),
        -1.0,
        1.0,
        0.0,
        False,
    ),
}


@pytest.mark.parametrize("name", list(NULLS))
def test_the_p_value_is_super_uniform_at_a_stopping_time(name: str) -> None:
    """Stop at the first look where p <= a (or at n = 500): P(stopped with p <= a) <= a +
    3 SEs over 2,000 seeded paths, for a = 0.05, 0.025 and 0.01 (bets tuned for 0.05)."""
    draw, lo, hi, null, greater = NULLS[name]
    rng = np.random.default_rng(17 + sorted(NULLS).index(name))
    paths = 2000
    x = np.asarray(draw(rng, (paths, N)), dtype=float)
    p = betting_pvalue_path(x, lo, hi, null, greater=greater, alpha=ALPHA)
    smallest = p.min(axis=1)
    for a in (0.05, 0.025, 0.01):
        assert (smallest <= a).mean() <= a + _allowance(a, paths), a


def test_the_p_value_goes_to_zero_under_a_clear_alternative() -> None:
    rng = np.random.default_rng(23)
    x = rng.binomial(1, 0.7, (200, N)).astype(float)
    p = betting_pvalue_path(x, 0.0, 1.0, 0.5, greater=True)
    assert np.all(p[:, -1] < 1e-3) and np.median(p[:, -1]) < 1e-6
    deltas = rng.choice([-1.0, 0.0, 1.0], size=(200, N), p=[0.25, 0.7, 0.05])  # mean -0.2
    p = betting_pvalue_path(deltas, -1.0, 1.0, -0.05, greater=False)
    assert np.all(p[:, -1] < 1e-2) and np.median(p[:, -1]) < 1e-4


def test_the_path_is_the_p_value_of_every_prefix_and_never_rises() -> None:
    rng = np.random.default_rng(29)
    x = rng.choice([-1.0, 0.0, 1.0], size=(3, 120), p=[0.2, 0.7, 0.1])
    p = betting_pvalue_path(x, -1.0, 1.0, 0.0, greater=False)
    assert p.shape == x.shape and np.all(np.diff(p, axis=1) <= 0)
    for i in range(3):
        one = betting_pvalue_path(x[i], -1.0, 1.0, 0.0, greater=False)
        assert np.array_equal(one, p[i])
        for t in (1, 7, 60, 120):
            assert betting_pvalue(x[i, :t], -1, 1, 0.0, greater=False) == p[i, t - 1]
    assert betting_pvalue([], 0, 1, 0.5, greater=True) == 1.0  # no evidence yet
    assert betting_pvalue([0.0, 0.0], 0, 1, 0.0, greater=False) == 1.0  # null at the edge


# --------------------------------------------------------------------------------------
# (d) width: wider than the fixed-n interval by a bounded factor, shrinking ~ sqrt(log n / n)
# --------------------------------------------------------------------------------------


def _mixture_ratio(alpha: float = ALPHA) -> float:
    """Howard, Ramdas, McAuliffe and Sekhon (2021), the two-sided normal-mixture boundary
    ``sqrt((t + rho) log((t + rho) / (rho alpha^2)))`` tuned (best rho) for the n it is read
    at, over the fixed-n ``z_{1-alpha/2} sqrt(t)``: the price of time-uniformity for a
    sub-Gaussian sum, free of n. About 1.55 at alpha = 0.05."""
    r = np.linspace(0.01, 3.0, 3000)  # rho / t
    best = float(np.min((1 + r) * np.log((1 + r) / (r * alpha**2))))
    return math.sqrt(best) / 1.959963984540054


def test_the_sequence_is_wider_than_the_fixed_n_interval_by_a_bounded_factor() -> None:
    """At n = 1,000 the CS is wider than the fixed-sample interval (Wilson for a rate, the
    paired t for mostly-zero deltas), by a factor between 1.0 and 3.5. Expectation: at least
    the normal-mixture factor (about 1.55, :func:`_mixture_ratio`) for a boundary tuned to
    n = 1,000; the betting CS is not tuned to n (its bets shrink as sqrt(1 / (t log t)),
    WSR 2024 eq. 24-25), so somewhat more. Averaged over 20 seeded paths."""
    rng = np.random.default_rng(31)
    n = 1000
    assert 1.5 < _mixture_ratio() < 1.6
    for p_true in (0.5, 0.2):
        ratios = []
        for x in rng.binomial(1, p_true, (20, n)).astype(float):
            cs = betting_sequence(x, 0.0, 1.0, 0.95, looks=[n]).last
            fixed = stats.wilson_interval(int(x.sum()), n)
            ratios.append((cs.high - cs.low) / (fixed.high - fixed.low))
        assert _mixture_ratio() <= float(np.mean(ratios)) <= 3.5, (p_true, np.mean(ratios))
    ratios = []
    for d in rng.choice([-1.0, 0.0, 1.0], size=(20, n), p=[0.06, 0.9, 0.04]):
        cs = betting_sequence(d, -1.0, 1.0, 0.95, looks=[n]).last
        fixed = stats.paired_means_from_summary(n, float(d.mean()), float(d.std(ddof=1))).ci
        ratios.append((cs.high - cs.low) / (fixed.high - fixed.low))
    assert 1.0 <= float(np.mean(ratios)) <= 3.5, np.mean(ratios)


def test_the_width_shrinks_about_as_sqrt_log_n_over_n() -> None:
    """Width at n = 4,000 over width at n = 1,000 (the same 20 paths): sqrt(log n / n) gives
    0.55, 1/sqrt(n) 0.50; asserted between 0.40 and 0.65."""
    rng = np.random.default_rng(37)
    ratios = []
    for x in rng.binomial(1, 0.3, (20, 4000)).astype(float):
        res = betting_sequence(x, 0.0, 1.0, 0.95, looks=[1000, 4000])
        first, last = res.intervals
        ratios.append((last.high - last.low) / (first.high - first.low))
    assert 0.40 <= float(np.mean(ratios)) <= 0.65, np.mean(ratios)


# --------------------------------------------------------------------------------------
# (e) the p-value and the interval agree (up to one grid step)
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "lo", "hi"),
    [("bernoulli 0.05", 0.0, 1.0), ("paired deltas, mostly 0", -1.0, 1.0), ("graded 1-5", 1, 5)],
)
def test_the_upper_end_is_below_b_iff_the_p_value_for_mean_at_least_b_is_small(
    name: str, lo: float, hi: float
) -> None:
    """``high < b`` implies ``p(mean >= b) <= alpha/2``; ``p <= alpha/2`` implies
    ``high < b + step``; so away from the end (more than a grid step) they are the same
    event. The same on the other side for the lower end and ``p(mean <= b)``."""
    rng = np.random.default_rng(41)
    step = (hi - lo) / (seq._GRID - 1)
    checked = 0
    for n in (30, 200, 800):
        for x in _draw(name, rng, (4, n)):
            ci = betting_sequence(x, lo, hi, 1 - ALPHA, looks=[n]).last
            for b in np.linspace(lo, hi, 163)[1:-1]:
                below = betting_pvalue(x, lo, hi, b, greater=False, alpha=ALPHA) <= ALPHA / 2
                above = betting_pvalue(x, lo, hi, b, greater=True, alpha=ALPHA) <= ALPHA / 2
                if ci.high < b:
                    assert below
                if below:
                    assert ci.high < b + step + 1e-12
                if ci.low > b:
                    assert above
                if above:
                    assert ci.low > b - step - 1e-12
                if abs(b - ci.high) > step + 1e-9 and abs(b - ci.low) > step + 1e-9:
                    assert below == (ci.high < b) and above == (ci.low > b)
                    checked += 1
    assert checked > 1000


# --------------------------------------------------------------------------------------
# (f) bad input
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: betting_sequence([0.5, 1.2], 0, 1), "must lie in"),
        (lambda: betting_sequence([0.5, -0.1], 0, 1), "must lie in"),
        (lambda: betting_sequence([0.5, float("nan")], 0, 1), "must lie in"),
        (lambda: betting_sequence([0.5], 1, 1), "hi > lo"),
        (lambda: betting_sequence([0.5], 1, 0), "hi > lo"),
        (lambda: betting_sequence([0.5], 0, float("inf")), "hi > lo"),
        (lambda: betting_sequence([], 0, 1), "non-empty"),
        (lambda: betting_sequence([0.5, 0.5], 0, 1, looks=[2, 1]), "looks"),
        (lambda: betting_sequence([0.5, 0.5], 0, 1, looks=[3]), "looks"),
        (lambda: betting_sequence([0.5, 0.5], 0, 1, looks=[]), "looks"),
        (lambda: betting_sequence([0.5], 0, 1, confidence=1.0), "confidence"),
        (lambda: betting_pvalue([2.0], 0, 1, 0.5, greater=True), "must lie in"),
        (lambda: betting_pvalue([0.5], 0, 0, 0.5, greater=True), "hi > lo"),
        (lambda: betting_pvalue([0.5], 0, 1, float("nan"), greater=True), "null"),
        (lambda: betting_pvalue_path([[0.5, 3.0]], 0, 1, 0.5, greater=True), "must lie in"),
        (lambda: betting_pvalue_path([0.5], 0, 1, 0.5, greater=True, alpha=0.0), "alpha"),
        (lambda: anytime_paired([0.5, 2.5], -1.0, 1.0), "must lie in"),
        (lambda: anytime_mean([0.0], 1.0, 5.0), "must lie in"),
    ],
)
def test_bad_input_raises_value_error(call, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=message):
        call()
