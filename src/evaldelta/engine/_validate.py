"""Validation as queries: every check is an aggregate; a line is looked up only on failure."""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from evaldelta._util._limits import MAX_ABS_SCORE
from evaldelta.engine._reduce import cost_aggregates
from evaldelta.errors import (
    BadValueError,
    InputError,
    Location,
    UnreadableFileError,
)
from evaldelta.sources import TableSet, locate
from evaldelta.sources._fetch import rows as _rows
from evaldelta.sources._values import is_padded, not_finite, not_finite_row

__all__ = ["Validated", "validate", "validate_quickly"]

_SCORE_LIMIT = f"{MAX_ABS_SCORE:.0e}".replace("e+", "e")  # "1e15"


def validate(
    tables: TableSet, scale: tuple[float, float] | None = None, cost_by: str | None = None
) -> Validated:
    """Check the canonical relation; raise a one-line :class:`InputError` on the first defect.

    Checks, in order: files without data rows, blank case ids or arms, repeats that are not
    whole numbers >= 0, costs that are not finite numbers >= 0, unparseable or non-finite
    scores, scores (and costs) beyond :data:`~evaldelta._util._limits.MAX_ABS_SCORE`, scores
    outside a declared ``scale``, sample weights: one aggregate pass, which
    also returns what a report should say about the rows (names that were trimmed, each
    metric's observed range). Duplicate (arm, case_id, repeat) rows and slice conflicts are
    checked on the per-case table (:func:`~evaldelta.engine._reduce.build_case_table`, or
    the first reduction of it), which groups the rows anyway.

    ``cost_by``: a slicing column whose per-(arm, slice) cost sums the same pass collects
    (:attr:`Validated.cost_parts`), so the report's costs need no pass of their own.
    """
    t = tables.rows
    keys, aggs = _aggregates(tables, t, scale, cost_by)
    aggs["blank_case"] = (t.case_id.isnull() | (t.case_id == "")).sum()
    aggs["blank_arm"] = (t.arm.isnull() | (t.arm == "")).sum()
    aggs["trimmed"] = t._trimmed.fill_null(False).sum()
    grouped = _rows(t.group_by(keys).aggregate(**aggs))
    per_source = _per_source(grouped)
    for index, source in enumerate(tables.sources):
        if index not in per_source or per_source[index]["n"] == 0:
            raise UnreadableFileError(
                "file has a header but no data rows", Location(str(source.path))
            )
    for index in range(len(tables.sources)):
        _check_source(tables, index, per_source[index], scale)
        _check_order(tables, index, per_source[index])
    return _summary(tables, per_source, grouped, cost_by if len(keys) == 3 else None)


def validate_quickly(
    tables: TableSet, scale: tuple[float, float] | None = None, cost_by: str | None = None
) -> Validated | None:
    """:func:`validate`'s pass without reading the case ids; None where it cannot vouch.

    Reading and testing the case ids is a third of validation (about 1 s of 3 at 10M rows,
    bench/README.md), and the per-case pivot reads them anyway: there each case id is one
    group, so :func:`~evaldelta.engine._reduce.build_case_table` checks them on its table
    (``ids_checked`` is False here). The arms are tested on the group keys, not per row.
    This pass reads the rows as they are, unstripped (:attr:`TableSet.plain_rows`), so it
    gives up (None) on any finding at all: a padded or blank arm, an empty file, any bad
    value. :func:`validate` then runs as always, finds the first defect in the documented
    order and names it, so the quick pass changes no message.
    """
    t = tables.plain_rows
    if t is None:
        return None
    keys, aggs = _aggregates(tables, t, scale, cost_by)
    grouped = _rows(t.group_by(keys).aggregate(**aggs))
    if any(row["arm"] is None or is_padded(str(row["arm"])) for row in grouped):
        return None
    per_source = _per_source(grouped)
    if any(per_source.get(i, {}).get("n", 0) == 0 for i in range(len(tables.sources))):
        return None
    flags = ("bad_", "inf_", "big_", "out_")
    if any(value for row in grouped for key, value in row.items() if key.startswith(flags)):
        return None
    checked = _summary(tables, per_source, grouped, cost_by if len(keys) == 3 else None)
    return replace(checked, ids_checked=False)


def _aggregates(
    tables: TableSet, t: Any, scale: tuple[float, float] | None, cost_by: str | None
) -> tuple[list[str], dict[str, object]]:
    """The group keys and the aggregates both passes share (all but the case id tests)."""
    aggs: dict[str, object] = {
        "n": t.count(),
        "bad_repeat": t._bad_repeat.sum(),
        "top_repeat": t.repeat.max(),
    }
    if tables.has_cost:
        aggs["bad_cost"] = t._bad_cost.sum()
        aggs["big_cost"] = (t.cost_usd > MAX_ABS_SCORE).sum()
    for m in tables.metrics:
        col = t[f"m_{m}"]
        aggs[f"bad_{m}"] = t[f"_bad_{m}"].sum()
        aggs[f"null_{m}"] = col.isnull().sum()
        aggs[f"inf_{m}"] = not_finite(col).sum()
        finite = col.notnull() & ~not_finite(col)
        aggs[f"big_{m}"] = (finite & (col.abs() > MAX_ABS_SCORE)).sum()
        aggs[f"lo_{m}"] = col.min(where=finite)
        aggs[f"hi_{m}"] = col.max(where=finite)
        # a remainder, not floor(): floor() is an integer cast that fails on inf and NaN
        aggs[f"frac_{m}"] = (finite & ((col % 1.0) != 0.0)).sum()
        if scale is not None:
            aggs[f"out_{m}"] = (finite & ((col < scale[0]) | (col > scale[1]))).sum()
        aggs[f"nb_{m}"] = (col.notnull() & ~col.isin([0.0, 1.0])).sum()
    if tables.has_weight:
        aggs["bad_weight"] = _bad_weight(t).sum()
    if tables.order is not None:
        aggs["bad_order"] = t._bad_order.sum()
        aggs["bad_order_blank"] = _blank_order(tables, t).sum()
    # per (source, arm): the same pass also gives the arms, in input order, and which of
    # them have non-binary values, so neither needs its own scan of the rows
    keys = ["_src", "arm"]
    if tables.has_cost and cost_by is not None:
        keys.append(f"by_{cost_by}")
        aggs.update(cost_aggregates(t))
    return keys, aggs


def _per_source(grouped: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """The (source, arm) rows merged per source: counts add, ranges widen."""
    out: dict[int, dict[str, Any]] = {}
    for row in grouped:
        merged = out.setdefault(int(str(row["_src"])), {})
        for key, value in row.items():
            if key in ("_src", "arm") or key.startswith(("by_", "cost_")) or value is None:
                continue
            if key not in merged or merged[key] is None:
                merged[key] = value
            elif key.startswith("lo_"):
                merged[key] = min(merged[key], value)
            elif key.startswith(("hi_", "top_")):
                merged[key] = max(merged[key], value)
            else:
                merged[key] += value
    for merged in out.values():
        merged.setdefault("n", 0)
    return out


def _arms_in_order(grouped: list[dict[str, Any]]) -> tuple[str, ...]:
    """Every arm of the rows, by the first input it appears in, then by name."""
    first: dict[str, int] = {}
    for row in grouped:
        if row["arm"] is not None:
            arm, src = str(row["arm"]), int(str(row["_src"]))
            first[arm] = min(first.get(arm, src), src)
    return tuple(sorted(first, key=lambda a: (first[a], a)))


@dataclass(frozen=True)
class Validated:
    """What validation learned about rows that passed: for the report to say."""

    trimmed: int  # rows whose case id or arm had spaces around it (trimmed)
    observed: Mapping[str, tuple[float, float]]  # metric -> (lowest, highest) finite score
    # metric -> every value is a whole number, small enough that sums of squares of case
    # differences over every row stay below 2**53 (float sums of them are then exact)
    integral: Mapping[str, bool] = field(default_factory=dict)
    arms: tuple[str, ...] = ()  # every arm, by the first input it appears in, then by name
    nonbinary: Mapping[tuple[str, str], int] = field(default_factory=dict)  # (metric, arm)
    unscored: Mapping[tuple[str, str], int] = field(default_factory=dict)  # (metric, arm)

    per_arm: Mapping[str, tuple[int, int]] = field(default_factory=dict)  # rows, top repeat
    # whether the case ids were checked (blank, padded) here; else the pivot checks them
    ids_checked: bool = True
    # per (source, arm, slice of ``cost_by``): the cost sums (:func:`cost_aggregates`)
    cost_by: str | None = None
    cost_parts: tuple[Mapping[str, Any], ...] = ()

    def costs_for(self, by: str) -> tuple[Mapping[str, Any], ...] | None:
        """The cost sums per arm and slice of ``by``, when this pass collected them."""
        return self.cost_parts if by == self.cost_by else None

    def cases_hint(self, arms: tuple[str, ...]) -> int:
        """About how many cases the arms have: the most rows of one arm over its repeats."""
        return max((n // (top + 1) for a, (n, top) in self.per_arm.items() if a in arms), default=0)

    def single_attempts(self, arms: tuple[str, ...]) -> bool:
        """Whether no arm of ``arms`` repeats an attempt (every repeat is 0).

        Then each case has one row per arm, unless a row is duplicated, which the per-case
        table's checks refuse.
        """
        return all(self.per_arm.get(a, (0, 0))[1] == 0 for a in arms)

    def top_repeat(self, arms: tuple[str, ...]) -> int:
        """The highest repeat number any arm of ``arms`` has (0: no arm repeats)."""
        return max((self.per_arm.get(a, (0, 0))[1] for a in arms), default=0)

    def all_scored(self, metric: str, arms: tuple[str, ...]) -> bool:
        """Whether every attempt of ``arms`` has a value of ``metric`` (none unscored)."""
        return bool(self.unscored) and not any(self.unscored.get((metric, a), 0) for a in arms)

    def binary(self, metric: str, arms: tuple[str, ...]) -> bool:
        """Whether every value of ``metric`` in ``arms`` is 0 or 1 (or missing)."""
        return not any(self.nonbinary.get((metric, a), 0) for a in arms)


def _summary(
    tables: TableSet,
    per_source: dict[int, dict[str, Any]],
    grouped: list[dict[str, Any]],
    cost_by: str | None,
) -> Validated:
    """What the pass found, for the report; ``cost_by``: the groups carry its cost sums."""
    stats = list(per_source.values())
    observed: dict[str, tuple[float, float]] = {}
    for m in tables.metrics:
        lows = [float(str(s[f"lo_{m}"])) for s in stats if s.get(f"lo_{m}") is not None]
        highs = [float(str(s[f"hi_{m}"])) for s in stats if s.get(f"hi_{m}") is not None]
        if lows and highs:
            observed[m] = (min(lows), max(highs))
    trimmed = sum(int(str(s.get("trimmed") or 0)) for s in stats)
    rows = sum(int(str(s["n"] or 0)) for s in stats)
    integral = {}
    for m in tables.metrics:
        whole = not any(s.get(f"frac_{m}") for s in stats)
        top = max((abs(v) for v in observed.get(m, (0.0, 0.0))), default=0.0)
        integral[m] = whole and rows * (2.0 * top) ** 2 < 2.0**53
    nonbinary: dict[tuple[str, str], int] = {}
    unscored: dict[tuple[str, str], int] = {}
    for row in grouped:
        for m in tables.metrics:
            key = (m, str(row["arm"]))
            nonbinary[key] = nonbinary.get(key, 0) + int(row[f"nb_{m}"] or 0)
            unscored[key] = unscored.get(key, 0) + int(row[f"null_{m}"] or 0)
    per_arm: dict[str, tuple[int, int]] = {}
    for row in grouped:
        n, top = per_arm.get(str(row["arm"]), (0, 0))
        per_arm[str(row["arm"])] = (n + int(row["n"] or 0), max(top, int(row["top_repeat"] or 0)))
    return Validated(
        trimmed=trimmed,
        observed=observed,
        integral=integral,
        arms=_arms_in_order(grouped),
        nonbinary=nonbinary,
        unscored=unscored,
        per_arm=per_arm,
        cost_by=cost_by,
        cost_parts=tuple(grouped) if cost_by is not None else (),
    )


def _bad_weight(t: Any, row: bool = False) -> Any:
    w, raw = t.sample_weight, t._raw_sample_weight
    bad = not_finite_row(w) if row else not_finite(w)
    return (raw.notnull() & (raw.strip() != "") & w.isnull()) | (w.notnull() & (bad | (w <= 0)))


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
        raise BadValueError(
            "repeat is not a whole number >= 0 (a fractional repeat is never rounded)",
            _first(tables, index, t._bad_repeat, "repeat"),
        )
    if stats.get("bad_cost"):
        raise BadValueError(
            "cost_usd is not a finite number >= 0 (write the cost in dollars as a plain "
            "number, e.g. 0.10; leave it blank when unknown)",
            _first(tables, index, t._bad_cost, "cost_usd"),
        )
    if stats.get("big_cost"):
        raise BadValueError(
            f"cost_usd is larger than {_SCORE_LIMIT} dollars, the limit for a cost (sums of "
            "such costs pass what a report can round)",
            _first(tables, index, t.cost_usd > MAX_ABS_SCORE, "cost_usd"),
        )
    if stats.get("bad_weight"):
        raise BadValueError(
            "sample_weight must be a finite number > 0 (an inverse sampling probability)",
            _first(tables, index, _bad_weight(t, row=True), "sample_weight"),
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
                f"{m} is not finite (NaN or infinite); leave it blank if unlabeled",
                _first(tables, index, not_finite_row(col), m),
            )
        if stats[f"big_{m}"]:
            col = t[f"m_{m}"]
            raise BadValueError(
                f"{m} is larger than {_SCORE_LIMIT} in magnitude, the limit for a score (beyond it "
                "whole numbers lose precision and sums of squares overflow)",
                _first(tables, index, col.abs() > MAX_ABS_SCORE, m),
            )
        if scale is not None and stats[f"out_{m}"]:
            col = t[f"m_{m}"]
            raise BadValueError(
                f"{m} is outside the declared scale [{_num(scale[0])}, {_num(scale[1])}]",
                _first(tables, index, (col < scale[0]) | (col > scale[1]), m),
            )


def _blank_order(tables: TableSet, t: Any) -> Any:
    """A scored row (a value of some metric) without a place in the order."""
    scored = functools.reduce(operator.or_, [t[f"m_{m}"].notnull() for m in tables.metrics])
    return scored & t._order.isnull() & ~t._bad_order


def _check_order(tables: TableSet, index: int, stats: Mapping[str, object]) -> None:
    """The order column of a sequential comparison: a number or a time on every scored row."""
    column = tables.order
    if column is None:
        return
    t = tables.rows.filter(tables.rows._src == index)
    if stats.get("bad_order"):
        raise BadValueError(
            f"{column} is neither a number nor a time; --sequential reads the cases in its "
            "order (a sequence number, epoch seconds, or an ISO 8601 time such as "
            "2024-05-01T12:00:00Z)",
            _first(tables, index, t._bad_order, column, raw="_raw_order"),
        )
    if stats.get("bad_order_blank"):
        raise BadValueError(
            f"{column} is blank on a scored row; --sequential needs every scored attempt's "
            "place in the order (a sequence number or a time)",
            _first(tables, index, _blank_order(tables, t), column, raw="_raw_order"),
        )


def _num(x: float) -> str:
    return str(int(x)) if math.isfinite(x) and x == int(x) else str(x)


def _first(
    tables: TableSet, index: int, predicate: object, field: str, raw: str | None = None
) -> Location:
    """Locate the first offending row of one source, by its identifying values.

    ``raw``: the relation's column holding the field's text (default ``_raw_<field>``).
    """
    t = tables.rows.filter(tables.rows._src == index)
    raw = raw or f"_raw_{field}"
    cols = ["case_id", "arm", "_raw_repeat", "repeat"]
    if field not in ("case_id", "arm", "repeat"):
        cols.append(raw)
    hit = _rows(t.filter(predicate).select(*cols).limit(1))
    if not hit:  # pragma: no cover - the aggregate said there was one
        raise InputError("a check failed but the row could not be found again")
    row = hit[0]
    conditions: dict[str, object] = {"case_id": row["case_id"], "arm": row["arm"]}
    conditions["repeat"] = row["_raw_repeat"] if row["_raw_repeat"] is not None else row["repeat"]
    value = row.get(raw) if field not in ("case_id", "arm") else row[field]
    if field == "repeat":
        value = row["_raw_repeat"]
    if field not in ("case_id", "arm", "repeat"):
        conditions[field] = value
    where = locate(tables, index, conditions, field)
    return Location(where.path, where.line, field, value, unit=where.unit)
