"""How repeats were reduced per case, when it is worth a line (``report/_repeats.py``)."""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import RenderableType

from evaldelta.report._escape import md_text
from evaldelta.report._repeats import repeats_sentence
from evaldelta.report.sections._base import Report, Section
from evaldelta.report.sections._html import piece
from evaldelta.report.sections._lines import terminal_lines

__all__ = ["REPEATS"]


@dataclass(frozen=True)
class RepeatsView:
    sentence: str | None


class _Repeats(Section[RepeatsView]):
    name = "repeats"

    def view(self, report: Report) -> RepeatsView:
        return RepeatsView(repeats_sentence(report.comparison))

    def text(self, view: RepeatsView) -> list[str]:
        return [view.sentence] if view.sentence else []

    def terminal(self, view: RepeatsView) -> list[RenderableType]:
        return list(terminal_lines(self.text(view)))

    def markdown(self, view: RepeatsView) -> list[str]:
        return [f"_{md_text(view.sentence)}_", ""] if view.sentence else []

    def html(self, view: RepeatsView) -> str:
        return piece("sections/repeats.html.j2", repeats=view.sentence)


REPEATS = _Repeats()
