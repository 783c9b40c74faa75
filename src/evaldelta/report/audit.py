"""Render an :class:`~evaldelta.checks.audit.AuditResult` (and a retrieval audit) as plain text."""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

from evaldelta.checks.audit import AuditResult, RetrievalAudit, Triage
from evaldelta.report._escape import term_text
from evaldelta.report._leakage import leakage_lines

__all__ = ["audit_to_json", "render_audit_text", "render_retrieval_text"]


def _pct(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{100 * x:.0f}%"


def render_audit_text(result: AuditResult, *, claim: str | None = None) -> str:
    """The audit as text: self-agreement, symmetry, requirements, triage."""
    out = ["Reference-bias audit", ""]
    out.append(
        "Self-agreement: fresh outputs vs recorded goldens (exact match after whitespace "
        "normalization)"
    )
    for a in result.agreements:
        mark = "  <- author of these goldens" if a.arm == a.yardstick else ""
        extra = f"; {a.missing} without a golden" if a.missing else ""
        out.append(
            f"  goldens by {a.yardstick:<12} {a.arm:<12} {a.matched:>3}/{a.compared:<4}"
            f"({a.raw_matched}/{a.compared} without normalizing){extra}{mark}"
        )
    for index, author in enumerate(result.winners):
        own = result.agreement(author, author)
        said = claim or f"{own.compared}/{own.compared}"
        if index > 0:
            out.append(
                f"  {author} on its own recording: {own.matched}/{own.compared} "
                f"({said} by construction when it was recorded)."
            )
            continue
        out.append(
            f"  The suite's recorded {said} for {author} was never a measurement: the goldens are "
            f"{author}'s own saved output. Re-run live, {author} reproduces "
            f"{own.matched}/{own.compared}."
        )
    if len(result.winners) >= 2:
        out.append("")
        out.append("Symmetry test: the yardstick built from each arm in turn")
        for author, winner in result.winners.items():
            out.append(f"  goldens by {author}: best arm {winner}")
        if result.follows_authorship:
            out.append(
                "  The winner follows authorship: this comparison measures who wrote the yardstick."
            )
        else:
            out.append("  The winner does not simply follow authorship.")
    if result.requirements:
        out.append("")
        n_checks = len(result.checks)
        out.append(
            f"Requirement checks ({n_checks} mechanical, from {result.checks_file}): pass = "
            "every check passes"
        )
        for arm, (passed, scored) in result.requirements.items():
            rate = passed / scored if scored else float("nan")
            out.append(f"  {arm:<12} {passed:>3}/{scored:<4} {rate:.3f}")
        t = result.cross_tab
        if t is not None:
            out.append(
                f"  paired: {t.both_pass} pass under both, {t.both_fail} fail under both, "
                f"{t.only_baseline} pass only under {t.baseline}, {t.only_candidate} only "
                f"under {t.candidate}"
            )
    for tri in result.triage:
        out.extend(_triage_lines(tri))
    if result.leakage is not None:
        out.append("")
        out.extend(leakage_lines(result.leakage))
    return "\n".join(term_text(line) for line in out) + "\n"


def _triage_lines(tri: Triage) -> list[str]:
    """One arm's triage of its exact-match failures."""
    out: list[str] = []
    out.append("")
    out.append(
        f"Triage: {tri.arm}'s {tri.failures} exact-match failures on the goldens by {tri.yardstick}"
    )
    kinds: dict[str, int] = {}
    for c in tri.cosmetic:
        kinds[c.detail] = kinds.get(c.detail, 0) + 1
    detail = ", ".join(f"{n} {k}" for k, n in kinds.items())
    out.append(
        f"  cosmetic (pass every check, same remedy and timeframe): {len(tri.cosmetic)} ({detail})"
    )
    out.append(f"  substantive (fail a check, or state a different value): {len(tri.substantive)}")
    for c in tri.substantive:
        out.append(f"    {c.case_id}: {c.detail}")
    out.append(
        f"  precision of the exact-match suite: {len(tri.substantive)}/{tri.failures} = "
        f"{_pct(tri.precision)} of its red cases are worth reading"
    )
    return out


def render_retrieval_text(result: RetrievalAudit) -> str:
    """The retrieval audit as text."""
    out = ["Retrieval labels: who surfaced them, and who wins on them", ""]
    total = sum(result.origins.values())
    out.append(
        "  labelled documents by origin: "
        + ", ".join(f"{o} {n}" for o, n in result.origins.items())
    )
    for s in result.scores:
        out.append(
            f"  labels from {s.labels_from:<12} {s.arm:<12} recall "
            f"{s.relevant_found}/{s.relevant_labelled} "
            f"({_pct(s.recall)}); {s.unjudged}/{s.retrieved} retrieved documents never labelled"
        )
    if result.dominant_origin:
        n = result.origins[result.dominant_origin]
        out.append(
            f"  {n}/{total} labelled documents were surfaced by {result.dominant_origin}: the "
            "labels "
            "are drawn from one system's own results, so documents only the other finds earn "
            "nothing."
        )
    if result.follows_authorship:
        out.append(
            "  The winner follows authorship: label a pool built from every system's results."
        )
    return "\n".join(term_text(line) for line in out) + "\n"


def _plain(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def audit_to_json(result: AuditResult | RetrievalAudit) -> str:
    """The result as JSON (NaN becomes null), with derived rates and precisions."""
    data = dataclasses.asdict(result)
    if isinstance(result, AuditResult):
        for a, src in zip(data["agreements"], result.agreements, strict=True):
            a["rate"] = src.rate
        for t, src_t in zip(data["triage"], result.triage, strict=True):
            t["precision"] = src_t.precision
        if result.leakage is not None:
            for c, src_c in zip(data["leakage"]["criteria"], result.leakage.criteria, strict=True):
                c["flag"] = src_c.flag
    return json.dumps(_plain(data), indent=2) + "\n"
