"""Row-level, bounded: every paired sample of a pass/fail metric, right or wrong per arm.

The side-by-side of Inspect AI logs (inspect_ai #1327 asks for it: which samples each model
got wrong). A case's state in an arm comes from its case mean over the scored attempts:
``right`` (1: every epoch passed), ``wrong`` (0) or ``partly``. The counts of each pair of
states are one group-by over the per-case pivot; the listed rows are bounded by ``limit``
(the cases the candidate lost first), and their outputs come from
:func:`~evaldelta.engine._outputs.case_outputs`, which reads only those cases.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import ibis
import ibis.expr.types as ir

from evaldelta.engine._outputs import case_outputs
from evaldelta.engine._reduce import CaseTable
from evaldelta.evidence import SampleRow, SampleSideBySide, SampleState
from evaldelta.sources import TableSet
from evaldelta.sources._fetch import rows as fetch_rows

__all__ = ["SAMPLE_LIMIT", "SAMPLE_OUTPUT_CHARS", "has_inspect_logs", "side_by_side"]

SAMPLE_LIMIT = 200  # listed samples per pair (all are counted)
SAMPLE_OUTPUT_CHARS = 600  # each listed output is cut here (the moved-case table keeps more)


def has_inspect_logs(tables: TableSet) -> bool:
    """Whether any source was read from an Inspect AI log."""
    return any(report.tool == "inspect_ai" for report in tables.reports)


def _state(mean: ir.FloatingValue) -> ir.StringValue:
    return ibis.cases((mean >= 1, "right"), (mean <= 0, "wrong"), else_="partly")


def side_by_side(
    tables: TableSet,
    cases: CaseTable,
    by: str,
    candidate_index: int,
    *,
    limit: int = SAMPLE_LIMIT,
) -> SampleSideBySide:
    """The side-by-side of the baseline (arm 0) and arm ``candidate_index`` under ``by``."""
    w = cases.table
    j = candidate_index
    paired = w.filter(w.m0.notnull() & w[f"m{j}"].notnull())
    paired = paired.select(
        "case_id",
        slice=paired[f"s_{by}"],
        baseline=paired.m0,
        candidate=paired[f"m{j}"],
        b_state=_state(paired.m0),
        c_state=_state(paired[f"m{j}"]),
    )
    counted = fetch_rows(paired.group_by(["b_state", "c_state"]).aggregate(n=paired.count()))
    counts = {f"{r['b_state']}/{r['c_state']}": int(r["n"]) for r in counted}
    order = ibis.cases(
        (paired.candidate < paired.baseline, 0),
        (paired.candidate > paired.baseline, 1),
        (paired.b_state == "wrong", 2),
        (paired.b_state == "partly", 3),
        else_=4,
    )
    listed = fetch_rows(
        paired.mutate(group=order).order_by(["group", "case_id"]).limit(limit).drop("group")
    )
    arms: Sequence[str] = (cases.arms[0], cases.arms[j])
    ids = [str(r["case_id"]) for r in listed]
    outputs = case_outputs(tables, arms, ids, max_chars=SAMPLE_OUTPUT_CHARS)
    rows = tuple(
        SampleRow(
            case_id=str(r["case_id"]),
            slice=str(r["slice"]),
            baseline=float(r["baseline"]),
            candidate=float(r["candidate"]),
            baseline_state=cast(SampleState, r["b_state"]),  # the query's three states
            candidate_state=cast(SampleState, r["c_state"]),
            baseline_output=outputs.get((str(r["case_id"]), arms[0])),
            candidate_output=outputs.get((str(r["case_id"]), arms[1])),
        )
        for r in listed
    )
    return SampleSideBySide(
        metric=cases.metric,
        by=by,
        baseline=arms[0],
        candidate=arms[1],
        paired=sum(counts.values()),
        counts=counts,
        rows=rows,
        limit=limit,
    )
