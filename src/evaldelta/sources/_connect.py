"""The one backend connection every reader and the engine share, made here and only here.

DuckDB, embedded, in memory: its buffer is capped by ``EVALDELTA_MEMORY_LIMIT`` (default
``512MB``) and it spills to a folder under the system's temp directory beyond that. DuckDB's
extension auto-install and auto-load are off: opening an unexpected file (a SQLite database
named as a store, say) must fail with a message, never download code. Its statistics
propagation is off too (see :func:`connect`).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["connect"]


def connect() -> Any:
    """A fresh in-memory DuckDB connection through Ibis, with the limits described above."""
    import ibis

    limit = os.environ.get("EVALDELTA_MEMORY_LIMIT", "512MB")
    spill = Path(tempfile.gettempdir()) / "evaldelta-duckdb"
    con = ibis.duckdb.connect(
        memory_limit=limit,
        temp_directory=str(spill),
        preserve_insertion_order=True,
        autoinstall_known_extensions=False,
        autoload_known_extensions=False,
    )
    if not _terminal():
        # DuckDB draws its own progress bar on long queries even when stderr is a file or a
        # CI log, where it is thousands of carriage-returned lines; keep it for terminals
        con.raw_sql("SET enable_progress_bar = false")
    if os.environ.get("EVALDELTA_STATS_PROPAGATION") != "1":
        # DuckDB 2.0.1 trusts a Parquet column's min/max, which pyarrow writes without the
        # NaNs: a column of [1.0, NaN] is then "always 1.0" and NaN rows vanish from filters
        # (tests/corpus: "NaN score in parquet"). Correct answers first.
        con.raw_sql("SET disabled_optimizers = 'statistics_propagation'")
    return con


def _terminal() -> bool:
    """Whether stderr is an interactive terminal."""
    import sys

    try:
        return sys.stderr is not None and sys.stderr.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stream
        return False
