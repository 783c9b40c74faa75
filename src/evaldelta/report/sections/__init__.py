"""Report sections: one module each, one ordered list, walked by every format.

A section (``_base.Section``) builds a typed view from the report (the comparison, and the
gate's verdict when a policy ran) and renders it for text, terminal, Markdown and HTML; a
format that does not show it gets nothing. :data:`SECTIONS` is the report, top to bottom;
:data:`PAIR_SECTIONS` is what each compared pair shows, inside the ``pairs`` section, which
walks the pairs once. ``report/text.py``, ``terminal.py``, ``markdown.py`` and ``html.py``
each walk these lists (:func:`render`). Adding a section is one module here and one line in
a list. Where formats place a section at different points, it is listed at each point for
the formats that place it there (:func:`~evaldelta.report.sections._base.only`).
"""

from __future__ import annotations

from typing import Any

from evaldelta.report.sections import (
    arms,
    checks,
    cost,
    coupling,
    coverage,
    evidence,
    footer,
    header,
    heading,
    leakage,
    mixes,
    moved,
    notes,
    pins,
    plan,
    pooled,
    reliability,
    repeats,
    samples,
    sequential,
    slices,
    standardized,
    summaries,
    three_arm,
    upstream,
    verdict,
)
from evaldelta.report.sections._base import Format, PairSection, Report, Section, only
from evaldelta.report.sections.pairs import PAIRS, PairContext

__all__ = [
    "PAIR_SECTIONS",
    "SECTIONS",
    "Format",
    "PairContext",
    "PairSection",
    "Report",
    "Section",
    "only",
    "render",
]

SECTIONS: list[Any] = [
    header.HEADER,  # text: the baseline line; HTML: the page's header, loud notes in it
    # a sequential comparison says so before any interval (text, terminal, Markdown first)
    only(sequential.SEQUENTIAL, "text", "terminal", "markdown"),
    only(verdict.VERDICT, "html"),  # the page opens with the verdict
    only(sequential.SEQUENTIAL, "html"),  # under it, before any other interval
    only(pins.PINS, "html"),  # the HTML's pins table, under the verdict
    repeats.REPEATS,
    pins.PIN_WARNING,
    only(notes.LOUD_NOTES, "text", "terminal"),
    only(pins.PINS, "text", "terminal"),
    upstream.UPSTREAM,
    only(notes.LOUD_NOTES, "markdown"),  # the comment flags them after the upstream warning
    PAIRS,  # every pair, each showing PAIR_SECTIONS
    samples.SAMPLES,
    reliability.RELIABILITY,
    summaries.SUMMARIES,
    leakage.LEAKAGE,  # text, Markdown (the HTML shows it under the checks)
    three_arm.THREE_ARM,
    checks.CHECKS,
    notes.NOTES,
    footer.FOOTER,
    only(verdict.VERDICT, "text", "markdown"),  # after the report, as `evaldelta gate` prints it
]

PAIR_SECTIONS: list[Any] = [
    heading.HEADING,
    slices.SLICES,
    only(mixes.MIXES, "text", "terminal"),  # the mix table, before the standardized lines
    standardized.STANDARDIZED,
    only(mixes.MIXES, "html"),  # mix sensitivity, after the rates per arm
    pooled.POOLED,
    evidence.EVIDENCE,
    coupling.COUPLING,  # run --couple: how far the arms' outcomes moved together
    coverage.COVERAGE,
    moved.MOVED,
    arms.ARMS,
    cost.COST,
    plan.PLAN,
]


def render(fmt: Format, report: Report) -> list[Any]:
    """Every section's rendering for ``fmt``, in :data:`SECTIONS` order.

    Lines for text and Markdown, rich renderables for the terminal, pieces of the page for
    HTML (joined, they are the page).
    """
    out: list[Any] = []
    for section in SECTIONS:
        if fmt not in section.formats:
            continue
        rendered = section.render(fmt, section.view(report))
        if rendered is None:
            continue
        if getattr(section, "block", False) and fmt in ("text", "markdown"):
            while out and out[-1] == "":
                out.pop()
            out.append("")
        if isinstance(rendered, str):
            out.append(rendered)
        else:
            out.extend(rendered)
    return out
