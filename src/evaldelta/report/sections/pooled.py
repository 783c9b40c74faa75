"""The pooled number: each arm on its own slice mix, labelled as such, and its flags.

Beside it, the per-attempt contrast (repeats), the attempts flag when the two disagree in
sign, and the mix-shift / Simpson flag when the pooled and standardized differences do.
Text: the pooled line and the flags, with the slice whose share differs most. Markdown: a
bullet each. HTML: the attempts and the flags (the pooled rates are in the rates table).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import RenderableType

from evaldelta.comparison.model import ALL_CASES
from evaldelta.report._escape import md_text
from evaldelta.report._facts import attempt_flag, attempt_sentence
from evaldelta.report._format import fmt, fmt_delta, fmt_pct
from evaldelta.report.sections._base import PairSection
from evaldelta.report.sections._html import piece
from evaldelta.report.sections._lines import terminal_lines
from evaldelta.report.sections.pairs import PairContext

__all__ = ["POOLED"]


@dataclass(frozen=True)
class PooledView:
    ctx: PairContext


def _simpson_lines(ctx: PairContext) -> list[str]:
    pair, binary, c = ctx.pair, ctx.binary, ctx.pair.candidate
    sim = pair.simpson
    if sim is None or sim.kind == "none" or sim.standardized_delta is None:
        return []
    word = "Simpson reversal" if sim.kind == "reversal" else "Mix shift"
    lower = sum(1 for v in sim.slice_deltas.values() if v < 0)
    higher = sum(1 for v in sim.slice_deltas.values() if v > 0)
    lines = [
        f"! {word}: the pooled difference ({fmt_delta(sim.pooled_delta, binary)}) and the "
        f"standardized difference ({fmt_delta(sim.standardized_delta, binary)}) "
        "disagree in sign."
    ]
    if sim.kind == "reversal":
        lines.append(
            f"  Every common slice moves the same way ({c} "
            f"{'lower' if lower else 'higher'} on all {len(sim.slice_deltas)}), yet the "
            "pooled number moves the other way: the slice mix, not the model, made it."
        )
    else:
        lines.append(
            f"  {c} is lower on {lower} of {len(sim.slice_deltas)} slices and higher on "
            f"{higher}; the pooled number reflects each arm's slice mix. "
            "The standardized result is the quality signal."
        )
    return lines


def _largest_mix_gap(ctx: PairContext) -> str:
    """The slice whose share of the evidence differs most between the two arms."""
    b, c, arms = ctx.pair.baseline, ctx.pair.candidate, ctx.arms
    nb = {a.slice: a.scored_cases for a in arms if a.arm == b and a.slice != ALL_CASES}
    nc = {a.slice: a.scored_cases for a in arms if a.arm == c and a.slice != ALL_CASES}
    tb, tc = sum(nb.values()), sum(nc.values())
    if not tb or not tc:
        return ""
    # in name order, so a tie goes to the first name (a set's order changes every run)
    gaps = {s: nc.get(s, 0) / tc - nb.get(s, 0) / tb for s in sorted(set(nb) | set(nc))}
    s = max(gaps, key=lambda k: abs(gaps[k]))
    share_b, share_c = fmt_pct(nb.get(s, 0) / tb), fmt_pct(nc.get(s, 0) / tc)
    return f"{s} is {share_b} of {b}'s cases and {share_c} of {c}'s"


class _Pooled(PairSection[PooledView]):
    name = "pooled"

    def view(self, pair: PairContext) -> PooledView:
        return PooledView(pair)

    def text(self, view: PooledView) -> list[str]:
        ctx = view.ctx
        pair, metric, binary = ctx.pair, ctx.metric, ctx.binary
        b, c, pooled = pair.baseline, pair.candidate, pair.pooled
        lines = [
            f"Pooled (each arm on its own mix; not a quality comparison when mixes differ): "
            f"{b} {fmt(pooled.baseline)}  {c} {fmt(pooled.candidate)}  "
            f"{c} - {b} {fmt_delta(pooled.delta, binary)}"
        ]
        attempts = attempt_sentence(pair, metric)
        if attempts is not None:
            lines.append(f"  {attempts}")
        flag = attempt_flag(pair, metric)
        if flag is not None:
            lines.append(f"! {flag}")
        lines += _simpson_lines(ctx)
        shift = _largest_mix_gap(ctx)
        if shift and pair.simpson is not None and pair.simpson.kind != "none":
            lines.append(f"  Largest mix difference: {shift}.")
        return [*lines, ""]

    def terminal(self, view: PooledView) -> list[RenderableType]:
        return list(terminal_lines(self.text(view)))

    def markdown(self, view: PooledView) -> list[str]:
        pair, metric, binary = view.ctx.pair, view.ctx.metric, view.ctx.binary
        out = [
            f"- Pooled (each arm on its own mix): {fmt(pair.pooled.baseline)} → "
            f"{fmt(pair.pooled.candidate)} ({fmt_delta(pair.pooled.delta, binary)})"
        ]
        attempts = attempt_sentence(pair, metric, md_text)
        if attempts is not None:
            out.append(f"  - {attempts}")
        flag = attempt_flag(pair, metric, md_text)
        if flag is not None:
            head, _, rest = flag.partition(": ")
            out.append(f"- ⚠️ **{head}:** {rest}")
        if pair.simpson is not None and pair.simpson.kind != "none":
            word = "Simpson reversal" if pair.simpson.kind == "reversal" else "mix shift"
            out.append(f"- ⚠️ **{word}**: pooled and standardized differences disagree in sign")
        return out

    def html(self, view: PooledView) -> str:
        return piece("sections/pooled.html.j2", v=view.ctx.html)


POOLED = _Pooled()
