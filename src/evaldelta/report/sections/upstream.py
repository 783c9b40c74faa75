"""The upstream change detector (``report/_upstream.py``).

Rendered prompt, payload or retrieval that moved between the arms, counted per arm pair,
with a diff for each confound.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.console import RenderableType

from evaldelta.report._upstream import markdown_lines, text_lines, upstream_view
from evaldelta.report.sections._base import Report, Section
from evaldelta.report.sections._html import piece
from evaldelta.report.sections._lines import terminal_lines

__all__ = ["UPSTREAM"]


@dataclass(frozen=True)
class UpstreamView:
    text: tuple[str, ...]
    markdown: tuple[str, ...]
    html: tuple[Any, ...]  # report._upstream.UpstreamLine


class _Upstream(Section[UpstreamView]):
    name = "upstream"

    def view(self, report: Report) -> UpstreamView:
        c = report.comparison
        return UpstreamView(tuple(text_lines(c)), tuple(markdown_lines(c)), tuple(upstream_view(c)))

    def text(self, view: UpstreamView) -> list[str]:
        return list(view.text)

    def terminal(self, view: UpstreamView) -> list[RenderableType]:
        return list(terminal_lines(view.text))

    def markdown(self, view: UpstreamView) -> list[str]:
        return list(view.markdown)

    def html(self, view: UpstreamView) -> str:
        return piece("sections/upstream.html.j2", upstream=list(view.html))


UPSTREAM = _Upstream()
