"""The rubric leakage flag as report lines (audit text, compare text/markdown, HTML rows).

Callers escape for their format; this module only rounds, trims and lays out.
"""

from __future__ import annotations

from dataclasses import dataclass

from evaldelta.comparison.model import CriterionLeakage, RubricLeakage
from evaldelta.report._escape import md_code, md_text
from evaldelta.report._format import fmt_p, fmt_pct

__all__ = [
    "LeakageRow",
    "checks_title",
    "leakage_lines",
    "leakage_markdown",
    "leakage_rows",
    "rule_text",
    "trim_output",
]

HEAD, TAIL = 70, 110  # characters kept from each end of a long example output


def trim_output(text: str | None) -> str:
    """One line: whitespace collapsed; a long output keeps its start and its end.

    The end is kept longer: closings (a sign-off, a next step) are where style sits.
    """
    if text is None:
        return "(no output stored)"
    flat = " ".join(text.split())
    if len(flat) <= HEAD + TAIL + 7:
        return flat
    head = flat[:HEAD].rsplit(" ", 1)[0]  # whole words at both cuts
    tail = flat[-TAIL:].split(" ", 1)[-1]
    return f"{head} [...] {tail}"


def rule_text(leak: RubricLeakage) -> str:
    """The flag rule, stated with its thresholds."""
    r = leak.rule
    return (
        f"flag rule: the favoured arm passes >= {100 * r.min_pass_rate:g}% of the pairs, "
        f">= {100 * r.min_share:g}% of the discordant pairs go its way, and the exact "
        f"McNemar p of the split, Holm-adjusted over the {len(leak.criteria)} criteria, is "
        f"below {r.alpha:g}"
    )


@dataclass(frozen=True)
class LeakageRow:
    """One criterion's cells, formatted."""

    criterion: str
    baseline: str
    candidate: str
    b: str
    c: str
    share: str
    p: str
    p_holm: str
    flag: str


def _count(passed: int, n: int) -> str:
    return f"{passed}/{n}"


def leakage_rows(leak: RubricLeakage) -> list[LeakageRow]:
    """Formatted cells per criterion (text and HTML tables)."""
    rows = []
    for c in leak.criteria:
        a = c.asymmetry
        share = f"{fmt_pct(a.share)} to {c.favours}" if c.favours else "even"
        rows.append(
            LeakageRow(
                c.criterion,
                _count(a.both_pass + a.only_baseline, a.n),
                _count(a.both_pass + a.only_candidate, a.n),
                str(a.only_baseline),
                str(a.only_candidate),
                share if a.discordant else "none",
                fmt_p(a.pvalue, leak.rule.alpha),
                fmt_p(a.pvalue_holm, leak.rule.alpha),
                f"{c.flag} (favours {c.favours})" if c.flag else "",
            )
        )
    return rows


def _examples(c: CriterionLeakage) -> list[str]:
    out = []
    for e in c.examples:
        out.append(f"      {e.case_id} {e.failing_arm} fails:  {trim_output(e.failing_output)}")
        out.append(f"      {e.case_id} {e.passing_arm} passes: {trim_output(e.passing_output)}")
    return out


def leakage_lines(leak: RubricLeakage) -> list[str]:
    """The leakage table with its rule, flags, examples and what was not assessed."""
    out = [
        f"Rubric leakage: do a criterion's failures sit in one arm? (b = only {leak.baseline} "
        f"passes, c = only {leak.candidate} passes, on the pairs both were scored on)",
        f"  {rule_text(leak)}",
    ]
    rows = leakage_rows(leak)
    width = max([len("criterion"), *(len(r.criterion) for r in rows)])
    arm_w = max(len(leak.baseline), len(leak.candidate), 7)
    out.append(
        f"  {'criterion'.ljust(width)}  {leak.baseline.rjust(arm_w)}  "
        f"{leak.candidate.rjust(arm_w)}    b    c  {'split'.ljust(18)} {'p':>9} {'p (Holm)':>9}"
    )
    for row, c in zip(rows, leak.criteria, strict=True):
        out.append(
            f"  {row.criterion.ljust(width)}  {row.baseline.rjust(arm_w)}  "
            f"{row.candidate.rjust(arm_w)}  {row.b:>3}  {row.c:>3}  {row.share.ljust(18)} "
            f"{row.p:>9} {row.p_holm:>9}" + (f"  {row.flag}" if row.flag else "")
        )
        if c.flag:
            if c.spec:
                out.append(f"    spec: {c.spec}")
            out.extend(_examples(c))
    if not leak.flagged:
        out.append("  No criterion is flagged.")
    if leak.repeated:
        out.append(
            "  Pairs are (case, repeat) attempts; the exact test treats repeats as independent "
            "pairs, which overstates the evidence."
        )
    reasons: dict[str, list[str]] = {}
    for cid, why in leak.not_assessed.items():
        reasons.setdefault(why, []).append(cid)
    for why, ids in reasons.items():
        out.append(f"  not assessed: {', '.join(ids)}: {why}")
    return out


def checks_title(leak: RubricLeakage) -> str:
    """The heading of a comparison's checks section."""
    return (
        f"Checks: {len(leak.criteria)} check.<id> metric(s), {leak.candidate} vs {leak.baseline}"
        " (pass counts on shared cases, and the rubric leakage flag)"
    )


def leakage_markdown(leak: RubricLeakage) -> list[str]:
    """The checks section of a Markdown report: the leakage table and flagged examples."""
    out = [
        f"## Checks: {md_text(leak.candidate)} vs {md_text(leak.baseline)}, rubric leakage",
        "",
        md_text(rule_text(leak)) + ".",
        "",
        f"| criterion | {md_text(leak.baseline)} | {md_text(leak.candidate)} | b | c | split "
        "| p | p (Holm) | flag |",
        "| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | --- |",
    ]
    for row in leakage_rows(leak):
        cells = [md_code(row.criterion), row.baseline, row.candidate, row.b, row.c]
        cells += [md_text(row.share), row.p, row.p_holm, md_text(row.flag)]
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    for c in leak.flagged:
        for e in c.examples:
            out.append(
                f"- {md_code(c.criterion)}, {md_text(e.case_id)}: {md_text(e.failing_arm)} fails: "
                f"{md_text(trim_output(e.failing_output))}; {md_text(e.passing_arm)} passes: "
                f"{md_text(trim_output(e.passing_output))}"
            )
    for cid, why in leak.not_assessed.items():
        out.append(f"- not assessed: {md_code(cid)} ({md_text(why)})")
    return [*out, ""]
