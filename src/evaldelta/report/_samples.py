"""The HTML side-by-side of every paired sample (imported Inspect AI logs, pass/fail metrics).

Views only: numbers are formatted here, text from the logs stays raw for the template's
autoescape. Each row carries its group (``lost``, ``won``, ``both wrong``, ``partly``,
``both right``) as ``data-slice``, so the report's one filter script filters by group.
"""

from __future__ import annotations

from dataclasses import dataclass

from evaldelta.comparison.model import Comparison
from evaldelta.evidence import SampleRow, SampleSideBySide
from evaldelta.report._format import fmt

__all__ = ["SamplesView", "samples_views"]

_STATES = ("right", "partly", "wrong")


@dataclass(frozen=True)
class SamplesView:
    """One pair's side-by-side, ready for ``templates/_samples.html.j2``."""

    index: int
    title: str
    baseline: str
    candidate: str
    states: tuple[str, ...]
    grid: list[tuple[str, list[int]]]  # baseline state -> counts per candidate state
    groups: list[tuple[str, int]]  # (group, listed rows in it)
    rows: list[dict[str, str | None]]
    note: str


def _group(row: SampleRow) -> str:
    if row.candidate < row.baseline:
        return "lost"
    if row.candidate > row.baseline:
        return "won"
    return {"wrong": "both wrong", "right": "both right"}.get(row.baseline_state, "partly")


def _view(index: int, s: SampleSideBySide) -> SamplesView:
    used = {part for key in s.counts for part in key.split("/")}
    states = tuple(st for st in _STATES if st in used) or ("right", "wrong")
    grid = [(b, [s.counts.get(f"{b}/{c}", 0) for c in states]) for b in states]
    rows = []
    groups: dict[str, int] = {}
    for r in s.rows:
        group = _group(r)
        groups[group] = groups.get(group, 0) + 1
        rows.append(
            {
                "group": group,
                "case_id": r.case_id,
                "slice": r.slice,
                "baseline": f"{r.baseline_state} ({fmt(r.baseline, 2)})",
                "candidate": f"{r.candidate_state} ({fmt(r.candidate, 2)})",
                "baseline_output": r.baseline_output,
                "candidate_output": r.candidate_output,
            }
        )
    listed = len(s.rows)
    note = (
        f"All {s.paired} paired samples listed."
        if listed == s.paired
        else (
            f"{listed} of {s.paired} paired samples listed (the first {s.limit}: those "
            f"{s.candidate} lost, then won, both wrong, partly, both right); the counts above "
            "hold them all."
        )
    )
    return SamplesView(
        index=index,
        title=f"Sample by sample: {s.candidate} vs {s.baseline} · {s.metric} · by {s.by}",
        baseline=s.baseline,
        candidate=s.candidate,
        states=states,
        grid=grid,
        groups=list(groups.items()),
        rows=rows,
        note=note,
    )


def samples_views(comparison: Comparison) -> list[SamplesView]:
    """One view per side-by-side the comparison holds (none for most inputs)."""
    return [_view(i, s) for i, s in enumerate(comparison.samples)]
