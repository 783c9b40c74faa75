"""Per-slice deltas, worst first, and all cases: the table every format leads with.

One order for every format (``ordering.ordered_slices``), stated under the table; with one
slice, the all-cases row alone (a row for the slice would repeat it). Text: every slice;
Markdown: the worst :data:`SHOWN`; HTML: every slice, beside the forest plot.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.console import RenderableType
from rich.table import Table

from evaldelta.comparison.model import ArmSlice, SliceDelta
from evaldelta.comparison.ordering import MIN_RANKED_N
from evaldelta.report._escape import md_text
from evaldelta.report._facts import direction, one_slice_sentence, rests_on
from evaldelta.report._format import fmt, fmt_ci, fmt_delta, fmt_p, fmt_pct
from evaldelta.report._sequential import p_head
from evaldelta.report.sections._base import PairSection
from evaldelta.report.sections._html import piece
from evaldelta.report.sections._lines import table, term
from evaldelta.report.sections.pairs import PairContext

if TYPE_CHECKING:
    from evaldelta.report import plots

__all__ = ["SHOWN", "SLICES", "forest"]

METHOD_NAMES = {"newcombe": "Newcombe", "wald": "Wald"}
SHOWN = 3  # rows of the per-slice table in a PR comment (the full table is text and HTML)
WHERE = "in the text and HTML reports (`--format text`, `--format html`) and the JSON"


def _rate(arm: ArmSlice | None, single: bool) -> str:
    if arm is None or arm.scored_cases == 0:
        return "no cases"
    if single:
        passed = round(arm.estimate.estimate * arm.scored_cases)
        return f"{fmt(arm.estimate.estimate)} ({passed}/{arm.scored_cases})"
    return f"{fmt(arm.estimate.estimate)} (n={arm.scored_cases})"


def _paired_rate(mean: float, n: int, single: bool) -> str:
    """A rate on the paired cases of one slice (the cases the delta is computed on)."""
    if single:
        return f"{fmt(mean)} ({round(mean * n)}/{n})"
    return f"{fmt(mean)} (n={n})"


def _cells(ctx: PairContext, d: SliceDelta, has_traffic: bool, overall: bool = False) -> list[str]:
    """One row of the text and terminal table."""
    binary, single = ctx.binary, ctx.single
    b, c = ctx.pair.baseline, ctx.pair.candidate
    arm_at = {(a.arm, a.slice): a for a in ctx.arms}
    res = d.main
    if res is None:
        diff, ci, p = "n/a", "(no evidence in both arms)", ""
    else:
        diff = fmt_delta(res.estimate, binary)
        ci = fmt_ci(res.ci.low, res.ci.high, binary) + rests_on(d, binary and not single)
        p = fmt_p(res.pvalue if overall else d.pvalue_holm, ctx.alpha)
    n = f"{d.n_pairs} pair{'s' if d.n_pairs != 1 else ''}" if d.n_pairs else ""
    if d.basis == "paired":
        rates = (
            _paired_rate(d.baseline_mean, d.n_pairs, single),
            _paired_rate(d.candidate_mean, d.n_pairs, single),
        )
    else:
        rates = (_rate(arm_at.get((b, d.slice)), single), _rate(arm_at.get((c, d.slice)), single))
    cells = ["all cases" if overall else d.slice, diff, ci, p, n, *rates]
    if has_traffic:
        cells.append("" if overall else fmt_pct(d.traffic_share))
    return cells


@dataclass(frozen=True)
class SlicesView:
    ctx: PairContext
    title: str
    caption: str
    header: tuple[str, ...]
    has_traffic: bool
    shown: tuple[SliceDelta, ...]  # the slice rows (none when there is one slice)


class _Slices(PairSection[SlicesView]):
    name = "slices"

    def view(self, pair: PairContext) -> SlicesView:
        p, only = pair.pair, pair.only
        b, c = p.baseline, p.candidate
        unit = "pts" if pair.binary else "score units"
        how = "paired on shared cases" if p.paired_available else "unpaired"
        title = f"Per slice, worst first: {c} - {b}, in {unit} ({how})"
        caption = f"(order: {pair.order.rule(p.paired_available)})"
        if only is not None:
            title, caption = (
                f"All cases: {c} - {b}, in {unit} ({how})",
                f"({one_slice_sentence(only)})",
            )
        has_traffic = any(d.traffic_share is not None for d in p.slices)
        head = ["slice", "delta", pair.interval_head, p_head(pair.comparison, only is None)]
        head += ["n", b, c, *(("traffic",) if has_traffic else ())]
        shown = pair.order.slices if only is None else ()
        return SlicesView(pair, title, caption, tuple(head), has_traffic, tuple(shown))

    def text(self, view: SlicesView) -> list[str]:
        ctx = view.ctx
        rows = [_cells(ctx, d, view.has_traffic) for d in view.shown]
        rows.append(_cells(ctx, ctx.pair.overall, view.has_traffic, overall=True))
        lines = [view.title, f"  {view.caption}", *table(list(view.header), rows, left=(0, 2))]
        o = ctx.pair.overall
        method = o.main.method if o.main is not None else ""
        if o.alternative_ci is not None and o.alternative_interval:
            name = METHOD_NAMES.get(o.alternative_interval, o.alternative_interval)
            method += (
                f"; {name} interval for contrast: "
                f"{fmt_ci(o.alternative_ci.low, o.alternative_ci.high, ctx.binary)}"
            )
        holm = (
            "" if ctx.only is not None else "; p in the slice rows is Holm-adjusted across slices"
        )
        if ctx.sequential:
            holm = f"; every p is anytime-valid{holm}"
        return [*lines, f"  (all cases: {method}{holm})", ""]

    def terminal(self, view: SlicesView) -> list[RenderableType]:
        return [slice_table(view)]

    def markdown(self, view: SlicesView) -> list[str]:
        return _markdown(view)

    def html(self, view: SlicesView) -> str:
        from evaldelta.report import plots

        rows, overall = forest(view.ctx)
        v = view.ctx.html
        svg = plots.figure_svg(
            plots.forest_figure(rows, unit=v.unit, plot_id=v.index, overall=overall),
            title=f"Per-slice deltas, {v.candidate} - {v.baseline}",
        )
        return piece(
            "sections/slices.html.j2",
            v=v,
            interval_head=view.ctx.interval_head,
            p_head=p_head(view.ctx.comparison, not v.one_slice),
            sequential=view.ctx.sequential,
            forest_svg=svg,
            forest_note=_forest_note(rows, overall),
        )


def slice_table(view: SlicesView) -> Table:
    """The terminal's table: the slice's delta coloured by its direction, all cases bold."""
    ctx = view.ctx
    t = Table(
        title=term(view.title),
        title_justify="left",
        caption=term(view.caption),
        caption_justify="left",
        header_style="bold",
    )
    for i, head in enumerate(view.header):
        t.add_column(term(head), justify="left" if i in (0, 2) else "right")
    for d in view.shown:
        cells = _cells(ctx, d, view.has_traffic)
        style = {"worse": "red", "better": "green"}.get(direction(d, ctx.alpha), "")
        t.add_row(*(term(x, style=style if i == 1 else "") for i, x in enumerate(cells)))
    cells = _cells(ctx, ctx.pair.overall, view.has_traffic, overall=True)
    t.add_row(*(term(x, style="bold") for x in cells), end_section=True)
    return t


def _markdown(view: SlicesView) -> list[str]:
    ctx = view.ctx
    pair, binary, alpha = ctx.pair, ctx.binary, ctx.alpha
    caveat = binary and ctx.metric.repeated
    b, c = md_text(pair.baseline), md_text(pair.candidate)
    p = p_head(ctx.comparison, ctx.only is None)
    out = [
        f"| slice | {c} − {b} | {ctx.interval_head} | {p} | n |",
        "|---|---:|---|---:|---:|",
    ]
    shown = view.shown[:SHOWN]
    for d in shown:
        res = d.main
        delta, ci = "n/a", "(no evidence in both arms)"
        if res is not None:
            delta, ci = fmt_delta(res.estimate, binary), fmt_ci(res.ci.low, res.ci.high, binary)
        out.append(
            f"| {md_text(d.slice)} | {delta} | {ci}{rests_on(d, caveat)} | "
            f"{fmt_p(d.pvalue_holm, alpha)} | {d.n_pairs or ''} |"
        )
    o = pair.overall.main
    if o is not None:
        out.append(
            f"| **all cases** | {fmt_delta(o.estimate, binary)} | "
            f"{fmt_ci(o.ci.low, o.ci.high, binary)}{rests_on(pair.overall, caveat)} | "
            f"{fmt_p(o.pvalue, alpha)} | {pair.overall.n_pairs or ''} |"
        )
    note = f"_Order: {ctx.order.rule(pair.paired_available)}; {ctx.order.cut(len(shown), WHERE)}._"
    if ctx.only is not None:  # a row for the one slice would repeat the all-cases row
        note = f"_{md_text(one_slice_sentence(ctx.only))}._"
    return [*out, "", note, ""]


def forest(ctx: PairContext) -> tuple[list[plots.ForestRow], plots.ForestRow]:
    """The forest plot's slice rows (worst first) and its all-cases row, in display units."""
    from evaldelta.report._html_views import forest_rows, margins_for

    order = ctx.order
    ordered = [] if len(ctx.pair.slices) == 1 else list(order.slices)
    few = {d.slice for d in order.slices[order.ranked :]}
    margins = margins_for(ctx.verdict, ctx.metric.metric, ctx.by, ctx.pair.candidate)
    rows = forest_rows(ordered, ctx.binary, margins, ctx.alpha, few)
    overall = forest_rows([ctx.pair.overall], ctx.binary, {}, ctx.alpha)[0]
    return rows, overall


def _forest_note(rows: list[plots.ForestRow], overall: plots.ForestRow) -> str:
    """What the forest plot's axis is set by, and which intervals run past it (cut, marked)."""
    from evaldelta.report import plots

    cut = plots.forest_clipped(rows, overall)
    if not cut:
        return ""
    one = len(cut) == 1
    noun, whose = (
        ("interval runs", "its full interval is")
        if one
        else ("intervals run", "their full intervals are")
    )
    return (
        f"The axis is set by the slices with at least {MIN_RANKED_N} pairs and all cases; "
        f"{len(cut)} {noun} past it, cut at the edge and marked with an arrowhead: "
        f"{', '.join(cut)} ({whose} in the table)"
    )


SLICES = _Slices()
