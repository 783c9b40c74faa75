"""The terminal report: lead with the answer, label what every number is.

Order, per metric and candidate: a warning when no pairing was possible; per-slice deltas
with intervals, worst first; all cases together; the standardized (fixed-mix) result with
its weights; the pooled number, labelled as such, and the mix-shift / Simpson flag; then the
cases that carry the evidence (discordant counts), the unpaired contrast, one-arm-only
cases, cost and notes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from evaldelta.model import (
    ALL_CASES,
    ArmSlice,
    Comparison,
    MetricResult,
    PairComparison,
    SliceDelta,
)
from evaldelta.report._escape import term_text
from evaldelta.report._facts import (
    attempt_flag,
    attempt_sentence,
    break_even_sentences,
    direction,
    interval_difference,
    is_loud,
    metric_kind,
    one_slice,
    one_slice_sentence,
    ordered_slices,
    rests_on,
    standardized_basis,
    standardized_rests_on,
)
from evaldelta.report._format import fmt, fmt_ci, fmt_delta, fmt_p, fmt_pct
from evaldelta.report._mixes import headline_standardized, mix_rows
from evaldelta.report._text_evidence import _coverage_lines, _evidence_lines
from evaldelta.stats import FixedMix, PairedResult, UnpairedResult

__all__ = ["baseline_line", "loud_note_lines", "render_text", "repeats_lines"]

METHOD_NAMES = {
    "newcombe": "Newcombe",
    "wald": "Wald",
}


def render_text(comparison: Comparison) -> str:
    """Render a whole comparison as plain text (no colour codes, no control characters).

    Every line passes through :func:`~evaldelta.report._escape.term_text`, so no escape
    sequence or control character from the data reaches the terminal; table cells are
    cleaned before their widths are measured.
    """
    out: list[str] = [baseline_line(comparison), *repeats_lines(comparison)]
    out.extend(pin_warning_lines(comparison))
    out.extend(loud_note_lines(comparison))
    out.extend(_pin_lines(comparison))
    out.extend(_upstream_lines(comparison))
    for metric in comparison.metrics:
        for slicing in metric.slicings:
            for pair in slicing.pairs:
                out.extend(_pair_block(comparison, metric, slicing.by, slicing.arms, pair))
                out.append("")
    for leak in comparison.rubric_leakage:
        from evaldelta.report._leakage import checks_title, leakage_lines

        out += [checks_title(leak), *leakage_lines(leak), ""]
    if comparison.three_arm is not None:
        from evaldelta.report._three_arm import three_arm_lines

        out.extend(three_arm_lines(comparison.three_arm, fmt_pct(comparison.confidence)))
        out.append("")
    if comparison.notes:
        out.append("Notes (undefined statistics are shown as n/a, never as 0):")
        out.extend(f"  - {n}" for n in comparison.notes)
    return "\n".join(term_text(line) for line in out).rstrip() + "\n"


def baseline_line(comparison: Comparison) -> str:
    """The report's first line: which arm is the baseline, and how it was chosen."""
    why = comparison.baseline_reason or "the first input's first arm"
    return f"baseline {comparison.baseline} ({why}); candidates: {', '.join(comparison.candidates)}"


def repeats_lines(comparison: Comparison) -> list[str]:
    """How repeats were reduced per case, when it is worth a line (``_repeats``)."""
    from evaldelta.report._repeats import repeats_sentence

    sentence = repeats_sentence(comparison)
    return [sentence] if sentence else []


def loud_note_lines(comparison: Comparison) -> list[str]:
    """The notes a reader must see first (``_facts.is_loud``), flagged at the top.

    They stay in the notes at the end too (and in JSON), where every note is listed.
    """
    loud = [f"! {n}" for n in comparison.notes if is_loud(n)]
    return [*loud, ""] if loud else []


def pin_warning_lines(comparison: Comparison) -> list[str]:
    """A loud warning when arms differ in pins beyond the declared arm difference."""
    if not comparison.pin_differences:
        return []
    from evaldelta.report._pins import fmt_pin

    shown = "; ".join(
        f"{d.key} (" + ", ".join(f"{a} {fmt_pin(v)}" for a, v in d.values.items()) + ")"
        for d in comparison.pin_differences
    )
    return [
        "!! PINS DIFFER BEYOND THE ARMS' DECLARED DIFFERENCE: " + shown,
        "   The arms differ in more than the release under test, so every difference below "
        "mixes the two changes.",
        "   Rerun with the setup held fixed, or accept it explicitly (compare "
        "--allow-pin-diff KEY; a gate policy's [pins] allow = [...]).",
        "",
    ]


def _pin_lines(comparison: Comparison) -> list[str]:
    """The pins that differ between the compared arms (the rest are counted, not listed)."""
    from evaldelta.report._pins import pins_view

    view = pins_view(comparison)
    if view is None:
        return []
    if not view.differing:
        return [f"Pins: all {len(view.same)} are the same in every compared arm.", ""]
    same = f"{len(view.same)} more, the same in every arm, are listed in JSON and HTML"
    rows = [[key, *values] for key, values in view.differing]
    lines = [f"Pins that differ between the arms ({same}):"]
    lines.extend(_table(["pin", *view.arms], rows, left=tuple(range(len(view.arms) + 1))))
    return [*lines, ""]


def _label(metric: MetricResult) -> str:
    return f"{metric.metric} ({metric_kind(metric)})"


def _rate(arm: ArmSlice | None, binary_single: bool) -> str:
    if arm is None or arm.scored_cases == 0:
        return "no cases"
    if binary_single:
        passed = round(arm.estimate.estimate * arm.scored_cases)
        return f"{fmt(arm.estimate.estimate)} ({passed}/{arm.scored_cases})"
    return f"{fmt(arm.estimate.estimate)} (n={arm.scored_cases})"


def _paired_rate(mean: float, n: int, binary_single: bool) -> str:
    """A rate on the paired cases of one slice (the cases the delta is computed on)."""
    if binary_single:
        return f"{fmt(mean)} ({round(mean * n)}/{n})"
    return f"{fmt(mean)} (n={n})"


def _pair_block(
    comparison: Comparison,
    metric: MetricResult,
    by: str,
    arms: tuple[ArmSlice, ...],
    pair: PairComparison,
) -> list[str]:
    b, c = pair.baseline, pair.candidate
    binary = metric.kind == "binary"
    single = binary and not metric.repeated
    conf = fmt_pct(comparison.confidence)
    lines = [
        f"evaldelta compare · {b} -> {c} · metric: {_label(metric)} · by {by} · {conf} intervals",
        "",
    ]
    lines.extend(_answer_lines(pair, binary, confidence=comparison.confidence, arms=arms))
    if not pair.paired_available:
        lines += [
            (
                f"! No paired analysis: {b} and {c} share no scored case "
                f"({pair.overall.unscored_in_one} cases are in both arms but unlabeled in one)."
                if pair.overall.unscored_in_one
                else f"! No paired analysis: {b} and {c} share no cases (two different eval sets)."
            ),
            "  The per-slice differences below are unpaired ("
            + ("Newcombe interval for two independent proportions" if single else "Welch t")
            + ").",
            "",
        ]
    alpha = 1.0 - comparison.confidence
    lines.extend(_slice_section(comparison, pair, arms, binary, single))
    only = one_slice(pair)
    if only is None:
        lines.extend(_standardized_lines(pair, binary, b, c))
    lines.extend(_pooled_lines(pair, metric, arms, b, c))
    lines.extend(_evidence_lines(pair, single, binary, b, c, alpha))
    lines.extend(_coverage_lines(pair))
    lines.extend(_arm_lines(arms, (b, c), single, conf, binary))
    if pair.cost is not None:
        cost = pair.cost
        lines.append(
            f"Cost: {b} ${fmt(cost.baseline_usd, 2)} (${fmt(cost.baseline_per_case, 4)}/case) · "
            f"{c} ${fmt(cost.candidate_usd, 2)} (${fmt(cost.candidate_per_case, 4)}/case) · "
            f"ratio {c}/{b} {fmt(cost.ratio, 2)}"
        )
    return lines


def _slice_section(
    comparison: Comparison,
    pair: PairComparison,
    arms: tuple[ArmSlice, ...],
    binary: bool,
    single: bool,
) -> list[str]:
    """The per-slice table in the one order, stated; one slice: the all-cases row alone."""
    b, c = pair.baseline, pair.candidate
    arm_at = {(a.arm, a.slice): a for a in arms}
    has_traffic = any(d.traffic_share is not None for d in pair.slices)
    unit = "pts" if binary else "score units"
    how = "paired on shared cases" if pair.paired_available else "unpaired"
    order = ordered_slices(pair, arms)
    only = one_slice(pair)
    if only is None:
        lines = [f"Per slice, worst first: {c} - {b}, in {unit} ({how})"]
        lines.append(f"  (order: {order.rule(pair.paired_available)})")
    else:
        lines = [f"All cases: {c} - {b}, in {unit} ({how})", f"  ({one_slice_sentence(only)})"]
    p_head = "p (Holm)" if only is None else "p"
    header = ["slice", "delta", f"{fmt_pct(comparison.confidence)} interval", p_head, "n", b, c]
    if has_traffic:
        header.append("traffic")
    alpha = 1.0 - comparison.confidence
    shown = order.slices if only is None else ()
    rows = [_slice_cells(d, binary, single, arm_at, b, c, has_traffic, alpha=alpha) for d in shown]
    rows.append(
        _slice_cells(
            pair.overall, binary, single, arm_at, b, c, has_traffic, overall=True, alpha=alpha
        )
    )
    lines.extend(_table(header, rows, left=(0, 2)))
    method = pair.overall.main.method if pair.overall.main is not None else ""
    o = pair.overall
    if o.alternative_ci is not None and o.alternative_interval:
        name = METHOD_NAMES.get(o.alternative_interval, o.alternative_interval)
        method += (
            f"; {name} interval for contrast: "
            f"{fmt_ci(o.alternative_ci.low, o.alternative_ci.high, binary)}"
        )
    holm = "" if only is not None else "; p in the slice rows is Holm-adjusted across slices"
    return [*lines, f"  (all cases: {method}{holm})", ""]


def _arm_lines(
    arms: tuple[ArmSlice, ...],
    names: tuple[str, str],
    single: bool,
    conf: str,
    binary: bool = True,
) -> list[str]:
    """Each arm on its own cases: counts, the rate or mean, and its interval."""
    if single:
        method = "Wilson, Poisson-edged at 1-3 passes or fails"
    elif binary:
        method = "Wilson at the effective n of the repeats"
    else:
        method = "t on case means"
    # one slice: its rows would repeat the all-cases rows (issue 24.1)
    if len({a.slice for a in arms if a.slice != ALL_CASES}) == 1:
        arms = tuple(a for a in arms if a.slice == ALL_CASES)
        head = f"Per arm, each on its own cases ({conf} intervals: {method}):"
    else:
        head = f"Per arm and slice, each on its own cases ({conf} intervals: {method}):"
    lines = ["", head]
    header = ["arm", "slice", "cases", "attempts", "reviewed", "unlabeled", "rate/mean", "interval"]
    has_traffic = any(a.traffic_share is not None for a in arms)
    has_cluster = any(a.clustered_se is not None for a in arms)
    if has_traffic:
        header.append("traffic")
    if has_cluster:
        header.append("clustered SE")
    rows = []
    for a in arms:
        if a.arm not in names:
            continue
        row = [
            a.arm,
            a.slice,
            str(a.cases),
            str(a.attempts),
            str(a.reviewed),
            str(a.unlabeled),
            fmt(a.estimate.estimate),
            f"[{fmt(a.estimate.ci.low)}, {fmt(a.estimate.ci.high)}]",
        ]
        if has_traffic:
            row.append(fmt_pct(a.traffic_share) if a.traffic_share is not None else "")
        if has_cluster:
            row.append(fmt(a.clustered_se, 4) if a.clustered_se is not None else "")
        rows.append(row)
    lines.extend(_table(header, rows, left=(0, 1, 7)))
    return lines


def _same(text: str) -> str:
    return text


def _answer_lines(
    pair: PairComparison,
    binary: bool,
    name: Callable[[str], str] = _same,
    confidence: float = 0.95,
    arms: Sequence[ArmSlice] = (),
) -> list[str]:
    """One or two sentences that answer the question before any table (higher = better).

    ``name`` escapes every name from the data for the caller's format (Markdown). The worst
    slice named is the first of the tables' own order (:func:`ordered_slices`).
    """
    b, c = name(pair.baseline), name(pair.candidate)
    out = []
    res: PairedResult | UnpairedResult | FixedMix | None
    if pair.paired_available:
        res, what = pair.overall.main, f"on {pair.overall.n_pairs} paired cases"
    else:
        std = headline_standardized(pair)
        res, what = std.delta, f"under the {std.mix} mix (unpaired)"
    if res is not None and math.isfinite(res.ci.low):
        delta, ci = fmt_delta(res.estimate, binary), fmt_ci(res.ci.low, res.ci.high, binary)
        if res.ci.low > 0 or res.ci.high < 0:
            word = "higher" if res.estimate > 0 else "lower"
            out.append(f"Answer: {c} scores {word} than {b} {what}: {delta} {ci}.")
        else:
            out.append(
                f"Answer: these cases cannot tell {c} from {b} {what}: {delta} {ci}; "
                "the interval contains both a gain and a loss."
            )
    alpha = 1.0 - confidence
    order = ordered_slices(pair, arms).slices
    finite = [d for d in order if d.main is not None and math.isfinite(d.main.ci.high)]
    below = [d for d in finite if d.main is not None and d.main.ci.high < 0]
    moved = [d for d in finite if direction(d, alpha) == "worse"]
    shown = moved or below
    if shown and shown[0].main is not None:
        d, worst_res = shown[0], shown[0].main
        share = f", {fmt_pct(d.traffic_share)} of traffic" if d.traffic_share else ""
        count = (
            f"{len(moved)} of {len(pair.slices)} slice(s) regress at Holm-adjusted p < {alpha:g}"
        )
        if len(below) != len(moved):
            verb = "has" if len(below) == 1 else "have"
            count += f"; {len(below)} {verb} an unadjusted interval below zero"
        out.append(
            f"Worst slice: {name(d.slice)} {fmt_delta(worst_res.estimate, binary)} "
            f"{fmt_ci(worst_res.ci.low, worst_res.ci.high, binary)}{share}; {count}."
        )
    return [*out, ""] if out else []


def _table(header: list[str], rows: list[list[str]], left: tuple[int, ...]) -> list[str]:
    """Columns as wide as their widest cell; text columns left-aligned, numbers right."""
    header = [term_text(cell) for cell in header]
    rows = [[term_text(cell) for cell in r] for r in rows]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        parts = [
            cell.ljust(w) if i in left else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  " + "  ".join(parts).rstrip()

    return [line(header), *(line(r) for r in rows)]


def _slice_cells(
    d: SliceDelta,
    binary: bool,
    single: bool,
    arm_at: dict[tuple[str, str], ArmSlice],
    b: str,
    c: str,
    has_traffic: bool,
    *,
    overall: bool = False,
    alpha: float | None = None,
) -> list[str]:
    res = d.main
    name = "all cases" if overall else d.slice
    if res is None:
        diff, ci, p = "n/a", "(no evidence in both arms)", ""
    else:
        diff = fmt_delta(res.estimate, binary)
        ci = fmt_ci(res.ci.low, res.ci.high, binary) + rests_on(d, binary and not single)
        p = fmt_p(res.pvalue if overall else d.pvalue_holm, alpha)
    n = f"{d.n_pairs} pair{'s' if d.n_pairs != 1 else ''}" if d.n_pairs else ""
    cells = [
        name,
        diff,
        ci,
        p,
        n,
        *(
            (
                _paired_rate(d.baseline_mean, d.n_pairs, single),
                _paired_rate(d.candidate_mean, d.n_pairs, single),
            )
            if d.basis == "paired"
            else (_rate(arm_at.get((b, d.slice)), single), _rate(arm_at.get((c, d.slice)), single))
        ),
    ]
    if has_traffic:
        cells.append("" if overall else fmt_pct(d.traffic_share))
    return cells


def _standardized_lines(pair: PairComparison, binary: bool, b: str, c: str) -> list[str]:
    lines = _mix_table_lines(pair, binary, b, c)
    for s in pair.standardized:
        title = "Traffic mix" if s.mix == "traffic" else f"Chosen mix ({s.mix})"
        rb, rc = s.per_arm.get(b), s.per_arm.get(c)
        lines.append(f"{title}, directly standardized over slices both arms cover:")
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


def _mix_table_lines(pair: PairComparison, binary: bool, b: str, c: str) -> list[str]:
    """The mixes side by side (issue 13), when there are several: one row each."""
    if len(pair.standardized) < 2:
        return []
    rows = [
        [r.mix, r.baseline, r.candidate, r.delta, r.ci, r.verdict] for r in mix_rows(pair, binary)
    ]
    header = ["mix", b, c, f"{c} - {b}", "interval", "verdict"]
    return [
        f"Mixes side by side: {c} - {b} standardized under each mix (the mix shipping may move):",
        *_table(header, rows, left=(0, 4, 5)),
    ]


def _pooled_lines(
    pair: PairComparison, metric: MetricResult, arms: tuple[ArmSlice, ...], b: str, c: str
) -> list[str]:
    binary = metric.kind == "binary"
    pooled = pair.pooled
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
    sim = pair.simpson
    if sim is not None and sim.kind != "none" and sim.standardized_delta is not None:
        word = "Simpson reversal" if sim.kind == "reversal" else "Mix shift"
        lower = sum(1 for v in sim.slice_deltas.values() if v < 0)
        higher = sum(1 for v in sim.slice_deltas.values() if v > 0)
        lines.append(
            f"! {word}: the pooled difference ({fmt_delta(sim.pooled_delta, binary)}) and the "
            f"standardized difference ({fmt_delta(sim.standardized_delta, binary)}) "
            "disagree in sign."
        )
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
    shift = _largest_mix_gap(pair, arms)
    if shift and sim is not None and sim.kind != "none":
        lines.append(f"  Largest mix difference: {shift}.")
    lines.append("")
    return lines


def _largest_mix_gap(pair: PairComparison, arms: tuple[ArmSlice, ...]) -> str:
    """The slice whose share of the evidence differs most between the two arms."""
    b, c = pair.baseline, pair.candidate
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


def _upstream_lines(comparison: Comparison) -> list[str]:
    """The upstream change detector: counts per arm pair, a diff for each confound."""
    from evaldelta.report._upstream import text_lines

    return text_lines(comparison)
