"""The plan: what sample would settle each open slice (``report/_plan_rows.py``): HTML only."""

from __future__ import annotations

from dataclasses import dataclass

from evaldelta.report.sections._base import PairSection
from evaldelta.report.sections._html import piece
from evaldelta.report.sections.pairs import PairContext

__all__ = ["PLAN"]


@dataclass(frozen=True)
class PlanView:
    ctx: PairContext


class _Plan(PairSection[PlanView]):
    name = "plan"
    formats = frozenset(("html",))

    def view(self, pair: PairContext) -> PlanView:
        return PlanView(pair)

    def html(self, view: PlanView) -> str:
        return piece("sections/plan.html.j2", v=view.ctx.html)


PLAN = _Plan()
