"""Render a gate :class:`~evaldelta.gating.Verdict` as text, Markdown (a PR comment) or JSON.

Every rule is listed with its outcome and the numbers behind it, failures first. Deltas of
pass/fail metrics are in percentage points; rates and means with three decimals. Markdown
leads with the failing and inconclusive rules and folds the passing ones into a
``<details>`` block; names from the data are escaped (``md_text``), and the text form
drops control characters from them (``term_text``).
"""

from __future__ import annotations

import json as _json
from collections.abc import Callable
from typing import Any

from evaldelta.comparison.model import Comparison, to_jsonable
from evaldelta.gating import FAIL, INCONCLUSIVE, PASS, RuleResult, Verdict
from evaldelta.gating.rules import rule_of
from evaldelta.gating.rules.critical import NOT_RUN
from evaldelta.report._escape import md_code, md_text, term_text
from evaldelta.report._format import fmt, fmt_ci, fmt_delta, fmt_pct, places_apart
from evaldelta.stats import ANYTIME_METHOD

__all__ = [
    "anytime",
    "basis_note",
    "interval_column",
    "outcome_word",
    "regression_phrase",
    "render_verdict_json",
    "render_verdict_markdown",
    "render_verdict_text",
    "rule_break_even_sentences",
    "rule_numbers",
    "rule_where",
    "rule_why",
    "verdict_headline",
    "verdict_jsonable",
]

_ORDER = {FAIL: 0, INCONCLUSIVE: 1, PASS: 2}
_BADGE = {PASS: "✅ PASS", FAIL: "❌ FAIL", INCONCLUSIVE: "⚠️ INCONCLUSIVE"}


def _sorted(verdict: Verdict) -> list[RuleResult]:
    return sorted(verdict.rules, key=lambda r: _ORDER.get(r.outcome, 3))


def rule_numbers(rule: RuleResult, binary: bool) -> tuple[str, str, str, str]:
    """The estimate, interval, bound and n of a rule, formatted for its kind.

    The layout is the rule kind's (:attr:`~evaldelta.gating.rules.Rule.figures`: a delta, a
    level, a count, a ratio, a critical case's attempts). The outcome hangs on these figures
    against the bound, so each gets the decimals it needs to print unlike the bound
    (``1.503`` against ``<= 1.500``, never ``1.50 <= 1.50``;
    :func:`~evaldelta.report._format.places_apart`).
    """
    n = "" if rule.n is None else str(rule.n)
    ends = (rule.ci.low, rule.ci.high) if rule.ci is not None else ()
    figures = (rule.estimate, *ends)
    kind = rule_of(rule.rule)
    style = kind.figures if kind is not None else "plain"
    if style == "delta":
        scale = 100.0 if binary else 1.0
        p = places_apart(figures, rule.bound, 1 if binary else 3, scale)
        ci = fmt_ci(rule.ci.low, rule.ci.high, binary, p) if rule.ci is not None else ""
        return fmt_delta(rule.estimate, binary, p), ci, fmt_delta(rule.bound, binary, p), n
    if style == "level":
        p = places_apart(figures, rule.bound, 3)
        ci = f"[{fmt(rule.ci.low, p)}, {fmt(rule.ci.high, p)}]" if rule.ci is not None else ""
        return fmt(rule.estimate, p), ci, fmt(rule.bound, p), n
    if style == "count":
        return n, "", f">= {fmt(rule.bound, 0)}", n
    if style == "ratio":
        p = places_apart(figures, rule.bound, 2)
        return fmt(rule.estimate, p), "", f"<= {fmt(rule.bound, p)}", n
    if style == "attempts":
        if rule.case_id is None:
            return "", "", "", n
        passes = "" if rule.estimate is None else f"{fmt(rule.estimate, 0)}/{n} passed"
        need = "all" if rule.bound is None else f">= {fmt(rule.bound, 0)} passes"
        return passes, "", need, n
    p = places_apart(figures, rule.bound, 3)
    return fmt(rule.estimate, p), "", fmt(rule.bound, p), n


def _same(text: str) -> str:
    return text


def rule_where(rule: RuleResult, name: Callable[[str], str] = _same) -> str:
    """Where a rule applies: its slice (and mix), or its critical case and regression cases."""
    if rule.case_id is not None and rule.regression:
        ids = ", ".join(r.id for r in rule.regression)
        return f"{name(ids)} case {name(rule.case_id)} ({name(str(rule.slice))})"
    if rule.case_id is not None:
        return f"case {name(rule.case_id)} ({name(str(rule.slice))})"
    if rule.mix is not None:
        return f"{name(rule.slice or '')}, {name(rule.mix)} mix"
    return name(rule.slice or "")


def regression_phrase(rule: RuleResult) -> str:
    """Where a failing regression case came from, in words (several joined by ``; ``).

    ``regression case R-0012 (T2203), added from incident INC-4471 by support-qa on
    2026-11-30: <reason>``.
    """
    out = []
    for ref in rule.regression:
        kind = "" if ref.source_kind == "other" else f"{ref.source_kind} "
        out.append(
            f"regression case {ref.id} ({ref.case_id}), added from {kind}{ref.source} by "
            f"{ref.found_by} on {ref.added_at}: {ref.reason}"
        )
    return "; ".join(out)


def rule_why(rule: RuleResult) -> str:
    """The rule's reason; for a regression case, with where the case came from."""
    if not rule.regression:
        return rule.sentence
    return f"{rule.sentence} [{regression_phrase(rule)}]"


_TO = {PASS: "pass", FAIL: "fail (before the adjustment across rules)"}


def rule_break_even_sentences(
    rule: RuleResult, name: Callable[[str], str] = _same, shown: int = 3
) -> list[str]:
    """In words, the nearest slice shares at which a standardized rule's outcome changes.

    "long_context would have to grow from 5.0% to 6.7% of the today mix for the
    standardized rule to pass"; with none from 0% to 100%, one sentence says so.
    """
    if rule.mix is None or not rule.break_even:  # only the standardized rule has them
        return []
    mix = name(rule.mix)
    changes = [
        (abs(share - b.share), b.slice, b.share, share, to)
        for b in rule.break_even
        for share, to in ((b.up, b.up_outcome), (b.down, b.down_outcome))
        if share is not None and to is not None
    ]
    if not changes:
        return [
            f"no single slice's share, anywhere from 0% to 100%, changes the standardized "
            f"rule's outcome under the {mix} mix ({rule.outcome})"
        ]
    out = []
    for _, slice_name, now, share, to in sorted(changes)[:shown]:
        way = "grow" if share > now else "shrink"
        out.append(
            f"{name(slice_name)} would have to {way} from {fmt_pct(now, 1)} to "
            f"{fmt_pct(share, 1)} of the {mix} mix for the standardized rule to "
            f"{_TO.get(to, 'be inconclusive')}"
        )
    return out


def _break_even_lines(verdict: Verdict, name: Callable[[str], str] = _same) -> list[str]:
    """Every standardized rule's break-even sentences, each naming its candidate."""
    out = []
    for r in verdict.rules:
        for sentence in rule_break_even_sentences(r, name):
            out.append(f"{name(r.candidate)}: {sentence}")
    return out


def outcome_word(rule: RuleResult) -> str:
    """PASS, FAIL or INCONCLUSIVE, the last with the way its interval leans when it does."""
    word = rule.outcome.upper()
    if rule.outcome == INCONCLUSIVE and rule.leaning is not None:
        word += f" (leaning {rule.leaning})"
    return word


def verdict_headline(verdict: Verdict) -> str:
    """The verdict's first line: the decision, its exit code and the rules counted by outcome."""
    counts = ", ".join(
        f"{verdict.count(o)} {o}" for o in (FAIL, INCONCLUSIVE, PASS) if verdict.count(o)
    )
    head = f"Verdict: {verdict.decision.upper()} (exit {verdict.exit_code})"
    if verdict.decision != verdict.outcome:
        head += f": the outcome is {verdict.outcome}, mapped by on_inconclusive = "
        head += f"{verdict.on_inconclusive!r}"
    return f"{head}. Rules: {counts or 'none'}."


def _failures(
    verdict: Verdict, name: Callable[[str], str] = _same, *, candidate: bool = True
) -> list[str]:
    """One phrase per failing rule; ``candidate=False`` leaves out the (only) candidate."""
    out = []
    for r in _sorted(verdict):
        if r.outcome != FAIL:
            continue
        where = rule_where(r, name)
        what = f"{r.rule} fails on {where}" if where else r.rule
        if r.regression:
            what = f"fails {name(regression_phrase(r))}"
        out.append(f"{name(r.candidate)}: {what}" if candidate else what)
    return out


def _not_run(verdict: Verdict, name: Callable[[str], str] = _same) -> list[str]:
    """One line per regression case a candidate has no attempt on (counted inconclusive)."""
    out = []
    for r in verdict.rules:
        if r.regression and r.outcome == INCONCLUSIVE and NOT_RUN in r.sentence:
            ids = ", ".join(ref.id for ref in r.regression)
            out.append(
                f"Not run: regression case {name(ids)} ({name(str(r.case_id))}) was not run by "
                f"arm {name(r.candidate)}; counted inconclusive, not passed."
            )
    return out


def anytime(verdict: Verdict, sequential: bool | None = None) -> bool:
    """Whether the rules were judged on confidence sequences (a sequential comparison).

    ``sequential`` when the caller knows (the report has the comparison); otherwise read off
    the rules: a rule judged on a confidence sequence names its method.
    """
    if sequential is not None:
        return sequential
    return any(r.method == ANYTIME_METHOD for r in verdict.rules)


def interval_column(verdict: Verdict, sequential: bool | None = None) -> str:
    """The rule table's interval column: ``interval``, or ``anytime 95% CS``."""
    if not anytime(verdict, sequential):
        return "interval"
    return f"anytime {fmt_pct(verdict.confidence)} CS"


def basis_note(verdict: Verdict, sequential: bool | None = None) -> str:
    """What the rules were judged on: whole intervals at the confidence, or point estimates.

    A sequential verdict says its intervals are confidence sequences and its p-values
    anytime-valid, so no reader takes it for the fixed-sample gate.
    """
    conf = fmt_pct(verdict.confidence)
    if verdict.basis == "point":
        return (
            "Basis: point estimates (the seed's plain rule; no interval, so identical releases "
            "can fail by chance)."
        )
    if anytime(verdict, sequential):
        return (
            f"Basis: anytime-valid {conf} confidence sequences (sequential), not fixed-sample "
            "intervals: valid however often the gate was run on the growing data and whenever "
            "it stopped. A rule passes when the whole confidence sequence clears its bound, "
            "fails only when it misses the bound, and is inconclusive in between. "
            + _adjust_note(verdict, anytime=True)
        )
    return (
        f"Basis: {conf} intervals. A rule passes when the whole interval clears its bound, "
        "fails only when the whole interval misses it, and is inconclusive in between. "
        + _adjust_note(verdict)
    )


def _adjust_note(verdict: Verdict, anytime: bool = False) -> str:
    """How the fail decisions were protected against the number of rules and slices."""
    k = verdict.family
    if verdict.fail_adjust == "none":
        return (
            f"Fail decisions unadjusted (fail_adjust = 'none'): with {k} interval-judged "
            "rules, identical releases can fail more often than alpha/2."
        )
    name = "Holm" if verdict.fail_adjust == "holm" else "Bonferroni"
    if anytime:
        return (
            f"Fail decisions {name}-adjusted across {k} rule(s) on their anytime-valid "
            f"p-values (fail_adjust = {verdict.fail_adjust!r}), so identical releases fail at "
            "most alpha/2 of the time, however often the gate looked."
        )
    return (
        f"Fail decisions {name}-adjusted across {k} interval-judged rule(s) (fail_adjust = "
        f"{verdict.fail_adjust!r}), so identical releases fail at most alpha/2 of the time."
    )


def _sequential_tag(verdict: Verdict, sequential: bool | None) -> str:
    """The verdict's title says it was judged on confidence sequences."""
    return " · sequential (anytime-valid)" if anytime(verdict, sequential) else ""


def _sequential(comparison: Comparison | None) -> bool | None:
    """Whether the comparison is sequential; None without one (then read off the rules)."""
    return None if comparison is None else comparison.sequential is not None


def render_verdict_text(verdict: Verdict, comparison: Comparison | None = None) -> str:
    """Plain text: headline, what failed, then every rule with its numbers and reason.

    ``comparison`` (the one the verdict judged) says whether its intervals are confidence
    sequences; without it, the rules say (:func:`anytime`).
    """
    binary = verdict.kind == "binary"
    sequential = _sequential(comparison)
    out = [
        f"evaldelta gate · policy {verdict.policy} · {', '.join(verdict.candidates)} vs "
        f"{verdict.baseline} · metric {verdict.metric} ({verdict.kind}) · by {verdict.by}"
        + _sequential_tag(verdict, sequential),
        verdict_headline(verdict),
    ]
    fails = _failures(verdict)
    if fails and any(r.regression and r.outcome == FAIL for r in verdict.rules):
        out.append("Fails:")  # a regression case's reason is a sentence: one line each
        out.extend(f"  - {f}" for f in fails)
    elif fails:
        out.append("Fails: " + "; ".join(fails) + ".")
    out.extend(_not_run(verdict))
    out.append(basis_note(verdict, sequential))
    out.append("")
    interval = interval_column(verdict, sequential)
    head = ["outcome", "rule", "candidate", "slice / case", "estimate", interval, "bound", "n"]
    rows = [head]
    reasons = []
    for r in _sorted(verdict):
        est, ci, bound, n = rule_numbers(r, binary)
        cells = [outcome_word(r), r.rule, r.candidate, rule_where(r), est, ci, bound, n]
        rows.append([term_text(cell) for cell in cells])  # cleaned before widths are taken
        reasons.append(rule_why(r))
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    for index, row in enumerate(rows):
        line = "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        if index > 0:
            line += f"  {reasons[index - 1]}"
        else:
            line += "  why"
        out.append("  " + line)
    shares = _break_even_lines(verdict)
    if shares:
        out += ["", "Break-even of the standardized rule (one slice's share moved, the rest "]
        out[-1] += "rescaled):"
        out += [f"  {line}" for line in shares]
    return "\n".join(term_text(line) for line in out).rstrip() + "\n"


def _markdown_table(
    rules: list[RuleResult], binary: bool, candidate: bool, interval: str = "interval"
) -> list[str]:
    """The rules as a Markdown table; the candidate column only when there are several."""
    head = ["outcome", "rule", "slice / case", "estimate", interval, "bound", "n", "why"]
    align = ["---", "---", "---", "---:", "---", "---:", "---:", "---"]
    if candidate:
        head.insert(2, "candidate")
        align.insert(2, "---")
    out = ["| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"]
    for r in rules:
        est, ci, bound, n = rule_numbers(r, binary)
        word = outcome_word(r)
        cells = [f"**{word}**" if r.outcome == FAIL else word, md_text(r.rule)]
        if candidate:
            cells.append(md_text(r.candidate))
        cells += [rule_where(r, md_text), est, ci, bound, n, md_text(rule_why(r))]
        out.append("| " + " | ".join(cells) + " |")
    return out


def render_verdict_markdown(verdict: Verdict, comparison: Comparison | None = None) -> str:
    """Markdown for a pull-request comment: badge, failures, the rules that decided.

    The passing rules follow, folded into a ``<details>`` block (GitHub renders it closed).
    ``comparison`` as in :func:`render_verdict_text`.
    """
    binary = verdict.kind == "binary"
    sequential = _sequential(comparison)
    several = len(verdict.candidates) > 1
    interval = interval_column(verdict, sequential)
    names = ", ".join(md_code(c) for c in verdict.candidates)
    out = [
        f"### evaldelta gate: {_BADGE[verdict.decision]}",
        "",
        f"{names} vs {md_code(verdict.baseline)} · metric {md_code(verdict.metric)} "
        f"({md_text(verdict.kind)}) · by {md_code(verdict.by)} · policy {md_code(verdict.policy)}"
        + _sequential_tag(verdict, sequential),
        "",
        md_text(verdict_headline(verdict)),
        "",
    ]
    fails = _failures(verdict, md_text, candidate=several)
    if fails:
        out.extend(f"- **{f}**" for f in fails)
        out.append("")
    missing = _not_run(verdict, md_text)
    if missing:
        out.extend(f"- {line}" for line in missing)
        out.append("")
    ordered = _sorted(verdict)
    deciding = [r for r in ordered if r.outcome != PASS]
    passed = [r for r in ordered if r.outcome == PASS]
    if deciding:
        out += [*_markdown_table(deciding, binary, several, interval), ""]
    else:
        out += ["No rule failed or was inconclusive.", ""]
    if passed:
        word = "rule" if len(passed) == 1 else "rules"
        out += [f"<details><summary>{len(passed)} {word} passed</summary>", ""]
        out += [*_markdown_table(passed, binary, several, interval), "", "</details>", ""]
    shares = _break_even_lines(verdict, md_text)
    if shares:
        out += ["**Break-even of the standardized rule:**", ""]
        out += [f"- {line}" for line in shares]
        out.append("")
    out.append(f"_{md_text(basis_note(verdict, sequential))}_")
    return "\n".join(out).rstrip() + "\n"


def verdict_jsonable(verdict: Verdict) -> dict[str, Any]:
    """The whole verdict as JSON-ready values (undefined numbers become null)."""
    out: dict[str, Any] = to_jsonable(verdict)
    out["counts"] = {o: verdict.count(o) for o in (PASS, FAIL, INCONCLUSIVE)}
    return out


def render_verdict_json(verdict: Verdict, comparison: Comparison | None = None) -> str:
    """The verdict as JSON; with ``comparison``, ``{"comparison": ..., "verdict": ...}``."""
    doc: dict[str, Any] = verdict_jsonable(verdict)
    if comparison is not None:
        doc = {"comparison": to_jsonable(comparison), "verdict": doc}
    return _json.dumps(doc, indent=2, allow_nan=False) + "\n"
