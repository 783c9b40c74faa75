"""The report's head: the baseline line (text, terminal) or the HTML page's header.

The HTML header carries the page's head (CSP, styles), the title, what was compared and
under which settings, and the loud notes (``_facts.is_loud``); the text and Markdown list
the loud notes in their own section (``notes.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import RenderableType

from evaldelta.comparison.model import Comparison
from evaldelta.report._facts import is_loud
from evaldelta.report._format import fmt_pct
from evaldelta.report._sequential import intervals_phrase
from evaldelta.report.sections._base import Report, Section
from evaldelta.report.sections._html import piece
from evaldelta.report.sections._lines import terminal_lines

__all__ = ["HEADER", "baseline_line"]


def baseline_line(comparison: Comparison) -> str:
    """The report's first line: which arm is the baseline, and how it was chosen."""
    why = comparison.baseline_reason or "the first input's first arm"
    return f"baseline {comparison.baseline} ({why}); candidates: {', '.join(comparison.candidates)}"


@dataclass(frozen=True)
class HeaderView:
    comparison: Comparison
    title: str
    baseline_line: str
    loud_notes: tuple[str, ...]


class _Header(Section[HeaderView]):
    name = "header"
    formats = frozenset(("text", "terminal", "html"))

    def view(self, report: Report) -> HeaderView:
        c = report.comparison
        title = report.title or f"evaldelta: {', '.join(c.candidates)} vs {c.baseline}"
        loud = tuple(n for n in c.notes if is_loud(n))
        return HeaderView(c, title, baseline_line(c), loud)

    def text(self, view: HeaderView) -> list[str]:
        return [view.baseline_line]

    def terminal(self, view: HeaderView) -> list[RenderableType]:
        return list(terminal_lines(self.text(view)))

    def html(self, view: HeaderView) -> str:
        from evaldelta.report.html import CSP

        return piece(
            "sections/header.html.j2",
            title=view.title,
            csp=CSP,
            comparison=view.comparison,
            confidence=fmt_pct(view.comparison.confidence),
            intervals=intervals_phrase(view.comparison),
            loud_notes=view.loud_notes,
        )


HEADER = _Header()
