"""The terminal report with rich: the text report's content, with tables and colour.

Used by the CLI only when standard output is a terminal; piped or redirected output stays the
plain :func:`~evaldelta.report.text.render_text`. Colour follows rich's rules: ``NO_COLOR``
(any value) turns it off and the tables still read as tables. Data (slice names, arm names,
case ids) is never parsed as rich markup: every cell is a :class:`rich.text.Text`, made by
:func:`_text`, which also drops every escape sequence and control character from the data
(:func:`~evaldelta.report._escape.term_text`).
"""

from __future__ import annotations

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from evaldelta.model import ArmSlice, Comparison, MetricResult, PairComparison
from evaldelta.report._escape import term_text
from evaldelta.report._facts import direction, one_slice, one_slice_sentence, ordered_slices
from evaldelta.report._format import fmt, fmt_pct
from evaldelta.report._text_evidence import _coverage_lines, _evidence_lines
from evaldelta.report.text import (
    _answer_lines,
    _arm_lines,
    _label,
    _pin_lines,
    _pooled_lines,
    _slice_cells,
    _standardized_lines,
    baseline_line,
    loud_note_lines,
    pin_warning_lines,
    repeats_lines,
)

__all__ = ["print_terminal", "terminal_renderables"]


def _text(text: str, style: str = "") -> Text:
    """Data-bearing text for the terminal: never markup, never a control sequence."""
    return Text(term_text(text), style=style)


def _line(text: str) -> Text:
    if text.startswith("!") or text.lstrip().startswith("! "):
        return _text(text, style="bold yellow")
    if text.startswith("Answer:"):
        return _text(text, style="bold")
    if text.startswith("Worst slice:"):
        return _text(text, style="bold red")
    return _text(text)


def _slice_table(
    comparison: Comparison,
    metric: MetricResult,
    arms: tuple[ArmSlice, ...],
    pair: PairComparison,
) -> Table:
    b, c = pair.baseline, pair.candidate
    binary = metric.kind == "binary"
    single = binary and not metric.repeated
    unit = "pts" if binary else "score units"
    has_traffic = any(d.traffic_share is not None for d in pair.slices)
    arm_at = {(a.arm, a.slice): a for a in arms}
    order = ordered_slices(pair, arms)
    how = "paired on shared cases" if pair.paired_available else "unpaired"
    only = one_slice(pair)
    title = f"Per slice, worst first: {c} - {b}, in {unit} ({how})"
    caption = f"(order: {order.rule(pair.paired_available)})"
    if only is not None:  # a row for the one slice would repeat the all-cases row
        title, caption = f"All cases: {c} - {b}, in {unit} ({how})", f"({one_slice_sentence(only)})"
    table = Table(
        title=_text(title),
        title_justify="left",
        caption=_text(caption),
        caption_justify="left",
        header_style="bold",
    )
    p_head = "p (Holm)" if only is None else "p"
    heads = ["slice", "delta", f"{fmt_pct(comparison.confidence)} interval", p_head, "n", b, c]
    if has_traffic:
        heads.append("traffic")
    for i, head in enumerate(heads):
        table.add_column(_text(head), justify="left" if i in (0, 2) else "right")
    alpha = 1.0 - comparison.confidence
    for d in order.slices if only is None else ():
        cells = _slice_cells(d, binary, single, arm_at, b, c, has_traffic, alpha=alpha)
        style = {"worse": "red", "better": "green"}.get(
            direction(d, 1.0 - comparison.confidence), ""
        )
        table.add_row(*(_text(x, style=style if i == 1 else "") for i, x in enumerate(cells)))
    cells = _slice_cells(
        pair.overall, binary, single, arm_at, b, c, has_traffic, overall=True, alpha=alpha
    )
    table.add_row(*(_text(x, style="bold") for x in cells), end_section=True)
    return table


def _pair_renderables(
    comparison: Comparison,
    metric: MetricResult,
    by: str,
    arms: tuple[ArmSlice, ...],
    pair: PairComparison,
) -> list[RenderableType]:
    b, c = pair.baseline, pair.candidate
    binary = metric.kind == "binary"
    single = binary and not metric.repeated
    conf = fmt_pct(comparison.confidence)
    out: list[RenderableType] = [
        _text(
            f"evaldelta compare · {b} -> {c} · metric: {_label(metric)} · by {by} · "
            f"{conf} intervals",
            style="bold cyan",
        ),
        Text(""),
    ]
    out += [
        _line(x) for x in _answer_lines(pair, binary, confidence=comparison.confidence, arms=arms)
    ]
    if not pair.paired_available:
        out.append(_line(f"! No paired analysis: {b} and {c} share no cases."))
    out.append(_slice_table(comparison, metric, arms, pair))
    lines = _standardized_lines(pair, binary, b, c) if one_slice(pair) is None else []
    lines += _pooled_lines(pair, metric, arms, b, c)
    lines += _evidence_lines(pair, single, binary, b, c, 1.0 - comparison.confidence)
    lines += _coverage_lines(pair)
    lines += _arm_lines(arms, (b, c), single, conf, binary)
    if pair.cost is not None:
        cost = pair.cost
        lines.append(
            f"Cost: {b} ${fmt(cost.baseline_usd, 2)} · {c} ${fmt(cost.candidate_usd, 2)} · "
            f"ratio {c}/{b} {fmt(cost.ratio, 2)}"
        )
    out += [_line(x) for x in lines]
    out.append(Text(""))
    return out


def terminal_renderables(comparison: Comparison) -> Group:
    """The whole report as rich renderables (tables, coloured flags), in the text's order."""
    from evaldelta.report._upstream import text_lines

    head = [baseline_line(comparison), *repeats_lines(comparison)]
    head += [*pin_warning_lines(comparison), *loud_note_lines(comparison), *_pin_lines(comparison)]
    head += text_lines(comparison)  # the upstream change detector, as in the text report
    parts: list[RenderableType] = [_line(x) for x in head]
    for metric in comparison.metrics:
        for slicing in metric.slicings:
            for pair in slicing.pairs:
                parts += _pair_renderables(comparison, metric, slicing.by, slicing.arms, pair)
    if comparison.three_arm is not None:
        from evaldelta.report._three_arm import three_arm_lines

        lines = three_arm_lines(comparison.three_arm, fmt_pct(comparison.confidence))
        parts += [_line(x) for x in lines]
        parts.append(Text(""))
    if comparison.notes:
        parts.append(Text("Notes (undefined statistics are shown as n/a, never as 0):"))
        parts += [_text(f"  - {n}") for n in comparison.notes]
    return Group(*parts)


def print_terminal(comparison: Comparison, console: Console | None = None) -> None:
    """Print the report to a terminal (colour unless ``NO_COLOR`` is set)."""
    console = console or Console(highlight=False, soft_wrap=True)
    console.print(terminal_renderables(comparison))
