"""Rubric leakage per candidate (``report/_leakage.py``): text and Markdown.

The HTML shows the leakage tables under the checks' pass rates (``checks.py``), after the
three-arm section; the terminal leaves them to the text and HTML reports.
"""

from __future__ import annotations

from dataclasses import dataclass

from evaldelta.comparison.model import RubricLeakage
from evaldelta.report._leakage import checks_title, leakage_lines, leakage_markdown
from evaldelta.report.sections._base import Report, Section

__all__ = ["LEAKAGE"]


@dataclass(frozen=True)
class LeakageView:
    leaks: tuple[RubricLeakage, ...]


class _Leakage(Section[LeakageView]):
    name = "leakage"
    formats = frozenset(("text", "markdown"))

    def view(self, report: Report) -> LeakageView:
        return LeakageView(tuple(report.comparison.rubric_leakage))

    def text(self, view: LeakageView) -> list[str]:
        return [x for leak in view.leaks for x in [checks_title(leak), *leakage_lines(leak), ""]]

    def markdown(self, view: LeakageView) -> list[str]:
        return [x for leak in view.leaks for x in leakage_markdown(leak)]


LEAKAGE = _Leakage()
