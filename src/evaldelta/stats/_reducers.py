"""Reducing a case's repeated attempts to one value: the reducers evaluation harnesses use.

The case is the unit, so repeats are reduced per case before anything is compared. The
default is the mean (the case mean). A harness may reduce otherwise and report its figures
on that basis: Inspect AI's epochs reducers (``inspect_ai/scorer/_reducer/reducer.py``) are
``mean``, ``median``, ``mode``, ``max``, ``at_least_{k}`` (1 when at least ``k`` attempts
score at least the threshold, else 0), ``pass_at_{k}`` (the unbiased pass@k estimator of
Chen et al. 2021, "Evaluating Large Language Models Trained on Code", eq. 1:
``1 - C(n - c, k) / C(n, k)``) and ``pass_{k}`` (pass^k, Yao et al. 2024, "tau-bench",
estimated without replacement: ``C(c, k) / C(n, k)``). :func:`reduce_values` computes each
on one case's values in Python; ``engine/_repeats.py`` computes the same in the backend,
and a test holds the two equal.

Unscored attempts (NaN) are left out first, as Inspect leaves out its unscored sentinel;
with no value left, or fewer than ``k`` for ``pass_at``/``pass``, the result is NaN.
``mode`` takes the most common value and, on a tie, the one that came first (Python's
``Counter.most_common``, which Inspect uses; values are compared as numbers here, so
Inspect's letters I and N, both 0, count as one value: a difference the Inspect importer
checks against the log's own reductions).
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "REDUCER_KINDS",
    "Reducer",
    "parse_reducer",
    "pass_at_count",
    "pass_hat_count",
    "reduce_values",
]

ReducerKind = Literal["mean", "median", "mode", "max", "min", "at_least", "pass_at", "pass_hat"]
REDUCER_KINDS: tuple[ReducerKind, ...] = (
    "mean", "median", "mode", "max", "min", "at_least", "pass_at", "pass_hat",
)  # fmt: skip
_WITH_K = re.compile(r"^(at_least|pass_at|pass)_(\d+)$")


@dataclass(frozen=True)
class Reducer:
    """How a case's repeats become one value: a kind, and ``k`` for the counting kinds."""

    kind: ReducerKind = "mean"
    k: int | None = None
    threshold: float = 1.0  # an attempt "passes" at this value or above (Inspect's default)

    @property
    def name(self) -> str:
        """The name as Inspect writes it (``max``, ``at_least_2``, ``pass_at_2``, ``pass_3``)."""
        if self.kind == "pass_hat":
            return f"pass_{self.k}"
        return f"{self.kind}_{self.k}" if self.k is not None else self.kind

    @property
    def is_mean(self) -> bool:
        """The default: the case mean of the scored attempts."""
        return self.kind == "mean"

    @property
    def counts_passes(self) -> bool:
        """A reducer on how many attempts pass (its result is a rate, 0 to 1)."""
        return self.kind in ("at_least", "pass_at", "pass_hat")


def parse_reducer(text: str) -> Reducer:
    """A reducer from its name, as Inspect writes it (K a whole number >= 1).

    ``mean``, ``median``, ``mode``, ``max``, ``min``, ``at_least_K``, ``pass_at_K`` or
    ``pass_K``; raises ValueError naming the text when it is none of these.
    """
    name = text.strip().lower()
    if name in ("mean", "median", "mode", "max", "min"):
        return Reducer(name)  # type: ignore[arg-type]
    found = _WITH_K.match(name)
    if found is not None and int(found.group(2)) >= 1:
        kind: ReducerKind = {"at_least": "at_least", "pass_at": "pass_at"}.get(
            found.group(1), "pass_hat"
        )  # type: ignore[assignment]
        return Reducer(kind, int(found.group(2)))
    raise ValueError(
        f"unknown reducer {text!r}: use mean, median, mode, max, min, at_least_K, pass_at_K "
        "or pass_K (K >= 1)"
    )


def reduce_values(values: Sequence[float], reducer: Reducer) -> float:
    """One case's attempt values (in attempt order) reduced to one value; NaN when undefined."""
    scored = [float(v) for v in values if not math.isnan(v)]
    if not scored:
        return math.nan
    kind, k = reducer.kind, reducer.k or 1
    if kind == "mean":
        return math.fsum(scored) / len(scored)
    if kind == "median":
        return float(statistics.median(scored))
    if kind == "max":
        return max(scored)
    if kind == "min":
        return min(scored)
    if kind == "mode":
        counts: dict[float, int] = {}
        for v in scored:
            counts[v] = counts.get(v, 0) + 1
        top = max(counts.values())
        return next(v for v, c in counts.items() if c == top)  # first seen among the most
    n = len(scored)
    c = sum(1 for v in scored if v >= reducer.threshold)
    if kind == "at_least":
        return 1.0 if c >= k else 0.0
    if n < k:
        return math.nan
    return pass_at_count(n, c, k) if kind == "pass_at" else pass_hat_count(n, c, k)


def pass_at_count(n: int, c: int, k: int) -> float:
    """pass@k of a case with ``c`` passes in ``n >= k`` attempts (Chen et al. 2021, eq. 1).

    ``1 - C(n - c, k) / C(n, k)`` in Chen et al.'s numerically stable product form (their
    Figure 3), the form Inspect computes, so the two agree to the last bit.
    """
    if n - c < k:
        return 1.0
    product = 1.0
    for i in range(n - c + 1, n + 1):
        product *= 1.0 - k / i
    return 1.0 - product


def pass_hat_count(n: int, c: int, k: int) -> float:
    """pass^k of a case with ``c`` passes in ``n >= k`` attempts: ``C(c, k) / C(n, k)``.

    The unbiased estimate that ``k`` attempts drawn without replacement all pass (Yao et al.
    2024, tau-bench), in exact integer arithmetic before the one division.
    """
    return math.comb(c, k) / math.comb(n, k)
