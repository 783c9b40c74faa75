"""Anytime-valid inference for a bounded mean: a confidence sequence and its p-value.

Method: the hedged betting confidence sequence of Waudby-Smith and Ramdas (2024),
"Estimating means of bounded random variables by betting", JRSS-B 86(1), section 4
(hedged capital, eq. 26, with the predictable plug-in bets of eq. 24-25 and the
truncation of Remark 3). For observations in [0, 1] and a candidate mean ``m``, two
gamblers bet that the mean is above and below ``m``:

    K+_t(m) = prod_{i<=t} (1 + l+_i(m) (x_i - m)),   K-_t(m) = prod (1 - l-_i(m) (x_i - m))

with predictable bets ``l_i = sqrt(2 log(2/alpha) / (s2_{i-1} i log(1 + i)))`` truncated
to ``c / m`` (up) or ``c / (1 - m)`` (down), ``c = 1/2``; ``s2`` and the running mean start
from 1/4 and 1/2. Under the true mean each is a nonnegative martingale, so by Ville's
inequality the hedged capital ``max(K+/2, K-/2)`` reaches ``1/alpha`` with probability at
most ``alpha`` ever: the set of ``m`` it has not reached is a (1 - alpha) confidence
sequence, valid at every look and at any data-dependent stopping time. Its running
intersection is too. One gambler alone gives the one-sided anytime p-value
``1 / max_{s<=t} K+_s(m0)`` for the null "mean <= m0" (and ``K-`` for "mean >= m0").

Paired deltas on a declared scale ``[lo, hi]`` lie in ``[lo - hi, hi - lo]`` and are mapped
to [0, 1] first. The sequence is read on a grid of candidate means (the paper's approach;
the set is an interval, Proposition 4, so its ends are read off the grid and are
conservative to one grid step). ``K+_t(m)`` is nonincreasing in ``m`` and ``K-_t(m)``
nondecreasing (each factor is), so the means ruled out from below are a prefix of the grid
and those ruled out from above a suffix: a look is read by two bisections, O(n log grid)
time and O(n) memory, with the same ends a scan of every grid point gives (which many looks
use, in blocks of rows). The p-value and the sequence agree: the upper end lies below ``b``
only if the p-value against "mean >= b" is at most ``alpha / 2``, and such a p-value puts
the upper end below ``b`` plus one grid step.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from evaldelta.stats._results import ConfidenceInterval, Estimate, PairedResult
from evaldelta.stats._validate import check_confidence

__all__ = [
    "ANYTIME_METHOD",
    "AnytimeEstimate",
    "AnytimeResult",
    "SequentialResult",
    "anytime_mean",
    "anytime_paired",
    "betting_pvalue",
    "betting_pvalue_path",
    "betting_sequence",
    "drifted",
]

ANYTIME_METHOD = "anytime-valid betting confidence sequence (Waudby-Smith and Ramdas 2024)"

_GRID = 2001  # candidate means: ends conservative to 1/2000 of the range
_C = 0.5  # truncation of the bets (Remark 3)
_BLOCK = 512  # rows of the grid scanned at once: O(_BLOCK x _GRID) memory
_BISECT = 24  # capital paths one look's bisection computes (two searches of ~11 steps)


@dataclass(frozen=True)
class SequentialResult:
    """A confidence sequence read at each look: the running-intersection interval.

    ``looks`` are the numbers of observations at which the sequence was read; ``intervals``
    the interval there (on the data's own scale), each inside the one before.
    """

    looks: tuple[int, ...]
    intervals: tuple[ConfidenceInterval, ...]
    confidence: float
    method: str = ANYTIME_METHOD

    @property
    def last(self) -> ConfidenceInterval:
        """The interval after the last observation."""
        return self.intervals[-1]


def _unit(x: Sequence[float] | np.ndarray, lo: float, hi: float) -> np.ndarray:
    values = np.asarray(x, dtype=float)
    if not (math.isfinite(lo) and math.isfinite(hi) and hi > lo):
        raise ValueError(f"the range must have finite hi > lo, not [{lo}, {hi}]")
    if values.size and (np.any(~np.isfinite(values)) or values.min() < lo or values.max() > hi):
        raise ValueError(f"every observation must lie in [{lo}, {hi}]")
    return (values - lo) / (hi - lo)


def _bets(y: np.ndarray, alpha: float) -> np.ndarray:
    """The predictable plug-in bet before each observation (uses only the ones before).

    ``y`` holds one path per row (its last axis is time); the bets of a path's first ``t``
    observations are the same floats whatever follows them.
    """
    n = y.shape[-1]
    t = np.arange(1, n + 1, dtype=float)
    # sigma2_{i-1}: (1/4 + sum_{j<i} (y_j - mu_j)^2) / i, with mu_j the mean after j
    after = (0.5 + np.cumsum(y, axis=-1)) / (t + 1)
    run = np.cumsum((y - after) ** 2, axis=-1)
    sq = np.concatenate((np.zeros((*y.shape[:-1], 1)), run[..., :-1]), axis=-1)
    var = (0.25 + sq) / t
    return np.asarray(np.sqrt(2.0 * math.log(2.0 / alpha) / (var * t * np.log1p(t))))


def _log_capital(y: np.ndarray, grid: np.ndarray, alpha: float, up: bool) -> np.ndarray:
    """Log K+_t(m) (``up``) or log K-_t(m) for every t (rows) and grid mean m (columns)."""
    bets = _bets(y, alpha)[:, None]
    cap = _C / grid if up else _C / (1.0 - grid)
    lam = np.minimum(bets, cap[None, :])
    step = (y[:, None] - grid[None, :]) * (lam if up else -lam)
    return np.asarray(np.cumsum(np.log1p(step), axis=0))


def _log_capital_at(y: np.ndarray, m: float, bets: np.ndarray, up: bool) -> np.ndarray:
    """Log K+_t(m) or log K-_t(m) at one mean ``m``, for every path (rows) and t (last axis).

    The same floats as the column of :func:`_log_capital` at ``m`` (same operations).
    """
    cap = _C / m if up else _C / (1.0 - m)
    lam = np.minimum(bets, cap)
    step = (y - m) * (lam if up else -lam)
    return np.asarray(np.cumsum(np.log1p(step), axis=-1))


def _grid() -> np.ndarray:
    return np.linspace(0.0, 1.0, _GRID)[1:-1]  # the bets' caps are finite inside (0, 1)


def _ends(grid: np.ndarray, first: int, last: int, lo: float, hi: float) -> ConfidenceInterval:
    """The interval of grid points ``first..last`` (inside), widened by one grid step."""
    step = grid[1] - grid[0]
    low = float(grid[first]) - step
    high = float(grid[last]) + step
    return ConfidenceInterval(
        float(max(low, 0.0) * (hi - lo) + lo), float(min(high, 1.0) * (hi - lo) + lo)
    )


def _point(grid: np.ndarray, idx: int, lo: float, hi: float) -> ConfidenceInterval:
    value = float(grid[idx]) * (hi - lo) + lo
    return ConfidenceInterval(value, value)


def _empty_read(y: np.ndarray, grid: np.ndarray, alpha: float) -> int:
    """The grid point where the hedged capital after all of ``y`` is least (an empty set)."""
    hedged = np.maximum(
        _scan_last(y, grid, alpha, up=True), _scan_last(y, grid, alpha, up=False)
    ) + math.log(0.5)
    return int(np.argmin(hedged))


def _scan_last(y: np.ndarray, grid: np.ndarray, alpha: float, up: bool) -> np.ndarray:
    """The last row of :func:`_log_capital`, in blocks of rows (the same floats, less memory)."""
    bets = _bets(y, alpha)
    cap = _C / grid if up else _C / (1.0 - grid)
    carry = np.zeros((1, grid.size))
    for start in range(0, y.size, _BLOCK):
        lam = np.minimum(bets[start : start + _BLOCK, None], cap[None, :])
        step = (y[start : start + _BLOCK, None] - grid[None, :]) * (lam if up else -lam)
        carry = np.cumsum(np.vstack((carry, np.log1p(step))), axis=0)[-1:]
    return np.asarray(carry[0])


def _read_last(y: np.ndarray, alpha: float, lo: float, hi: float) -> ConfidenceInterval:
    """The running-intersection interval after all of ``y``, read off the grid by bisection.

    A grid mean ``m`` is outside once ``K+_s(m)/2`` or ``K-_s(m)/2`` has reached
    ``1/alpha`` at some ``s``. ``K+_s(m)`` is nonincreasing in ``m`` (each factor
    ``1 + min(l, c/m) (y - m)`` is) and ``K-_s(m)`` nondecreasing, so the points ruled out
    from below are a prefix of the grid and those ruled out from above a suffix: two
    bisections find the same ends as scanning every grid point, in O(n log grid) time and
    O(n) memory instead of O(n grid).
    """
    grid = _grid()
    bound = math.log(1.0 / alpha)
    half = math.log(0.5)
    bets = _bets(y, alpha)

    def out(j: int, up: bool) -> bool:
        capital = _log_capital_at(y, float(grid[j]), bets, up)
        return bool(np.max(capital) + half >= bound)

    below, above = -1, grid.size  # last ruled out from below, first ruled out from above
    top = grid.size
    while top - below > 1:
        mid = (below + top) // 2
        below, top = (mid, top) if out(mid, True) else (below, mid)
    bottom = -1
    while above - bottom > 1:
        mid = (bottom + above) // 2
        bottom, above = (bottom, mid) if out(mid, False) else (mid, above)
    if below + 1 > above - 1:  # empty only with probability alpha
        return _point(grid, _empty_read(y, grid, alpha), lo, hi)
    return _ends(grid, below + 1, above - 1, lo, hi)


def _read_every(
    y: np.ndarray, alpha: float, at: list[int], lo: float, hi: float
) -> list[ConfidenceInterval]:
    """The running-intersection interval at each of ``at``, scanning the whole grid.

    Rows are processed in blocks (the log capital carried from block to block with the same
    additions as one cumulative sum), so memory stays O(block x grid) however long ``y``.
    """
    grid = _grid()
    bound = math.log(1.0 / alpha)
    bets = _bets(y, alpha)
    cap_up, cap_down = _C / grid, _C / (1.0 - grid)
    carry = np.zeros((2, grid.size))
    inside = np.ones(grid.size, dtype=bool)
    wanted = set(at)
    out: dict[int, ConfidenceInterval] = {}
    for start in range(0, y.size, _BLOCK):
        b = bets[start : start + _BLOCK, None]
        diff = y[start : start + _BLOCK, None] - grid[None, :]
        up = np.log1p(diff * np.minimum(b, cap_up[None, :]))
        down = np.log1p(diff * -np.minimum(b, cap_down[None, :]))
        up = np.cumsum(np.vstack((carry[:1], up)), axis=0)[1:]
        down = np.cumsum(np.vstack((carry[1:], down)), axis=0)[1:]
        carry = np.vstack((up[-1:], down[-1:]))
        hedged = np.maximum(up, down) + math.log(0.5)
        rows = np.logical_and.accumulate(np.vstack((inside, hedged < bound)), axis=0)[1:]
        inside = rows[-1]
        for k in sorted(wanted.intersection(range(start + 1, start + len(rows) + 1))):
            row = rows[k - 1 - start]
            if not row.any():  # empty only with probability alpha: the least capital
                out[k] = _point(grid, int(np.argmin(hedged[k - 1 - start])), lo, hi)
            else:
                last = len(row) - 1 - int(row[::-1].argmax())
                out[k] = _ends(grid, int(row.argmax()), last, lo, hi)
    return [out[k] for k in at]


def betting_sequence(
    x: Sequence[float],
    lo: float,
    hi: float,
    confidence: float = 0.95,
    looks: Sequence[int] | None = None,
) -> SequentialResult:
    """The (running-intersection) confidence sequence for the mean of ``x`` in ``[lo, hi]``.

    ``x`` in the order observed; ``looks`` the counts at which to read it (default: after
    every observation). Read it as often as you like: the coverage holds at every look at
    once. Raises ValueError on no observation, an observation outside ``[lo, hi]``, or
    ``lo >= hi``. A few looks are read by bisection (:func:`_read_last`: the ends every
    grid point would give, in O(n log grid)); many, by one scan of the grid in blocks.
    """
    conf = check_confidence(confidence)
    alpha = 1.0 - conf
    y = _unit(x, lo, hi)
    if y.ndim != 1 or y.size == 0:
        raise ValueError("the observations must be a non-empty sequence of numbers")
    at = list(looks) if looks is not None else list(range(1, y.size + 1))
    if not at or any(not 1 <= k <= y.size for k in at) or at != sorted(at):
        raise ValueError("looks must be increasing counts between 1 and the observations")
    if sum(at) * _BISECT < y.size * _GRID:
        out = [_read_last(y[:k], alpha, lo, hi) for k in at]
    else:
        out = _read_every(y, alpha, at, lo, hi)
    return SequentialResult(tuple(at), tuple(out), conf)


def betting_pvalue(
    x: Sequence[float], lo: float, hi: float, null: float, *, greater: bool, alpha: float = 0.05
) -> float:
    """Anytime-valid p-value against "the mean is <= ``null``" (``greater``) or ">= ``null``".

    ``1 / max_{s<=t} K_s(null)`` of the one gambler who bets against the null (its bets
    tuned for level ``alpha``): under the null it falls to ``alpha`` or below at any time
    with probability at most ``alpha``, so it can be read after every batch and combined
    across hypotheses (Holm) at whatever time the looking stops. With no observation it is
    1 (no evidence yet). Agrees with the sequence at level ``1 - alpha``: its upper end
    lies below ``b`` only if the p-value against "mean >= b" is at most ``alpha / 2``, and
    that p-value at most ``alpha / 2`` puts the upper end below ``b`` plus one grid step
    (tests/stats/test_sequential.py).
    """
    y = _unit(x, lo, hi)
    if y.ndim != 1:
        raise ValueError("the observations must be a sequence of numbers")
    if y.size == 0:
        return 1.0
    return float(
        betting_pvalue_path(y, 0.0, 1.0, (null - lo) / (hi - lo), greater=greater, alpha=alpha)[-1]
    )


def betting_pvalue_path(
    x: Sequence[float] | np.ndarray,
    lo: float,
    hi: float,
    null: float,
    *,
    greater: bool,
    alpha: float = 0.05,
) -> np.ndarray:
    """:func:`betting_pvalue` after every observation, for one path or many at once.

    ``x`` is one path (1-d) or one path per row (2-d, time along the last axis); the result
    has its shape, entry ``t - 1`` being ``betting_pvalue(x[..., :t], ...)`` (the same
    floats). Nonincreasing along each path. For simulations of the gate (bench/sequential.py).
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie strictly between 0 and 1; got {alpha!r}.")
    if not math.isfinite(null):
        raise ValueError(f"the null must be finite; got {null!r}.")
    y = _unit(x, lo, hi)
    m = (null - lo) / (hi - lo)
    if not 0.0 < m < 1.0 or y.size == 0:  # a null at the edge of the range cannot be bet against
        return np.ones(y.shape)
    capital = _log_capital_at(y, m, _bets(y, alpha), up=greater)
    best = np.maximum(0.0, np.maximum.accumulate(capital, axis=-1))
    return np.asarray(np.minimum(1.0, np.exp(-best)))


def _last(values: Sequence[float], lo: float, hi: float, confidence: float) -> ConfidenceInterval:
    """The sequence after the last observation (one look: read by bisection)."""
    return betting_sequence(values, lo, hi, confidence, looks=[len(values)]).last


def _two_sided(y: tuple[float, ...], lo: float, hi: float, null: float, alpha: float) -> float:
    """Anytime-valid two-sided p-value against ``mean == null``: twice the smaller one-sided."""
    below = betting_pvalue(y, lo, hi, null, greater=False, alpha=alpha)
    above = betting_pvalue(y, lo, hi, null, greater=True, alpha=alpha)
    return min(1.0, 2.0 * min(below, above))


@dataclass(frozen=True)
class AnytimeResult(PairedResult):
    """A paired delta whose interval is a confidence sequence: valid at any stopping time.

    ``values`` are the per-case deltas in the order they arrived and ``[low_end, high_end]``
    the range they can take (``[lo - hi, hi - lo]`` on a scale ``[lo, hi]``); ``ci`` is the
    running-intersection interval after the last case, ``pvalue`` the anytime-valid
    two-sided p-value against zero, ``se`` is nan (a confidence sequence has none).
    """

    values: tuple[float, ...] = ()
    low_end: float = -1.0
    high_end: float = 1.0
    drift: bool = False  # the interval excludes the mean: see :func:`drifted`

    def ci_at(self, confidence: float) -> ConfidenceInterval:
        """The confidence sequence at another level, read after the last case."""
        if not self.values:
            return ConfidenceInterval(math.nan, math.nan)
        return _last(self.values, self.low_end, self.high_end, confidence)

    def fail_pvalue(self, bound: float) -> float:
        """Anytime-valid p-value for "the true delta lies below ``bound``" (betting_pvalue)."""
        if not self.values:
            return math.nan
        return betting_pvalue(
            self.values,
            self.low_end,
            self.high_end,
            bound,
            greater=False,
            alpha=1.0 - self.confidence,
        )


@dataclass(frozen=True)
class AnytimeEstimate(Estimate):
    """An arm's rate or mean whose interval is a confidence sequence (as AnytimeResult's)."""

    values: tuple[float, ...] = ()
    low_end: float = 0.0
    high_end: float = 1.0
    confidence: float = 0.95
    drift: bool = False  # the interval excludes the mean: see :func:`drifted`

    def ci_at(self, confidence: float) -> ConfidenceInterval:
        """The confidence sequence at another level, read after the last case."""
        if not self.values:
            return ConfidenceInterval(math.nan, math.nan)
        return _last(self.values, self.low_end, self.high_end, confidence)

    def fail_pvalue(self, bound: float) -> float:
        """Anytime-valid p-value for "the true mean lies below ``bound``"."""
        if not self.values:
            return math.nan
        return betting_pvalue(
            self.values,
            self.low_end,
            self.high_end,
            bound,
            greater=False,
            alpha=1.0 - self.confidence,
        )


def drifted(mean: float, ci: ConfidenceInterval) -> bool:
    """The running-intersection interval excludes the running mean: the mean drifts.

    The sequence's guarantee needs every case to have the same conditional mean (cases
    arriving in random order, each a fresh draw from one population). When the outcomes
    drift along the order (easy cases first, a slice at a time), the running intersection
    keeps ends set by early cases and can exclude the mean of all of them, which under a
    constant mean happens only when the sequence miscovers (probability <= alpha). So an
    excluded mean is evidence, at level alpha, that the order is not random and the
    interval does not hold.
    """
    return math.isfinite(mean) and not ci.low <= mean <= ci.high


def anytime_paired(
    deltas: Sequence[float], low_end: float, high_end: float, confidence: float = 0.95
) -> AnytimeResult:
    """The paired delta of per-case ``deltas`` (in arrival order) with its confidence sequence.

    ``[low_end, high_end]`` is the range a delta can take, fixed before the data (on a
    score scale ``[lo, hi]``: ``[lo - hi, hi - lo]``). Raises ValueError on a delta outside.
    """
    conf = check_confidence(confidence)
    values = tuple(float(d) for d in deltas)
    n = len(values)
    if n == 0:
        nan_ci = ConfidenceInterval(math.nan, math.nan)
        return AnytimeResult(
            math.nan,
            math.nan,
            nan_ci,
            math.nan,
            0,
            0,
            ANYTIME_METHOD,
            conf,
            values=(),
            low_end=low_end,
            high_end=high_end,
        )
    ci = _last(values, low_end, high_end, conf)
    p = _two_sided(values, low_end, high_end, 0.0, 1.0 - conf)
    informative = sum(1 for d in values if d != 0.0)
    return AnytimeResult(
        float(np.mean(values)),
        math.nan,
        ci,
        p,
        n,
        informative,
        ANYTIME_METHOD,
        conf,
        values=values,
        low_end=low_end,
        high_end=high_end,
        drift=drifted(float(np.mean(values)), ci),
    )


def anytime_mean(
    values: Sequence[float], low_end: float, high_end: float, confidence: float = 0.95
) -> AnytimeEstimate:
    """An arm's mean of case values (in arrival order) on ``[low_end, high_end]``, anytime-valid."""
    conf = check_confidence(confidence)
    vals = tuple(float(v) for v in values)
    if not vals:
        nan_ci = ConfidenceInterval(math.nan, math.nan)
        return AnytimeEstimate(
            math.nan, math.nan, nan_ci, 0, ANYTIME_METHOD, None, (), low_end, high_end, conf
        )
    ci = _last(vals, low_end, high_end, conf)
    return AnytimeEstimate(
        float(np.mean(vals)),
        math.nan,
        ci,
        len(vals),
        ANYTIME_METHOD,
        None,
        vals,
        low_end,
        high_end,
        conf,
        drifted(float(np.mean(vals)), ci),
    )
