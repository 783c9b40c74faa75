"""Cost per arm, and the candidate's cost over the baseline's, when costs were given."""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import RenderableType

from evaldelta.report._format import fmt
from evaldelta.report.sections._base import PairSection
from evaldelta.report.sections._html import piece
from evaldelta.report.sections._lines import terminal_lines
from evaldelta.report.sections.pairs import PairContext

__all__ = ["COST"]


@dataclass(frozen=True)
class CostView:
    ctx: PairContext


class _Cost(PairSection[CostView]):
    name = "cost"

    def view(self, pair: PairContext) -> CostView:
        return CostView(pair)

    def text(self, view: CostView) -> list[str]:
        pair = view.ctx.pair
        cost, b, c = pair.cost, pair.baseline, pair.candidate
        if cost is None:
            return []
        return [
            f"Cost: {b} ${fmt(cost.baseline_usd, 2)} (${fmt(cost.baseline_per_case, 4)}/case) · "
            f"{c} ${fmt(cost.candidate_usd, 2)} (${fmt(cost.candidate_per_case, 4)}/case) · "
            f"ratio {c}/{b} {fmt(cost.ratio, 2)}"
        ]

    def terminal(self, view: CostView) -> list[RenderableType]:
        """Shorter than the text's line: the totals alone."""
        pair = view.ctx.pair
        cost, b, c = pair.cost, pair.baseline, pair.candidate
        if cost is None:
            return []
        return list(
            terminal_lines(
                [
                    f"Cost: {b} ${fmt(cost.baseline_usd, 2)} · {c} ${fmt(cost.candidate_usd, 2)} · "
                    f"ratio {c}/{b} {fmt(cost.ratio, 2)}"
                ]
            )
        )

    def html(self, view: CostView) -> str:
        return piece("sections/cost.html.j2", v=view.ctx.html)


COST = _Cost()
