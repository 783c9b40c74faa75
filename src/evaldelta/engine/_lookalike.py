"""Columns that look like slicing columns, for rows that lack the ``slice`` column.

``--by slice`` (the default) on rows without a ``slice`` column puts every case in one slice,
``all`` (sources/_canonical.py). Said without a word, a reader sees one slice beside its own
total and does not learn that the log had ``metadata.slice`` or ``vars.topic`` all along
(issue 24.1). :func:`slicing_lookalikes` names such columns: text columns whose name says
slice, task, topic, ... or that come from a log's metadata (``metadata.``, ``vars.``,
``doc.``, ``item.``), and that cut the cases into a few groups (2 to :data:`MAX_SLICES`, at
most half as many as there are cases), which a case's own text (``doc.question``) does not.
"""

from __future__ import annotations

from collections.abc import Sequence

from evaldelta.sources import TableSet
from evaldelta.sources._fetch import rows as fetch_rows
from evaldelta.sources._registry import INTERNAL_COLUMNS

__all__ = ["MAX_SLICES", "missing_slicing", "slicing_lookalikes"]

MAX_SLICES = 100
SHOWN = 5
# words in a column's name that say it groups cases (the last dotted part is read)
SLICE_WORDS = (
    "slice", "task", "category", "subject", "topic", "difficulty", "split", "group",
    "domain", "language", "level", "band", "bucket", "dataset", "benchmark", "scenario",
    "perturbation", "repo", "platform", "suite", "family", "kind", "type",
)  # fmt: skip
LOG_PREFIXES = ("metadata.", "vars.", "doc.", "item.")
# the row format's own columns (DESIGN.md): never a slicing column to suggest
ROW_COLUMNS = {
    "case_id", "arm", "score", "slice", "repeat", "cluster", "critical", "tags", "cost_usd",
    "latency_ms", "input_tokens", "output_tokens", "model_used", "escalated", "output",
    "reference", "sample_weight", "prompt_hash", "payload_hash", "retrieval_hash",
    "rendered_prompt", "request_payload", "retrieved_ids",
}  # fmt: skip


def missing_slicing(tables: TableSet, by: Sequence[str]) -> tuple[str, ...]:
    """The slicing columns no source has (only ``slice`` can be: any other is an error)."""
    return tuple(
        c for c in by if c == "slice" and not any(c in o.table.columns for o in tables.opened)
    )


def _named_like_a_slice(name: str) -> bool:
    last = name.lower().rsplit(".", 1)[-1]
    return any(w in last for w in SLICE_WORDS) or name.lower().startswith(LOG_PREFIXES)


def _candidates(tables: TableSet, metrics: Sequence[str]) -> list[str]:
    """Text columns named like a slicing column, in the order the sources give them."""
    out: dict[str, None] = {}
    for opened in tables.opened:
        schema = opened.table.schema()
        for name, dtype in schema.items():
            skip = name in ROW_COLUMNS or name in INTERNAL_COLUMNS or name in metrics
            skip = skip or name.startswith(("_", "raw.", "check."))
            if not skip and dtype.is_string() and _named_like_a_slice(name):
                out[name] = None
    return list(out)


def slicing_lookalikes(tables: TableSet, limit: int = SHOWN) -> tuple[str, ...]:
    """Up to ``limit`` columns that look like slicing columns (module docstring), best first.

    One aggregate per source over the candidate columns; a column qualifies when it cuts
    some source's cases into a few groups. Names that say ``slice`` come first, then the
    rest by name.
    """
    candidates = _candidates(tables, tables.metrics)
    found: set[str] = set()
    for opened in tables.opened:
        t = opened.table
        mine = [c for c in candidates if c in t.columns and c not in found]
        if not mine:
            continue
        aggs = {f"k{i}": t[c].nunique() for i, c in enumerate(mine)}
        cases = t["case_id"].nunique() if "case_id" in t.columns else t.count()
        (row,) = fetch_rows(t.aggregate(cases=cases, **aggs))
        n = int(row["cases"] or 0)
        for i, c in enumerate(mine):
            k = int(row[f"k{i}"] or 0)
            if 2 <= k <= MAX_SLICES and k <= n / 2:
                found.add(c)
    ranked = sorted(found, key=lambda c: ("slice" not in c.lower().rsplit(".", 1)[-1], c))
    return tuple(ranked[:limit])
