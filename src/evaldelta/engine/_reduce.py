"""Reduce rows to sufficient statistics per (arm, slice) and per (arm pair, slice).

The one large step is a per-case pivot: rows are grouped by ``case_id`` once, with each
compared arm's attempt count, scored count and case mean as conditional aggregates. That
single table (one row per case) is kept as a temporary table and every later reduction is
a small group-by over it, so memory does not grow with the number of rows and the arms are
joined without a join. The case is the unit: repeats are averaged within a case first.
"""

from __future__ import annotations

import decimal
import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import ibis
import ibis.expr.types as ir

from evaldelta.engine._exact import exact_parts
from evaldelta.engine._pivot import _bit_width, _derived, _pivot
from evaldelta.errors import DuplicateRowError, SliceConflictError
from evaldelta.evidence import ALL
from evaldelta.sources import TableSet, locate
from evaldelta.sources._fetch import rows as _rows
from evaldelta.sources._values import padded

__all__ = [
    "CaseTable",
    "UncheckedCaseIds",
    "build_case_table",
    "check_case_ids",
    "cost_totals",
    "settle_checks",
    "slice_weight_totals",
]

_TABLE_IDS = itertools.count()
# Clusters in one order on every backend (nulls first: DuckDB and Spark differ by default),
# so the clustered SE and its df sum the same numbers in the same order.
_BY_CLUSTER = [ibis.asc("slice", nulls_first=True), ibis.asc("cl", nulls_first=True)]


@dataclass(frozen=True)
class CaseTable:
    """The per-case pivot, kept in the backend, and the arms it covers in column order."""

    table: ir.Table
    arms: tuple[str, ...]
    metric: str
    tables: TableSet
    # every case mean is a whole number (one scored attempt per case and arm, whole-number
    # values), so float sums over cases are exact in any order (below 2**53)
    integral: bool = False
    # the checks of :func:`build_case_table` not run yet: aggregates over ``table`` (each a
    # sum over the cases) for the first reduction to compute, then :func:`settle_checks`
    checks: Mapping[str, Any] | None = None


class UncheckedCaseIds(Exception):
    """A blank or padded case id where validation's quick pass left them unchecked.

    Raised to :func:`evaldelta.engine.evidence.gather`, which runs the full validation: it
    names a blank id's row, or strips padded ids and counts them for the report.
    """


def _bad_id(case_id: ir.StringValue) -> ir.BooleanValue:
    """A case id that is missing, empty, or has what stripping removes at either end."""
    return case_id.isnull() | (case_id == "") | padded(case_id)


def check_case_ids(tables: TableSet, arms: Sequence[str]) -> None:
    """Raise :class:`UncheckedCaseIds` if a row of ``arms`` has a blank or padded case id.

    For the arms no pivot reads (present, not compared): the pivots check their own.
    """
    if not arms:
        return
    rows = tables.rows.filter(tables.rows.arm.isin(list(arms)))
    if _rows(rows.aggregate(bad=_bad_id(rows.case_id).cast("int64").sum()))[0]["bad"]:
        raise UncheckedCaseIds


def build_case_table(
    tables: TableSet,
    arms: tuple[str, ...],
    metric: str,
    *,
    escalation: Callable[[ir.Table], ir.BooleanValue] | None = None,
    integral_values: bool = False,
    cases_hint: int = 0,
    all_scored: bool = False,
    check_ids: bool = False,
    single_attempts: bool | None = None,
    only_arms: bool = False,
    top_repeat: int | None = None,
) -> CaseTable:
    """Pivot rows to one row per case with each arm's counts and case mean for ``metric``.

    ``escalation`` (a row predicate, null = unknown) adds per arm ``x<i>`` (attempts where it
    holds), ``xn<i>`` (attempts where it is known) and ``e<i>`` (their share, per case).
    ``integral_values``: the caller knows every value of ``metric`` is a whole number small
    enough that sums over the cases stay below 2**53 (see :attr:`CaseTable.integral`).
    ``cases_hint``: about how many cases there are, so a pivot too large for DuckDB's buffer
    is built in parts from the first try (:func:`_first_parts`).
    ``all_scored``: the caller knows no attempt of the arms lacks a value of ``metric``, so
    each arm's scored count is its attempt count and is not aggregated (nor is the source
    index when there is one source): each aggregate of 10M cases costs a few tenths of a
    second. ``check_ids``: validation left the case ids unchecked; each is one row here,
    so the checks below test them too, and raise :class:`UncheckedCaseIds` on a blank or
    padded one (before the duplicate and slice checks, whose rows it may have merged).
    ``single_attempts``: the caller knows whether any arm repeats an attempt (validation's
    top repeat); then the checks are left to the first reduction of the table, which scans
    it anyway (:attr:`CaseTable.checks`, :func:`settle_checks`): one scan of 10M cases less.
    ``only_arms``: the caller knows the rows hold no arm but ``arms`` (validation's arms),
    so the pivot's aggregates need not leave other arms' rows out (see ``_pivot``), and it
    is built in one part first: DuckDB 2.0 spills it as it needs (bench/README.md).
    ``top_repeat``: the highest repeat number of the arms (validation's), so the pivot can
    screen each case's attempts for a repeated (arm, repeat) itself (:func:`_attempt_bits`);
    the row-level duplicate check, a group-by of every row (24 s of a 100M-row compare of
    3 arms x 3 repeats), then runs only where the screen finds one.

    Raises :class:`DuplicateRowError` on a repeated (arm, case_id, repeat) and
    :class:`SliceConflictError` when a case carries two values of a slicing column (for
    example, a case whose slice differs between arms); one scan of the per-case table
    checks both, and the offending row is looked up only when there is one.
    """
    width, others = _bit_width(len(arms), top_repeat), not only_arms

    def pivot(t: ir.Table) -> ir.Table:
        return _pivot(
            tables, t, arms, metric, escalation, integral_values, all_scored, width, others
        )

    # with the arms alone, DuckDB 2.0's aggregate spills as it needs: one part first is
    # fastest (50M cases: 19 s, against 36 s in four parts, bench/README.md)
    stored = _keep_pivot(tables, tables.rows, pivot, (0 if only_arms else cases_hint, len(arms)))
    table = _derived(stored, len(arms), escalation is not None, all_scored)
    checks = _checks(tables, table, len(arms), check_ids)
    cases = CaseTable(table=table, arms=arms, metric=metric, tables=tables, checks=checks)
    if single_attempts is not None:
        return replace(cases, integral=single_attempts and integral_values)
    found = _rows(table.aggregate(**checks))[0]
    settle_checks(cases, found)
    return replace(cases, integral=not found["multi"] and integral_values, checks=None)


def _multi(table: ir.Table, arms: int) -> ir.BooleanValue:
    """Cases with several rows in some arm (repeats, or duplicates)."""
    multi = ibis.literal(False)
    for i in range(arms):
        multi = multi | (table[f"n{i}"] > 1)
    return multi


def _checks(tables: TableSet, table: ir.Table, arms: int, check_ids: bool) -> dict[str, Any]:
    """The per-case table's checks, as sums over its cases (they merge over slices)."""
    checks: dict[str, Any] = {
        "multi": _multi(table, arms).cast("int64").sum(),
        "cases": table.count(),
    }
    if "_repeated" in table.columns:  # the pivot screened the attempts (_attempt_bits)
        checks["repeated"] = table._repeated.cast("int64").sum()
    for k, col in enumerate(tables.slice_columns):
        checks[f"clash{k}"] = (table[f"s_{col}"] != table[f"s_{col}_max"]).cast("int64").sum()
    if check_ids:
        checks["bad_ids"] = _bad_id(table.case_id).cast("int64").sum()
    return checks


def settle_checks(cases: CaseTable, found: Mapping[str, Any]) -> None:
    """Raise on what the checks (:func:`_checks`, summed over the cases) found, in order.

    A blank or padded case id (:class:`UncheckedCaseIds`), then a duplicate row, then a
    case in two slices; the offending row is looked up only when there is one.
    """
    tables, table, arms = cases.tables, cases.table, cases.arms
    if found.get("bad_ids"):
        raise UncheckedCaseIds
    if found["multi"] and found.get("repeated", 1):
        few = int(found["multi"]) * 10 < int(found["cases"])
        _check_duplicates(tables, table, arms, _multi(table, len(arms)) if few else None)
    for k, col in enumerate(tables.slice_columns):
        if found[f"clash{k}"]:
            _slice_conflict(tables, table, col)


def cost_totals(
    tables: TableSet,
    arms: tuple[str, ...],
    by: str,
    parts: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, tuple[float | None, ...]]:
    """Per slice of ``by`` and overall (``ALL``): each arm's total cost, None where no cost.

    Summed from the rows (one small group-by of arm and slice: :func:`cost_parts`, unless
    validation's pass already gave those ``parts``), exactly: DECIMAL parts added in Python
    over the slices, the float rest (values past 1e12) with :func:`math.fsum`, so the
    totals are the same every run and on every backend. A row's slice is its case's, as
    :func:`build_case_table` has checked (a case in two slices is an error).
    """
    if not tables.has_cost:
        return {}
    if parts is None:
        parts = _rows(cost_parts(tables.rows.filter(tables.rows.arm.isin(list(arms))), by))
    got: dict[tuple[str, int], list[tuple[Any, Any]]] = {}
    for row in parts:
        if row["cost_n"] and row["arm"] in arms:
            i = arms.index(row["arm"])
            for key in ((str(row[f"by_{by}"]), i), (ALL, i)):
                got.setdefault(key, []).append((row["cost_d"], row["cost_f"]))
    totals: dict[str, list[float | None]] = {}
    for (name, i), values in got.items():
        with decimal.localcontext(prec=80):
            dec = sum((d or decimal.Decimal(0) for d, _ in values), decimal.Decimal(0))
        total = float(dec) + math.fsum(float(f or 0.0) for _, f in values)
        totals.setdefault(name, [None] * len(arms))[i] = total
    return {name: tuple(v) for name, v in totals.items()}


def cost_aggregates(rows: ir.Table) -> dict[str, Any]:
    """The mergeable cost sums of a group of rows: count, exact DECIMAL part, float rest."""
    exact, big = exact_parts(rows.cost_usd)
    return {"cost_n": rows.cost_usd.count(), "cost_d": exact, "cost_f": big}


def cost_parts(rows: ir.Table, by: str) -> ir.Table:
    """:func:`cost_aggregates` per arm and slice of ``by`` (what :func:`cost_totals` merges)."""
    return rows.group_by(["arm", f"by_{by}"]).aggregate(**cost_aggregates(rows))


def _slice_conflict(tables: TableSet, table: ir.Table, col: str) -> None:
    hit = _rows(
        table.filter(table[f"s_{col}"] != table[f"s_{col}_max"])
        .select("case_id", f"s_{col}", f"s_{col}_max", "_src")
        .order_by("case_id")
        .limit(1)
    )[0]
    where = locate(tables, int(hit["_src"]), {"case_id": hit["case_id"]}, col)
    raise SliceConflictError(
        f"case {hit['case_id']!r} is in two slices of {col!r}: "
        f"{hit[f's_{col}']!r} and {hit[f's_{col}_max']!r} "
        "(a case belongs to exactly one slice, in every arm)",
        where,
    )


def _keep_pivot(
    tables: TableSet,
    rows: ir.Table,
    pivot: Callable[[ir.Table], ir.Table],
    size: tuple[int, int] = (0, 2),
) -> ir.Table:
    """``pivot(rows)`` computed once and kept in the backend for the queries that follow.

    A temporary table on DuckDB; elsewhere Ibis's cache (a persisted DataFrame on Spark,
    which has no temporary tables), released when the last expression over it is gone.
    Ibis 12's release of a DuckDB cache fails (``DROP TABLE IF EXISTS`` without a name).

    When DuckDB runs out of its buffer (tens of millions of cases: the hash aggregate's
    groups, one per case, outgrow it before spilling helps), the pivot is built again in
    parts, the cases split by a hash of their id, each part one aggregate over the rows of
    its cases, four times as many parts per try (up to 256) until each fits. Every part
    reads the rows again, so this is slower and only a second resort.
    """
    if tables.con.name != "duckdb":
        return pivot(rows).cache()
    name = f"_evaldelta_cases_{next(_TABLE_IDS)}"
    return _in_parts(
        lambda parts: _build_in_parts(tables.con, name, rows, pivot, parts),
        _first_parts(tables.con, *size),  # from (about how many cases, arms)
    )


_MAX_PARTS = 256
_T = TypeVar("_T")


def _in_parts(attempt: Callable[[int], _T], parts: int = 1) -> _T:
    """``attempt(parts)``, again with four times the parts while DuckDB runs out of memory.

    Up to :data:`_MAX_PARTS`; any other error, or running out at the most parts, is raised.
    """
    while True:
        try:
            return attempt(parts)
        except Exception as exc:  # duckdb.OutOfMemoryException, without importing duckdb
            if type(exc).__name__ != "OutOfMemoryException" or parts >= _MAX_PARTS:
                raise
        parts *= 4


# Cases of two arms whose per-case aggregate fits in 512 MB of DuckDB's buffer: 10M fit in
# one part on this project's machines, 50M did not, 12.5M per part did (bench/README.md)
_CASES_PER_512MB = 13_000_000
_UNITS = {"b": 1, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
_UNITS |= {"kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12}


def _first_parts(con: Any, cases: int, arms: int = 2) -> int:
    """How many parts to build the pivot in from the start (a power of four).

    One, unless about ``cases`` cases would outgrow DuckDB's buffer; then the first power
    of four that fits, since a failed first try reads every row for nothing. A wrong guess
    costs little: too few parts fall back to the retry, too many to a few more reads.
    """
    try:
        query = "SELECT current_setting('memory_limit')"
        setting = str(con.con.execute(query).fetchall()[0][0])
        number, unit = setting.replace(" ", "").lower().rstrip("s"), ""
        while number and not number[-1].isdigit():
            number, unit = number[:-1], number[-1] + unit
        limit = float(number) * _UNITS[unit or "b"]
    except Exception:  # an unknown form of the setting: no guess
        return 1
    # each arm adds its counts and sums to every case's group
    capacity = max(1.0, _CASES_PER_512MB * limit / 512e6 * 2 / max(arms, 2))
    parts = 1
    while cases > parts * capacity and parts < _MAX_PARTS:
        parts *= 4
    return parts


def _build_in_parts(
    con: Any, name: str, rows: ir.Table, pivot: Callable[[ir.Table], ir.Table], parts: int
) -> ir.Table:
    # Ibis creates a table before it fills it, so a failed try leaves an empty one behind
    # (and its overwrite=True emits a DROP that DuckDB 2 does not parse for temp tables)
    con.con.execute(f'DROP TABLE IF EXISTS temp."{name}"')
    if parts == 1:
        return con.create_table(name, pivot(rows), temp=True)
    table = con.create_table(name, pivot(_part(rows, 0, parts)), temp=True)
    for part in range(1, parts):
        con.insert(name, pivot(_part(rows, part, parts)))
    return table


def _check_duplicates(
    tables: TableSet, table: ir.Table, arms: tuple[str, ...], multi: ir.BooleanValue | None
) -> None:
    """Raise on a duplicate (arm, case_id, repeat); only cases with several rows can have one.

    Called when some case has several rows in an arm. With few such cases (``multi``, the
    predicate that finds them) only their rows are grouped by repeat; with many (repeated
    runs: every case), all rows are, without the join. Grouping every row can outgrow
    DuckDB's buffer as the pivot can, so it too runs again in parts on running out (the
    cases split by a hash of their id); every part's first duplicate is collected and the
    first of them reported, so the message does not depend on the number of parts.
    """
    rows = tables.rows.filter(tables.rows.arm.isin(list(arms)))
    if multi is not None:
        suspects = table.filter(multi).select(case_key="case_id")
        rows = rows.semi_join(suspects, rows.case_id == suspects.case_key)
    hits = _in_parts(
        lambda parts: [h for p in range(parts) for h in _rows(_duplicate(rows, p, parts))]
    )
    if hits:
        hit = min(hits, key=lambda h: (h["src"], h["case_id"], h["arm"], h["repeat"]))
        where = locate(
            tables,
            int(hit["src"]),
            {"case_id": hit["case_id"], "arm": hit["arm"], "repeat": hit["repeat"]},
            "case_id",
        )
        raise DuplicateRowError(
            f"duplicate row: arm {hit['arm']!r}, case {hit['case_id']!r}, repeat "
            f"{hit['repeat']} appears {hit['k']} times (give each attempt its own repeat)",
            where,
        )


def _part(rows: ir.Table, part: int, parts: int) -> ir.Table:
    """The rows of one of ``parts`` disjoint sets of cases (by a hash of the case id)."""
    if parts == 1:
        return rows
    # Ibis types DuckDB's unsigned hash as a signed BIGINT, so the remainder can be negative
    return rows.filter((rows.case_id.hash() % parts + parts) % parts == part)


def _duplicate(rows: ir.Table, part: int, parts: int) -> ir.Table:
    """The first repeated (arm, case_id, repeat) among one part's rows, if any."""
    t = _part(rows, part, parts)
    return (
        t.group_by(["arm", "case_id", "repeat"])
        .aggregate(k=t.count(), src=t._src.min())
        .filter(lambda r: r.k > 1)
        .order_by(["src", "case_id", "arm", "repeat"])
        .limit(1)
    )


def slice_weight_totals(cases: CaseTable, by: str) -> dict[str, float]:
    """Estimated traffic per slice: the sum over cases of ``sample_weight`` (N_k / n_k).

    Horvitz & Thompson (1952): summing inverse inclusion probabilities over a stratified
    sample estimates each stratum's population size, so the shares are the traffic mix the
    sample was drawn from. Cases without a weight contribute nothing.
    """
    w = cases.table
    rows = _rows(w.group_by(slice=w[f"s_{by}"]).aggregate(total=w.sw.sum()))
    return {str(r["slice"]): float(r["total"]) for r in rows if r["total"]}


def list_cases(
    cases: CaseTable, by: str, candidate_index: int, *, limit: int | None
) -> dict[str, list[dict[str, Any]]]:
    """Row-level listings, bounded and explicit: one-arm-only cases and the cases that moved.

    One-arm-only cases and the discordant cases (largest move first) are each listed up to
    ``limit`` (None = all); the per-slice counts (:class:`PairSliceStats`) always count
    every one, so nothing is dropped silently and memory does not grow with what is listed.
    """
    w = cases.table
    j = candidate_index
    slice_col = w[f"s_{by}"]
    only_b = w.filter((w.n0 > 0) & (w[f"n{j}"] == 0)).select("case_id", slice=slice_col)
    only_c = w.filter((w.n0 == 0) & (w[f"n{j}"] > 0)).select("case_id", slice=slice_col)
    moved = w.filter(w.m0.notnull() & w[f"m{j}"].notnull() & (w[f"m{j}"] != w.m0)).select(
        "case_id", slice=slice_col, baseline=w.m0, candidate=w[f"m{j}"], delta=w[f"m{j}"] - w.m0
    )
    moved = moved.order_by([ibis.desc(moved.delta.abs()), "case_id"])
    if limit is not None:
        moved = moved.limit(limit)
    only_b, only_c = only_b.order_by("case_id"), only_c.order_by("case_id")
    if limit is not None:
        only_b, only_c = only_b.limit(limit), only_c.limit(limit)
    return {
        "only_in_baseline": _rows(only_b),
        "only_in_candidate": _rows(only_c),
        "discordant": _rows(moved),
    }
