"""Sums that are the same on every backend and in every row order (exact DECIMAL sums)."""

from __future__ import annotations

from typing import Any

import ibis

__all__ = ["exact_parts", "exact_sum"]


def exact_sum(x: Any, where: Any = None) -> Any:
    """The sum of a float column, the same on every backend whatever the order of the rows.

    A float sum depends on the order it is taken in (DuckDB's threads, Spark's partitions),
    and a variance from sums of squares magnifies that: values below 1e12 in magnitude are
    summed exactly as DECIMAL(38, 18) (rounded to 1e-18 first), so the per-slice moments
    agree across engines; larger ones (rare, and past any score scale) as floats, which
    still overflow to infinity where they must (the "too large to summarize" check).
    """
    exact, big = exact_parts(x, where)
    return exact.cast("float64") + big.fill_null(0.0)


def exact_parts(x: Any, where: Any = None) -> tuple[Any, Any]:
    """:func:`exact_sum` in its two mergeable parts: the DECIMAL sum and the float rest."""
    small = x.abs() < 1e12
    wanted = ibis.literal(True) if where is None else where
    exact = ibis.ifelse(small & wanted, x, 0.0).cast("decimal(38, 18)").sum()
    return exact, x.sum(where=~small & wanted)
