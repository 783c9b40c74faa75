"""The cases that moved, listed with their scores and outputs side by side: HTML only.

The text report names the first eight in its evidence lines (``evidence.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from evaldelta.report.sections._base import PairSection
from evaldelta.report.sections._html import piece
from evaldelta.report.sections.pairs import PairContext

__all__ = ["MOVED"]


@dataclass(frozen=True)
class MovedSectionView:
    ctx: PairContext


class _Moved(PairSection[MovedSectionView]):
    name = "moved"
    formats = frozenset(("html",))

    def view(self, pair: PairContext) -> MovedSectionView:
        return MovedSectionView(pair)

    def html(self, view: MovedSectionView) -> str:
        return piece("sections/moved.html.j2", v=view.ctx.html)


MOVED = _Moved()
