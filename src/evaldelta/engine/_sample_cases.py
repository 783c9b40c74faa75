"""``evaldelta sample`` on a results file with several arms: the unit is the case.

A traffic log has one row per request, and sample draws rows. A results file holds every
arm's row of a case (and its repeats): drawing rows there kept one arm of most cases, so
400 sampled rows gave 17 paired cases (issue 24.6). When the log has an ``arm`` column with
more than one arm, sample draws cases instead: a case's rows all share its rank
(``md5(case id, seed)``), the floor and the total count cases, each slice's weight is
``N_k / n_k`` in cases, and every row of a sampled case is written, with that weight.

The case is ``--id`` when given, else ``case_id``; a row without one, a case in two slices
(its rows disagree on the ``--by`` value), or several arms and no case column at all, is
one line naming the file and line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import ibis
import ibis.expr.types as ir

from evaldelta.engine._sample_write import _RN, _STRATUM
from evaldelta.errors import BadValueError, UsageError
from evaldelta.sources._fetch import rows
from evaldelta.sources._values import as_text

__all__ = [
    "ARM",
    "CASE",
    "arm_count",
    "case_aggregates",
    "case_column",
    "case_columns",
    "case_counts",
    "check_cases",
    "several_arms",
]

CASE = "_evaldelta_case"
ARM = "_evaldelta_arm"


def case_column(columns: Mapping[str, object], id_column: str | None) -> str | None:
    """The column naming a row's case: ``--id``, else ``case_id``; None without one."""
    if id_column is not None:
        return id_column
    return "case_id" if "case_id" in columns else None


def case_columns(
    t: ir.Table, columns: Mapping[str, object], id_column: str | None
) -> dict[str, ir.Value]:
    """The derived arm and case key columns, when the log has an ``arm`` column."""
    if "arm" not in columns:
        return {}
    name = case_column(columns, id_column)
    case: ir.Value = ibis.null("string")
    if name is not None:
        col = t[name]
        case = ibis.cases((col.isnull(), "n"), else_=ibis.literal("v") + as_text(col))
    return {ARM: as_text(t["arm"]).strip().nullif(""), CASE: case}


def case_aggregates(t: ir.Table, keep: ir.BooleanValue) -> dict[str, Any]:
    """Per slice: the first and last arm (two differ: several arms), cases, a row without one."""
    return {
        "arm_lo": t[ARM].min(where=keep),
        "arm_hi": t[ARM].max(where=keep),
        "cases": t[CASE].nunique(where=keep & (t[CASE] != "n")),
        "no_case": t[_RN].min(where=keep & (t[CASE].isnull() | (t[CASE] == "n"))),
    }


def several_arms(grouped: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the kept rows hold more than one arm (from each slice's first and last)."""
    names = {r[k] for r in grouped for k in ("arm_lo", "arm_hi") if r.get(k) is not None}
    return len(names) > 1


def check_cases(
    t: ir.Table,
    grouped: Sequence[Mapping[str, Any]],
    src: Any,
    name: str | None,
    by: str,
) -> None:
    """Every kept row of a several-arm log names its case, and a case is in one slice."""
    if name is None:
        raise UsageError(
            f"{src.name}: the log holds several arms (column 'arm') and no case_id column: "
            "sample draws whole cases of such a log, every arm's rows together; name the "
            "case column with --id COLUMN"
        )
    missing = [r["no_case"] for r in grouped if r.get("no_case") is not None]
    if missing:
        raise BadValueError(
            "is empty: sample draws whole cases of a log with several arms (every arm's rows "
            "of a case together), so every row needs its case",
            src.location(min(missing), name, None),
        )
    kept = t.filter(t["_evaldelta_keep"])
    split = (
        kept.group_by(CASE)
        .aggregate(k=kept[_STRATUM].nunique(), at=kept[_RN].min())
        .filter(lambda x: x.k > 1)
        .order_by("at")
        .limit(1)
    )
    hit = rows(split)
    if hit:
        raise BadValueError(
            f"this case's rows are in more than one slice of --by {by}; sample draws whole "
            "cases, so each case must be in one slice",
            src.location(hit[0]["at"], name, str(hit[0][CASE])[1:]),
        )


def case_counts(grouped: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Cases per slice (the sampling unit), for the slices that kept any."""
    return {str(r[_STRATUM]): int(r["cases"]) for r in grouped if int(r["cases"] or 0) > 0}


def arm_count(t: ir.Table) -> int:
    """How many arms the kept rows hold (said in the report)."""
    kept = t.filter(t["_evaldelta_keep"])
    (row,) = rows(kept.aggregate(n=kept[ARM].nunique()))
    return int(row["n"])
