"""The gate's verdict, at the top of the HTML page (``report/verdict.py`` words it).

The text and Markdown reports print the verdict after the report (the CLI appends
``render_verdict_text`` / ``render_verdict_markdown``), so only the HTML shows it here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evaldelta.gating import Verdict
from evaldelta.report.sections._base import Report, Section
from evaldelta.report.sections._html import piece
from evaldelta.report.verdict import (
    _basis_note,
    _headline,
    _outcome_word,
    _where,
    rule_break_even_sentences,
    rule_numbers,
    rule_why,
)

__all__ = ["VERDICT"]

_ORDER = {"fail": 0, "inconclusive": 1, "pass": 2}  # the deciding rules first


@dataclass(frozen=True)
class VerdictView:
    verdict: dict[str, Any] | None


def _rules(verdict: Verdict) -> list[dict[str, Any]]:
    binary = verdict.kind == "binary"
    rules = []
    for r in sorted(verdict.rules, key=lambda r: _ORDER.get(r.outcome, 3)):
        est, ci, bound, n = rule_numbers(r, binary)
        rules.append(
            {
                "outcome": r.outcome,
                "word": _outcome_word(r),
                "rule": r.rule,
                "candidate": r.candidate,
                "where": _where(r),
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
    formats = frozenset(("html",))

    def view(self, report: Report) -> VerdictView:
        v = report.verdict
        if v is None:
            return VerdictView(None)
        shares = [f"{r.candidate}: {t}" for r in v.rules for t in rule_break_even_sentences(r)]
        return VerdictView(
            {
                "decision": v.decision,
                "headline": _headline(v),
                "basis": _basis_note(v),
                "policy": v.policy,
                "metric": v.metric,
                "by": v.by,
                "rules": _rules(v),
                "break_even": shares,
            }
        )

    def html(self, view: VerdictView) -> str:
        return piece("sections/verdict.html.j2", verdict=view.verdict)


VERDICT = _Verdict()
