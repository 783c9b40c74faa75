"""The cases that carry the evidence: discordant counts (or the paired t summary).

Text: the 2x2 counts or the paired t, the informative share, the clustered SE, the unpaired
contrast and the cases that moved (the first eight); without pairs, how many slices move
each way. Markdown: the informative share. HTML: the 2x2 table or the delta histograms, and
the same sentences.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import RenderableType

from evaldelta.comparison.model import SliceDelta
from evaldelta.report._format import fmt, fmt_ci, fmt_delta, fmt_p, fmt_pct, fmt_signed
from evaldelta.report._sequential import P_WORD
from evaldelta.report.sections._base import PairSection
from evaldelta.report.sections._html import piece
from evaldelta.report.sections._lines import terminal_lines
from evaldelta.report.sections.pairs import PairContext

__all__ = ["EVIDENCE"]


@dataclass(frozen=True)
class EvidenceView:
    ctx: PairContext


def _cases(n: int) -> str:
    return f"{n} case" if n == 1 else f"{n} cases"


def _excludes_zero(d: SliceDelta) -> bool:
    res = d.main
    return res is not None and (res.ci.high < 0 or res.ci.low > 0)


def _paired_lines(ctx: PairContext) -> list[str]:
    pair, binary, alpha = ctx.pair, ctx.binary, ctx.alpha
    b, c, o = pair.baseline, pair.candidate, pair.overall
    assert o.paired is not None
    test = f"{P_WORD} =" if ctx.sequential else "exact McNemar p ="
    if ctx.single and o.table is not None:
        t = o.table
        lines = [
            f"The evidence is {_cases(t.only_baseline + t.only_candidate)}, not {o.n_pairs}:",
            f"  both pass {t.both_pass} · both fail {t.both_fail} · only {b} passes "
            f"{t.only_baseline} · only {c} passes {t.only_candidate}",
            f"  informative pairs {o.informative}/{o.n_pairs} ({fmt_pct(o.informative_share)})"
            f" · {test} {fmt_p(o.paired.pvalue, alpha)}",
        ]
    elif ctx.sequential:  # a confidence sequence has no SE and no t
        lines = [
            f"Paired: mean per-case delta {fmt_signed(o.paired.estimate, 4)}, "
            f"{P_WORD} = {fmt_p(o.paired.pvalue, alpha)}",
            f"  informative pairs (delta not zero) {o.informative}/{o.n_pairs} "
            f"({fmt_pct(o.informative_share)}); the rest cancel out of the difference",
        ]
    else:
        lines = [
            f"Paired: mean per-case delta {fmt_signed(o.paired.estimate, 4)}, "
            f"SE {fmt(o.paired.se, 4)}, t = {fmt(o.paired.statistic, 1)}, "
            f"p = {fmt_p(o.paired.pvalue, alpha)}",
            f"  informative pairs (delta not zero) {o.informative}/{o.n_pairs} "
            f"({fmt_pct(o.informative_share)}); the rest cancel out of the difference",
        ]
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
        shown = ", ".join(f"{m.case_id} ({fmt_signed(m.delta, 2)})" for m in pair.discordant[:8])
        more = pair.discordant_total - min(8, len(pair.discordant))
        lines.append(
            f"Cases that moved ({pair.discordant_total}): {shown}"
            + (f", and {more} more (JSON lists up to the limit)" if more > 0 else "")
        )
    return lines


def _unpaired_lines(ctx: PairContext) -> list[str]:
    pair = ctx.pair
    lower = [d for d in pair.slices if d.main is not None and d.main.estimate < 0]
    higher = [d for d in pair.slices if d.main is not None and d.main.estimate > 0]

    def excluding(ds: list[SliceDelta]) -> str:
        names = [d.slice for d in ds if d.main is not None and _excludes_zero(d)]
        return f" ({', '.join(names)} excludes zero on its own)" if names else ""

    return [
        f"Evidence: {pair.candidate} is lower on {len(lower)} of {len(pair.slices)} slices"
        f"{excluding(lower)}; higher on {len(higher)}{excluding(higher)}."
    ]


class _Evidence(PairSection[EvidenceView]):
    name = "evidence"

    def view(self, pair: PairContext) -> EvidenceView:
        return EvidenceView(pair)

    def text(self, view: EvidenceView) -> list[str]:
        ctx = view.ctx
        if ctx.pair.paired_available and ctx.pair.overall.paired is not None:
            return _paired_lines(ctx)
        return _unpaired_lines(ctx)

    def terminal(self, view: EvidenceView) -> list[RenderableType]:
        return list(terminal_lines(self.text(view)))

    def markdown(self, view: EvidenceView) -> list[str]:
        ov = view.ctx.pair.overall
        if ov.informative is None:
            return []
        return [
            f"- Informative pairs: {ov.informative}/{ov.n_pairs} ({fmt_pct(ov.informative_share)})"
        ]

    def html(self, view: EvidenceView) -> str:
        v = view.ctx.html
        svg = ""
        if v.histogram is not None:
            from evaldelta.report import plots

            hist = plots.histogram_figure(*v.histogram, unit=v.unit)
            title = f"Per-case deltas, {v.candidate} - {v.baseline}"
            svg = plots.figure_svg(hist, title=title)
        return piece("sections/evidence.html.j2", v=v, histogram_svg=svg)


EVIDENCE = _Evidence()
