"""Seed 002's reference-bias audit and rubric leakage on the bundled tickets, for the demo.

Offline, so only the five mechanical checks run (the judge checks need a model); the data
is built so that they alone give the seed's requirement numbers.
"""

from __future__ import annotations

import dataclasses
from contextlib import ExitStack
from importlib.resources import as_file, files
from typing import Any

from evaldelta.checks import join_cases, load_checks, read_rows, score_rows
from evaldelta.checks.audit import AuditResult, Yardstick, audit
from evaldelta.report._escape import term_text
from evaldelta.report._leakage import leakage_lines
from evaldelta.report.audit import render_audit_text

__all__ = ["TICKETS", "audit_demo", "audit_demo_text", "leakage_demo_lines"]

TICKETS = "seed002_tickets"


def audit_demo(checks_file: str = "checks.yaml") -> tuple[AuditResult, list[dict[str, Any]]]:
    """Seed 002's reference-bias audit on the bundled tickets; also the scored rows.

    Offline, so only the five mechanical checks run (the judge checks need a model); the
    data is built so that they alone give the seed's requirement numbers. With
    ``checks_file="checks_with_signoff.yaml"``: the same checks plus one that encodes the
    incumbent's sign-off (the rubric leakage demo).
    """
    base = files("evaldelta.data").joinpath(TICKETS)
    with ExitStack() as stack:
        path = {
            name: stack.enter_context(as_file(base.joinpath(name)))
            for name in ("replies.csv", "tickets.csv", checks_file)
        }
        rows = join_cases(read_rows(path["replies.csv"]), read_rows(path["tickets.csv"]), TICKETS)
        checks = load_checks(path[checks_file])
    yardsticks = []
    for author, folder in (("incumbent", "goldens"), ("candidate", "goldens_candidate")):
        texts = {
            f.name.removesuffix(".txt"): f.read_text(encoding="utf-8")
            for f in base.joinpath(folder).iterdir()
            if f.name.endswith(".txt")
        }
        yardsticks.append(Yardstick(author, texts, f"{TICKETS}/{folder}"))
    result = audit(rows, yardsticks, checks=checks, where=f"{TICKETS}/replies.csv")
    scored = score_rows(rows, checks, skip_judge=True).rows
    result = dataclasses.replace(result, checks_file=f"{TICKETS}/{checks_file}")
    return result, [dict(r) for r in scored]


def audit_demo_text() -> str:
    """The audit section of the demo: what the seed says, then the audit and per-check rates."""
    result, scored = audit_demo()
    lines = [
        "-" * 100,
        "Seed 002, the audit: goldens recorded from the incumbent a year ago, fresh replies of "
        "both arms",
        "The seed text says: incumbent vs its own goldens 14/40, candidate 11/40 (the suite "
        "reported 40/40);",
        "requirements 34/40 vs 36/40 (33/3/1/3); 29 red cases, 2 worth reading (T2288 credit, "
        "T2301 'delivery by Friday'): about 7%.",
        "Offline, the demo runs the five mechanical checks; the seed's judge checks (next step, "
        "tone) need a model",
        "(evaldelta score --checks checks.yaml --judge-provider local ...); the bundled data "
        "gives the seed's numbers on the mechanical five.",
        "-" * 100,
        render_audit_text(result, claim="40/40").rstrip(),
        "",
        "Per-check pass rates (compare --metric check.<id> gives each its paired interval):",
    ]
    for cid in result.checks:
        cells = []
        for arm in result.arms:
            vals = [r[f"check.{cid}"] for r in scored if r["arm"] == arm]
            cells.append(f"{arm} {sum(v for v in vals if v)}/{len(vals)}")
        lines.append(f"  {cid:<22} " + "   ".join(cells))
    lines.append("")
    lines.extend(leakage_demo_lines(result))
    return "\n".join(lines)


def leakage_demo_lines(plain: AuditResult | None = None) -> list[str]:
    """Seed 002's rubric leakage demo: the audit again, one criterion from memory added.

    ``plain`` is the audit on checks.yaml alone (computed when not given), for the contrast.
    """
    result, _ = audit_demo("checks_with_signoff.yaml")
    if result.leakage is None:  # two arms and a checks file: always set here
        return []
    plain = plain or audit_demo()[0]
    (inc, n), (cand, _) = result.requirements["incumbent"], result.requirements["candidate"]
    tri = next(t for t in result.triage if t.yardstick == "incumbent")
    before = next(t for t in plain.triage if t.yardstick == "incumbent")
    lines = [
        "-" * 100,
        "Seed 002, rubric leakage: the seed warns that the incumbent's house style leaks into "
        "what feels like a requirement",
        "(\"a preferred sign-off becomes 'ends with a next step'\"). checks_with_signoff.yaml "
        "adds one criterion written from memory of",
        "the incumbent's replies, sign_off: \"The reply closes with a courteous sign-off from "
        'the support team" (a regex on its two sign-offs).',
        f"With it, requirements read incumbent {inc}/{n} vs candidate {cand}/{n}, and triage "
        f"calls {len(tri.substantive)} of the candidate's {tri.failures} exact-match failures "
        f"substantive ({len(before.substantive)} without it).",
        "-" * 100,
    ]
    return lines + [term_text(line) for line in leakage_lines(result.leakage)]
