"""Pins: the loud warning when arms differ beyond their declared difference, and the table.

The warning (text, terminal, Markdown) names every pin that differs beyond the declared arm
difference; the table lists the pins that differ (text, terminal) or all of them, the same
ones folded (HTML). Both read ``report/_pins.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import RenderableType

from evaldelta.comparison.model import PinDifference
from evaldelta.report._escape import md_code, md_text
from evaldelta.report._pins import PinsView, fmt_pin, pins_view
from evaldelta.report.sections._base import Report, Section
from evaldelta.report.sections._html import piece
from evaldelta.report.sections._lines import table, terminal_lines

__all__ = ["PINS", "PIN_WARNING"]


@dataclass(frozen=True)
class WarningView:
    differences: tuple[PinDifference, ...]


class _PinWarning(Section[WarningView]):
    name = "pin_warning"
    formats = frozenset(("text", "terminal", "markdown"))

    def view(self, report: Report) -> WarningView:
        return WarningView(tuple(report.comparison.pin_differences))

    def text(self, view: WarningView) -> list[str]:
        if not view.differences:
            return []
        shown = "; ".join(
            f"{d.key} (" + ", ".join(f"{a} {fmt_pin(v)}" for a, v in d.values.items()) + ")"
            for d in view.differences
        )
        return [
            "!! PINS DIFFER BEYOND THE ARMS' DECLARED DIFFERENCE: " + shown,
            "   The arms differ in more than the release under test, so every difference below "
            "mixes the two changes.",
            "   Rerun with the setup held fixed, or accept it explicitly (compare "
            "--allow-pin-diff KEY; a gate policy's [pins] allow = [...]).",
            "",
        ]

    def terminal(self, view: WarningView) -> list[RenderableType]:
        return list(terminal_lines(self.text(view)))

    def markdown(self, view: WarningView) -> list[str]:
        if not view.differences:
            return []
        shown = "; ".join(
            f"{md_code(d.key)} ("
            + ", ".join(f"{md_text(a)} {md_text(fmt_pin(v))}" for a, v in d.values.items())
            + ")"
            for d in view.differences
        )
        return [
            f"> ⚠️ **The arms differ beyond the release under test:** {shown}. "
            "Every difference below mixes the two changes.",
            "",
        ]


@dataclass(frozen=True)
class PinsTableView:
    pins: PinsView | None


class _Pins(Section[PinsTableView]):
    name = "pins"
    formats = frozenset(("text", "terminal", "html"))

    def view(self, report: Report) -> PinsTableView:
        return PinsTableView(pins_view(report.comparison))

    def text(self, view: PinsTableView) -> list[str]:
        """The pins that differ between the compared arms (the rest are counted, not listed)."""
        pins = view.pins
        if pins is None:
            return []
        if not pins.differing:
            return [f"Pins: all {len(pins.same)} are the same in every compared arm.", ""]
        same = f"{len(pins.same)} more, the same in every arm, are listed in JSON and HTML"
        rows = [[key, *values] for key, values in pins.differing]
        lines = [f"Pins that differ between the arms ({same}):"]
        lines.extend(table(["pin", *pins.arms], rows, left=tuple(range(len(pins.arms) + 1))))
        return [*lines, ""]

    def terminal(self, view: PinsTableView) -> list[RenderableType]:
        return list(terminal_lines(self.text(view)))

    def html(self, view: PinsTableView) -> str:
        return piece("sections/pins.html.j2", pins=view.pins)


PIN_WARNING = _PinWarning()
PINS = _Pins()
