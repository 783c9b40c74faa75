"""Validation as queries: every check is an aggregate; a line is looked up only on failure."""

from __future__ import annotations

import math

from evaldelta.errors import (
    BadValueError,
    InputError,
    Location,
    UnreadableFileError,
)
from evaldelta.sources import TableSet, locate

__all__ = ["validate"]


def _rows(expr: object) -> list[dict[str, object]]:
    return expr.to_pyarrow().to_pylist()  # type: ignore[attr-defined,no-any-return]


def validate(tables: TableSet, scale: tuple[float, float] | None = None) -> None:
    """Check the canonical relation; raise a one-line :class:`InputError` on the first defect.

    Checks, in order: files without data rows, blank case ids or arms, unparseable scores or
    repeats, non-finite scores and scores outside a declared ``scale``: one aggregate pass.
    Duplicate (arm, case_id, repeat) rows and slice conflicts are checked while the per-case
    table is built (:func:`~evaldelta.engine._reduce.build_case_table`), which groups the
    rows anyway.
    """
    t = tables.rows
    aggs: dict[str, object] = {
        "n": t.count(),
        "blank_case": (t.case_id.isnull() | (t.case_id == "")).sum(),
        "blank_arm": (t.arm.isnull() | (t.arm == "")).sum(),
        "bad_repeat": (
            t._raw_repeat.notnull()
            & (t._raw_repeat.strip() != "")
            & t._raw_repeat.strip().try_cast("int64").isnull()
        ).sum(),
    }
    for m in tables.metrics:
        col = t[f"m_{m}"]
        aggs[f"bad_{m}"] = t[f"_bad_{m}"].sum()
        aggs[f"inf_{m}"] = (col.notnull() & (col.isinf() | col.isnan())).sum()
        if scale is not None:
            aggs[f"out_{m}"] = (col.notnull() & ((col < scale[0]) | (col > scale[1]))).sum()
    if tables.has_weight:
        w = t.sample_weight
        raw = t._raw_sample_weight
        bad = (raw.notnull() & (raw.strip() != "") & w.isnull()) | (
            w.notnull() & (w.isnan() | w.isinf() | (w <= 0))
        )
        aggs["bad_weight"] = bad.sum()
    grouped = t.group_by("_src").aggregate(**aggs)
    per_source = {int(str(r["_src"])): r for r in _rows(grouped)}
    for index, source in enumerate(tables.sources):
        if index not in per_source or per_source[index]["n"] == 0:
            raise UnreadableFileError(
                "file has a header but no data rows", Location(str(source.path))
            )
    for index in range(len(tables.sources)):
        stats = per_source[index]
        _check_source(tables, index, stats, scale)


def _check_source(
    tables: TableSet, index: int, stats: dict[str, object], scale: tuple[float, float] | None
) -> None:
    t = tables.rows.filter(tables.rows._src == index)
    if stats["blank_case"]:
        raise BadValueError(
            "case_id is blank; every row needs a case id",
            _first(tables, index, t.case_id.isnull() | (t.case_id == ""), "case_id"),
        )
    if stats["blank_arm"]:
        raise BadValueError(
            "arm is blank; every row needs an arm (or give the file as --arm NAME=FILE)",
            _first(tables, index, t.arm.isnull() | (t.arm == ""), "arm"),
        )
    if stats["bad_repeat"]:
        bad = t._raw_repeat.notnull() & (t._raw_repeat.strip() != "")
        bad = bad & t._raw_repeat.strip().try_cast("int64").isnull()
        raise BadValueError("repeat is not an integer", _first(tables, index, bad, "repeat"))
    if stats.get("bad_weight"):
        w, raw = t.sample_weight, t._raw_sample_weight
        bad = (raw.notnull() & (raw.strip() != "") & w.isnull()) | (
            w.notnull() & (w.isnan() | w.isinf() | (w <= 0))
        )
        raise BadValueError(
            "sample_weight must be a finite number > 0 (an inverse sampling probability)",
            _first(tables, index, bad, "sample_weight"),
        )
    for m in tables.metrics:
        if stats[f"bad_{m}"]:
            raise BadValueError(
                f"{m} is not a number (use 0/1, true/false, or a float; leave blank if unlabeled)",
                _first(tables, index, t[f"_bad_{m}"], m),
            )
        if stats[f"inf_{m}"]:
            col = t[f"m_{m}"]
            raise BadValueError(
                f"{m} is not finite", _first(tables, index, col.isinf() | col.isnan(), m)
            )
        if scale is not None and stats[f"out_{m}"]:
            col = t[f"m_{m}"]
            raise BadValueError(
                f"{m} is outside the declared scale [{_num(scale[0])}, {_num(scale[1])}]",
                _first(tables, index, (col < scale[0]) | (col > scale[1]), m),
            )


def _num(x: float) -> str:
    return str(int(x)) if math.isfinite(x) and x == int(x) else str(x)


def _first(tables: TableSet, index: int, predicate: object, field: str) -> Location:
    """Locate the first offending row of one source, by its identifying values."""
    t = tables.rows.filter(tables.rows._src == index)
    cols = ["case_id", "arm", "_raw_repeat", "repeat"]
    if field not in ("case_id", "arm", "repeat"):
        cols.append(f"_raw_{field}")
    hit = _rows(t.filter(predicate).select(*cols).limit(1))
    if not hit:  # pragma: no cover - the aggregate said there was one
        raise InputError("a check failed but the row could not be found again")
    row = hit[0]
    conditions: dict[str, object] = {"case_id": row["case_id"], "arm": row["arm"]}
    conditions["repeat"] = row["_raw_repeat"] if row["_raw_repeat"] is not None else row["repeat"]
    value = row.get(f"_raw_{field}") if field not in ("case_id", "arm") else row[field]
    if field == "repeat":
        value = row["_raw_repeat"]
    if field not in ("case_id", "arm", "repeat"):
        conditions[field] = value
    where = locate(tables, index, conditions, field)
    return Location(where.path, where.line, field, value, unit=where.unit)
