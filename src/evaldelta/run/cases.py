"""Read a case file (CSV, JSONL or Parquet) with the engine's reader; every column is a field.

Cases are read through the same DuckDB scan as eval rows (:mod:`evaldelta.engine._read`), so
a missing, empty or malformed file fails the same way, with the file named. A ``case_id``
column is required and must be unique.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaldelta.engine._read import Source, _scan, connect
from evaldelta.errors import DuplicateRowError, Location, MissingColumnError, UnreadableFileError

__all__ = ["CaseSet", "load_cases"]


@dataclass(frozen=True)
class CaseSet:
    """The cases of a run, in file order, with the file's hash (a pin of the run)."""

    path: Path
    sha256: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, Mapping[str, Any]], ...]

    @property
    def ids(self) -> list[str]:
        """Case ids in file order."""
        return [cid for cid, _ in self.rows]


def load_cases(path: Path) -> CaseSet:
    """Read every case; ``case_id`` is required and unique."""
    source = Source(path)
    table = _scan(connect(), source)
    if "case_id" not in table.columns:
        raise MissingColumnError(
            f"the case file needs a 'case_id' column (columns: {', '.join(table.columns)})",
            Location(str(path), 1 if source.kind == "csv" else None, "case_id"),
        )
    records = table.to_pyarrow().to_pylist()
    if not records:
        raise UnreadableFileError("the case file has no cases", Location(str(path)))
    seen: dict[str, int] = {}
    rows = []
    for index, record in enumerate(records):
        raw = record["case_id"]
        if raw is None or str(raw).strip() == "":
            raise UnreadableFileError(
                "a case has no case_id",
                Location(str(path), source.line_of(index), "case_id", unit=source.unit),
            )
        case_id = str(raw).strip()
        if case_id in seen:
            raise DuplicateRowError(
                f"case_id {case_id!r} appears twice (first at {source.unit} "
                f"{source.line_of(seen[case_id])})",
                Location(str(path), source.line_of(index), "case_id", case_id, unit=source.unit),
            )
        seen[case_id] = index
        rows.append((case_id, record))
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return CaseSet(path, digest, tuple(table.columns), tuple(rows))
