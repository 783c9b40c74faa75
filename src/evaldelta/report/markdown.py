"""A compact Markdown summary for a pull-request comment.

Per metric and candidate: the text report's answer sentence first, the three worst slices
by interval (among slices with enough cases), all cases, then the standardized and pooled
numbers, the per-attempt contrast, the evidence and the cases in one arm only. Every name
from the data goes through :func:`~evaldelta.report._escape.md_text` (or ``md_code``), so
the comment renders the names as text: no table, HTML, link, mention or heading from data.
"""

from __future__ import annotations

from evaldelta.model import ArmSlice, Comparison, MetricResult, PairComparison
from evaldelta.report._escape import md_code, md_text
from evaldelta.report._facts import (
    attempt_flag,
    attempt_sentence,
    break_even_sentences,
    coverage_per_slice,
    coverage_sentence,
    interval_difference,
    is_loud,
    one_slice,
    one_slice_sentence,
    ordered_slices,
    rests_on,
    scale_phrase,
    standardized_rests_on,
)
from evaldelta.report._format import fmt, fmt_ci, fmt_delta, fmt_p, fmt_pct
from evaldelta.report._mixes import verdict_word

__all__ = ["render_markdown"]


def _pin_warning(comparison: Comparison) -> list[str]:
    if not comparison.pin_differences:
        return []
    from evaldelta.report._pins import fmt_pin

    shown = "; ".join(
        f"{md_code(d.key)} ("
        + ", ".join(f"{md_text(a)} {md_text(fmt_pin(v))}" for a, v in d.values.items())
        + ")"
        for d in comparison.pin_differences
    )
    return [
        f"> ⚠️ **The arms differ beyond the release under test:** {shown}. "
        "Every difference below mixes the two changes.",
        "",
    ]


SHOWN = 3  # rows of the per-slice table in a PR comment (the full table is text and HTML)
WHERE = "in the text and HTML reports (`--format text`, `--format html`) and the JSON"


def _slice_table(
    pair: PairComparison,
    arms: tuple[ArmSlice, ...],
    binary: bool,
    conf: str,
    alpha: float,
    repeats: bool = False,
) -> list[str]:
    b, c = md_text(pair.baseline), md_text(pair.candidate)
    order = ordered_slices(pair, arms)
    only = one_slice(pair)
    p_head = "p (Holm)" if only is None else "p"
    out = [f"| slice | {c} − {b} | {conf} interval | {p_head} | n |", "|---|---:|---|---:|---:|"]
    shown = order.slices[:SHOWN] if only is None else ()
    for d in shown:
        res = d.main
        delta, ci = "n/a", "(no evidence in both arms)"
        if res is not None:
            delta, ci = fmt_delta(res.estimate, binary), fmt_ci(res.ci.low, res.ci.high, binary)
        out.append(
            f"| {md_text(d.slice)} | {delta} | {ci}{rests_on(d, binary and repeats)} | "
            f"{fmt_p(d.pvalue_holm, alpha)} | {d.n_pairs or ''} |"
        )
    o = pair.overall.main
    if o is not None:
        out.append(
            f"| **all cases** | {fmt_delta(o.estimate, binary)} | "
            f"{fmt_ci(o.ci.low, o.ci.high, binary)}"
            f"{rests_on(pair.overall, binary and repeats)} | "
            f"{fmt_p(o.pvalue, alpha)} | "
            f"{pair.overall.n_pairs or ''} |"
        )
    rule = order.rule(pair.paired_available)
    note = f"_Order: {rule}; {order.cut(len(shown), WHERE)}._"
    if only is not None:  # a row for the one slice would repeat the all-cases row
        note = f"_{md_text(one_slice_sentence(only))}._"
    return [*out, "", note, ""]


def _bullets(pair: PairComparison, metric: MetricResult) -> list[str]:
    binary = metric.kind == "binary"
    out = []
    for s in pair.standardized if one_slice(pair) is None else ():
        out.append(
            f"- Standardized ({md_text(s.mix)}): {fmt_delta(s.delta.estimate, binary)} "
            f"{fmt_ci(s.delta.ci.low, s.delta.ci.high, binary)}{standardized_rests_on(s)}: "
            f"{verdict_word(s, pair.candidate, md_text)}"
            + (" (the pairs' own mix: the all-cases paired delta)" if s.same_as_overall else "")
        )
        why = interval_difference(s, pair, binary, md_text)
        if why is not None:
            out.append(f"  - {why}")
        out.extend(
            f"  - break-even: {t}" for t in break_even_sentences(s, pair.candidate, name=md_text)
        )
    out.append(
        f"- Pooled (each arm on its own mix): {fmt(pair.pooled.baseline)} → "
        f"{fmt(pair.pooled.candidate)} ({fmt_delta(pair.pooled.delta, binary)})"
    )
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
    ov = pair.overall
    if ov.informative is not None:
        out.append(
            f"- Informative pairs: {ov.informative}/{ov.n_pairs} ({fmt_pct(ov.informative_share)})"
        )
    coverage = coverage_sentence(pair, md_text)
    if coverage is not None:
        per_slice = coverage_per_slice(pair, md_text)
        out.append(f"- {coverage}" + (f"; {per_slice}" if per_slice else ""))
    return out


def _pair_section(
    comparison: Comparison,
    metric: MetricResult,
    by: str,
    arms: tuple[ArmSlice, ...],
    pair: PairComparison,
) -> list[str]:
    from evaldelta.report.text import _answer_lines

    binary = metric.kind == "binary"
    b, c = pair.baseline, pair.candidate
    out = [
        f"### evaldelta: {md_code(c)} vs {md_code(b)} · {md_text(metric.metric)} · by {md_text(by)}"
    ]
    out.append("")
    answer = [
        line
        for line in _answer_lines(
            pair, binary, md_text, confidence=comparison.confidence, arms=arms
        )
        if line
    ]
    for line in answer:  # the text report's own sentences, names escaped
        out += [line, ""]
    scale = scale_phrase(metric)
    if scale:
        out += [f"_{md_text(metric.metric)} is graded: {md_text(scale)}._", ""]
    if not pair.paired_available:
        out += [f"> **No paired analysis:** {md_code(b)} and {md_code(c)} share no cases.", ""]
    out += _slice_table(
        pair,
        arms,
        binary,
        fmt_pct(comparison.confidence),
        1.0 - comparison.confidence,
        metric.repeated,
    )
    return [*out, *_bullets(pair, metric), ""]


def render_markdown(comparison: Comparison) -> str:
    """Per metric and candidate: answer, worst slices, overall, standardized vs pooled, evidence."""
    out: list[str] = _repeats(comparison)
    out += _pin_warning(comparison)
    out += _upstream_warning(comparison)
    out += [f"> ⚠️ {md_text(n)}\n" for n in comparison.notes if is_loud(n)]
    for metric in comparison.metrics:
        slicing = metric.slicings[0]
        for pair in slicing.pairs:
            out += _pair_section(comparison, metric, slicing.by, slicing.arms, pair)
    for leak in comparison.rubric_leakage:
        from evaldelta.report._leakage import leakage_markdown

        out += leakage_markdown(leak)
    if comparison.three_arm is not None:
        from evaldelta.report._three_arm import three_arm_markdown

        out.append(three_arm_markdown(comparison.three_arm))
        out.append("")
    out += _notes(comparison)
    return "\n".join(out).rstrip() + "\n"


def _notes(comparison: Comparison) -> list[str]:
    """Every other note, folded: what is n/a and why (the text and HTML list them too)."""
    quiet = [n for n in comparison.notes if not is_loud(n)]
    if not quiet:
        return []
    head = f"Notes ({len(quiet)}): undefined statistics are shown as n/a, never as 0"
    return [
        f"<details><summary>{head}</summary>",
        "",
        *(f"- {md_text(n)}" for n in quiet),
        "",
        "</details>",
        "",
    ]


def _repeats(comparison: Comparison) -> list[str]:
    """How repeats were reduced per case, when it is worth a line (``_repeats``)."""
    from evaldelta.report._repeats import repeats_sentence

    sentence = repeats_sentence(comparison)
    return [f"_{md_text(sentence)}_", ""] if sentence else []


def _upstream_warning(comparison: Comparison) -> list[str]:
    """Prompt, payload or retrieval that moved between the arms beyond their declaration."""
    from evaldelta.report._upstream import markdown_lines

    return markdown_lines(comparison)
