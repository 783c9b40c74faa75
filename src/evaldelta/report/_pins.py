"""Pins side by side: one column per compared arm, the rows where the arms differ first.

Shared by the text report (differing pins only) and the HTML (differing rows highlighted,
the pins every arm shares folded away). Values stay raw text: the HTML escapes them. A pin's
text (``fmt_pin``) is the gate's, which states a pin difference when it refuses to decide.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from evaldelta.comparison.model import Comparison, PinValue
from evaldelta.gating.confounds import fmt_pin

__all__ = ["PinsView", "fmt_pin", "pins_view"]

MISSING = "(not recorded)"


@dataclass(frozen=True)
class PinsView:
    """The compared arms' pins: ``differing`` rows (key, one value per arm) and ``same``."""

    arms: tuple[str, ...]
    differing: list[tuple[str, list[str]]] = field(default_factory=list)
    same: list[tuple[str, str]] = field(default_factory=list)


def _canonical(value: PinValue) -> tuple[str, object]:
    """Equal pins compare equal across types: 0 and 0.0 are one number, False is not 0."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int | float):
        return ("number", float(value))
    return ("text", value)


def pins_view(comparison: Comparison) -> PinsView | None:
    """None when no arm carries pins (the inputs were not a run store)."""
    order = (comparison.baseline, *comparison.candidates)
    arms = tuple(a for a in order if a in comparison.pins)
    if not arms:
        return None
    keys = sorted({k for a in arms for k in comparison.pins[a]})
    view = PinsView(arms=arms)
    for key in keys:
        raw = [comparison.pins[a].get(key) for a in arms]
        present = [key in comparison.pins[a] for a in arms]
        values = [fmt_pin(v) if p else MISSING for v, p in zip(raw, present, strict=True)]
        kinds = {
            _canonical(v) if p else ("missing", None) for v, p in zip(raw, present, strict=True)
        }
        if len(kinds) > 1:
            view.differing.append((key, values))
        else:
            view.same.append((key, values[0]))
    return view
