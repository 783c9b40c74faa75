"""Mixes and break-even (issue 13): the standardized delta under each mix, side by side.

Text and terminal: one table row per mix, when there are several (listed before the
standardized lines). HTML: the mix sensitivity block, with each mix's break-even shares and
the sweep panels (one slice's share swept from 0 to 100%). The rows and sweeps are
``report/_mixes.py``'s; with one slice every mix gives it all the weight, so none is shown.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import RenderableType

from evaldelta.report._facts import break_even_sentences
from evaldelta.report._mixes import mix_rows
from evaldelta.report.sections._base import PairSection
from evaldelta.report.sections._html import piece
from evaldelta.report.sections._lines import table, terminal_lines
from evaldelta.report.sections.pairs import PairContext

__all__ = ["MIXES"]


@dataclass(frozen=True)
class MixesView:
    ctx: PairContext
    shown: bool  # more than one slice: the mixes differ


class _Mixes(PairSection[MixesView]):
    name = "mixes"
    formats = frozenset(("text", "terminal", "html"))

    def view(self, pair: PairContext) -> MixesView:
        return MixesView(pair, pair.only is None)

    def text(self, view: MixesView) -> list[str]:
        pair = view.ctx.pair
        if not view.shown or len(pair.standardized) < 2:
            return []
        b, c = pair.baseline, pair.candidate
        rows = [
            [r.mix, r.baseline, r.candidate, r.delta, r.ci, r.verdict]
            for r in mix_rows(pair, view.ctx.binary)
        ]
        header = ["mix", b, c, f"{c} - {b}", "interval", "verdict"]
        return [
            f"Mixes side by side: {c} - {b} standardized under each mix "
            "(the mix shipping may move):",
            *table(header, rows, left=(0, 4, 5)),
        ]

    def terminal(self, view: MixesView) -> list[RenderableType]:
        return list(terminal_lines(self.text(view)))

    def html(self, view: MixesView) -> str:
        from evaldelta.report import plots
        from evaldelta.report._mixes import sweep_caption, sweep_panels, sweep_shown

        ctx = view.ctx
        pair, v = ctx.pair, ctx.html
        context: dict[str, object] = {"mixes": [], "mix_gate": False, "mix_break_even": []}
        context |= {"sweep": [], "sweep_svg": "", "sweep_captions": [], "sweep_shown": ""}
        if len(pair.slices) != 1:  # every mix gives the one slice all the weight
            rows = mix_rows(pair, ctx.binary, ctx.verdict)
            shares = [(s.mix, break_even_sentences(s, pair.candidate)) for s in pair.standardized]
            sweep = sweep_panels(pair, ctx.binary, ctx.verdict)
            captions = [sweep_caption(p) for p in sweep]
            context |= {
                "mixes": rows,
                "mix_gate": any(r.gate for r in rows),
                "mix_break_even": [(m, t) for m, t in shares if t],
                "sweep": sweep,
                "sweep_captions": captions,
                "sweep_shown": sweep_shown(pair, sweep) if sweep else "",
            }
            if sweep:
                fig = plots.sweep_figure(sweep, unit=v.unit, plot_id=v.index)
                title = "Standardized delta as one slice's share sweeps: " + "; ".join(captions)
                context["sweep_svg"] = plots.figure_svg(fig, title=title)
        return piece("sections/mixes.html.j2", v=v, confidence=ctx.conf, **context)


MIXES = _Mixes()
