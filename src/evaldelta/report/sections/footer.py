"""The HTML page's end: versions, and the one inline script (its hash is in the CSP)."""

from __future__ import annotations

from dataclasses import dataclass

from markupsafe import Markup

from evaldelta.comparison.model import Comparison
from evaldelta.report.sections._base import Report, Section
from evaldelta.report.sections._html import piece

__all__ = ["FOOTER"]


@dataclass(frozen=True)
class FooterView:
    comparison: Comparison


class _Footer(Section[FooterView]):
    name = "footer"
    formats = frozenset(("html",))

    def view(self, report: Report) -> FooterView:
        return FooterView(report.comparison)

    def html(self, view: FooterView) -> str:
        from evaldelta.report.html import FILTER_SCRIPT

        # a constant, marked safe; its hash is in the CSP
        return piece(
            "sections/footer.html.j2", comparison=view.comparison, script=Markup(FILTER_SCRIPT)
        )


FOOTER = _Footer()
