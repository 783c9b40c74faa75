"""The checks: pass rate per arm, and the rubric leakage tables under them (HTML only)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evaldelta.comparison.model import Comparison
from evaldelta.report._sequential import interval_word
from evaldelta.report.sections._base import Report, Section
from evaldelta.report.sections._html import piece

if TYPE_CHECKING:
    from evaldelta.report._html_views import ArmSummary

__all__ = ["CHECKS"]


@dataclass(frozen=True)
class ChecksView:
    comparison: Comparison
    checks: tuple[tuple[str, list[ArmSummary]], ...]
    leakage: tuple[dict[str, Any], ...]


def _leakage_views(comparison: Comparison) -> tuple[dict[str, Any], ...]:
    """The checks section's rubric leakage tables, one per candidate."""
    from evaldelta.report._leakage import leakage_rows, rule_text, trim_output

    return tuple(
        {
            "leak": leak,
            "rule": rule_text(leak),
            "rows": leakage_rows(leak),
            "examples": [
                (c.criterion, e, trim_output(e.failing_output), trim_output(e.passing_output))
                for c in leak.flagged
                for e in c.examples
            ],
        }
        for leak in comparison.rubric_leakage
    )


class _Checks(Section[ChecksView]):
    name = "checks"
    formats = frozenset(("html",))

    def view(self, report: Report) -> ChecksView:
        from evaldelta.report._html_views import arm_summaries

        c = report.comparison
        checks = tuple(
            (m.metric, arm_summaries(m)) for m in c.metrics if m.metric.startswith("check.")
        )
        return ChecksView(c, checks, _leakage_views(c))

    def html(self, view: ChecksView) -> str:
        return piece(
            "sections/checks.html.j2",
            comparison=view.comparison,
            checks=list(view.checks),
            leakage=list(view.leakage),
            interval=interval_word(view.comparison),
        )


CHECKS = _Checks()
