"""Arms coupled by seed (``run --couple``): how far their per-case outcomes moved together.

Shown for a pair whose run asked for coupling (the arms' pins record ``couple``): the
realised per-case correlation, the paired SE beside the SE independent draws would give,
and the variance the pairing saved, over all cases and per slice; every figure is the
Comparison's (:class:`~evaldelta.comparison.model.Coupling`). When an arm's provider took
no seed the line says the draws were not coupled, and the figures then measure the pairing
by case alone. Pairs of runs made without ``--couple`` show nothing here (the JSON carries
the figures for every pair).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evaldelta.report._escape import md_text
from evaldelta.report._format import fmt, fmt_pct
from evaldelta.report.sections._base import PairSection
from evaldelta.report.sections._html import piece
from evaldelta.report.sections._lines import terminal_lines
from evaldelta.report.sections.pairs import PairContext

if TYPE_CHECKING:
    from collections.abc import Callable

    from rich.console import RenderableType

    from evaldelta.comparison.model import SliceCoupling

__all__ = ["COUPLING"]


@dataclass(frozen=True)
class CouplingView:
    ctx: PairContext


@dataclass(frozen=True)
class Sentences:
    """What one format prints; ``headline`` None when the run did not ask for coupling."""

    headline: str | None = None
    flag: str | None = None  # an arm that was asked to couple and took no seed
    slices: str | None = None  # per slice, when there are several


def _less(x: float) -> str:
    if not math.isfinite(x):
        return "variance reduction n/a"
    return f"{fmt_pct(abs(x))} {'less' if x >= 0 else 'more'} variance"


def _se(a: float, b: float) -> tuple[str, str]:
    small = min((v for v in (a, b) if math.isfinite(v)), default=1.0)
    places = 4 if small < 0.01 else 3
    return fmt(a, places), fmt(b, places)


def _figures(s: SliceCoupling) -> str:
    paired, independent = _se(s.paired_se, s.independent_se)
    return (
        f"per-case correlation {fmt(s.correlation, 2)}; paired SE {paired} vs {independent} "
        f"for independent draws: {_less(s.variance_reduction)}"
    )


def sentences(ctx: PairContext, name: Callable[[str], str] = str) -> Sentences:
    coupling = ctx.pair.coupling
    if coupling is None or not coupling.requested:
        return Sentences()
    seed = f" (run seed {coupling.run_seed})" if coupling.run_seed is not None else ""
    figures = _figures(coupling.overall)
    flag = None
    if coupling.coupled:
        headline = f"Arms coupled by seed{seed}: {figures}."
    else:
        arms = " and ".join(name(a) for a in coupling.not_coupled)
        why = (
            f"{arms} took no seed (its provider has none)"
            if arms
            else "the arms come from runs with different run seeds"
        )
        headline = f"Arms paired by case, not coupled: {figures}."
        flag = (
            f"--couple was asked{seed}, but {why}, so the draws were not coupled: the "
            "figures measure the pairing by case alone"
        )
    slices = None
    if len(coupling.slices) > 1:
        slices = "; ".join(
            f"{name(s.slice)} r {fmt(s.correlation, 2)}, {_less(s.variance_reduction)}"
            for s in coupling.slices
        )
    return Sentences(headline, flag, slices)


class _Coupling(PairSection[CouplingView]):
    name = "coupling"

    def view(self, pair: PairContext) -> CouplingView:
        return CouplingView(pair)

    def text(self, view: CouplingView) -> list[str]:
        said = sentences(view.ctx)
        if said.headline is None:
            return []
        lines = [f"! {said.flag}"] if said.flag else []
        lines.append(said.headline)
        if said.slices:
            lines.append(f"  by slice: {said.slices}")
        return lines

    def terminal(self, view: CouplingView) -> list[RenderableType]:
        return list(terminal_lines(self.text(view)))

    def markdown(self, view: CouplingView) -> list[str]:
        said = sentences(view.ctx, md_text)
        if said.headline is None:
            return []
        out = [f"- ⚠️ {said.flag}"] if said.flag else []
        out.append(f"- {said.headline}")
        if said.slices:
            out.append(f"  - by slice: {said.slices}")
        return out

    def html(self, view: CouplingView) -> str:
        return piece("sections/coupling.html.j2", v=sentences(view.ctx))


COUPLING = _Coupling()
