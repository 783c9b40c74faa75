"""Each pair's heading: what is compared, and the answer before any table.

The answer is one or two sentences (higher = better): whether these cases tell the
candidate from the baseline overall, and the worst slice, named in the tables' own order
(``comparison.ordering.ordered_slices``). A warning follows when no pairing was possible.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.console import RenderableType
from rich.text import Text

from evaldelta.comparison.model import ArmSlice, PairComparison
from evaldelta.comparison.ordering import headline_standardized, ordered_slices
from evaldelta.report._escape import md_code, md_text
from evaldelta.report._facts import direction, metric_kind, scale_phrase
from evaldelta.report._format import fmt_ci, fmt_delta, fmt_pct
from evaldelta.report._sequential import CS_WORD, P_WORD, intervals_phrase
from evaldelta.report.sections._base import PairSection
from evaldelta.report.sections._html import piece
from evaldelta.report.sections._lines import styled, term
from evaldelta.report.sections.pairs import PairContext
from evaldelta.stats import FixedMix, PairedResult, UnpairedResult

__all__ = ["HEADING", "answer_lines"]


def _same(text: str) -> str:
    return text


def _overall_sentence(
    pair: PairComparison, binary: bool, b: str, c: str, sequential: bool
) -> list[str]:
    res: PairedResult | UnpairedResult | FixedMix | None
    if pair.paired_available:
        res, what = pair.overall.main, f"on {pair.overall.n_pairs} paired cases"
    else:
        std = headline_standardized(pair)
        res, what = std.delta, f"under the {std.mix} mix (unpaired)"
    if res is None or not math.isfinite(res.ci.low):
        return []
    delta, ci = fmt_delta(res.estimate, binary), fmt_ci(res.ci.low, res.ci.high, binary)
    if res.ci.low > 0 or res.ci.high < 0:
        word = "higher" if res.estimate > 0 else "lower"
        return [f"Answer: {c} scores {word} than {b} {what}: {delta} {ci}."]
    return [
        f"Answer: these cases cannot tell {c} from {b} {what}: {delta} {ci}; "
        f"the {CS_WORD if sequential else 'interval'} contains both a gain and a loss."
    ]


def answer_lines(
    pair: PairComparison,
    binary: bool,
    name: Callable[[str], str] = _same,
    confidence: float = 0.95,
    arms: Sequence[ArmSlice] = (),
    sequential: bool = False,
) -> list[str]:
    """One or two sentences that answer the question before any table (higher = better).

    ``name`` escapes every name from the data for the caller's format (Markdown). The worst
    slice named is the first of the tables' own order (:func:`ordered_slices`).
    ``sequential``: the intervals are confidence sequences and the p-values anytime-valid,
    and the sentences say so.
    """
    b, c = name(pair.baseline), name(pair.candidate)
    out = _overall_sentence(pair, binary, b, c, sequential)
    alpha = 1.0 - confidence
    order = ordered_slices(pair, arms).slices
    finite = [d for d in order if d.main is not None and math.isfinite(d.main.ci.high)]
    below = [d for d in finite if d.main is not None and d.main.ci.high < 0]
    moved = [d for d in finite if direction(d, alpha) == "worse"]
    shown = moved or below
    if shown and shown[0].main is not None:
        d, worst_res = shown[0], shown[0].main
        share = f", {fmt_pct(d.traffic_share)} of traffic" if d.traffic_share else ""
        p = f"Holm-adjusted {P_WORD}" if sequential else "Holm-adjusted p"
        count = f"{len(moved)} of {len(pair.slices)} slice(s) regress at {p} < {alpha:g}"
        if len(below) != len(moved):
            verb = "has" if len(below) == 1 else "have"
            what = CS_WORD if sequential else "interval"
            count += f"; {len(below)} {verb} an unadjusted {what} below zero"
        out.append(
            f"Worst slice: {name(d.slice)} {fmt_delta(worst_res.estimate, binary)} "
            f"{fmt_ci(worst_res.ci.low, worst_res.ci.high, binary)}{share}; {count}."
        )
    return [*out, ""] if out else []


@dataclass(frozen=True)
class HeadingView:
    ctx: PairContext
    title: str  # the text and terminal title line
    answer: tuple[str, ...]  # the answer lines, a blank line after them


class _Heading(PairSection[HeadingView]):
    name = "heading"

    def view(self, pair: PairContext) -> HeadingView:
        p, conf = pair.pair, intervals_phrase(pair.comparison)
        title = (
            f"evaldelta compare · {p.baseline} -> {p.candidate} · metric: "
            f"{pair.metric.metric} ({metric_kind(pair.metric)}) · by {pair.by} · {conf}"
        )
        conf_f = pair.comparison.confidence
        answer = answer_lines(
            p, pair.binary, confidence=conf_f, arms=pair.arms, sequential=pair.sequential
        )
        return HeadingView(pair, title, tuple(answer))

    def text(self, view: HeadingView) -> list[str]:
        ctx = view.ctx
        pair, b, c = ctx.pair, ctx.pair.baseline, ctx.pair.candidate
        lines = [view.title, "", *view.answer]
        if not pair.paired_available:
            lines += [
                (
                    f"! No paired analysis: {b} and {c} share no scored case "
                    f"({pair.overall.unscored_in_one} cases are in both arms but unlabeled "
                    "in one)."
                    if pair.overall.unscored_in_one
                    else f"! No paired analysis: {b} and {c} share no cases "
                    "(two different eval sets)."
                ),
                "  The per-slice differences below are unpaired ("
                + ("Newcombe interval for two independent proportions" if ctx.single else "Welch t")
                + ").",
                "",
            ]
        return lines

    def terminal(self, view: HeadingView) -> list[RenderableType]:
        pair = view.ctx.pair
        out: list[RenderableType] = [term(view.title, style="bold cyan"), Text("")]
        out += [styled(x) for x in view.answer]
        if not pair.paired_available:
            out.append(
                styled(
                    f"! No paired analysis: {pair.baseline} and {pair.candidate} share no cases."
                )
            )
        return out

    def markdown(self, view: HeadingView) -> list[str]:
        ctx = view.ctx
        pair, metric = ctx.pair, ctx.metric
        b, c = pair.baseline, pair.candidate
        out = [
            f"### evaldelta: {md_code(c)} vs {md_code(b)} · {md_text(metric.metric)} · "
            f"by {md_text(ctx.by)}",
            "",
        ]
        conf = ctx.comparison.confidence
        answer = answer_lines(
            pair, ctx.binary, md_text, confidence=conf, arms=ctx.arms, sequential=ctx.sequential
        )
        for line in answer:  # the text report's own sentences, names escaped
            if line:
                out += [line, ""]
        scale = scale_phrase(metric)
        if scale:
            out += [f"_{md_text(metric.metric)} is graded: {md_text(scale)}._", ""]
        if not pair.paired_available:
            out += [f"> **No paired analysis:** {md_code(b)} and {md_code(c)} share no cases.", ""]
        return out

    def html(self, view: HeadingView) -> str:
        return piece("sections/heading.html.j2", v=view.ctx.html)


HEADING = _Heading()
