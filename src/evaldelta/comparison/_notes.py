"""Degenerate-data warnings from the statistics, folded into the artifact's notes."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from evaldelta import stats

__all__ = ["Notes"]


@dataclass
class Notes:
    """Degenerate-data warnings from the statistics, kept as notes in the artifact.

    The same warning in many places (Welch's t on each of 500 one-case slices) is one note
    that names a few of the places and counts the rest (:meth:`folded`).
    """

    items: list[str] = field(default_factory=list)
    _places: dict[str, list[str]] = field(default_factory=dict)

    @contextmanager
    def capture(self, context: str) -> Iterator[None]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield
        for w in caught:
            if issubclass(w.category, stats.StatisticsWarning):
                places = self._places.setdefault(str(w.message), [])
                if context not in places:
                    places.append(context)
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)

    def folded(self, shown: int = 3) -> tuple[str, ...]:
        """Every note: plain ones first, then each warning with its places (a few, counted)."""
        out = list(self.items)
        for message, places in self._places.items():
            if len(places) <= shown:
                out.extend(f"{place}: {message}" for place in places)
            else:
                rest = len(places) - shown
                out.append(
                    f"{message} (in {len(places):,} places: {'; '.join(places[:shown])}; "
                    f"and {rest:,} more)"
                )
        return tuple(out)
