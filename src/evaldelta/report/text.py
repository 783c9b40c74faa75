"""The terminal report: lead with the answer, label what every number is.

Order (``report/sections``): the baseline, how repeats were reduced, a loud warning when the
arms' pins differ beyond their declared difference, the loud notes, the pins, the upstream
inputs; then per metric and candidate: the answer, per-slice deltas with intervals, worst
first, and all cases; the standardized (fixed-mix) result with its weights; the pooled number,
labelled as such, and the mix-shift / Simpson flag; the cases that carry the evidence
(discordant counts), the unpaired contrast, one-arm-only cases, each arm's rates and the
cost; then rubric leakage, three arms and every note; with a gate's verdict, the verdict.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evaldelta.comparison.model import Comparison
from evaldelta.report._escape import term_text
from evaldelta.report.sections import Report, render

if TYPE_CHECKING:
    from evaldelta.gating import Verdict

__all__ = ["render_text"]


def render_text(comparison: Comparison, verdict: Verdict | None = None) -> str:
    """Render a whole comparison as plain text (no colour codes, no control characters).

    Every line passes through :func:`~evaldelta.report._escape.term_text`, so no escape
    sequence or control character from the data reaches the terminal; table cells are
    cleaned before their widths are measured. With ``verdict`` (``compare --policy``), the
    gate's verdict follows the report.
    """
    out = render("text", Report(comparison, verdict))
    return "\n".join(term_text(line) for line in out).rstrip() + "\n"
