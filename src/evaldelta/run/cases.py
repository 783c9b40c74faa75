"""Read a case file (CSV, JSONL or Parquet) through the row seam; every column is a field.

Cases are read by the same reader as eval rows (:mod:`evaldelta.sources`), so a missing,
empty or malformed file fails the same way, with the file named. A ``case_id`` column is
required and must be unique.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaldelta.errors import DuplicateRowError, Location, MissingColumnError, UnreadableFileError
from evaldelta.sources.tidy import line_of, read_records, tidy_kind

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
    columns, records, unit = read_records(path)
    kind = tidy_kind(path)
    where = str(path)
    if "case_id" not in columns:
        raise MissingColumnError(
            f"the case file needs a 'case_id' column (columns: {', '.join(columns)})",
            Location(where, 1 if kind == "csv" else None, "case_id"),
        )
    if not records:
        raise UnreadableFileError("the case file has no cases", Location(where))
    seen: dict[str, int] = {}
    rows = []
    for index, record in enumerate(records):
        raw = record["case_id"]
        if raw is None or str(raw).strip() == "":
            raise UnreadableFileError(
                "a case has no case_id",
                Location(where, line_of(kind, index), "case_id", unit=unit),
            )
        case_id = str(raw).strip()
        if case_id in seen:
            raise DuplicateRowError(
                f"case_id {case_id!r} appears twice (first at {unit} "
                f"{line_of(kind, seen[case_id])})",
                Location(where, line_of(kind, index), "case_id", case_id, unit=unit),
            )
        seen[case_id] = index
        rows.append((case_id, record))
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return CaseSet(path, digest, columns, tuple(rows))
