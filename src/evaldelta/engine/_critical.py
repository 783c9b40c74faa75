"""Row-level evidence for critical cases: per case and arm, attempts, scored attempts, passes.

Critical cases gate on their own, whatever their traffic weight, so the gate needs their
attempts, not a slice's moments. The query is bounded: the critical set is selected first
(case ids, a truthy flag column, or a tag in ``tags``) and capped at ``MAX_CRITICAL`` cases.
"""

from __future__ import annotations

from typing import Any

import ibis

from evaldelta.errors import Location, PolicyError, UsageError
from evaldelta.evidence import CriticalSelector, CriticalStats
from evaldelta.sources import TableSet
from evaldelta.sources._fetch import arrow, rows

__all__ = [
    "MAX_CRITICAL",
    "critical_stats",
    "reduce_critical",
]

MAX_CRITICAL = 10_000


def reduce_critical(
    tables: TableSet,
    arms: tuple[str, ...],
    metric: str,
    selector: CriticalSelector,
    threshold: float,
) -> tuple[list[CriticalStats], int]:
    """Per critical case and arm: attempts, scored attempts, attempts with score >= threshold.

    A case is critical when any of its rows (in a compared arm) is selected. Returns the
    stats and the number of critical cases found; at most ``MAX_CRITICAL`` cases are
    reduced (the count tells the caller when the cap was hit).
    """
    t = tables.rows.filter(tables.rows.arm.isin(list(arms)))
    false = ibis.literal(False)
    t = t.mutate(
        _f_id=t.case_id.isin(list(selector.cases)) if selector.cases else false,
        _f_col=t["_crit_col"] if "column" in tables.critical_flags else false,
        _f_tag=t["_crit_tag"] if "tag" in tables.critical_flags else false,
        _f_reg=t.case_id.isin(list(selector.regression_cases))
        if selector.regression_cases
        else false,
    )
    chosen = (
        t.filter(t._f_id | t._f_col | t._f_tag | t._f_reg)
        .group_by("case_id")
        .aggregate(
            f_id=t._f_id.any(), f_col=t._f_col.any(), f_tag=t._f_tag.any(), f_reg=t._f_reg.any()
        )
    )
    count = int(arrow(chosen.count()).as_py())
    chosen = chosen.order_by("case_id").limit(MAX_CRITICAL)
    score = t[f"m_{metric}"]
    slice_aggs: dict[str, Any] = {f"s_{c}": t[f"by_{c}"].min() for c in tables.slice_columns}
    per_arm = (
        t.group_by(["case_id", "arm"])
        .aggregate(
            attempts=t.count(),
            scored=score.count(),
            passes=(score >= threshold).sum(),
            **slice_aggs,
        )
        .join(chosen, "case_id")
        .order_by(["case_id", "arm"])
    )
    out = []
    for row in rows(per_arm):
        flagged = tuple(
            name
            for name, key in (
                ("id", "f_id"),
                ("column", "f_col"),
                ("tag", "f_tag"),
                ("regression", "f_reg"),
            )
            if row[key]
        )
        out.append(
            CriticalStats(
                case_id=str(row["case_id"]),
                arm=str(row["arm"]),
                slices={c: str(row[f"s_{c}"]) for c in tables.slice_columns},
                flagged_by=flagged,
                attempts=int(row["attempts"] or 0),
                scored=int(row["scored"] or 0),
                passes=int(row["passes"] or 0),
            )
        )
    return out, count


def critical_stats(
    tables: TableSet,
    arms: tuple[str, ...],
    metric: str,
    selector: CriticalSelector,
    binary: bool,
) -> tuple[list[CriticalStats], float]:
    """Validate the selector against the data, then run :func:`reduce_critical`.

    Raises :class:`PolicyError` (at the selector's origin) for a flag column or ``tags``
    column no input has, a graded metric without a pass threshold, or a named case id the
    compared arms lack; :class:`UsageError` beyond ``MAX_CRITICAL`` critical cases.
    Returns the stats and the threshold used.
    """
    files = ", ".join(str(s.path) for s in tables.sources)
    if selector.column is not None and "column" not in tables.critical_flags:
        raise PolicyError(
            f"critical column {selector.column!r} is in no input file ({files})",
            selector.origin.get("column"),
        )
    if selector.tag is not None and "tag" not in tables.critical_flags:
        raise PolicyError(
            f"critical tag {selector.tag!r} needs a 'tags' column, and no input file has one "
            f"({files})",
            selector.origin.get("tag"),
        )
    threshold = selector.pass_threshold
    if threshold is None:
        if not binary:
            raise PolicyError(
                f"metric {metric!r} is graded, so critical cases need pass_threshold "
                "(an attempt passes when score >= it)",
                selector.origin.get("pass_threshold"),
            )
        threshold = 1.0
    stats, count = reduce_critical(tables, arms, metric, selector, threshold)
    if count > MAX_CRITICAL:
        raise UsageError(
            f"{count} critical cases were selected ({selector.describe()}); at most "
            f"{MAX_CRITICAL} are supported: critical cases are for the few that gate alone"
        )
    found = {s.case_id for s in stats}
    for case_id in selector.cases:
        if case_id not in found:
            origin = selector.origin.get("cases")
            where = (
                Location(origin.path, origin.line, origin.field, case_id)
                if origin is not None
                else None
            )
            raise PolicyError(
                f"critical case {case_id!r} is not in the data for arms {', '.join(arms)}",
                where,
            )
    return stats, threshold
