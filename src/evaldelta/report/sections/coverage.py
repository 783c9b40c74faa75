"""Cases in one arm only, counted (overall and per slice), and cases unlabeled in one arm."""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import RenderableType

from evaldelta.report._escape import md_text
from evaldelta.report._facts import coverage_per_slice, coverage_sentence
from evaldelta.report.sections._base import PairSection
from evaldelta.report.sections._html import piece
from evaldelta.report.sections._lines import terminal_lines
from evaldelta.report.sections.pairs import PairContext

__all__ = ["COVERAGE"]


@dataclass(frozen=True)
class CoverageView:
    ctx: PairContext


class _Coverage(PairSection[CoverageView]):
    name = "coverage"

    def view(self, pair: PairContext) -> CoverageView:
        return CoverageView(pair)

    def text(self, view: CoverageView) -> list[str]:
        pair = view.ctx.pair
        lines = []
        sentence, per_slice = coverage_sentence(pair), coverage_per_slice(pair)
        if sentence is not None:
            lines.append(sentence)
        if per_slice is not None:
            lines.append(f"  {per_slice}")
        unscored = pair.overall.unscored_in_one
        if unscored:
            lines.append(f"Cases present in both arms but unlabeled in one: {unscored}")
        return lines

    def terminal(self, view: CoverageView) -> list[RenderableType]:
        return list(terminal_lines(self.text(view)))

    def markdown(self, view: CoverageView) -> list[str]:
        pair = view.ctx.pair
        coverage = coverage_sentence(pair, md_text)
        if coverage is None:
            return []
        per_slice = coverage_per_slice(pair, md_text)
        return [f"- {coverage}" + (f"; {per_slice}" if per_slice else "")]

    def html(self, view: CoverageView) -> str:
        return piece("sections/coverage.html.j2", v=view.ctx.html)


COVERAGE = _Coverage()
