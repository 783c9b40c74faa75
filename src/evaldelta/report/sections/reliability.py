"""Repeat reliability: each arm's rate beside pass@k, pass^k and its steady cases.

Shown only when cases were attempted more than once (``Comparison.reliability``). Per
pass/fail metric, a table per arm and slice (rate, pass@k, pass^k with their intervals,
the shares of cases that always pass, are mixed, or never pass) and the paired pass^k
delta per slice with Holm's p; per graded metric, the spread of a case's repeats. Every
figure is the comparison's (``comparison/_reliability.py``); this only rounds and lays out.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import RenderableType
from rich.text import Text

from evaldelta.comparison.model import (
    ArmReliability,
    ArmSpread,
    MetricReliability,
    PassHatDelta,
    Reliability,
)
from evaldelta.evidence import ALL
from evaldelta.report._escape import md_text
from evaldelta.report._format import fmt, fmt_ci, fmt_delta, fmt_p, fmt_pct
from evaldelta.report.sections._base import Report, Section
from evaldelta.report.sections._html import piece
from evaldelta.report.sections._lines import table, terminal_lines

__all__ = ["RELIABILITY", "ReliabilityTable", "ReliabilityView"]


def _arm_head(k: int) -> list[str]:
    return ["arm", "slice", "cases", "rate", f"pass@{k}", "CI", f"pass^{k}", "CI", "always",
            "mixed", "never", "short"]  # fmt: skip


PAIR_HEAD = ["candidate", "slice", "delta", "CI", "p (Holm)", "pairs", "short"]
SPREAD_HEAD = ["arm", "slice", "cases", "mean sd", "CI", "pooled sd", "short"]


@dataclass(frozen=True)
class ReliabilityTable:
    """One table: its title line, header and rows (every cell a rounded string)."""

    title: str
    header: list[str]
    rows: list[list[str]]


@dataclass(frozen=True)
class ReliabilityView:
    """The section: what k and pass^k mean, then the tables of every metric."""

    intro: str
    tables: tuple[ReliabilityTable, ...]


def _slice(name: str) -> str:
    return "all cases" if name == ALL else name


def _ci(low: float, high: float) -> str:
    return f"[{fmt(low)}, {fmt(high)}]"


def _share(part: int, whole: int) -> str:
    return fmt_pct(part / whole) if whole else "n/a"


def _arm_row(a: ArmReliability) -> list[str]:
    r, at, hat = a, a.pass_at_k, a.pass_hat_k
    return [a.arm, _slice(a.slice), str(a.cases), fmt(a.rate), fmt(at.estimate),
            _ci(at.ci.low, at.ci.high), fmt(hat.estimate),
            _ci(hat.ci.low, hat.ci.high), _share(r.always_pass, r.scored),
            _share(r.mixed, r.scored), _share(r.always_fail, r.scored), str(r.short)]  # fmt: skip


def _pair_row(p: PassHatDelta) -> list[str]:
    d = p.delta
    holm = "" if p.slice == ALL else fmt_p(p.holm)
    return [p.candidate, _slice(p.slice), fmt_delta(d.estimate, True),
            fmt_ci(d.ci.low, d.ci.high, True), holm, str(d.n), str(p.short)]  # fmt: skip


def _spread_row(s: ArmSpread) -> list[str]:
    m = s.mean_sd
    return [s.arm, _slice(s.slice), str(s.cases), fmt(m.estimate), _ci(m.ci.low, m.ci.high),
            fmt(s.pooled_sd), str(s.short)]  # fmt: skip


def _tables(m: MetricReliability, k: int, baseline: str) -> list[ReliabilityTable]:
    if not m.binary:
        return [
            ReliabilityTable(
                f"{m.metric} by {m.by}: spread of a case's scores across its repeats",
                SPREAD_HEAD,
                [_spread_row(s) for s in m.spread],
            )
        ]
    out = [
        ReliabilityTable(
            f"{m.metric} by {m.by}, k = {k}", _arm_head(k), [_arm_row(a) for a in m.arms]
        )
    ]
    if m.pairs:
        out.append(
            ReliabilityTable(
                f"{m.metric}: paired pass^{k} delta vs {baseline} (candidate minus baseline "
                "on shared cases; pairs: cases with k attempts in both arms)",
                PAIR_HEAD,
                [_pair_row(p) for p in m.pairs],
            )
        )
    return out


def _intro(r: Reliability, confidence: str) -> str:
    k = r.k
    how = "--k" if r.k_from == "--k" else "the most attempts every arm has on a case"
    return (
        f"Repeats, k = {k} ({how}): pass^{k} is the chance that every one of {k} attempts "
        f"passes (reliable), pass@{k} that at least one does (Chen et al. 2021's unbiased "
        f"estimator); both over cases with at least {k} scored attempts ('short': fewer), "
        f"with {confidence} t intervals over cases. always / mixed / never: the share of "
        "those cases whose attempts all pass, disagree, or all fail."
    )


class _Reliability(Section[ReliabilityView | None]):
    name = "reliability"

    def view(self, report: Report) -> ReliabilityView | None:
        c = report.comparison
        r = c.reliability
        if r is None or not r.metrics:
            return None
        tables = [t for m in r.metrics for t in _tables(m, r.k, c.baseline)]
        return ReliabilityView(_intro(r, fmt_pct(c.confidence)), tuple(tables))

    def text(self, view: ReliabilityView | None) -> list[str]:
        if view is None:
            return []
        out = ["Repeat reliability", view.intro, ""]
        for t in view.tables:
            out += [t.title, *table(t.header, t.rows, left=(0, 1)), ""]
        return out

    def terminal(self, view: ReliabilityView | None) -> list[RenderableType]:
        lines = self.text(view)
        return [*terminal_lines(lines[:-1]), Text("")] if lines else []

    def markdown(self, view: ReliabilityView | None) -> list[str]:
        if view is None:
            return []
        out = ["## Repeat reliability", "", md_text(view.intro), ""]
        for t in view.tables:
            out += [f"**{md_text(t.title)}**", ""]
            out.append("| " + " | ".join(md_text(h) for h in t.header) + " |")
            out.append("| --- | --- |" + " ---: |" * (len(t.header) - 2))
            out += ["| " + " | ".join(md_text(c) for c in row) + " |" for row in t.rows]
            out.append("")
        return out

    def html(self, view: ReliabilityView | None) -> str:
        return piece("sections/reliability.html.j2", reliability=view)


RELIABILITY = _Reliability()
