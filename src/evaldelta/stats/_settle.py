"""How many pairs would settle an open question: the n at which the interval clears a bound.

"Settle" is not power. It answers: if the observed delta and its spread held, at what
number of pairs would the *same interval the report prints* stop containing the bound
``b`` (zero, or the gate's ``-margin``)? The two functions use the report's own interval
methods, so the answer can never be fewer pairs than a slice already has while its
interval still contains the bound:

- :func:`pairs_to_clear_t`: the paired t interval ``d +/- t_{n-1} s / sqrt(n)`` (Student
  t on ``n - 1`` degrees of freedom, as :func:`paired_means`): the smallest integer
  ``n >= 2`` with ``t_{n-1} s / sqrt(n) < |d - b|``. The half-width falls strictly with
  ``n`` (both ``t_{n-1}`` and ``1/sqrt(n)`` do), so the search is a bisection.
- :func:`pairs_to_clear_paired_binary`: the paired binary interval (Newcombe 1998 method 10,
  or Wald) on the 2x2 table scaled to ``n`` pairs with exactly the same cell shares
  (fractional cell counts; at today's n this is today's table and today's interval): the
  ``n`` found by doubling then bisection at which the interval excludes ``b``. Rounding
  the scaled cells to whole pairs would make the bounds saw-tooth in ``n`` and the search
  ill-posed.

Both return ``inf`` when no finite n clears the bound (the delta sits on it, or there is no
spread to estimate from) and cap the search at ``MAX_PAIRS``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from evaldelta.stats._means import t_critical
from evaldelta.stats._paired import _newcombe_paired
from evaldelta.stats._proportions import z_critical
from evaldelta.stats._results import ConfidenceInterval
from evaldelta.stats._validate import check_confidence, check_count, check_real

MAX_PAIRS = 100_000_000


def _bisect(clears: Callable[[int], bool], lo: int, hi: int) -> int:
    """Smallest n in (lo, hi] with ``clears(n)``, given ``clears(hi)`` and not ``clears(lo)``."""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if clears(mid):
            hi = mid
        else:
            lo = mid
    return hi


def pairs_to_clear_t(estimate: float, bound: float, sd: float, confidence: float = 0.95) -> float:
    """Pairs at which the t interval ``estimate +/- t_{n-1} sd / sqrt(n)`` excludes ``bound``.

    See the module docstring. ``sd`` is the per-pair standard deviation of the deltas.
    Returns ``inf`` when ``estimate == bound``, ``sd`` is not positive, or the answer
    exceeds ``MAX_PAIRS``.
    """
    d = check_real("estimate", estimate)
    b = check_real("bound", bound)
    s = check_real("sd", sd)
    conf = check_confidence(confidence)
    gap = abs(d - b)
    if gap == 0 or s <= 0:
        return math.inf

    def clears(n: int) -> bool:
        return t_critical(conf, n - 1) * s / math.sqrt(n) < gap

    if clears(2):
        return 2.0
    hi = 4
    while not clears(hi):
        if hi > MAX_PAIRS:
            return math.inf
        hi *= 2
    return float(_bisect(clears, hi // 2, hi))


def pairs_to_clear_paired_binary(
    both_pass: int,
    only_baseline: int,
    only_candidate: int,
    both_fail: int,
    bound: float,
    confidence: float = 0.95,
    interval: str = "newcombe",
) -> float:
    """Pairs at which the paired binary interval on the scaled 2x2 table excludes ``bound``.

    See the module docstring. The table's cell shares are held and scaled to ``n`` pairs;
    ``interval`` is :func:`paired_proportions`' method ("newcombe" or "wald").
    """
    cells = [
        check_count(name, value)
        for name, value in (
            ("both_pass", both_pass),
            ("only_baseline", only_baseline),
            ("only_candidate", only_candidate),
            ("both_fail", both_fail),
        )
    ]
    b = check_real("bound", bound)
    conf = check_confidence(confidence)
    n0 = sum(cells)
    if n0 == 0:
        return math.inf
    shares = [x / n0 for x in cells]
    estimate = shares[2] - shares[1]
    if estimate == b:
        return math.inf

    if interval not in ("newcombe", "wald"):
        raise ValueError(f"interval must be 'newcombe' or 'wald'; got {interval!r}.")
    z = z_critical(conf)
    both, only_b, only_c, neither = shares

    def ci(n: int) -> ConfidenceInterval:
        if interval == "wald":  # Newcombe's method 1, as paired_proportions
            se = math.sqrt(max(0.0, (only_b + only_c - estimate * estimate) / n))
            return ConfidenceInterval(estimate - z * se, estimate + z * se)
        return ConfidenceInterval(
            *_newcombe_paired(both * n, only_c * n, only_b * n, neither * n, z)
        )

    def clears(n: int) -> bool:
        interval_n = ci(n)
        return interval_n.low > b if estimate > b else interval_n.high < b

    if clears(1):
        return 1.0
    hi = 2
    while not clears(hi):
        if hi > MAX_PAIRS:
            return math.inf
        hi *= 2
    return float(_bisect(clears, hi // 2, hi))
