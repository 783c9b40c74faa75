"""The cases of a sequential comparison in the order they arrived (``--sequential``).

One query per metric over the per-case pivot (``_reduce.build_case_table``): each compared
arm's scored cases with the value the comparison uses for the case (``m<i>``: the case mean
of its repeats, or the ``--reduce`` reducer's value, which ``_repeats`` made the case's one
row) and the case's arrival in that arm (``o<i>``: the smallest order value over its rows,
which the pivot aggregates when the rows carry an order, ``_order``). The case's slice of
every slicing column comes with it, so every slicing column's arrivals come from one read.
:mod:`evaldelta.comparison.sequential` reads the confidence sequences off them.
"""

from __future__ import annotations

from collections.abc import Sequence

import ibis

from evaldelta.engine._reduce import CaseTable
from evaldelta.evidence import ArrivedCase, CaseArrivals
from evaldelta.sources._fetch import rows as _rows

__all__ = ["case_arrivals"]


def case_arrivals(cases: CaseTable, by: Sequence[str]) -> tuple[CaseArrivals, ...]:
    """Per slicing column of ``by``: each arm's scored cases, earliest arrival first."""
    w = cases.table
    scored = ibis.literal(False)
    for i in range(len(cases.arms)):
        scored = scored | w[f"m{i}"].notnull()
    columns = {f"s{k}": w[f"s_{c}"] for k, c in enumerate(by)}
    for i in range(len(cases.arms)):
        columns |= {f"m{i}": w[f"m{i}"].cast("float64"), f"o{i}": w[f"o{i}"]}
    found = _rows(w.filter(scored).select("case_id", **columns).order_by("case_id"))
    out = []
    for k, column in enumerate(by):
        arms: dict[str, list[ArrivedCase]] = {a: [] for a in cases.arms}
        for row in found:
            for i, arm in enumerate(cases.arms):
                value, order = row[f"m{i}"], row[f"o{i}"]
                if value is None or order is None:
                    continue
                case = ArrivedCase(
                    str(row["case_id"]), str(row[f"s{k}"]), float(order), float(value)
                )
                arms[arm].append(case)
        ordered = {a: tuple(sorted(v, key=lambda c: (c.order, c.case_id))) for a, v in arms.items()}
        out.append(CaseArrivals(metric=cases.metric, by=column, arms=ordered))
    return tuple(out)
