"""Three arms (always-cheap, cascade, always-strong): quality recovered, routing and cost.

The lines, Markdown, view and figure are ``report/_three_arm.py``'s; the figure is drawn
only for the HTML.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import RenderableType
from rich.text import Text

from evaldelta.comparison.model import ThreeArmSummary
from evaldelta.report._format import fmt_pct
from evaldelta.report.sections._base import Report, Section
from evaldelta.report.sections._html import piece
from evaldelta.report.sections._lines import terminal_lines

__all__ = ["THREE_ARM"]


@dataclass(frozen=True)
class ThreeArmSectionView:
    summary: ThreeArmSummary | None
    confidence: str


class _ThreeArm(Section[ThreeArmSectionView]):
    name = "three_arm"

    def view(self, report: Report) -> ThreeArmSectionView:
        c = report.comparison
        return ThreeArmSectionView(c.three_arm, fmt_pct(c.confidence))

    def text(self, view: ThreeArmSectionView) -> list[str]:
        from evaldelta.report._three_arm import three_arm_lines

        if view.summary is None:
            return []
        return [*three_arm_lines(view.summary, view.confidence), ""]

    def terminal(self, view: ThreeArmSectionView) -> list[RenderableType]:
        lines = self.text(view)
        return [*terminal_lines(lines[:-1]), Text("")] if lines else []

    def markdown(self, view: ThreeArmSectionView) -> list[str]:
        from evaldelta.report._three_arm import three_arm_markdown

        return [three_arm_markdown(view.summary), ""] if view.summary is not None else []

    def html(self, view: ThreeArmSectionView) -> str:
        three = None
        if view.summary is not None:
            from evaldelta.report import plots
            from evaldelta.report._three_arm import three_arm_figure, three_arm_view

            three = three_arm_view(view.summary, view.confidence)
            three.svg = plots.figure_svg(
                three_arm_figure(view.summary), title="Three arms: mean per slice"
            )
        return piece("sections/three_arm.html.j2", three=three)


THREE_ARM = _ThreeArm()
