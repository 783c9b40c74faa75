"""The standardized (fixed-mix) result: each arm on the same slice weights.

Text: per mix, each arm's standardized rate, the delta with its interval and basis, why it
differs from the all-cases interval, the weights, break-even and the dropped slices.
Markdown: one bullet per mix, with its verdict word and break-even. HTML: the pooled and
fixed-mix rates per arm (plot and table), the weights and the same notes. Not shown with one
slice (every mix is that slice).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import RenderableType

from evaldelta.comparison.model import Standardized
from evaldelta.report._escape import md_text
from evaldelta.report._facts import (
    break_even_sentences,
    interval_difference,
    standardized_basis,
    standardized_rests_on,
)
from evaldelta.report._format import fmt, fmt_ci, fmt_delta, fmt_pct
from evaldelta.report._mixes import verdict_word
from evaldelta.report.sections._base import PairSection
from evaldelta.report.sections._html import piece
from evaldelta.report.sections._lines import terminal_lines
from evaldelta.report.sections.pairs import PairContext

__all__ = ["STANDARDIZED"]


@dataclass(frozen=True)
class StandardizedView:
    ctx: PairContext
    mixes: tuple[Standardized, ...]  # none with one slice


def _lines(ctx: PairContext, s: Standardized) -> list[str]:
    pair, binary = ctx.pair, ctx.binary
    b, c = pair.baseline, pair.candidate
    title = "Traffic mix" if s.mix == "traffic" else f"Chosen mix ({s.mix})"
    rb, rc = s.per_arm.get(b), s.per_arm.get(c)
    lines = [f"{title}, directly standardized over slices both arms cover:"]
    if rb is not None and rc is not None:
        lines.append(
            f"  {b} {fmt(rb.estimate)} [{fmt(rb.ci.low)}, {fmt(rb.ci.high)}]   "
            f"{c} {fmt(rc.estimate)} [{fmt(rc.ci.low)}, {fmt(rc.ci.high)}]"
        )
    lines.append(
        f"  {c} - {b} {fmt_delta(s.delta.estimate, binary)} "
        f"{fmt_ci(s.delta.ci.low, s.delta.ci.high, binary)}{standardized_rests_on(s)}"
        f"  ({standardized_basis(s)})"
    )
    why = interval_difference(s, pair, binary)
    if why is not None:
        lines.append(f"  {why}")
    weights = ", ".join(f"{k} {fmt_pct(v)}" for k, v in sorted(s.weights.items()))
    lines.append(f"  weights: {weights}")
    lines.extend(f"  break-even: {t}" for t in break_even_sentences(s, c))
    if s.dropped_slices:
        lines.append(
            f"  dropped (not covered by both arms): {', '.join(s.dropped_slices)}, "
            f"carrying {fmt_pct(s.dropped_weight, 1)} of the weight"
        )
    return lines


def _bullets(ctx: PairContext, s: Standardized) -> list[str]:
    pair, binary = ctx.pair, ctx.binary
    out = [
        f"- Standardized ({md_text(s.mix)}): {fmt_delta(s.delta.estimate, binary)} "
        f"{fmt_ci(s.delta.ci.low, s.delta.ci.high, binary)}{standardized_rests_on(s)}: "
        f"{verdict_word(s, pair.candidate, md_text)}"
        + (" (the pairs' own mix: the all-cases paired delta)" if s.same_as_overall else "")
    ]
    why = interval_difference(s, pair, binary, md_text)
    if why is not None:
        out.append(f"  - {why}")
    out.extend(
        f"  - break-even: {t}" for t in break_even_sentences(s, pair.candidate, name=md_text)
    )
    return out


class _Standardized(PairSection[StandardizedView]):
    name = "standardized"

    def view(self, pair: PairContext) -> StandardizedView:
        mixes = tuple(pair.pair.standardized) if pair.only is None else ()
        return StandardizedView(pair, mixes)

    def text(self, view: StandardizedView) -> list[str]:
        return [x for s in view.mixes for x in _lines(view.ctx, s)]

    def terminal(self, view: StandardizedView) -> list[RenderableType]:
        return list(terminal_lines(self.text(view)))

    def markdown(self, view: StandardizedView) -> list[str]:
        return [x for s in view.mixes for x in _bullets(view.ctx, s)]

    def html(self, view: StandardizedView) -> str:
        from evaldelta.report import plots
        from evaldelta.report._html_views import rate_rows

        ctx = view.ctx
        v = ctx.html
        fig = plots.rates_figure(rate_rows(ctx.pair, ctx.arms), arms=(v.baseline, v.candidate))
        svg = plots.figure_svg(fig, title="Pooled and fixed-mix rates per arm")
        return piece("sections/standardized.html.j2", v=v, rates_svg=svg)


STANDARDIZED = _Standardized()
