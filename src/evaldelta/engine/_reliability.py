"""Repeats as counts of cases: what pass@k, pass^k and the repeat spread are computed from.

With repeated attempts, each case's scored attempts ``n`` and passing attempts ``c`` (a
pass/fail metric; an attempt passes at 1) are all pass@k and pass^k need
(:mod:`evaldelta.stats._repeat_reliability`), and cases with the same ``(n, c)`` give the
same per-case estimate. So the backend counts cases per (arm, slice, n, c), and per pair
per (slice, n_b, c_b, n_c, c_c) on shared cases: a few cells, whatever the number of cases,
and no case id leaves the backend. A graded metric's per-case spread is summed per (arm,
slice) the same way (:class:`~evaldelta.evidence.RepeatSpreadMoments`).

Where the sources store each attempt's ``output``, the cases whose repeats are
byte-identical are counted per arm: a response cache or temperature 0 makes repeats copies,
not draws.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ibis
import ibis.expr.types as ir

from evaldelta.evidence import RepeatEvidence, RepeatSpreadMoments
from evaldelta.sources import TableSet
from evaldelta.sources._fetch import rows as fetch_rows
from evaldelta.sources._values import as_text

__all__ = ["identical_repeats", "repeat_evidence"]


def _per_case(rows: ir.Table, metric: str, by: str) -> ir.Table:
    m = rows[f"m_{metric}"]
    return rows.group_by(["arm", "case_id", f"by_{by}"]).aggregate(
        n=m.count().cast("int64"),
        c=(m >= 1.0).cast("int64").sum().fill_null(0).cast("int64"),
        v=m.var(how="sample"),
    )


def _cells(per_case: ir.Table, by: str) -> dict[str, dict[str, dict[tuple[int, int], int]]]:
    col = f"by_{by}"
    found = fetch_rows(per_case.group_by(["arm", col, "n", "c"]).aggregate(k=per_case.count()))
    out: dict[str, dict[str, dict[tuple[int, int], int]]] = {}
    for r in found:
        cell = out.setdefault(str(r["arm"]), {}).setdefault(str(r[col]), {})
        cell[(int(r["n"]), int(r["c"]))] = int(r["k"])
    return out


def _pair_cells(
    per_case: ir.Table, by: str, base: str, cand: str
) -> dict[str, dict[tuple[int, int, int, int], int]]:
    col = f"by_{by}"
    b = per_case.filter(per_case.arm == base).select(
        "case_id", s=per_case[col], nb=per_case.n, cb=per_case.c
    )
    c = per_case.filter(per_case.arm == cand).select("case_id", nc=per_case.n, cc=per_case.c)
    joined = b.inner_join(c, "case_id")
    found = fetch_rows(joined.group_by(["s", "nb", "cb", "nc", "cc"]).aggregate(k=joined.count()))
    out: dict[str, dict[tuple[int, int, int, int], int]] = {}
    for r in found:
        key = (int(r["nb"]), int(r["cb"]), int(r["nc"]), int(r["cc"]))
        out.setdefault(str(r["s"]), {})[key] = int(r["k"])
    return out


def _spread(per_case: ir.Table, by: str) -> dict[str, dict[str, RepeatSpreadMoments]]:
    col = f"by_{by}"
    two = per_case.n >= 2
    sd = per_case.v.sqrt()
    found = fetch_rows(
        per_case.group_by(["arm", col]).aggregate(
            cases=two.cast("int64").sum(),
            short=(~two).cast("int64").sum(),
            sd_total=ibis.ifelse(two, sd, 0.0).sum(),
            sd_sumsq=ibis.ifelse(two, per_case.v, 0.0).sum(),
            within_ss=ibis.ifelse(two, (per_case.n - 1) * per_case.v, 0.0).sum(),
            within_df=ibis.ifelse(two, per_case.n - 1, 0).sum(),
        )
    )
    out: dict[str, dict[str, RepeatSpreadMoments]] = {}
    for r in found:
        out.setdefault(str(r["arm"]), {})[str(r[col])] = RepeatSpreadMoments(
            cases=int(r["cases"] or 0),
            short=int(r["short"] or 0),
            sd_total=float(r["sd_total"] or 0.0),
            sd_sumsq=float(r["sd_sumsq"] or 0.0),
            within_ss=float(r["within_ss"] or 0.0),
            within_df=int(r["within_df"] or 0),
        )
    return out


def repeat_evidence(
    tables: TableSet,
    arms: Sequence[str],
    metrics: Sequence[tuple[str, bool]],
    by: str,
) -> tuple[RepeatEvidence, ...]:
    """Per ``(metric, binary)`` the counts of cases by repeats, on slicing column ``by``.

    ``arms``: the baseline first, then the candidates. Pass/fail metrics get ``cells`` and
    ``pairs``, graded ones ``spread``; every one the arms' identical-output counts.
    """
    rows = tables.rows.filter(tables.rows.arm.isin(list(arms)))
    identical = identical_repeats(tables, arms)
    out = []
    for metric, binary in metrics:
        per_case = _per_case(rows, metric, by)
        if binary:
            cells = _cells(per_case, by)
            pairs = {c: _pair_cells(per_case, by, arms[0], c) for c in arms[1:]}
            out.append(RepeatEvidence(metric, by, True, cells, pairs, {}, identical))
        else:
            spread = _spread(per_case, by)
            out.append(RepeatEvidence(metric, by, False, {}, {}, spread, identical))
    return tuple(out)


def identical_repeats(tables: TableSet, arms: Sequence[str]) -> dict[str, tuple[int, int]]:
    """Per arm: cases with 2 or more stored outputs, and those whose outputs are all equal.

    Read from every source whose table has an ``output`` column (a run store, a tidy file,
    an importer that keeps each attempt's output); arms without one are left out.
    """
    totals: dict[str, list[int]] = {}
    for opened in tables.opened:
        table = opened.table
        if "output" not in table.columns:
            continue
        arm = ibis.literal(opened.source.arm) if opened.source.arm is not None else table.arm
        t = table.select(arm=as_text(arm).strip(), case_id=as_text(table.case_id).strip(),
                         out=as_text(table.output))  # fmt: skip
        t = t.filter(t.arm.isin(list(arms)) & t.out.notnull())
        per_case = t.group_by(["arm", "case_id"]).aggregate(n=t.count(), d=t.out.nunique())
        per_case = per_case.filter(per_case.n >= 2)
        counted: Any = per_case.group_by("arm").aggregate(
            cases=per_case.count(), same=(per_case.d == 1).cast("int64").sum()
        )
        for r in fetch_rows(counted):
            got = totals.setdefault(str(r["arm"]), [0, 0])
            got[0] += int(r["cases"])
            got[1] += int(r["same"] or 0)
    return {a: (v[0], v[1]) for a, v in totals.items()}
