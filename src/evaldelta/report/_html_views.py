"""View models for the HTML report: every number formatted, every text still raw.

The template (``templates/report.html.j2``, autoescaped) receives only these plain objects.
Nothing here is HTML: model and case text stays a ``str`` and is escaped by Jinja2 where it
is written. The plots are the one trusted markup (SVG that matplotlib wrote).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from evaldelta.comparison.model import (
    ALL_CASES,
    ArmSlice,
    Comparison,
    MetricResult,
    MovedCase,
    PairComparison,
    SliceDelta,
)
from evaldelta.comparison.ordering import ordered_slices
from evaldelta.gating import Verdict
from evaldelta.gating.rules import rule_of
from evaldelta.report._diff import DiffSpan, word_diff
from evaldelta.report._facts import (
    attempt_flag,
    attempt_sentence,
    coverage_sentence,
    direction,
    interval_difference,
    metric_kind,
    one_slice,
    one_slice_sentence,
    rests_on,
    standardized_basis,
    standardized_rests_on,
)
from evaldelta.report._format import fmt, fmt_ci, fmt_delta, fmt_p, fmt_pct, fmt_signed
from evaldelta.report._plan_rows import (
    PLAN_NOTE,
    PLAN_SEQUENTIAL,
    PlanRow,
    inconclusive_slices,
    plan_rows,
)
from evaldelta.report._sequential import P_WORD, interval_word
from evaldelta.report.plots import ForestRow, HistogramPanel, RateRow
from evaldelta.report.sections.heading import answer_lines

__all__ = [
    "ArmSummary",
    "DiffSpan",
    "MovedView",
    "PairView",
    "PlanRow",
    "SliceRow",
    "forest_rows",
    "histogram_panels",
    "margins_for",
    "pair_view",
    "rate_rows",
    "word_diff",
]


@dataclass(frozen=True)
class MovedView:
    """One moved case: scores, and the outputs side by side with their word diff."""

    case_id: str
    slice: str
    baseline: str
    candidate: str
    delta: str
    direction: str  # "up" | "down"
    baseline_output: str | None
    candidate_output: str | None
    diff: tuple[DiffSpan, ...]


@dataclass(frozen=True)
class SliceRow:
    """One row of the per-slice table beside the forest plot."""

    slice: str
    delta: str
    ci: str
    p: str
    n: str
    traffic: str
    baseline: str
    candidate: str
    tone: str  # "worse" | "better" | "unclear"


@dataclass(frozen=True)
class ArmSummary:
    """One arm in the multi-arm summary (or the per-check table)."""

    arm: str
    rate: str
    ci: str
    n: str
    delta: str = ""
    delta_ci: str = ""
    standardized: str = ""
    cost: str = ""


@dataclass
class PairView:
    """Everything the template shows for one pair under one slicing column."""

    index: int
    metric: str
    kind: str
    by: str
    baseline: str
    candidate: str
    binary: bool
    unit: str
    answer: list[str]
    paired_available: bool
    slice_rows: list[SliceRow]
    overall: SliceRow
    order_rule: str = ""  # the one order of every format's per-slice table (comparison.ordering)
    one_slice: str = ""  # said instead of a one-slice table beside its own total
    has_traffic: bool = False  # a traffic column only when traffic shares were given
    rate_table: list[tuple[str, str, str, str]] = field(default_factory=list)
    weight_names: list[str] = field(default_factory=list)
    weight_rows: list[tuple[str, list[str]]] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    # per mix: the standardized delta, its interval and basis, and why it differs from the
    # all-cases paired interval when it does (issue 24, item 5)
    mix_notes: list[str] = field(default_factory=list)
    flag: str | None = None
    attempts: str = ""  # per attempt beside per case (repeats only), as text words it
    attempt_flag: str | None = None  # the two disagree in sign
    coverage: str = ""  # cases in one arm only, counted
    coverage_rows: list[tuple[str, str, str]] = field(default_factory=list)
    table: dict[str, int] | None = None
    evidence: list[str] = field(default_factory=list)
    informative: str = ""
    unpaired: str = ""
    moved: list[MovedView] = field(default_factory=list)
    moved_total: int = 0
    moved_slices: list[str] = field(default_factory=list)
    has_outputs: bool = False
    cost: list[tuple[str, str, str]] = field(default_factory=list)
    cost_ratio: str = ""
    plan: list[PlanRow] = field(default_factory=list)
    plan_note: str = ""
    histogram: tuple[HistogramPanel, list[HistogramPanel]] | None = None
    histogram_note: str = ""
    interval: str = "interval"  # an interval column's head (``anytime 95% CS``: sequential)


def _rate(mean: float, n: int, single: bool) -> str:
    if n == 0:
        return "no cases"
    return f"{fmt(mean)} ({round(mean * n)}/{n})" if single else f"{fmt(mean)} (n={n})"


def _arm_rate(arm: ArmSlice | None, single: bool) -> str:
    if arm is None:
        return "no cases"
    return _rate(arm.estimate.estimate, arm.scored_cases, single)


def _slice_row(
    d: SliceDelta,
    binary: bool,
    single: bool,
    arms: dict[tuple[str, str], ArmSlice],
    base: str,
    cand: str,
    alpha: float,
) -> SliceRow:
    res = d.main
    paired = d.basis == "paired"
    return SliceRow(
        slice=d.slice,
        delta="n/a" if res is None else fmt_delta(res.estimate, binary),
        ci=""
        if res is None
        else fmt_ci(res.ci.low, res.ci.high, binary) + rests_on(d, binary and not single),
        p=fmt_p(
            d.pvalue_holm if d.pvalue_holm is not None else (res.pvalue if res else None), alpha
        ),
        n=str(d.n_pairs) if paired else "",
        traffic=fmt_pct(d.traffic_share) if d.traffic_share is not None else "",
        baseline=_rate(d.baseline_mean, d.n_pairs, single)
        if paired
        else _arm_rate(arms.get((base, d.slice)), single),
        candidate=_rate(d.candidate_mean, d.n_pairs, single)
        if paired
        else _arm_rate(arms.get((cand, d.slice)), single),
        tone=direction(d, alpha),
    )


def margins_for(verdict: Verdict | None, metric: str, by: str, candidate: str) -> dict[str, float]:
    """The gate's bound on each slice's delta for this pair (``max_regression``), if any.

    The rule is found by what it bounds (``Rule.margin_on``), never by its name.
    """
    if verdict is None or verdict.metric != metric or verdict.by != by:
        return {}
    return {
        r.slice: r.bound
        for r in verdict.rules
        if _on_slice(r.rule)
        and r.candidate == candidate
        and r.slice is not None
        and r.bound is not None
    }


def _on_slice(kind: str) -> bool:
    rule = rule_of(kind)
    return rule is not None and rule.margin_on == "slice"


def forest_rows(
    slices: Sequence[SliceDelta],
    binary: bool,
    margins: dict[str, float],
    alpha: float,
    few: Collection[str] = (),
) -> list[ForestRow]:
    """Forest-plot rows in display units, in the given order.

    ``few`` names the slices with too few pairs to set the plot's axis (their intervals are
    cut at its edge: :func:`~evaldelta.report.plots.forest_limits`).
    """
    scale = 100.0 if binary else 1.0
    rows = []
    for d in slices:
        res = d.main
        nan = math.nan
        margin = margins.get(d.slice)
        rows.append(
            ForestRow(
                label=d.slice if d.slice != ALL_CASES else "all cases",
                estimate=res.estimate * scale if res else nan,
                low=res.ci.low * scale if res else nan,
                high=res.ci.high * scale if res else nan,
                n=d.n_pairs,
                traffic=d.traffic_share,
                margin=None if margin is None else margin * scale,
                tone=direction(d, alpha),
                evidence=d.slice not in few,
            )
        )
    return rows


def _mix_notes(pair: PairComparison, binary: bool) -> list[str]:
    """Per mix: the standardized delta, its interval and basis, and why it differs."""
    out = []
    for s in pair.standardized:
        out.append(
            f"{s.mix}: {pair.candidate} − {pair.baseline} {fmt_delta(s.delta.estimate, binary)} "
            f"{fmt_ci(s.delta.ci.low, s.delta.ci.high, binary)}{standardized_rests_on(s)} "
            f"({standardized_basis(s)})"
        )
        why = interval_difference(s, pair, binary)
        if why is not None:
            out.append(why)
    return out


def rate_rows(pair: PairComparison, arms: Sequence[ArmSlice]) -> list[RateRow]:
    """Each arm's pooled rate (own mix, Wilson or t interval) and its standardized rates."""
    rows = []
    for name in (pair.baseline, pair.candidate):
        arm = next((a for a in arms if a.arm == name and a.slice == ALL_CASES), None)
        if arm is not None:
            e = arm.estimate
            rows.append(RateRow("pooled (own mix)", name, e.estimate, e.ci.low, e.ci.high))
    for s in pair.standardized if one_slice(pair) is None else ():
        label = "traffic mix" if s.mix == "traffic" else f"chosen mix ({s.mix})"
        for name in (pair.baseline, pair.candidate):
            fm = s.per_arm.get(name)
            if fm is not None:
                rows.append(RateRow(label, name, fm.estimate, fm.ci.low, fm.ci.high))
    return rows


def _flag(pair: PairComparison, binary: bool) -> str | None:
    sim = pair.simpson
    if sim is None or sim.kind == "none" or sim.standardized_delta is None:
        return None
    pooled = fmt_delta(sim.pooled_delta, binary)
    std = fmt_delta(sim.standardized_delta, binary)
    if sim.kind == "reversal":
        return (
            f"Simpson reversal: every common slice moves one way, yet the pooled difference "
            f"({pooled}) has the opposite sign to the standardized one ({std}), because the "
            "arms ran on different slice mixes; trust the standardized number."
        )
    return (
        f"Mix shift: the pooled difference ({pooled}) and the standardized difference ({std}) "
        "disagree in sign, because each arm's pooled number reflects its own slice mix; "
        "the standardized number is the quality signal."
    )


def _moved(pair: PairComparison) -> list[MovedView]:
    out = []
    for m in pair.discordant:
        diff: tuple[DiffSpan, ...] = ()
        if m.baseline_output is not None and m.candidate_output is not None:
            diff = word_diff(m.baseline_output, m.candidate_output)
        out.append(_moved_view(m, diff))
    return out


def _moved_view(m: MovedCase, diff: tuple[DiffSpan, ...]) -> MovedView:
    return MovedView(
        case_id=m.case_id,
        slice=m.slice,
        baseline=fmt(m.baseline),
        candidate=fmt(m.candidate),
        delta=fmt_signed(m.delta, 2),
        direction="up" if m.delta > 0 else "down",
        baseline_output=m.baseline_output,
        candidate_output=m.candidate_output,
        diff=diff,
    )


def _evidence(
    view: PairView, pair: PairComparison, single: bool, alpha: float, sequential: bool
) -> None:
    o = pair.overall
    binary = view.binary
    if o.paired is None:
        view.evidence.append(
            "No paired evidence: the arms share no cases; the deltas above are unpaired."
        )
        return
    if single and o.table is not None:
        t = o.table
        view.table = {
            "both_pass": t.both_pass,
            "only_baseline": t.only_baseline,
            "only_candidate": t.only_candidate,
            "both_fail": t.both_fail,
        }
        test = f"{P_WORD} =" if sequential else "exact McNemar p ="
        view.evidence.append(
            f"The evidence is {t.only_baseline + t.only_candidate} cases, not {o.n_pairs}; "
            f"{test} {fmt_p(o.paired.pvalue, alpha)}."
        )
    elif sequential:  # a confidence sequence has no SE
        view.evidence.append(
            f"Mean per-case delta {fmt_signed(o.paired.estimate, 4)}, {P_WORD} = "
            f"{fmt_p(o.paired.pvalue, alpha)} ({o.paired.method})."
        )
    else:
        view.evidence.append(
            f"Mean per-case delta {fmt_signed(o.paired.estimate, 4)}, paired SE "
            f"{fmt(o.paired.se, 4)}, p = {fmt_p(o.paired.pvalue, alpha)} ({o.paired.method})."
        )
    if o.informative is not None:
        view.informative = (
            f"{o.informative} of {o.n_pairs} pairs ({fmt_pct(o.informative_share)}) differ; "
            "the rest cancel out of the difference."
        )
    if o.clustered_ci is not None and o.clustered_se is not None:
        view.evidence.append(
            f"Clustered SE (Miller 2024) {fmt(o.clustered_se, 4)}: "
            f"{fmt_ci(o.clustered_ci.low, o.clustered_ci.high, binary)}."
        )
    if o.unpaired is not None:
        view.unpaired = (
            f"{fmt_delta(o.unpaired.estimate, binary)} "
            f"{fmt_ci(o.unpaired.ci.low, o.unpaired.ci.high, binary)} (Welch, SE "
            f"{fmt(o.unpaired.se, 4)} against the paired SE {fmt(o.paired.se, 4)})"
        )


def _shared_facts(
    view: PairView, pair: PairComparison, metric: MetricResult, ordered: Sequence[SliceDelta]
) -> None:
    """What the text report says too: per attempt against per case, one-arm-only cases."""
    view.attempts = attempt_sentence(pair, metric) or ""
    view.attempt_flag = attempt_flag(pair, metric)
    view.coverage = coverage_sentence(pair) or ""
    if view.coverage:
        view.coverage_rows = [
            (d.slice, str(d.only_in_baseline), str(d.only_in_candidate))
            for d in ordered
            if d.only_in_baseline or d.only_in_candidate
        ]


def _rates_and_weights(view: PairView, pair: PairComparison, arms: Sequence[ArmSlice]) -> None:
    """Each arm's pooled and standardized rates, the mixes' weights and dropped slices."""
    for row in rate_rows(pair, arms):
        view.rate_table.append(
            (row.mix, row.arm, fmt(row.estimate), f"[{fmt(row.low)}, {fmt(row.high)}]")
        )
    stds = pair.standardized if one_slice(pair) is None else ()
    view.weight_names = [("traffic" if s.mix == "traffic" else f"chosen ({s.mix})") for s in stds]
    all_slices = sorted({k for s in stds for k in s.weights})
    view.weight_rows = [
        (k, [fmt_pct(s.weights.get(k), 1) if k in s.weights else "" for s in stds])
        for k in all_slices
    ]
    view.mix_notes = _mix_notes(pair, view.binary) if stds else []
    for s in stds:
        if s.dropped_slices:
            view.dropped.append(
                f"{s.mix}: {', '.join(s.dropped_slices)} dropped (not covered by both arms), "
                f"carrying {fmt_pct(s.dropped_weight, 1)} of the weight"
            )


def pair_view(
    comparison: Comparison,
    metric: MetricResult,
    by: str,
    arms: tuple[ArmSlice, ...],
    pair: PairComparison,
    index: int,
    verdict: Verdict | None = None,
) -> PairView:
    """Format one pair's numbers (each section draws its own plot: ``report/sections``)."""
    binary = metric.kind == "binary"
    single = binary and not metric.repeated
    alpha_conf = comparison.confidence
    alpha = 1.0 - alpha_conf
    sequential = comparison.sequential is not None
    arm_at = {(a.arm, a.slice): a for a in arms}
    key = (pair.baseline, pair.candidate)
    order = ordered_slices(pair, arms)
    ordered = order.slices
    only = one_slice(pair)  # its row would repeat the all-cases row (issue 24.1)
    view = PairView(
        index=index,
        metric=metric.metric,
        kind=metric_kind(metric),
        by=by,
        baseline=pair.baseline,
        candidate=pair.candidate,
        binary=binary,
        unit="points" if binary else "score units",
        answer=[
            line
            for line in answer_lines(
                pair, binary, confidence=alpha_conf, arms=arms, sequential=sequential
            )
            if line
        ],
        order_rule=order.rule(pair.paired_available),
        one_slice=one_slice_sentence(only) if only is not None else "",
        has_traffic=any(d.traffic_share is not None for d in pair.slices),
        paired_available=pair.paired_available,
        slice_rows=[
            _slice_row(d, binary, single, arm_at, *key, alpha) for d in ordered if only is None
        ],
        overall=_slice_row(pair.overall, binary, single, arm_at, *key, alpha),
        interval=interval_word(comparison),
    )
    _rates_and_weights(view, pair, arms)
    view.flag = _flag(pair, binary)
    _shared_facts(view, pair, metric, ordered)
    _evidence(view, pair, single, alpha, sequential)
    view.moved = _moved(pair)
    view.moved_total = pair.discordant_total
    view.moved_slices = sorted({m.slice for m in pair.discordant})
    view.has_outputs = any(
        m.baseline_output is not None or m.candidate_output is not None for m in pair.discordant
    )
    if pair.cost is not None:
        c = pair.cost
        view.cost = [
            (pair.baseline, f"${fmt(c.baseline_usd, 2)}", f"${fmt(c.baseline_per_case, 4)}"),
            (pair.candidate, f"${fmt(c.candidate_usd, 2)}", f"${fmt(c.candidate_per_case, 4)}"),
        ]
        view.cost_ratio = fmt(c.ratio, 2)
    view.plan = plan_rows(
        ordered,
        binary=binary,
        inconclusive=inconclusive_slices(verdict, metric.metric, by, pair.candidate),
    )
    if only is not None:  # the one slice is all cases: named as the table names it
        view.plan = [dataclasses.replace(p, slice="all cases") for p in view.plan]
    view.plan_note = PLAN_NOTE if view.plan else ""
    if view.plan and sequential:
        view.plan_note += " " + PLAN_SEQUENTIAL
    _histogram(view, pair, ordered)
    return view


MAX_PANELS = 12  # slice panels drawn under the all-cases histogram (worst first)


def histogram_panels(
    pair: PairComparison, ordered: Sequence[SliceDelta], binary: bool
) -> tuple[HistogramPanel, list[HistogramPanel]] | None:
    """The all-cases panel and up to :data:`MAX_PANELS` slice panels, in display units."""
    scale = 100.0 if binary else 1.0

    def panel(d: SliceDelta, label: str) -> HistogramPanel | None:
        h = d.histogram
        if h is None:
            return None
        edges = tuple(e * scale for e in h.edges)
        return HistogramPanel(label, h.n, h.zero, edges, h.counts)

    overall = panel(pair.overall, "all cases")
    if overall is None:
        return None
    if len(ordered) == 1:  # one slice: its panel would repeat the all-cases panel
        ordered = ()
    slices = [p for d in ordered if (p := panel(d, d.slice)) is not None]
    return overall, slices[:MAX_PANELS]


def _histogram(view: PairView, pair: PairComparison, ordered: Sequence[SliceDelta]) -> None:
    view.histogram = histogram_panels(pair, ordered, view.binary)
    if view.histogram is None:
        return
    with_hist = sum(1 for d in ordered if d.histogram is not None)
    shown = len(view.histogram[1])
    h = pair.overall.histogram
    if h is None:  # pragma: no cover - view.histogram is set only when it exists
        return
    view.histogram_note = (
        f"Per-case deltas{' (case means of repeats)' if 'repeats' in view.kind else ''}, "
        f"{len(h.counts)} equal-width bins over the "
        f"non-zero deltas; the {h.zero:,} pairs exactly at zero are the grey bar. "
        + (
            f"Slices worst first; {with_hist - shown} more slice(s) are in the JSON."
            if with_hist > shown
            else "Slices worst first."
        )
    )


def arm_summaries(metric: MetricResult) -> list[ArmSummary]:
    """Every arm of the first slicing column: rate, delta vs baseline, standardized delta, cost."""
    slicing = metric.slicings[0]
    binary = metric.kind == "binary"
    out = []
    pairs = {p.candidate: p for p in slicing.pairs}
    for a in slicing.arms:
        if a.slice != ALL_CASES:
            continue
        row = ArmSummary(
            arm=a.arm,
            rate=fmt(a.estimate.estimate),
            ci=f"[{fmt(a.estimate.ci.low)}, {fmt(a.estimate.ci.high)}]",
            n=str(a.scored_cases),
        )
        pair = pairs.get(a.arm)
        if pair is not None:
            res = pair.overall.main
            std = pair.standardized[-1] if pair.standardized else None
            cost = pair.cost
            row = ArmSummary(
                arm=row.arm,
                rate=row.rate,
                ci=row.ci,
                n=row.n,
                delta=fmt_delta(res.estimate, binary) if res else "n/a",
                delta_ci=fmt_ci(res.ci.low, res.ci.high, binary) if res else "",
                standardized=(
                    f"{fmt_delta(std.delta.estimate, binary)} ({std.mix})" if std else ""
                ),
                cost=f"${fmt(cost.candidate_per_case, 4)}/case" if cost else "",
            )
        elif slicing.pairs and slicing.pairs[0].cost is not None:
            row = ArmSummary(
                arm=row.arm,
                rate=row.rate,
                ci=row.ci,
                n=row.n,
                cost=f"${fmt(slicing.pairs[0].cost.baseline_per_case, 4)}/case",
            )
        out.append(row)
    return out
