"""Render a regression set: a table (``cases list``), JSON, or replayable cases (JSONL).

The JSONL form is a case file for ``evaldelta run``: one line per distinct case, its
``case_id``, its slice and its recorded input fields.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from evaldelta.regression import RegressionCase, RegressionSet
from evaldelta.report._escape import term_text

__all__ = ["render_added", "render_set_json", "render_set_jsonl", "render_set_text"]


def _source(case: RegressionCase) -> str:
    return case.source if case.source_kind == "other" else f"{case.source_kind} {case.source}"


def render_set_text(rset: RegressionSet) -> str:
    """The set as a table, one case per row, in id order."""
    word = "case" if len(rset.cases) == 1 else "cases"
    out = [
        f"{rset.path}: {len(rset.cases)} {word}, revision {rset.revision} "
        f"(format version {rset.version})"
    ]
    if not rset.cases:
        return "\n".join(out) + "\n"
    head = ["id", "case", "slice", "failed release", "source", "found by", "added", "rev"]
    rows = [head]
    for c in rset.cases:
        cells = [c.id, c.case_id, c.slice, c.failed_release, _source(c), c.found_by]
        rows.append([term_text(x) for x in [*cells, c.added_at, str(c.revision)]])
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    for index, row in enumerate(rows):
        line = "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True))
        reason = "reason" if index == 0 else term_text(rset.cases[index - 1].reason)
        out.append(f"  {line}  {reason}")
    return "\n".join(out) + "\n"


def render_set_json(rset: RegressionSet) -> str:
    """The whole set, outputs and fields included, as JSON."""
    doc: dict[str, Any] = {
        "path": rset.path,
        "version": rset.version,
        "revision": rset.revision,
        "cases": [dataclasses.asdict(c) for c in rset.cases],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def render_set_jsonl(rset: RegressionSet) -> str:
    """A case file for ``evaldelta run``: each distinct case once, with its input fields."""
    lines = []
    seen: set[str] = set()
    for c in rset.cases:
        if c.case_id in seen:
            continue
        seen.add(c.case_id)
        row: dict[str, Any] = {"case_id": c.case_id, "slice": c.slice, **c.fields}
        lines.append(json.dumps(row, ensure_ascii=False))
    return "".join(line + "\n" for line in lines)


def render_added(rset: RegressionSet, added: tuple[RegressionCase, ...]) -> str:
    """What ``cases add`` did, one line per new case."""
    out = []
    for c in added:
        out.append(
            f"added {c.id}: {term_text(c.case_id)} ({term_text(c.slice)}), failed by "
            f"{term_text(c.failed_release)}, from {term_text(_source(c))}"
        )
    word = "case" if len(rset.cases) == 1 else "cases"
    out.append(f"{rset.path}: revision {rset.revision}, {len(rset.cases)} {word}")
    return "\n".join(out) + "\n"
