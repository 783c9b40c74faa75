"""A compact Markdown summary for a pull-request comment.

Per metric and candidate (first slicing column): the text report's answer sentence first,
the three worst slices by interval (among slices with enough cases), all cases, then the
standardized and pooled numbers, the per-attempt contrast, the evidence and the cases in one
arm only (``report/sections``). Every name from the data goes through
:func:`~evaldelta.report._escape.md_text` (or ``md_code``), so the comment renders the names
as text: no table, HTML, link, mention or heading from data.
"""

from __future__ import annotations

from evaldelta.comparison.model import Comparison
from evaldelta.report.sections import Report, render

__all__ = ["render_markdown"]


def render_markdown(comparison: Comparison) -> str:
    """Per metric and candidate: answer, worst slices, overall, standardized vs pooled, evidence."""
    return "\n".join(render("markdown", Report(comparison))).rstrip() + "\n"
