"""Reduce the per-case table, per slice and overall, in one group-by per slicing column.

Every statistic here is sufficient and mergeable (counts, exact sums, sums of squares,
maxima), so one pass over the per-case table gives every arm's and every pair's numbers per
slice, and the overall row is merged from those rows in Python instead of a second scan.
"""

from __future__ import annotations

import decimal
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evaldelta.engine._exact import exact_parts as _exact_parts
from evaldelta.engine._exact import exact_sum as _exact_sum
from evaldelta.engine._reduce import _BY_CLUSTER, CaseTable, cost_totals, settle_checks
from evaldelta.evidence import ALL, ArmSliceStats, Moments, PairSliceStats
from evaldelta.sources._fetch import rows as _rows

__all__ = ["SliceReduction", "reduce_slices"]


def _moments(n: Any, total: Any, sumsq: Any) -> Moments:
    return Moments(int(n or 0), float(total or 0.0), float(sumsq or 0.0))


# How each column of a fused slice reduction merges over slices into the overall row.
_SUM, _MAX, _FLOAT, _EXACT = "sum", "max", "float", "exact"
_VALUE = "value"  # an exact sum's name: its two parts above are fetched, it is not


class _Aggs:
    """Aggregates of one group-by, each with the rule that merges its per-slice values.

    Every reduction here is a sufficient statistic that merges exactly (counts and exact
    sums add, maxima take the max), so the overall row is merged from the per-slice rows
    instead of scanning the per-case table a second time. An exact sum is fetched as its
    DECIMAL part and its float part (:func:`_exact_parts`); the decimal parts add exactly
    in Python, the float parts with :func:`math.fsum`.
    """

    def __init__(self, integral: bool = False) -> None:
        self.exprs: dict[str, Any] = {}
        self.kinds: dict[str, str] = {}
        self.integral = integral

    def exact(self, name: str, x: Any, where: Any = None) -> None:
        """An order-independent sum: a plain float sum where every value is a whole number.

        Whole numbers add exactly in float64 while every partial sum stays below 2**53
        (which :attr:`CaseTable.integral` promises), so no DECIMAL is needed for them.
        """
        if self.integral:
            self.add(name, x.sum(where=where), _FLOAT)
            return
        exact, big = _exact_parts(x, where)
        self.add(f"{name}__d", exact, _EXACT)
        self.add(f"{name}__f", big, _FLOAT)
        self.kinds[name] = _VALUE

    def add(self, name: str, expr: Any, kind: str = _SUM) -> None:
        self.exprs[name] = expr
        self.kinds[name] = kind

    def finish(self, row: dict[str, Any]) -> dict[str, Any]:
        """A fetched row with each exact sum as one float, as :func:`_exact_sum` gives it."""
        out = dict(row)
        for name, kind in self.kinds.items():
            if kind == _VALUE:
                dec, big = out.pop(f"{name}__d"), out.pop(f"{name}__f")
                out[name] = float(dec or 0) + float(big or 0.0)
        return out

    def merge(self, rows: list[dict[str, Any]]) -> dict[str, Any]:
        """The overall row from the per-slice rows (raw, before :meth:`finish`)."""
        out: dict[str, Any] = {}
        for name, kind in self.kinds.items():
            if kind == _VALUE:
                continue
            values = [r[name] for r in rows if r[name] is not None]
            if not values:
                out[name] = None
            elif kind == _MAX:
                out[name] = max(values)
            elif kind == _FLOAT:
                out[name] = math.fsum(float(v) for v in values)
            elif kind == _EXACT:
                with decimal.localcontext(prec=80):
                    out[name] = sum(values, decimal.Decimal(0))
            else:
                out[name] = sum(int(v) for v in values)
        return out


def _arm_aggs(aggs: _Aggs, cases: CaseTable) -> None:
    w = cases.table
    for i in range(len(cases.arms)):
        n, k, m = w[f"n{i}"], w[f"k{i}"], w[f"m{i}"]
        aggs.add(f"cases{i}", (n > 0).sum())
        aggs.add(f"att{i}", n.sum())
        aggs.add(f"rev{i}", k.sum())
        aggs.add(f"sn{i}", m.count())
        aggs.exact(f"st{i}", m)
        aggs.exact(f"ss{i}", m * m)
        aggs.add(f"pos{i}", (m > 0).sum())
        aggs.add(f"neg{i}", (m < 1).sum())
        aggs.add(f"mx{i}", k.max(), _MAX)
        aggs.exact(f"at{i}", w[f"t{i}"])


def _pair_aggs(aggs: _Aggs, cases: CaseTable, j: int) -> None:
    w = cases.table
    mb, mc = w.m0, w[f"m{j}"]
    paired = mb.notnull() & mc.notnull()
    d = mc - mb
    p = f"p{j}_"
    aggs.add(f"{p}n", paired.sum())
    aggs.exact(f"{p}dt", d)
    aggs.exact(f"{p}dss", d * d)
    aggs.add(f"{p}nz", (paired & (d != 0)).sum())
    aggs.exact(f"{p}bt", mb, paired)
    aggs.exact(f"{p}bss", mb * mb, paired)
    aggs.exact(f"{p}ct", mc, paired)
    aggs.exact(f"{p}css", mc * mc, paired)
    aggs.add(f"{p}pp", (paired & (mb == 1) & (mc == 1)).sum())
    aggs.add(f"{p}pf", (paired & (mb == 1) & (mc == 0)).sum())
    aggs.add(f"{p}fp", (paired & (mb == 0) & (mc == 1)).sum())
    aggs.add(f"{p}ff", (paired & (mb == 0) & (mc == 0)).sum())
    aggs.add(f"{p}ob", ((w.n0 > 0) & (w[f"n{j}"] == 0)).sum())
    aggs.add(f"{p}oc", ((w.n0 == 0) & (w[f"n{j}"] > 0)).sum())
    aggs.add(f"{p}un", ((w.n0 > 0) & (w[f"n{j}"] > 0) & ~paired).sum())


@dataclass(frozen=True)
class SliceReduction:
    """One slicing column reduced in one pass: every arm's and every pair's statistics."""

    arms: tuple[ArmSliceStats, ...]
    pairs: dict[int, tuple[PairSliceStats, ...]]  # candidate index -> its slices and ALL
    case_counts: dict[str, int]  # slice -> cases of the compared arms, in slice order


def reduce_slices(
    cases: CaseTable,
    by: str,
    cost_parts: Sequence[Mapping[str, Any]] | None = None,
    checks: bool = False,
) -> SliceReduction:
    """Per slice of ``by`` and overall (``ALL``): every arm's and every pair's statistics.

    One group-by over the per-case table computes them all; the overall row is merged from
    the per-slice rows (:class:`_Aggs`), so the table is scanned once per slicing column.
    Costs are totalled from the rows (:func:`cost_totals`), or from ``cost_parts`` when
    validation's pass collected them (:meth:`Validated.costs_for`). ``checks``: the same
    group-by also computes the table's pending checks (:attr:`CaseTable.checks`) and
    settles them (:func:`settle_checks`, which raises) before any statistic is used.
    """
    w = cases.table
    aggs = _Aggs(cases.integral)
    aggs.add("rows", w.count())
    _arm_aggs(aggs, cases)
    for j in range(1, len(cases.arms)):
        _pair_aggs(aggs, cases, j)
    pending = dict(cases.checks or {}) if checks else {}
    for name, expr in pending.items():
        aggs.add(f"check_{name}", expr)
    raw = _rows(w.group_by(slice=w[f"s_{by}"]).aggregate(**aggs.exprs).order_by("slice"))
    merged = aggs.merge(raw)
    if pending:
        settle_checks(cases, {name: merged[f"check_{name}"] or 0 for name in pending})
    merged["slice"] = ALL
    rows = [aggs.finish(r) for r in [*raw, merged]]
    arm_clusters = _cluster_sums_arm(cases, by) if cases.tables.has_cluster else {}
    pairs = {j: tuple(_pair_stats(cases, by, j, rows)) for j in range(1, len(cases.arms))}
    costs = cost_totals(cases.tables, cases.arms, by, cost_parts)
    return SliceReduction(
        arms=tuple(_arm_stats(cases, rows, arm_clusters, costs)),
        pairs=pairs,
        case_counts={str(r["slice"]): int(r["rows"]) for r in raw},
    )


def _arm_stats(
    cases: CaseTable,
    rows: list[dict[str, Any]],
    cluster_map: dict[tuple[int, str], tuple[tuple[int, float], ...]],
    costs: dict[str, tuple[float | None, ...]],
) -> list[ArmSliceStats]:
    out = []
    for row in rows:
        cost = costs.get(str(row["slice"]), (None,) * len(cases.arms))
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
                    cost_usd=cost[i],
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


def _pair_clusters(cases: CaseTable, by: str, j: int) -> dict[str, tuple[tuple[int, float], ...]]:
    w = cases.table
    mb, mc = w.m0, w[f"m{j}"]
    paired = mb.notnull() & mc.notnull()
    c_aggs = {"n": paired.sum(), "s": _exact_sum(mc - mb)}
    clusters: dict[str, tuple[tuple[int, float], ...]] = {}
    per_cluster = w.group_by(slice=w[f"s_{by}"], cl=w.cluster).aggregate(**c_aggs)
    for row in _rows(per_cluster.order_by(_BY_CLUSTER)):
        if row["n"]:
            clusters.setdefault(str(row["slice"]), ())
            clusters[str(row["slice"])] += ((int(row["n"]), float(row["s"])),)
    for row in _rows(w.group_by(cl=w.cluster).aggregate(**c_aggs).order_by(_BY_CLUSTER[1:])):
        if row["n"]:
            clusters.setdefault(ALL, ())
            clusters[ALL] += ((int(row["n"]), float(row["s"])),)
    return clusters


def _pair_stats(
    cases: CaseTable, by: str, j: int, rows: list[dict[str, Any]]
) -> list[PairSliceStats]:
    clusters = _pair_clusters(cases, by, j) if cases.tables.has_cluster else {}
    p = f"p{j}_"
    return [
        PairSliceStats(
            baseline=cases.arms[0],
            candidate=cases.arms[j],
            slice=str(row["slice"]),
            delta=_moments(row[f"{p}n"], row[f"{p}dt"], row[f"{p}dss"]),
            nonzero=int(row[f"{p}nz"] or 0),
            base=_moments(row[f"{p}n"], row[f"{p}bt"], row[f"{p}bss"]),
            cand=_moments(row[f"{p}n"], row[f"{p}ct"], row[f"{p}css"]),
            both_pass=int(row[f"{p}pp"] or 0),
            only_baseline=int(row[f"{p}pf"] or 0),
            only_candidate=int(row[f"{p}fp"] or 0),
            both_fail=int(row[f"{p}ff"] or 0),
            only_in_baseline=int(row[f"{p}ob"] or 0),
            only_in_candidate=int(row[f"{p}oc"] or 0),
            unscored_in_one=int(row[f"{p}un"] or 0),
            clusters=clusters.get(str(row["slice"])),
        )
        for row in rows
    ]
