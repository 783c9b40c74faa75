"""Rows as Python records, for the commands that work row by row (score, audit, run's cases).

The file is opened by its reader like any other source, so a missing, empty or malformed
file fails the same way, with the file named, and an imported log can be scored as it is.
Records keep a source's own column names (our names after ``--columns``); CSV values stay
text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evaldelta.sources._canonical import open_sources
from evaldelta.sources._errors import reading_errors
from evaldelta.sources._fetch import rows as fetch_rows
from evaldelta.sources._registry import INTERNAL_COLUMNS
from evaldelta.sources._source import ReadOptions, Source

__all__ = ["read_records"]


@reading_errors
def read_records(
    source: Source | str | Path, options: ReadOptions | None = None
) -> list[dict[str, Any]]:
    """Every row of one source, in file order, as dicts."""
    src = source if isinstance(source, Source) else Source(Path(source))
    con, (opened,) = open_sources([src], options)
    table = opened.table
    keep = [c for c in table.columns if c not in INTERNAL_COLUMNS]
    rows: list[dict[str, Any]] = fetch_rows(table.select(*keep))
    if src.arm is not None:
        for row in rows:
            row.setdefault("arm", src.arm)
    con.disconnect()
    return rows
