"""Shared by the text and terminal renderings: aligned tables, and lines as rich text.

Every cell and line passes through :func:`~evaldelta.report._escape.term_text`, so no escape
sequence or control character from the data reaches the terminal; table cells are cleaned
before their widths are measured. In the terminal, data is never parsed as rich markup:
every line is a :class:`rich.text.Text`.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.text import Text

from evaldelta.report._escape import term_text

__all__ = ["styled", "table", "term", "terminal_lines"]


def table(header: list[str], rows: list[list[str]], left: tuple[int, ...]) -> list[str]:
    """Columns as wide as their widest cell; text columns left-aligned, numbers right."""
    header = [term_text(cell) for cell in header]
    rows = [[term_text(cell) for cell in r] for r in rows]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        parts = [
            cell.ljust(w) if i in left else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  " + "  ".join(parts).rstrip()

    return [line(header), *(line(r) for r in rows)]


def term(text: str, style: str = "") -> Text:
    """Data-bearing text for the terminal: never markup, never a control sequence."""
    return Text(term_text(text), style=style)


def styled(text: str) -> Text:
    """A text report line in the terminal: flags yellow, the answer bold, the worst slice red."""
    if text.startswith("!") or text.lstrip().startswith("! "):
        return term(text, style="bold yellow")
    if text.startswith("Answer:"):
        return term(text, style="bold")
    if text.startswith("Worst slice:"):
        return term(text, style="bold red")
    return term(text)


def terminal_lines(lines: Iterable[str] | None) -> list[Text]:
    """The text rendering's lines, styled for the terminal."""
    return [styled(x) for x in lines or ()]
