"""Three arms (always-cheap, cascade, always-strong): sufficient statistics per slice.

One per-case pivot over the three arms (:func:`build_case_table`, arms in the order cheap,
cascade, strong) carries each arm's case mean, its cost and, when the rows say which model
answered, the per-case share of escalated attempts. Every statistic below is a group-by over
that pivot in the backend: memory does not grow with the number of rows.

Escalation is read from ``escalated`` when the column exists; otherwise an attempt counts as
escalated when its ``model_used`` differs from the model the always-cheap arm used (its most
frequent ``model_used``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import ibis
import ibis.expr.types as ir

from evaldelta.engine._exact import exact_sum
from evaldelta.engine._reduce import CaseTable, build_case_table, cost_totals
from evaldelta.errors import UsageError
from evaldelta.evidence import ALL, Escalation, Moments, ThreeArmStats
from evaldelta.sources import TableSet
from evaldelta.sources._fetch import rows as _rows
from evaldelta.sources._pins import PinValue

__all__ = [
    "check_roles",
    "escalation_basis",
    "reduce_three_arms",
    "roles_from_pins",
]

CHEAP, CASCADE, STRONG = 0, 1, 2


def check_roles(roles: Sequence[str], present: Sequence[str]) -> tuple[str, str, str]:
    """Three distinct arms present in the data, as (cheap, cascade, strong)."""
    names = tuple(str(r).strip() for r in roles)
    if len(names) != 3 or not all(names):
        raise UsageError(
            "three-arm roles need exactly three arm names, CHEAP,CASCADE,STRONG "
            f"(got {len(names)}: {', '.join(names) or 'none'})"
        )
    if len(set(names)) != 3:
        raise UsageError(f"three-arm roles must be three different arms, not {', '.join(names)}")
    for name in names:
        if name not in present:
            raise UsageError(
                f"three-arm role {name!r} is not an arm of the data; it has: {', '.join(present)}"
            )
    return names[0], names[1], names[2]


def roles_from_pins(
    pins: Mapping[str, Mapping[str, PinValue]], arms: Sequence[str]
) -> tuple[str, str, str] | None:
    """The first compared cascade arm whose cheap and strong steps are compared arms too."""
    for arm in arms:
        p = pins.get(arm, {})
        cheap, strong = p.get("cheap.arm"), p.get("strong.arm")
        if p.get("kind") == "cascade" and cheap in arms and strong in arms and cheap != strong:
            return str(cheap), arm, str(strong)
    return None


def escalation_basis(tables: TableSet, cheap_arm: str) -> Escalation | None:
    """How to tell an escalated attempt, from the columns the rows have (None: no way)."""
    if tables.has_escalated:
        return Escalation("escalated", None, 0)
    if not tables.has_model_used:
        return None
    t = tables.rows.filter((tables.rows.arm == cheap_arm) & tables.rows.model_used.notnull())
    counts = _rows(
        t.group_by("model_used").aggregate(k=t.count()).order_by([ibis.desc("k"), "model_used"])
    )
    if not counts:
        return None
    return Escalation("model_used", str(counts[0]["model_used"]), len(counts))


def build_three_arm_table(
    tables: TableSet, roles: tuple[str, str, str], metric: str, escalation: Escalation | None
) -> CaseTable:
    """The per-case pivot of the three arms (cheap, cascade, strong)."""
    return build_case_table(
        tables,
        roles,
        metric,
        escalation=_predicate(escalation) if escalation is not None else None,
    )


def _predicate(escalation: Escalation) -> Callable[[ir.Table], ir.BooleanValue]:
    """The row predicate (null where unknown) the pivot aggregates."""
    if escalation.basis == "escalated":
        return lambda t: t.escalated
    name = escalation.cheap_model
    return lambda t: t.model_used != name


def reduce_three_arms(cases: CaseTable, by: str) -> list[ThreeArmStats]:
    """Per slice of ``by`` (sorted by name) and overall (``ALL``, last)."""
    w = cases.table
    m0, m1, m2 = w.m0, w.m1, w.m2
    all3 = m0.notnull() & m1.notnull() & m2.notnull()
    gap, rec = m2 - m0, m1 - m0
    aggs: dict[str, Any] = {
        "n": all3.sum(),
        "t0": exact_sum(m0, all3),
        "t1": exact_sum(m1, all3),
        "t2": exact_sum(m2, all3),
        "gt": exact_sum(gap, all3),
        "gss": exact_sum((gap * gap), all3),
        "rt": exact_sum(rec, all3),
        "rss": exact_sum((rec * rec), all3),
        "att": w.n1.sum(),
    }
    for i in range(3):
        aggs[f"cases{i}"] = (w[f"n{i}"] > 0).sum()
    has_esc = "e1" in w.columns
    if has_esc:
        kept = (w.xn1 > 0) & (w.x1 == 0) & m1.notnull() & m2.notnull()
        div = m1 - m2
        aggs.update(
            xk=w.xn1.sum(),
            xa=w.x1.sum(),
            xc=(w.x1 > 0).sum(),
            dn=kept.sum(),
            dt=exact_sum(div, kept),
            dss=exact_sum((div * div), kept),
        )
    per_slice = _rows(w.group_by(slice=w[f"s_{by}"]).aggregate(**aggs).order_by("slice"))
    overall = _rows(w.aggregate(**aggs))
    overall[0]["slice"] = ALL
    costs = cost_totals(cases.tables, cases.arms, by)
    for row in [*per_slice, *overall]:
        for i, cost in enumerate(costs.get(str(row["slice"]), (None, None, None))):
            row[f"c{i}"] = cost
    return [_stats(row, has_esc, cases.tables.has_cost) for row in [*per_slice, *overall]]


def _num(value: Any) -> float:
    return float(value or 0.0)


def _stats(row: dict[str, Any], has_esc: bool, has_cost: bool) -> ThreeArmStats:
    n = int(row["n"] or 0)
    return ThreeArmStats(
        slice=str(row["slice"]),
        n=n,
        cheap_total=_num(row["t0"]),
        cascade_total=_num(row["t1"]),
        strong_total=_num(row["t2"]),
        gap=Moments(n, _num(row["gt"]), _num(row["gss"])),
        recovered=Moments(n, _num(row["rt"]), _num(row["rss"])),
        cascade_attempts=int(row["att"] or 0),
        escalation_known=int(row["xk"] or 0) if has_esc else None,
        escalated_attempts=int(row["xa"] or 0) if has_esc else None,
        escalated_cases=int(row["xc"] or 0) if has_esc else None,
        divergent=(
            Moments(int(row["dn"] or 0), _num(row["dt"]), _num(row["dss"])) if has_esc else None
        ),
        cases=(int(row["cases0"] or 0), int(row["cases1"] or 0), int(row["cases2"] or 0)),
        cost_usd=(_num(row["c0"]), _num(row["c1"]), _num(row["c2"])) if has_cost else None,
    )
