"""The per-case pivot's expressions: one aggregate of the rows per case, and what derives.

:func:`_pivot` is the one large step of a comparison (``build_case_table`` in ``_reduce``
keeps its result in the backend); :func:`_derived` adds what is computed per case when the
kept table is read. Both are Ibis expressions any backend runs.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from typing import Any

import ibis
import ibis.expr.types as ir

from evaldelta.engine._exact import exact_sum
from evaldelta.sources import TableSet

__all__: list[str] = []


def _pivot(
    tables: TableSet,
    t: ir.Table,
    arms: tuple[str, ...],
    metric: str,
    escalation: Callable[[ir.Table], ir.BooleanValue] | None,
    integral_values: bool = False,
    all_scored: bool = False,
    width: int | None = None,
    others: bool = False,
) -> ir.Table:
    """The per-case aggregate of rows ``t`` (see ``build_case_table`` in ``_reduce``).

    ``others``: ``t`` may hold arms besides ``arms``. Their rows are left out by each
    aggregate's own condition, not by a filter before the group-by: on DuckDB 2.0.1 such a
    filter doubles the time of a large aggregate (3 arms x 3 repeats, 11.1M cases, 2 arms
    compared: 15.2 s against 7.8 s; equal at 1M and 5M cases, bench/README.md). A case that
    only those arms have is dropped after it.

    A case's sum of whole-number values is a plain float sum, exact in any order; any other
    is an exact DECIMAL sum (four times slower at 10M cases, bench/README.md). Costs are not
    here: they are totalled per slice from the rows (:func:`cost_totals`), since only their
    totals are reported and the pivot's per-case DECIMAL sums of them cost as much again.
    """
    score = t[f"m_{metric}"]
    keep = t.arm.isin(list(arms)) if others else None
    aggs: dict[str, Any] = {}
    for name in tables.slice_columns:
        col = t[f"by_{name}"]
        aggs[f"s_{name}"] = col.min(where=keep)
        aggs[f"s_{name}_max"] = col.max(where=keep)
    if tables.has_cluster:
        aggs["cluster"] = t.cluster.min(where=keep)
    if tables.has_weight:
        aggs["sw"] = t.sample_weight.max(where=keep)
    if len(tables.sources) > 1:
        aggs["_src"] = t._src.min(where=keep)
    for i, arm in enumerate(arms):
        is_arm = t.arm == arm
        # counts per case are small: int32 halves their share of the table
        aggs[f"n{i}"] = t.count(where=is_arm).cast("int32")
        if not all_scored:
            aggs[f"k{i}"] = score.count(where=is_arm).cast("int32")
        # exact, so a case's mean over repeats does not depend on the order of its rows
        aggs[f"t{i}"] = score.sum(where=is_arm) if integral_values else exact_sum(score, is_arm)
        if tables.order is not None:  # a sequential comparison: when the case arrived
            aggs[f"o{i}"] = t._order.min(where=is_arm)
        if escalation is not None:
            flag = escalation(t)
            aggs[f"x{i}"] = flag.cast("int64").sum(where=is_arm)
            aggs[f"xn{i}"] = flag.count(where=is_arm)
    if width is not None:
        aggs["_bits"] = _attempt_bits(t, arms, width)
    table = t.group_by("case_id").aggregate(**aggs)
    if others:
        attempts = [table[f"n{i}"] for i in range(len(arms))]
        table = table.filter(functools.reduce(operator.add, attempts) > 0)
    if width is None:
        return table
    return table.mutate(_repeated=_repeated(table, len(arms), width)).drop("_bits")


# Bits one case's (arm, repeat) pairs may take: their sum stays below 2**31 per attempt, so
# a bigint sum cannot overflow on any engine (Spark's does not widen as DuckDB's does)
_MAX_BITS = 31


def _bit_width(arms: int, top_repeat: int | None) -> int | None:
    """Bits per arm for the attempt screen (:func:`_attempt_bits`), or None: no screen.

    None when the arms do not repeat (there a case has one row per arm, and the count says
    whether it has two) or when their repeats need more than :data:`_MAX_BITS` bits.
    """
    if not top_repeat or arms * (top_repeat + 1) > _MAX_BITS:
        return None
    return top_repeat + 1


def _attempt_bits(t: ir.Table, arms: tuple[str, ...], width: int) -> ir.IntegerValue:
    """A case's sum of ``2 ** (i * width + r)`` over its attempts (arm ``i``, repeat ``r``).

    With ``width`` = top repeat + 1 the (arm, repeat) pairs map one-to-one to bits, and
    distinct pairs add without a carry: the sum has exactly one set bit per attempt. A pair
    seen twice adds its power twice, and carries only merge bits: the set bits of a sum are
    at most its terms' (``popcount(a + b) <= popcount(a) + popcount(b)``), and a power
    counted ``c >= 2`` times gives ``popcount(c) < c`` of them. So a case repeats a pair
    exactly when the sum has fewer set bits than the case has attempts (:func:`_repeated`),
    and the row-level duplicate check (``_reduce``) runs only to name that row.
    """
    index = ibis.cases(*((t.arm == arm, i * width) for i, arm in enumerate(arms)))
    return (ibis.literal(1, type="int64") << (t.repeat + index)).sum()


def _repeated(table: ir.Table, arms: int, width: int) -> ir.BooleanValue:
    """Whether a case's attempt bits (:func:`_attempt_bits`) are fewer than its attempts."""
    bits = table._bits
    ones = [(bits >> (i * width + r)) & 1 for i in range(arms) for r in range(width)]
    attempts = [table[f"n{i}"].cast("int64") for i in range(arms)]
    return functools.reduce(operator.add, ones) != functools.reduce(operator.add, attempts)


def _derived(stored: ir.Table, arms: int, escalation: bool, all_scored: bool = False) -> ir.Table:
    """The stored pivot with what derives from it per case, computed when read, not stored.

    The case mean ``m<i>`` is the sum over the count of scored attempts (null when none is
    scored); ``e<i>`` the share of known attempts that escalated. Storing only the counts
    and sums keeps the table narrow (tens of millions of rows), and a division per row
    read costs less than writing and reading a column. So do the scored counts ``k<i>``
    when every attempt is scored (the attempt counts) and ``_src`` with one source (0).
    """
    if "_src" not in stored.columns:
        stored = stored.mutate(_src=ibis.literal(0, type="int64"))
    if all_scored:
        stored = stored.mutate(**{f"k{i}": stored[f"n{i}"] for i in range(arms)})
    table = stored.mutate(
        **{f"m{i}": stored[f"t{i}"] / stored[f"k{i}"].nullif(0) for i in range(arms)}
    )
    if escalation:
        table = table.mutate(
            **{
                f"e{i}": table[f"x{i}"].cast("float64") / table[f"xn{i}"].nullif(0)
                for i in range(arms)
            }
        )
    return table
