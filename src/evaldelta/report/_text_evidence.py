"""The text report's evidence and coverage lines (text.py and terminal.py share them).

The discordant counts (or the paired t summary), the informative share, the clustered SE,
the unpaired contrast, the cases that moved; and the cases in one arm only.
"""

from __future__ import annotations

from evaldelta.model import PairComparison, SliceDelta
from evaldelta.report._facts import coverage_per_slice, coverage_sentence
from evaldelta.report._format import fmt, fmt_ci, fmt_delta, fmt_p, fmt_pct, fmt_signed

__all__ = ["_coverage_lines", "_evidence_lines"]


def _evidence_lines(
    pair: PairComparison,
    single: bool,
    binary: bool,
    b: str,
    c: str,
    alpha: float | None = None,
) -> list[str]:
    o = pair.overall
    lines = []
    if pair.paired_available and o.paired is not None:
        if single and o.table is not None:
            t = o.table
            lines.append(
                f"The evidence is {_cases(t.only_baseline + t.only_candidate)}, not {o.n_pairs}:"
            )
            lines.append(
                f"  both pass {t.both_pass} · both fail {t.both_fail} · only {b} passes "
                f"{t.only_baseline} · only {c} passes {t.only_candidate}"
            )
            lines.append(
                f"  informative pairs {o.informative}/{o.n_pairs} ({fmt_pct(o.informative_share)})"
                f" · exact McNemar p = {fmt_p(o.paired.pvalue, alpha)}"
            )
        else:
            lines.append(
                f"Paired: mean per-case delta {fmt_signed(o.paired.estimate, 4)}, "
                f"SE {fmt(o.paired.se, 4)}, t = {fmt(o.paired.statistic, 1)}, "
                f"p = {fmt_p(o.paired.pvalue, alpha)}"
            )
            lines.append(
                f"  informative pairs (delta not zero) {o.informative}/{o.n_pairs} "
                f"({fmt_pct(o.informative_share)}); the rest cancel out of the difference"
            )
        if o.clustered_se is not None and o.clustered_ci is not None:
            lines.append(
                f"  clustered SE (Miller 2024) {fmt(o.clustered_se, 4)} -> "
                f"{fmt_ci(o.clustered_ci.low, o.clustered_ci.high, binary)}"
            )
        if o.unpaired is not None:
            lines.append(
                f"Unpaired view, for contrast only: {fmt_delta(o.unpaired.estimate, binary)} "
                f"{fmt_ci(o.unpaired.ci.low, o.unpaired.ci.high, binary)} "
                f"(Welch, SE {fmt(o.unpaired.se, 4)} vs paired SE {fmt(o.paired.se, 4)})"
            )
        if pair.discordant:
            shown = ", ".join(
                f"{m.case_id} ({fmt_signed(m.delta, 2)})" for m in pair.discordant[:8]
            )
            more = pair.discordant_total - min(8, len(pair.discordant))
            lines.append(
                f"Cases that moved ({pair.discordant_total}): {shown}"
                + (f", and {more} more (JSON lists up to the limit)" if more > 0 else "")
            )
    else:
        lower = [d for d in pair.slices if d.main is not None and d.main.estimate < 0]
        higher = [d for d in pair.slices if d.main is not None and d.main.estimate > 0]

        def excluding(ds: list[SliceDelta]) -> str:
            names = [d.slice for d in ds if d.main is not None and _excludes_zero(d)]
            return f" ({', '.join(names)} excludes zero on its own)" if names else ""

        lines.append(
            f"Evidence: {c} is lower on {len(lower)} of {len(pair.slices)} slices"
            f"{excluding(lower)}; higher on {len(higher)}{excluding(higher)}."
        )
    return lines


def _cases(n: int) -> str:
    return f"{n} case" if n == 1 else f"{n} cases"


def _excludes_zero(d: SliceDelta) -> bool:
    res = d.main
    return res is not None and (res.ci.high < 0 or res.ci.low > 0)


def _coverage_lines(pair: PairComparison) -> list[str]:
    lines = []
    sentence, per_slice = coverage_sentence(pair), coverage_per_slice(pair)
    if sentence is not None:
        lines.append(sentence)
    if per_slice is not None:
        lines.append(f"  {per_slice}")
    unscored = pair.overall.unscored_in_one
    if unscored:
        lines.append(f"Cases present in both arms but unlabeled in one: {unscored}")
    return lines
