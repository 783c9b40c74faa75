"""A compact Markdown summary for a pull-request comment.

Per metric and candidate (first slicing column): the text report's answer sentence first,
the three worst slices by interval (among slices with enough cases), all cases, then the
standardized and pooled numbers, the per-attempt contrast, the evidence and the cases in one
arm only (``report/sections``). Every name from the data goes through
:func:`~evaldelta.report._escape.md_text` (or ``md_code``), so the comment renders the names
as text: no table, HTML, link, mention or heading from data.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evaldelta.comparison.model import Comparison
from evaldelta.report.sections import Report, render

if TYPE_CHECKING:
    from evaldelta.gating import Verdict

__all__ = ["render_markdown"]


def render_markdown(comparison: Comparison, verdict: Verdict | None = None) -> str:
    """Per metric and candidate: answer, worst slices, overall, standardized vs pooled, evidence.

    With ``verdict`` (``compare --policy``), the gate's verdict follows them.
    """
    return "\n".join(render("markdown", Report(comparison, verdict))).rstrip() + "\n"
