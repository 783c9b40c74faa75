"""Reduce rows to sufficient statistics per (arm, slice) and per (arm pair, slice).

The one large step is a per-case pivot: rows are grouped by ``case_id`` once, with each
compared arm's attempt count, scored count and case mean as conditional aggregates. That
single table (one row per case) is kept as a temporary table and every later reduction is
a small group-by over it, so memory does not grow with the number of rows and the arms are
joined without a join. The case is the unit: repeats are averaged within a case first.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import ibis
import ibis.expr.types as ir

from evaldelta.errors import DuplicateRowError, SliceConflictError
from evaldelta.sources import TableSet, locate
from evaldelta.sources._fetch import rows as _rows

__all__ = [
    "ArmSliceStats",
    "CaseTable",
    "Moments",
    "PairSliceStats",
    "build_case_table",
    "reduce_arm_slices",
    "reduce_pair_slices",
    "slice_weight_totals",
]

ALL = "__all__"
_TABLE_IDS = itertools.count()
# Clusters in one order on every backend (nulls first: DuckDB and Spark differ by default),
# so the clustered SE and its df sum the same numbers in the same order.
_BY_CLUSTER = [ibis.asc("slice", nulls_first=True), ibis.asc("cl", nulls_first=True)]


@dataclass(frozen=True)
class Moments:
    """Count, sum and sum of squares of case-level values."""

    n: int
    total: float
    sumsq: float

    @property
    def mean(self) -> float:
        """The mean, or NaN when there are no values (reported, never 0)."""
        return self.total / self.n if self.n else math.nan

    @property
    def sd(self) -> float:
        """Sample standard deviation (ddof=1); NaN below two values."""
        if self.n < 2:
            return math.nan
        var = (self.sumsq - self.total * self.total / self.n) / (self.n - 1)
        return math.sqrt(max(var, 0.0))


@dataclass(frozen=True)
class ArmSliceStats:
    """What one arm did in one slice (``slice == ALL`` for the whole arm)."""

    arm: str
    slice: str
    cases: int
    attempts: int
    reviewed: int
    scores: Moments
    max_scored_per_case: int
    cost_usd: float | None
    attempt_total: float = 0.0
    clusters: tuple[tuple[int, float], ...] | None = None
    with_pass: int = 0  # cases whose mean score is above 0 (pass/fail: passed at least once)
    with_fail: int = 0  # cases whose mean score is below 1 (pass/fail: failed at least once)

    @property
    def unlabeled(self) -> int:
        """Attempts with no score yet."""
        return self.attempts - self.reviewed

    @property
    def attempt_mean(self) -> float:
        """Mean over scored attempts (every run counts once), for contrast with case means."""
        return self.attempt_total / self.reviewed if self.reviewed else math.nan


@dataclass(frozen=True)
class PairSliceStats:
    """Candidate minus baseline on the cases both arms scored, in one slice."""

    baseline: str
    candidate: str
    slice: str
    delta: Moments
    nonzero: int
    base: Moments
    cand: Moments
    both_pass: int
    only_baseline: int
    only_candidate: int
    both_fail: int
    only_in_baseline: int
    only_in_candidate: int
    unscored_in_one: int
    clusters: tuple[tuple[int, float], ...] | None = field(default=None)


@dataclass(frozen=True)
class CaseTable:
    """The per-case pivot, kept in the backend, and the arms it covers in column order."""

    table: ir.Table
    arms: tuple[str, ...]
    metric: str
    tables: TableSet


def build_case_table(
    tables: TableSet,
    arms: tuple[str, ...],
    metric: str,
    *,
    escalation: Callable[[ir.Table], ir.BooleanValue] | None = None,
) -> CaseTable:
    """Pivot rows to one row per case with each arm's counts and case mean for ``metric``.

    ``escalation`` (a row predicate, null = unknown) adds per arm ``x<i>`` (attempts where it
    holds), ``xn<i>`` (attempts where it is known) and ``e<i>`` (their share, per case).

    Raises :class:`SliceConflictError` when a case carries two values of a slicing column
    (for example, a case whose slice differs between arms).
    """
    rows = tables.rows.filter(tables.rows.arm.isin(list(arms)))

    def pivot(t: ir.Table) -> ir.Table:
        return _pivot(tables, t, arms, metric, escalation)

    table = _keep_pivot(tables, rows, pivot)
    _check_duplicates(tables, table, arms)
    for col in tables.slice_columns:
        clash = _rows(
            table.filter(table[f"s_{col}"] != table[f"s_{col}_max"])
            .select("case_id", f"s_{col}", f"s_{col}_max", "_src")
            .limit(1)
        )
        if clash:
            hit = clash[0]
            where = locate(tables, int(hit["_src"]), {"case_id": hit["case_id"]}, col)
            raise SliceConflictError(
                f"case {hit['case_id']!r} is in two slices of {col!r}: "
                f"{hit[f's_{col}']!r} and {hit[f's_{col}_max']!r} "
                "(a case belongs to exactly one slice, in every arm)",
                where,
            )
    return CaseTable(table=table, arms=arms, metric=metric, tables=tables)


def _pivot(
    tables: TableSet,
    t: ir.Table,
    arms: tuple[str, ...],
    metric: str,
    escalation: Callable[[ir.Table], ir.BooleanValue] | None,
) -> ir.Table:
    """The per-case aggregate of rows ``t`` (see :func:`build_case_table`)."""
    score = t[f"m_{metric}"]
    aggs: dict[str, Any] = {}
    for name in tables.slice_columns:
        col = t[f"by_{name}"]
        aggs[f"s_{name}"] = col.min()
        aggs[f"s_{name}_max"] = col.max()
    if tables.has_cluster:
        aggs["cluster"] = t.cluster.min()
    if tables.has_weight:
        aggs["sw"] = t.sample_weight.max()
    aggs["_src"] = t._src.min()
    for i, arm in enumerate(arms):
        is_arm = t.arm == arm
        aggs[f"n{i}"] = t.count(where=is_arm)
        aggs[f"k{i}"] = score.count(where=is_arm)
        aggs[f"t{i}"] = score.sum(where=is_arm)
        if tables.has_cost:
            aggs[f"c{i}"] = t.cost_usd.sum(where=is_arm)
        if escalation is not None:
            flag = escalation(t)
            aggs[f"x{i}"] = flag.cast("int64").sum(where=is_arm)
            aggs[f"xn{i}"] = flag.count(where=is_arm)
    grouped = t.group_by("case_id").aggregate(**aggs)
    # the case mean is sum / count of scored attempts (null when none is scored)
    grouped = grouped.mutate(
        **{f"m{i}": grouped[f"t{i}"] / grouped[f"k{i}"].nullif(0) for i in range(len(arms))}
    )
    if escalation is not None:
        grouped = grouped.mutate(
            **{
                f"e{i}": grouped[f"x{i}"].cast("float64") / grouped[f"xn{i}"].nullif(0)
                for i in range(len(arms))
            }
        )
    return grouped


def _keep_pivot(
    tables: TableSet, rows: ir.Table, pivot: Callable[[ir.Table], ir.Table]
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
    parts = 1
    while True:
        try:
            return _build_in_parts(tables.con, name, rows, pivot, parts)
        except Exception as exc:  # duckdb.OutOfMemoryException, without importing duckdb
            if type(exc).__name__ != "OutOfMemoryException" or parts >= _MAX_PARTS:
                raise
        parts *= 4


_MAX_PARTS = 256


def _build_in_parts(
    con: Any, name: str, rows: ir.Table, pivot: Callable[[ir.Table], ir.Table], parts: int
) -> ir.Table:
    # Ibis creates a table before it fills it, so a failed try leaves an empty one behind
    # (and its overwrite=True emits a DROP that DuckDB 2 does not parse for temp tables)
    con.con.execute(f'DROP TABLE IF EXISTS temp."{name}"')
    if parts == 1:
        return con.create_table(name, pivot(rows), temp=True)
    # Ibis types DuckDB's unsigned hash as a signed BIGINT, so the remainder can be negative
    bucket = (rows.case_id.hash() % parts + parts) % parts
    table = con.create_table(name, pivot(rows.filter(bucket == 0)), temp=True)
    for part in range(1, parts):
        con.insert(name, pivot(rows.filter(bucket == part)))
    return table


def _check_duplicates(tables: TableSet, table: ir.Table, arms: tuple[str, ...]) -> None:
    """Raise on a duplicate (arm, case_id, repeat); only cases with several rows can have one.

    With one row per (arm, case) (the common case) this is one cheap pass over the per-case
    table; otherwise the rows of the multi-row cases alone are grouped by repeat.
    """
    multi = None
    for i in range(len(arms)):
        clause = table[f"n{i}"] > 1
        multi = clause if multi is None else (multi | clause)
    if multi is None or not _rows(table.filter(multi).select("case_id").limit(1)):
        return
    rows = tables.rows.filter(tables.rows.arm.isin(list(arms)))
    suspects = table.filter(multi).select(case_key="case_id")
    rows = rows.semi_join(suspects, rows.case_id == suspects.case_key)
    dup = (
        rows.group_by(["arm", "case_id", "repeat"])
        .aggregate(k=rows.count(), src=rows._src.min())
        .filter(lambda r: r.k > 1)
        .limit(1)
    )
    hits = _rows(dup)
    if hits:
        hit = hits[0]
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


def slice_weight_totals(cases: CaseTable, by: str) -> dict[str, float]:
    """Estimated traffic per slice: the sum over cases of ``sample_weight`` (N_k / n_k).

    Horvitz & Thompson (1952): summing inverse inclusion probabilities over a stratified
    sample estimates each stratum's population size, so the shares are the traffic mix the
    sample was drawn from. Cases without a weight contribute nothing.
    """
    w = cases.table
    rows = _rows(w.group_by(slice=w[f"s_{by}"]).aggregate(total=w.sw.sum()))
    return {str(r["slice"]): float(r["total"]) for r in rows if r["total"]}


def _exact_sum(x: Any, where: Any = None) -> Any:
    """The sum of a float column, the same on every backend whatever the order of the rows.

    A float sum depends on the order it is taken in (DuckDB's threads, Spark's partitions),
    and a variance from sums of squares magnifies that: values below 1e12 in magnitude are
    summed exactly as DECIMAL(38, 18) (rounded to 1e-18 first), so the per-slice moments
    agree across engines; larger ones (rare, and past any score scale) as floats, which
    still overflow to infinity where they must (the "too large to summarize" check).
    """
    small = x.abs() < 1e12
    wanted = ibis.literal(True) if where is None else where
    exact = ibis.ifelse(small & wanted, x, 0.0).cast("decimal(38, 18)").sum().cast("float64")
    return exact + x.sum(where=~small & wanted).fill_null(0.0)


def _moments(n: Any, total: Any, sumsq: Any) -> Moments:
    return Moments(int(n or 0), float(total or 0.0), float(sumsq or 0.0))


def reduce_arm_slices(cases: CaseTable, by: str) -> list[ArmSliceStats]:
    """Per arm, per slice of ``by`` and overall (``ALL``): counts, case-mean moments, cost."""
    w = cases.table
    aggs: dict[str, Any] = {}
    for i in range(len(cases.arms)):
        n, k, m = w[f"n{i}"], w[f"k{i}"], w[f"m{i}"]
        aggs[f"cases{i}"] = (n > 0).sum()
        aggs[f"att{i}"] = n.sum()
        aggs[f"rev{i}"] = k.sum()
        aggs[f"sn{i}"] = m.count()
        aggs[f"st{i}"] = _exact_sum(m)
        aggs[f"ss{i}"] = _exact_sum(m * m)
        aggs[f"pos{i}"] = (m > 0).sum()
        aggs[f"neg{i}"] = (m < 1).sum()
        aggs[f"mx{i}"] = k.max()
        aggs[f"at{i}"] = _exact_sum(w[f"t{i}"])
        if cases.tables.has_cost:
            aggs[f"cost{i}"] = w[f"c{i}"].sum()
    per_slice = _rows(w.group_by(slice=w[f"s_{by}"]).aggregate(**aggs).order_by("slice"))
    overall = _rows(w.aggregate(**aggs))
    overall[0]["slice"] = ALL
    cluster_map = _cluster_sums_arm(cases, by) if cases.tables.has_cluster else {}
    out = []
    for row in [*per_slice, *overall]:
        for i, arm in enumerate(cases.arms):
            out.append(
                ArmSliceStats(
                    arm=arm,
                    slice=str(row["slice"]),
                    cases=int(row[f"cases{i}"] or 0),
                    attempts=int(row[f"att{i}"] or 0),
                    reviewed=int(row[f"rev{i}"] or 0),
                    scores=_moments(row[f"sn{i}"], row[f"st{i}"], row[f"ss{i}"]),
                    max_scored_per_case=int(row[f"mx{i}"] or 0),
                    attempt_total=float(row[f"at{i}"] or 0.0),
                    cost_usd=(float(row[f"cost{i}"]) if row.get(f"cost{i}") is not None else None),
                    clusters=cluster_map.get((i, str(row["slice"]))),
                    with_pass=int(row[f"pos{i}"] or 0),
                    with_fail=int(row[f"neg{i}"] or 0),
                )
            )
    return out


def _cluster_sums_arm(
    cases: CaseTable, by: str
) -> dict[tuple[int, str], tuple[tuple[int, float], ...]]:
    w = cases.table
    aggs: dict[str, Any] = {}
    for i in range(len(cases.arms)):
        aggs[f"n{i}"] = w[f"m{i}"].count()
        aggs[f"s{i}"] = _exact_sum(w[f"m{i}"])
    result: dict[tuple[int, str], list[tuple[int, float]]] = {}
    grouped = _rows(
        w.group_by(slice=w[f"s_{by}"], cl=w.cluster).aggregate(**aggs).order_by(_BY_CLUSTER)
    )
    overall = _rows(w.group_by(cl=w.cluster).aggregate(**aggs).order_by(_BY_CLUSTER[1:]))
    for row in overall:
        row["slice"] = ALL
    for row in [*grouped, *overall]:
        for i in range(len(cases.arms)):
            n = int(row[f"n{i}"] or 0)
            if n:
                result.setdefault((i, str(row["slice"])), []).append((n, float(row[f"s{i}"])))
    return {key: tuple(v) for key, v in result.items()}


def reduce_pair_slices(cases: CaseTable, by: str, candidate_index: int) -> list[PairSliceStats]:
    """Baseline (arm 0) against one candidate: paired moments, 2x2 cells, coverage gaps."""
    w = cases.table
    j = candidate_index
    mb, mc = w.m0, w[f"m{j}"]
    paired = mb.notnull() & mc.notnull()
    d = mc - mb
    aggs: dict[str, Any] = {
        "n": paired.sum(),
        "dt": _exact_sum(d),
        "dss": _exact_sum(d * d),
        "nz": (paired & (d != 0)).sum(),
        "bt": _exact_sum(mb, paired),
        "bss": _exact_sum(mb * mb, paired),
        "ct": _exact_sum(mc, paired),
        "css": _exact_sum(mc * mc, paired),
        "pp": (paired & (mb == 1) & (mc == 1)).sum(),
        "pf": (paired & (mb == 1) & (mc == 0)).sum(),
        "fp": (paired & (mb == 0) & (mc == 1)).sum(),
        "ff": (paired & (mb == 0) & (mc == 0)).sum(),
        "ob": ((w.n0 > 0) & (w[f"n{j}"] == 0)).sum(),
        "oc": ((w.n0 == 0) & (w[f"n{j}"] > 0)).sum(),
        "un": ((w.n0 > 0) & (w[f"n{j}"] > 0) & ~paired).sum(),
    }
    per_slice = _rows(w.group_by(slice=w[f"s_{by}"]).aggregate(**aggs).order_by("slice"))
    overall = _rows(w.aggregate(**aggs))
    overall[0]["slice"] = ALL
    clusters: dict[str, tuple[tuple[int, float], ...]] = {}
    if cases.tables.has_cluster:
        c_aggs = {"n": paired.sum(), "s": _exact_sum(d)}
        per_cluster = w.group_by(slice=w[f"s_{by}"], cl=w.cluster).aggregate(**c_aggs)
        for row in _rows(per_cluster.order_by(_BY_CLUSTER)):
            if row["n"]:
                clusters.setdefault(str(row["slice"]), ())
                clusters[str(row["slice"])] += ((int(row["n"]), float(row["s"])),)
        for row in _rows(w.group_by(cl=w.cluster).aggregate(**c_aggs).order_by(_BY_CLUSTER[1:])):
            if row["n"]:
                clusters.setdefault(ALL, ())
                clusters[ALL] += ((int(row["n"]), float(row["s"])),)
    return [
        PairSliceStats(
            baseline=cases.arms[0],
            candidate=cases.arms[j],
            slice=str(row["slice"]),
            delta=_moments(row["n"], row["dt"], row["dss"]),
            nonzero=int(row["nz"] or 0),
            base=_moments(row["n"], row["bt"], row["bss"]),
            cand=_moments(row["n"], row["ct"], row["css"]),
            both_pass=int(row["pp"] or 0),
            only_baseline=int(row["pf"] or 0),
            only_candidate=int(row["fp"] or 0),
            both_fail=int(row["ff"] or 0),
            only_in_baseline=int(row["ob"] or 0),
            only_in_candidate=int(row["oc"] or 0),
            unscored_in_one=int(row["un"] or 0),
            clusters=clusters.get(str(row["slice"])),
        )
        for row in [*per_slice, *overall]
    ]


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
