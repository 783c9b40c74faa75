"""What a report section is: a typed view of the comparison, and its four renderings.

A section builds one view (a frozen dataclass) from the :class:`Report` it is given, then
renders that view for each format: ``text`` and ``markdown`` as lines, ``terminal`` as rich
renderables, ``html`` as a piece of the page. A format that does not show the section gets
``None`` from it. Per-pair sections (:class:`PairSection`) take one pair's
:class:`~evaldelta.report.sections.pairs.PairContext` instead of the whole report: the pair
walk happens once, in the ``pairs`` section, and every per-pair section is rendered inside it.

Where formats place one section at different points of the report (the Markdown comment puts
the loud notes after the upstream warning, the text report before the pins), the registry
lists it at each point, each time for its formats only (:func:`only`): the one list still
says where everything goes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

if TYPE_CHECKING:
    from rich.console import RenderableType

    from evaldelta.comparison.model import Comparison
    from evaldelta.gating import Verdict
    from evaldelta.report.sections.pairs import PairContext

__all__ = ["FORMATS", "Format", "PairSection", "Report", "Section", "only"]

Format = Literal["text", "terminal", "markdown", "html"]
FORMATS: frozenset[Format] = frozenset(("text", "terminal", "markdown", "html"))

V = TypeVar("V")


@dataclass(frozen=True)
class Report:
    """What every section's view is built from.

    The comparison, the gate's verdict if a policy ran, and the HTML page's title when the
    caller chose one.
    """

    comparison: Comparison
    verdict: Verdict | None = None
    title: str | None = None


class _Renders(Generic[V]):
    """The four renderings; each returns ``None`` unless the section overrides it."""

    name: str = ""
    formats: frozenset[Format] = FORMATS  # the walk builds no view for the other formats

    def text(self, view: V) -> list[str] | None:
        """Plain lines (the text report escapes them for the terminal)."""
        return None

    def terminal(self, view: V) -> list[RenderableType] | None:
        """Rich renderables, in the text's order."""
        return None

    def markdown(self, view: V) -> list[str] | None:
        """Markdown lines, every name from the data escaped."""
        return None

    def html(self, view: V) -> str | None:
        """A piece of the HTML page (autoescaped Jinja2: ``sections/_html.py``)."""
        return None

    def render(self, fmt: Format, view: V) -> Any:
        """The rendering for ``fmt``, ``None`` when the format does not show the section."""
        if fmt not in self.formats:
            return None
        return getattr(self, fmt)(view)


class Section(_Renders[V]):
    """A section of the whole report (header, pins, notes, ...).

    ``block``: in text and Markdown the section stands apart, after exactly one blank line
    whatever the sections before it left at their end (the gate's verdict, which reads the
    same after the report as on its own).
    """

    block = False

    def view(self, report: Report) -> V:
        """The section's typed view of the report."""
        raise NotImplementedError


class PairSection(_Renders[V]):
    """A section shown once per compared pair (per metric, slicing column and candidate)."""

    def view(self, pair: PairContext) -> V:
        """The section's typed view of one pair."""
        raise NotImplementedError


S = TypeVar("S", Section[Any], PairSection[Any])


class _Only:
    """A section listed at one point of the report for some formats only."""

    def __init__(self, section: Any, formats: frozenset[Format]) -> None:
        self._section = section
        self.name = section.name
        self.formats = formats & section.formats
        self.block = getattr(section, "block", False)

    def view(self, arg: Any) -> Any:
        return self._section.view(arg)

    def render(self, fmt: Format, view: Any) -> Any:
        return self._section.render(fmt, view) if fmt in self.formats else None


def only(section: S, *formats: Format) -> S:
    """``section``, shown at this point of the list by ``formats`` alone."""
    return _Only(section, frozenset(formats))  # type: ignore[return-value]
