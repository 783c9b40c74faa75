"""The gate's verdict (``report/verdict.py`` words it), placed once per format.

At the top of the HTML page; after the report in text and Markdown (the registry lists it
at both places, each for its formats). In text and Markdown the verdict is the block
``evaldelta gate`` prints on its own, after a blank line, so ``compare --policy`` shows the
same block the gate does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evaldelta.comparison.model import Comparison
from evaldelta.gating import Verdict
from evaldelta.report.sections._base import Report, Section
from evaldelta.report.sections._html import piece
from evaldelta.report.verdict import (
    basis_note,
    interval_column,
    outcome_word,
    render_verdict_markdown,
    render_verdict_text,
    rule_break_even_sentences,
    rule_numbers,
    rule_where,
    rule_why,
    verdict_headline,
)

__all__ = ["VERDICT"]

_ORDER = {"fail": 0, "inconclusive": 1, "pass": 2}  # the deciding rules first


@dataclass(frozen=True)
class VerdictView:
    verdict: dict[str, Any] | None  # the HTML piece's fields
    gate: Verdict | None = None  # text and Markdown word it whole
    comparison: Comparison | None = None  # the comparison it judged (sequential or not)


def _rules(verdict: Verdict) -> list[dict[str, Any]]:
    binary = verdict.kind == "binary"
    rules = []
    for r in sorted(verdict.rules, key=lambda r: _ORDER.get(r.outcome, 3)):
        est, ci, bound, n = rule_numbers(r, binary)
        rules.append(
            {
                "outcome": r.outcome,
                "word": outcome_word(r),
                "rule": r.rule,
                "candidate": r.candidate,
                "where": rule_where(r),
                "estimate": est,
                "ci": ci,
                "bound": bound,
                "n": n,
                "why": rule_why(r),
            }
        )
    return rules


class _Verdict(Section[VerdictView]):
    name = "verdict"
    block = True
    formats = frozenset(("html", "text", "markdown"))

    def view(self, report: Report) -> VerdictView:
        v = report.verdict
        if v is None:
            return VerdictView(None)
        shares = [f"{r.candidate}: {t}" for r in v.rules for t in rule_break_even_sentences(r)]
        seq = report.comparison.sequential is not None
        return VerdictView(
            gate=v,
            comparison=report.comparison,
            verdict={
                "decision": v.decision,
                "headline": verdict_headline(v),
                "basis": basis_note(v, seq),
                "interval": interval_column(v, seq),
                "policy": v.policy,
                "metric": v.metric,
                "by": v.by,
                "rules": _rules(v),
                "break_even": shares,
            },
        )

    def text(self, view: VerdictView) -> list[str] | None:
        if view.gate is None:
            return None
        text = render_verdict_text(view.gate, view.comparison)
        return text.rstrip("\n").split("\n")

    def markdown(self, view: VerdictView) -> list[str] | None:
        if view.gate is None:
            return None
        text = render_verdict_markdown(view.gate, view.comparison)
        return text.rstrip("\n").split("\n")

    def html(self, view: VerdictView) -> str:
        return piece("sections/verdict.html.j2", verdict=view.verdict)


VERDICT = _Verdict()
