"""The terminal report with rich: the text report's content, with tables and colour.

Used by the CLI only when standard output is a terminal; piped or redirected output stays the
plain :func:`~evaldelta.report.text.render_text`. Colour follows rich's rules: ``NO_COLOR``
(any value) turns it off and the tables still read as tables. Data (slice names, arm names,
case ids) is never parsed as rich markup: every cell is a :class:`rich.text.Text`
(``sections/_lines.py``), which also drops every escape sequence and control character from
the data (:func:`~evaldelta.report._escape.term_text`). The sections are the text report's
(``report/sections``), in its order.
"""

from __future__ import annotations

from rich.console import Console, Group

from evaldelta.comparison.model import Comparison
from evaldelta.report.sections import Report, render

__all__ = ["print_terminal", "terminal_renderables"]


def terminal_renderables(comparison: Comparison) -> Group:
    """The whole report as rich renderables (tables, coloured flags), in the text's order."""
    return Group(*render("terminal", Report(comparison)))


def print_terminal(comparison: Comparison, console: Console | None = None) -> None:
    """Print the report to a terminal (colour unless ``NO_COLOR`` is set)."""
    console = console or Console(highlight=False, soft_wrap=True)
    console.print(terminal_renderables(comparison))
