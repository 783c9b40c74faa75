"""All arms side by side, per metric, when there are several candidates: HTML only.

Each arm's rate, its paired delta against the baseline, the standardized delta and the cost
(``_html_views.arm_summaries``); the check metrics have their own table (``checks.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from evaldelta.comparison.model import Comparison
from evaldelta.report._sequential import interval_word
from evaldelta.report.sections._base import Report, Section
from evaldelta.report.sections._html import piece

if TYPE_CHECKING:
    from evaldelta.report._html_views import ArmSummary

__all__ = ["SUMMARIES"]


@dataclass(frozen=True)
class SummariesView:
    comparison: Comparison
    summaries: tuple[tuple[str, list[ArmSummary]], ...]


class _Summaries(Section[SummariesView]):
    name = "summaries"
    formats = frozenset(("html",))

    def view(self, report: Report) -> SummariesView:
        from evaldelta.report._html_views import arm_summaries

        c = report.comparison
        rows = (
            tuple(
                (m.metric, arm_summaries(m)) for m in c.metrics if not m.metric.startswith("check.")
            )
            if len(c.candidates) > 1
            else ()
        )
        return SummariesView(c, rows)

    def html(self, view: SummariesView) -> str:
        return piece(
            "sections/summaries.html.j2",
            comparison=view.comparison,
            summaries=list(view.summaries),
            interval=interval_word(view.comparison),
        )


SUMMARIES = _Summaries()
