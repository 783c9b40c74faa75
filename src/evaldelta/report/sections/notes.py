"""The comparison's notes: the loud ones first, every one at the end.

A loud note (``_facts.is_loud``) is one a reader must see before any number: flagged near
the top (the HTML shows them in its header), and listed again with every other note at the
end (the Markdown comment folds the quiet ones there; the loud ones it already showed).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import RenderableType
from rich.text import Text

from evaldelta.comparison.model import Comparison
from evaldelta.report._escape import md_text
from evaldelta.report._facts import is_loud
from evaldelta.report.sections._base import Report, Section
from evaldelta.report.sections._html import piece
from evaldelta.report.sections._lines import term, terminal_lines

__all__ = ["LOUD_NOTES", "NOTES"]

HEAD = "Notes (undefined statistics are shown as n/a, never as 0):"


@dataclass(frozen=True)
class NotesView:
    comparison: Comparison
    notes: tuple[str, ...]
    loud: tuple[str, ...]


def _view(report: Report) -> NotesView:
    c = report.comparison
    return NotesView(c, tuple(c.notes), tuple(n for n in c.notes if is_loud(n)))


class _Loud(Section[NotesView]):
    name = "loud_notes"
    formats = frozenset(("text", "terminal", "markdown"))  # HTML: in its header

    def view(self, report: Report) -> NotesView:
        return _view(report)

    def text(self, view: NotesView) -> list[str]:
        """They stay in the notes at the end too (and in JSON), where every note is listed."""
        return [*(f"! {n}" for n in view.loud), ""] if view.loud else []

    def terminal(self, view: NotesView) -> list[RenderableType]:
        return list(terminal_lines(self.text(view)))

    def markdown(self, view: NotesView) -> list[str]:
        return [f"> ⚠️ {md_text(n)}\n" for n in view.loud]


class _Notes(Section[NotesView]):
    name = "notes"

    def view(self, report: Report) -> NotesView:
        return _view(report)

    def text(self, view: NotesView) -> list[str]:
        return [HEAD, *(f"  - {n}" for n in view.notes)] if view.notes else []

    def terminal(self, view: NotesView) -> list[RenderableType]:
        if not view.notes:
            return []
        return [Text(HEAD), *(term(f"  - {n}") for n in view.notes)]

    def markdown(self, view: NotesView) -> list[str]:
        """Every other note, folded: what is n/a and why (the text and HTML list them too)."""
        quiet = [n for n in view.notes if n not in view.loud]
        if not quiet:
            return []
        head = f"Notes ({len(quiet)}): undefined statistics are shown as n/a, never as 0"
        return [
            f"<details><summary>{head}</summary>",
            "",
            *(f"- {md_text(n)}" for n in quiet),
            "",
            "</details>",
            "",
        ]

    def html(self, view: NotesView) -> str:
        return piece("sections/notes.html.j2", comparison=view.comparison)


LOUD_NOTES = _Loud()
NOTES = _Notes()
