"""Facts every report states the same way: text, rich, Markdown and HTML share these.

Each function reads the Comparison and returns either a small frozen value or a sentence.
Sentences take ``name``, the escaping function of the caller's format, applied to every
name from the data (:func:`~evaldelta.report._escape.md_text` for Markdown; the identity for
text, which escapes whole lines, and for HTML, which Jinja2 escapes).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from evaldelta.comparison.model import (
    MetricResult,
    PairComparison,
    SliceDelta,
    Standardized,
)
from evaldelta.comparison.ordering import sign_flip
from evaldelta.report._format import fmt, fmt_ci, fmt_delta, fmt_pct

__all__ = [
    "AttemptContrast",
    "attempt_contrast",
    "attempt_flag",
    "attempt_sentence",
    "break_even_sentences",
    "coverage_per_slice",
    "coverage_sentence",
    "direction",
    "interval_difference",
    "is_loud",
    "metric_kind",
    "one_slice",
    "one_slice_sentence",
    "rests_on",
    "scale_phrase",
    "standardized_basis",
    "standardized_rests_on",
]

Name = Callable[[str], str]

# notes that change what a reader may conclude: shown up front in Markdown, and on stderr
# (CI logs show them even when the report itself goes to a file or a PR comment): a
# slicing that misleads (the note starts with the --by option) or a method that fails
LOUD_START = "--by "
LOUD_MARKS = ("the Wald paired interval on fewer than",)


def is_loud(note: str) -> bool:
    """Whether a comparison note must be seen first (a slicing that misleads, a bad method)."""
    return note.startswith(LOUD_START) or any(mark in note for mark in LOUD_MARKS)


def _same(text: str) -> str:
    return text


def coverage_sentence(pair: PairComparison, name: Name = _same) -> str | None:
    """Cases present in one arm only, counted (None when every case is in both arms)."""
    o = pair.overall
    if not pair.paired_available or not (o.only_in_baseline or o.only_in_candidate):
        return None
    return (
        f"Cases in one arm only (left out of the paired analysis, listed in JSON): "
        f"only {name(pair.baseline)} {o.only_in_baseline}, "
        f"only {name(pair.candidate)} {o.only_in_candidate}"
    )


def coverage_per_slice(pair: PairComparison, name: Name = _same) -> str | None:
    """The one-arm-only counts of the slices that have any, ``slice b/c`` each."""
    shown = [
        f"{name(d.slice)} {d.only_in_baseline}/{d.only_in_candidate}"
        for d in pair.slices
        if d.only_in_baseline or d.only_in_candidate
    ]
    if coverage_sentence(pair) is None or not shown:
        return None
    b, c = name(pair.baseline), name(pair.candidate)
    return f"per slice (only {b}/only {c}): {', '.join(shown)}"


@dataclass(frozen=True)
class AttemptContrast:
    """Each arm's pooled mean per case (each case once) and per attempt (each run once)."""

    baseline_case: float
    candidate_case: float
    baseline_attempt: float
    candidate_attempt: float

    @property
    def case_delta(self) -> float:
        """Candidate minus baseline, per case."""
        return self.candidate_case - self.baseline_case

    @property
    def attempt_delta(self) -> float:
        """Candidate minus baseline, per attempt."""
        return self.candidate_attempt - self.baseline_attempt

    @property
    def disagree(self) -> bool:
        """The two differences point opposite ways (both finite and non-zero)."""
        a, b = self.case_delta, self.attempt_delta
        return math.isfinite(a) and math.isfinite(b) and a * b < 0


def attempt_contrast(pair: PairComparison, metric: MetricResult) -> AttemptContrast | None:
    """The per-case versus per-attempt means; None without repeats (they coincide)."""
    if not metric.repeated:
        return None
    p = pair.pooled
    return AttemptContrast(
        p.baseline, p.candidate, p.baseline_attempt_mean, p.candidate_attempt_mean
    )


def attempt_sentence(pair: PairComparison, metric: MetricResult, name: Name = _same) -> str | None:
    """The per-attempt means beside the per-case ones, as the text report words them."""
    a = attempt_contrast(pair, metric)
    if a is None:
        return None
    b, c = name(pair.baseline), name(pair.candidate)
    delta = fmt_delta(a.attempt_delta, metric.kind == "binary")
    return (
        f"per attempt (every run counts once): {b} {fmt(a.baseline_attempt)}  "
        f"{c} {fmt(a.candidate_attempt)}  {c} - {b} {delta}"
        " (arms with more runs on some cases weigh those cases more)"
    )


def attempt_flag(pair: PairComparison, metric: MetricResult, name: Name = _same) -> str | None:
    """A warning when per attempt and per case disagree in sign (None when they agree)."""
    a = attempt_contrast(pair, metric)
    if a is None or not a.disagree:
        return None
    binary = metric.kind == "binary"
    c, b = name(pair.candidate), name(pair.baseline)
    paired = ""
    o = pair.overall.paired
    if o is not None and math.isfinite(o.estimate):
        n = pair.overall.n_pairs
        paired = f"; {fmt_delta(o.estimate, binary)} paired on the {n} shared cases"
    return (
        f"Per attempt and per case disagree in sign: {c} - {b} is "
        f"{fmt_delta(a.attempt_delta, binary)} per attempt (every run counts once) but "
        f"{fmt_delta(a.case_delta, binary)} per case (each case counts once{paired}). At "
        "least one arm ran more attempts on some cases than on others, so its per-attempt "
        "mean weighs those cases more; the per-case numbers are the quality signal."
    )


def one_slice(pair: PairComparison) -> SliceDelta | None:
    """The pair's only slice, when it has one: its row would repeat the all-cases row."""
    return pair.slices[0] if len(pair.slices) == 1 else None


def one_slice_sentence(d: SliceDelta, name: Name = _same) -> str:
    """What every format says instead of a one-slice table beside its own total (issue 24.1)."""
    return (
        f"One slice, {name(d.slice)}: the all-cases row is the whole table (a row for the "
        "slice would repeat it), and every mix gives the slice all the weight, so no "
        "standardized rate is shown beside it"
    )


def direction(d: SliceDelta, alpha: float) -> str:
    """``"worse"``, ``"better"`` or ``"unclear"``: the one significance rule of every report.

    A slice moved when its Holm-adjusted p-value (the p column, adjusted across the slices)
    is below ``alpha``; its sign says which way. The overall row, which is not adjusted, uses
    its interval. Text, Markdown and HTML all call this, so the headline count, the colours
    and the p column cannot disagree.
    """
    res = d.main
    if res is None or not math.isfinite(res.estimate):
        return "unclear"
    if d.pvalue_holm is not None and math.isfinite(d.pvalue_holm):
        if d.pvalue_holm >= alpha or res.estimate == 0:
            return "unclear"
        return "worse" if res.estimate < 0 else "better"
    if not math.isfinite(res.ci.low):
        return "unclear"
    if res.ci.high < 0:
        return "worse"
    if res.ci.low > 0:
        return "better"
    return "unclear"


def rests_on(d: SliceDelta, pass_fail_repeats: bool = False) -> str:
    """What a paired interval rests on, beside it, when that is too little to trust.

    ``" (rests on k pairs)"``: a paired t interval (scores, or pass/fail repeats averaged per
    case) on fewer than ``stats.MIN_INFORMATIVE`` pairs whose delta is not zero does not
    hold its coverage (docs/calibration.md, zero-inflated deltas); the gate is inconclusive
    there. ``" (rests on n cases)"``: a paired t on case means of pass/fail repeats
    (``pass_fail_repeats``) with fewer than ``stats.MIN_REPEAT_CASES`` cases covers 0.92 on
    the draws with enough informative pairs (issue 24, item 14); the gate is inconclusive.
    ``" (rests on k discordant pairs)"``: Newcombe's pass/fail interval on fewer than
    ``stats.MIN_DISCORDANT`` discordant pairs covers as little as 0.89 when they all go one
    way (issue 24, item 12); a gate rule needs ``min_informative`` (10) of them anyway.
    Nothing beside a confidence sequence (a sequential comparison): its coverage does not
    rest on a large-sample approximation.
    """
    from evaldelta import stats

    res = d.paired
    if res is None or d.informative is None:
        return ""
    if isinstance(res, stats.AnytimeResult):  # a confidence sequence holds on any number
        return ""
    if d.table is not None:
        if res.interval == "newcombe" and d.informative < stats.MIN_DISCORDANT:
            return f" (rests on {_count(d.informative, 'discordant pair')})"
        return ""
    if d.informative < stats.MIN_INFORMATIVE:
        return f" (rests on {_count(d.informative, 'pair')})"
    if pass_fail_repeats and d.n_pairs < stats.MIN_REPEAT_CASES:
        return f" (rests on {_count(d.n_pairs, 'case')})"
    return ""


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' if n != 1 else ''}"


def standardized_rests_on(std: Standardized) -> str:
    """``" (rests on k discordant pairs)"`` beside a pass/fail standardized delta, when so.

    Under the pairs' own mix the delta is the all-cases one and rests on its discordant
    pairs; under another mix also on how many they are worth once weighted
    (:func:`evaldelta.stats.standardized_paired_delta`).
    """
    from evaldelta import stats

    if std.discordant is None:
        return ""
    worth = std.effective_discordant
    few = std.discordant < stats.MIN_DISCORDANT
    weighted = (
        not std.same_as_overall
        and worth is not None
        and math.isfinite(worth)
        and worth < stats.MIN_DISCORDANT
    )
    if not (few or weighted):
        return ""
    text = _count(std.discordant, "discordant pair")
    if weighted and worth is not None:
        text += f", worth about {worth:.1f} at these weights"
    return f" (rests on {text})"


def standardized_basis(std: Standardized) -> str:
    """How the standardized delta's interval was made, in a parenthesis's words."""
    if std.same_as_overall:
        return "the pairs' own mix: the all-cases paired delta, with its interval"
    how = "paired" if std.delta_basis == "paired" else "unpaired"
    if std.mix_df is None:  # pass/fail: pseudo-counts per slice, the normal interval
        return f"{how}: sum of w_k x slice delta, each slice's SE with pseudo-counts"
    return f"{how}: sum of w_k x slice delta, each slice's SE, t on Satterthwaite df"


def interval_difference(
    std: Standardized, pair: PairComparison, binary: bool, name: Name = _same
) -> str | None:
    """Why the standardized interval differs from the all-cases paired one (None: it doesn't).

    Under the pairs' own mix they are the same interval. Under another mix the delta is a
    reweighted sum of slice deltas, so its interval is built from each slice's own
    uncertainty at its weight (issue 24, item 5): the sentence names the mix's largest
    departure from the pairs' own shares, or the dropped slices, or that an ``actual`` mix
    counts every compared arm's cases.
    """
    o = pair.overall.main
    if std.same_as_overall or std.delta_basis != "paired" or o is None:
        return None
    if not (math.isfinite(std.delta.ci.low) and math.isfinite(o.ci.low)):
        return None
    pairs = {d.slice: d.n_pairs for d in pair.slices if d.n_pairs}
    total = sum(pairs.values())
    if not total:
        return None
    own = {k: v / total for k, v in pairs.items()}
    ci = fmt_ci(o.ci.low, o.ci.high, binary)
    head = f"Why this interval differs from the all-cases paired one {ci}: the {name(std.mix)} mix"
    tail = (
        "so the delta is a reweighted sum of slice deltas and its interval adds each "
        "slice's own uncertainty at its weight"
    )
    if std.dropped_slices:
        return (
            f"{head} leaves out {', '.join(name(k) for k in std.dropped_slices)} "
            f"({fmt_pct(std.dropped_weight, 1)} of its weight, no pairs there), {tail}"
        )
    gaps = sorted(((abs(std.weights.get(k, 0.0) - v), k) for k, v in own.items()), reverse=True)
    gap, k = gaps[0]
    if gap < 1e-9:  # the pairs' own shares, but fixed in advance (a traffic file)
        return (
            f"{head} holds each slice's share fixed (here at the pairs' own shares), so its "
            "interval leaves out how slice shares vary from one sample of cases to the next "
            "and counts only the uncertainty within each slice"
        )
    if std.mix == "actual":
        return (
            f"{head} weights each slice by the scored cases of every compared arm, not by "
            f"this pair's {total} shared cases ({name(k)} "
            f"{fmt_pct(std.weights.get(k, 0.0), 1)} against {fmt_pct(own[k], 1)} of the "
            f"pairs), {tail}"
        )
    return (
        f"{head} weights the slices differently from the pairs' own shares ({name(k)} "
        f"{fmt_pct(std.weights.get(k, 0.0), 1)} against {fmt_pct(own[k], 1)} of the pairs), "
        f"{tail}"
    )


def scale_phrase(metric: MetricResult) -> str:
    """What scale a graded metric is on: declared (``--scale``) or inferred from its scores.

    A graded score with no declared scale is read as numbers; the report says which range it
    saw and the usual scale that range fits (0-1, 1-5, 0-10, 0-100), so a 0-100 score is
    never taken for a 0-1 one without a word. Empty for pass/fail metrics.
    """
    if metric.kind == "binary":
        return ""
    if metric.scale is not None:
        return f"declared scale {metric.scale[0]:g} to {metric.scale[1]:g}"
    low, high = metric.observed_low, metric.observed_high
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return ""
    seen = f"scores {low:.4g} to {high:.4g}"
    scale = metric.scale_range()
    if scale is not None:
        return f"{seen}, read as a {scale[0]:g}-{scale[1]:g} scale, inferred"
    return f"{seen}, on no usual scale"


def metric_kind(metric: MetricResult) -> str:
    """What kind of score a metric is, as every report's header says it.

    For example ``graded, repeats averaged per case; scores 1 to 5, read as a 1-5 scale,
    inferred``.
    """
    kind = "pass/fail" if metric.kind == "binary" else "graded"
    if metric.repeated:
        kind += ", repeats averaged per case"
    scale = scale_phrase(metric)
    return f"{kind}; {scale}" if scale else kind


def break_even_sentences(
    std: Standardized, candidate: str, shown: int = 3, name: Name = _same
) -> list[str]:
    """In words, the slices whose share of the mix would flip the standardized delta.

    Nearest first: "long_context would have to grow from 5% to 6.5% of the mix for v2 to
    come out ahead (to 9.1% for the interval to exclude zero)". With break-even evidence
    but no share in [0, 100%] that flips it, one sentence says so.
    """
    if not std.break_even:
        return []
    flips = [b for b in std.break_even if sign_flip(b) is not None]
    if not flips:
        return ["no single slice's share, anywhere from 0% to 100%, flips its sign"]
    flips.sort(key=lambda b: abs(float(b.sign_flip or 0.0) - b.share))
    out = []
    for b in flips[:shown]:
        flip = float(b.sign_flip or 0.0)
        way = "grow" if flip > b.share else "shrink"
        side = "ahead" if std.delta.estimate < 0 else "behind"
        out.append(
            f"{name(b.slice)} would have to {way} from {fmt_pct(b.share, 1)} to "
            f"{fmt_pct(flip, 1)} of the mix for {name(candidate)} to come out {side} "
            f"({_interval_note(b.share, flip, b.interval_flips)})"
        )
    return out


def _interval_note(share: float, flip: float, interval_flips: Sequence[float]) -> str:
    """Where, on the way to ``flip`` and past it, the interval's ends cross zero."""
    up = flip > share
    before = [f for f in interval_flips if (share < f < flip if up else flip < f < share)]
    beyond = [f for f in interval_flips if (f > flip if up else f < flip)]
    notes = []
    if before:
        edge = min(before) if up else max(before)
        notes.append(f"its interval stops excluding zero at {fmt_pct(edge, 1)}")
    if beyond:
        edge = min(beyond) if up else max(beyond)
        other = " the other way" if before else ""
        notes.append(f"{fmt_pct(edge, 1)} for its interval to exclude zero{other}")
    else:
        notes.append("no share that way makes its interval exclude zero")
    return "; ".join(notes)
