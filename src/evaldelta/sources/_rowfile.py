"""Rows an importer builds in Python, spilled to Parquet part files and read back by DuckDB.

An importer reads a log one sample at a time and hands each attempt to a :class:`RowWriter`
as a dict in our column names. The writer keeps at most one batch of rows in memory, writes
each batch as a Parquet part file into a private temporary folder (removed when the process
ends), and :meth:`RowWriter.open` reads all parts back on the shared connection
(``union_by_name``: a metadata field that appears only in later samples is a column all the
same). Types are fixed by column, not guessed: metrics and costs are floats, repeats and
token counts integers, everything else text, so parts always agree.
"""

from __future__ import annotations

import atexit
import itertools
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from evaldelta.errors import Location, UnreadableFileError

__all__ = ["FLOAT_COLUMNS", "INT_COLUMNS", "RowWriter", "scratch_dir"]

INT_COLUMNS = frozenset({"repeat", "input_tokens", "output_tokens", "total_tokens", "_line"})
FLOAT_COLUMNS = frozenset({"cost_usd", "latency_ms", "sample_weight"})
BATCH = 20_000
_SCRATCH: list[Path] = []
_IDS = itertools.count()


def scratch_dir() -> Path:
    """The private temporary folder for imported rows (made once per process, removed at exit)."""
    if not _SCRATCH:
        path = Path(tempfile.mkdtemp(prefix="evaldelta-import-"))
        atexit.register(shutil.rmtree, path, True)
        _SCRATCH.append(path)
    return _SCRATCH[0]


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _float(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None if value is None else float(value)
    return float(value)


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


class RowWriter:
    """Collect attempt rows; ``metrics`` are the score columns (floats)."""

    def __init__(self, metrics: Iterable[str] = ()) -> None:
        self.metrics: dict[str, None] = dict.fromkeys(metrics)
        self.folder = scratch_dir() / f"rows-{next(_IDS)}"
        self.folder.mkdir()
        self.parts: list[Path] = []
        self.rows = 0
        self.arms: dict[str, None] = {}  # in the order the rows brought them
        self._batch: list[Mapping[str, Any]] = []

    def metric(self, name: str) -> None:
        """Declare a score column (kept in first-seen order)."""
        self.metrics.setdefault(name, None)

    def add(self, row: Mapping[str, Any]) -> None:
        """One attempt; written out once a batch is full."""
        self._batch.append(row)
        self.rows += 1
        arm = row.get("arm")
        if arm is not None and arm not in self.arms:
            self.arms[str(arm)] = None
        if len(self._batch) >= BATCH:
            self.flush()

    def _convert(self, column: str) -> Any:
        if column in self.metrics or column in FLOAT_COLUMNS:
            return _float
        if column in INT_COLUMNS:
            return _int
        return _text

    def flush(self) -> None:
        """Write the rows collected so far as one part file."""
        if not self._batch:
            return
        import pyarrow as pa
        import pyarrow.parquet as pq

        columns = list(dict.fromkeys(k for r in self._batch for k in r))
        arrays = {}
        for column in columns:
            convert = self._convert(column)
            kind = (
                pa.float64()
                if convert is _float
                else pa.int64()
                if convert is _int
                else pa.string()
            )
            values = [r.get(column) for r in self._batch]
            try:  # most values already have the column's type: Arrow takes them as they are
                arrays[column] = pa.array(values, type=kind)
            except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError):
                arrays[column] = pa.array([convert(v) for v in values], type=kind)
        part = self.folder / f"part-{len(self.parts):05d}.parquet"
        pq.write_table(pa.table(arrays), str(part), compression="zstd")
        self.parts.append(part)
        self._batch = []

    def open(self, con: Any, path: Path) -> Any:
        """All rows as one table on ``con`` (an error naming ``path`` when there are none)."""
        self.flush()
        if not self.parts:
            raise UnreadableFileError("the log holds no samples to compare", Location(str(path)))
        return con.read_parquet([str(p) for p in self.parts], union_by_name=True)
