"""The demo's regression-case section (seed 002's closing): failures become gate cases.

Seed 002 ends: every escalated ticket and every quality review that finds something the
checks let through is a requirement that was missing. Here two of the candidate's failing
replies on the bundled tickets become regression cases, as ``evaldelta cases add`` would
add them (an incident and a quality review), and the gate on seed 002's rows names them
with their provenance. The set is written to a temporary folder and shown as
``regression.toml``.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import tempfile
from pathlib import Path

from evaldelta.comparison.model import Comparison
from evaldelta.demo import data_path
from evaldelta.demo.audit import audit_demo
from evaldelta.gating import Verdict, compare_with_policy
from evaldelta.regression import add_cases, case_block, failing_attempts, parse_set
from evaldelta.report.regression import render_set_text
from evaldelta.report.verdict import render_verdict_text

__all__ = ["ADDS", "regression_demo", "regression_demo_text"]

# (case, reason, source, source kind, found by, date): what production found
ADDS = (
    (
        "T2301",
        "Promised delivery by Friday: replies never commit to a delivery date",
        "INC-4471",
        "incident",
        "support-qa",
        _dt.date(2026, 11, 30),
    ),
    (
        "T2240",
        "Quoted 14 working days for a replacement; the policy permits 2",
        "REV-0093",
        "review",
        "quality-review",
        _dt.date(2026, 12, 1),
    ),
)
WHERE = "seed002_tickets/replies.csv"


def regression_demo(folder: Path) -> tuple[str, Comparison, Verdict]:
    """Build the set in ``folder`` from the scored candidate replies; gate seed 002 on it.

    Returns the set's text, the comparison and the verdict (the verdict's policy label is
    the set's file name, not the temporary folder).
    """
    _, scored = audit_demo()
    path = folder / "regression.toml"
    for case_id, reason, source, kind, who, day in ADDS:
        attempts = failing_attempts(
            scored, WHERE, release="candidate", case_ids=(case_id,), metric="pass"
        )
        add_cases(
            path, attempts, reason=reason, source=source, found_by=who, source_kind=kind,
            added_at=day,
        )  # fmt: skip
    with data_path("seed002.csv") as rows:
        comparison, verdict = compare_with_policy(
            [rows], None, regression_sets=[path], baseline="incumbent"
        )
    verdict = dataclasses.replace(verdict, policy="regression set regression.toml")
    return path.read_text(encoding="utf-8"), comparison, verdict


def regression_demo_text() -> str:
    """The section: the set as `cases list` prints it, its first entry, the gate verdict."""
    with tempfile.TemporaryDirectory(prefix="evaldelta-demo-") as tmp:
        text, comparison, verdict = regression_demo(Path(tmp))
    rset = parse_set(text, "regression.toml")
    critical = comparison.slicing().pairs[0].critical
    evidence = {c.case_id: c for c in (critical.cases if critical is not None else ())}
    held = [
        f"{c.case_id} {c.baseline_passes}/{c.baseline_scored}"
        for c in (evidence[case_id] for case_id, *_ in ADDS if case_id in evidence)
    ]
    lines = [
        "-" * 100,
        "Seed 002, the closing: failures the checks let through become regression cases",
        "Two of the candidate's failing replies, as `evaldelta cases add --from scored.csv "
        "--release candidate --metric pass --case ID --reason ... --source ...` adds them:",
        "-" * 100,
        render_set_text(rset).rstrip(),
        "",
        "The first entry, as the file holds it (a pull request shows each add as one block):",
        "",
        case_block(rset.cases[0]).rstrip(),
        "",
        "The gate on seed 002's rows with --regression-set regression.toml (every case in it is "
        "critical; for contrast, the incumbent passed " + ", ".join(held) + "):",
        "",
        render_verdict_text(verdict).rstrip(),
    ]
    return "\n".join(lines)
