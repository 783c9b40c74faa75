"""The traffic log queries behind ``evaldelta sample``, inside DuckDB.

The log (CSV, JSONL or Parquet; tens of millions of rows) is never loaded into Python.
:class:`TrafficScan` makes two streaming passes over the file:

1. :meth:`TrafficScan.count_strata`: rows per slice (after ``--since``), and the first bad
   value if any (named by file, line and field);
2. :meth:`TrafficScan.write_sample`: given the per-slice sizes that
   :mod:`evaldelta.planning.sampling` allocated, the ``n_k`` rows with the smallest
   ``hash(row key, seed)`` per slice, copied to the output in file order with
   ``sample_weight = N_k / n_k``.

The row key is the ``--id`` column when given, else the row's position in the file
(``row_number() OVER ()`` on the scan: DuckDB's streaming window keeps file order). The same
file, options and seed give the same sample (for one DuckDB version).

These are DuckDB SQL, not Ibis expressions: the per-slice bounded top-n aggregate
(``min(x, n)``) that keeps memory flat has no Ibis equivalent, so ``sample`` runs on the
embedded DuckDB only.
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

import duckdb

from evaldelta.errors import (
    BadValueError,
    Location,
    MissingColumnError,
    UnreadableFileError,
    UsageError,
)
from evaldelta.sources import Source, connect, open_sources
from evaldelta.sources.tidy import line_of, tidy_kind

__all__ = ["MISSING", "Band", "StrataCount", "TrafficScan"]

MISSING = "(missing)"
_RN = "_evaldelta_rn"
_STRATUM = "_evaldelta_stratum"
_TIME = "_evaldelta_time"


@dataclass(frozen=True)
class Band:
    """A derived slicing column: ``<column>_band`` from numeric ``edges`` (increasing)."""

    column: str
    edges: tuple[float, ...]

    @property
    def name(self) -> str:
        """The derived column's name."""
        return f"{self.column}_band"

    def labels(self) -> list[str]:
        """``[e0,e1)``, ..., ``[en,inf)``; values below e0 go to ``(below e0)``."""
        e = [_edge(x) for x in self.edges]
        return [f"[{a},{b})" for a, b in itertools.pairwise(e)] + [f"[{e[-1]},inf)"]


def _edge(x: float) -> str:
    return str(int(x)) if x.is_integer() and abs(x) < 1e15 else repr(x)


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


@dataclass(frozen=True)
class _Input:
    """The traffic log: its path, and how its positions are named in messages."""

    path: Path
    kind: str

    @property
    def unit(self) -> str:
        return "row" if self.kind == "parquet" else "line"

    def line_of(self, row_index: int) -> int:
        return line_of(self.kind, row_index)


def _open(con: duckdb.DuckDBPyConnection, scan: str, src: _Input) -> dict[str, str]:
    """Create the numbered view over the scanned file; return its column types."""
    try:
        con.execute(
            f"CREATE TEMP VIEW src AS SELECT *, row_number() OVER () - 1 AS {_RN} FROM {scan}"
        )
        described = con.execute("DESCRIBE src").fetchall()
    except duckdb.Error as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise UnreadableFileError(
            f"cannot read as {src.kind.upper()}: {first}", Location(str(src.path))
        ) from exc
    return {str(r[0]): str(r[1]) for r in described if r[0] != _RN}


def _text(column: str, dtype: str) -> str:
    col = _ident(column)
    return f"json_extract_string({col}, '$')" if dtype == "JSON" else f"CAST({col} AS VARCHAR)"


def _number(column: str, dtype: str) -> str:
    return f"TRY_CAST(NULLIF(TRIM({_text(column, dtype)}), '') AS DOUBLE)"


def _band_sql(band: Band, dtype: str) -> tuple[str, str]:
    """The CASE expression for the band label, and the predicate for a bad value."""
    v = _number(band.column, dtype)
    labels = band.labels()
    cases = [f"WHEN {v} IS NULL THEN {_lit(MISSING)}"]
    cases.append(f"WHEN {v} < {band.edges[0]!r} THEN {_lit(f'(below {_edge(band.edges[0])})')}")
    for upper, label in zip(band.edges[1:], labels, strict=False):
        cases.append(f"WHEN {v} < {upper!r} THEN {_lit(label)}")
    expr = f"CASE {' '.join(cases)} ELSE {_lit(labels[-1])} END"
    raw = f"NULLIF(TRIM({_text(band.column, dtype)}), '')"
    bad = f"({raw} IS NOT NULL AND ({v} IS NULL OR isnan({v})))"
    return expr, bad


def _time_sql(column: str, dtype: str) -> tuple[str, str]:
    """The timestamp expression (UTC) and the predicate for an unparseable timestamp."""
    if dtype in ("VARCHAR", "JSON"):
        raw = f"NULLIF(TRIM({_text(column, dtype)}), '')"
        ts = f"TRY_CAST({raw} AS TIMESTAMPTZ)"
        return ts, f"({raw} IS NOT NULL AND {ts} IS NULL)"
    if dtype.startswith(("TIMESTAMP", "DATE")):
        return f"CAST({_ident(column)} AS TIMESTAMPTZ)", "false"
    raise UsageError(
        f"--time-column {column!r} has type {dtype}, not a timestamp or date (or text holding one)"
    )


def _require(columns: Mapping[str, str], name: str, option: str, source: _Input) -> None:
    if name not in columns:
        raise MissingColumnError(
            f"column {name!r} (from {option}) is missing (columns: {', '.join(columns)})",
            Location(str(source.path), 1 if source.kind == "csv" else None, name),
        )


@dataclass(frozen=True)
class StrataCount:
    """Rows per slice: kept (on or after ``--since``), without a time, and in all."""

    kept: dict[str, int]
    no_time: int
    before_since: int


@dataclass
class TrafficScan:
    """One traffic log opened on a fresh DuckDB connection (close it, or use ``with``)."""

    path: Path
    _src: _Input = field(init=False)
    _backend: Any = field(init=False)
    _con: duckdb.DuckDBPyConnection = field(init=False)
    columns: dict[str, str] = field(init=False)
    _keep: str = field(init=False, default="true")

    def __post_init__(self) -> None:
        self._backend, (opened,) = open_sources([Source(self.path, format="tidy")], con=connect())
        self._src = _Input(self.path, tidy_kind(self.path))
        self._con = self._backend.con
        try:
            scan = '"' + opened.table.get_name().replace('"', '""') + '"'
            self.columns = _open(self._con, scan, self._src)
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> TrafficScan:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Release the connection."""
        self._backend.disconnect()

    def count_strata(
        self,
        by: str,
        bands: tuple[Band, ...],
        id_column: str | None,
        since_at: dt.datetime | None,
        time_column: str,
    ) -> StrataCount:
        """Check the named columns, define the strata and count the rows of each."""
        con, src, columns = self._con, self._src, self.columns
        band_names = {b.name for b in bands}
        if by not in band_names:
            _require(columns, by, "--by", src)
        if id_column is not None:
            _require(columns, id_column, "--id", src)
        derived: list[str] = []
        checks: list[tuple[str, str, str]] = []  # (predicate, field, message)
        for band in bands:
            _require(columns, band.column, "--band", src)
            expr, bad = _band_sql(band, columns[band.column])
            derived.append(f"{expr} AS {_ident(band.name)}")
            checks.append((bad, band.column, "is not a number (needed by --band)"))
        stratum = (
            _ident(by)
            if by in band_names
            else f"COALESCE({_text(by, columns[by])}, {_lit(MISSING)})"
        )
        time_expr = "NULL"
        if since_at is not None:
            _require(columns, time_column, "--time-column", src)
            time_expr, bad_time = _time_sql(time_column, columns[time_column])
            checks.append((bad_time, time_column, "is not a date or timestamp (needed by --since)"))
            self._keep = (
                f"({_TIME} IS NOT NULL AND {_TIME} >= {_lit(since_at.isoformat())}::TIMESTAMPTZ)"
            )
        con.execute(
            f"CREATE TEMP VIEW prepared AS SELECT *, {time_expr} AS {_TIME} "
            f"FROM (SELECT *{''.join(', ' + d for d in derived)} FROM src)"
        )
        con.execute(f"CREATE TEMP VIEW strata AS SELECT *, {stratum} AS {_STRATUM} FROM prepared")
        bad_cols = [f"min({_RN}) FILTER (WHERE {pred})" for pred, _, _ in checks]
        query = (
            f"SELECT {_STRATUM}, count(*) FILTER (WHERE {self._keep}), "
            f"count(*) FILTER (WHERE {_TIME} IS NULL), count(*) "
            + "".join(f", {c}" for c in bad_cols)
            + f" FROM strata GROUP BY {_STRATUM}"
        )
        rows = con.execute(query).fetchall()
        _raise_first_bad(con, src, rows, checks)
        no_time = before = 0
        if since_at is not None:
            no_time = sum(int(r[2]) for r in rows)
            before = sum(int(r[3]) - int(r[1]) for r in rows) - no_time
        kept = {str(r[0]): int(r[1]) for r in rows if int(r[1]) > 0}
        return StrataCount(kept=kept, no_time=no_time, before_since=before)

    def write_sample(
        self,
        out: Path,
        out_kind: str,
        sizes: Mapping[str, int],
        population: Mapping[str, int],
        bands: tuple[Band, ...],
        id_column: str | None,
        seed: int,
    ) -> None:
        """Write the ``sizes[k]`` rows of each slice with the smallest hash, with weights."""
        con = self._con
        con.execute(f"CREATE TEMP TABLE alloc ({_STRATUM} VARCHAR, n_k BIGINT, pop_k BIGINT)")
        con.executemany(
            "INSERT INTO alloc VALUES (?, ?, ?)",
            [(k, sizes[k], population[k]) for k in sorted(population)],
        )
        _copy(con, self._src, out, out_kind, self.columns, bands, self._keep, id_column, seed)


def _raise_first_bad(
    con: duckdb.DuckDBPyConnection,
    src: _Input,
    rows: list[Any],
    checks: list[tuple[str, str, str]],
) -> None:
    """Name the first bad value (file, line, field, value), if any check found one."""
    found: list[tuple[int, int]] = []
    for i in range(len(checks)):
        hits = [int(r[4 + i]) for r in rows if r[4 + i] is not None]
        if hits:
            found.append((min(hits), i))
    if not found:
        return
    rn, i = min(found)
    _, field, message = checks[i]
    value = con.execute(
        f"SELECT {_text(field, 'VARCHAR')} FROM src WHERE {_RN} = ?", [rn]
    ).fetchall()
    raise BadValueError(
        message,
        Location(str(src.path), src.line_of(rn), field, value[0][0] if value else None, src.unit),
    )


def _copy(
    con: duckdb.DuckDBPyConnection,
    src: _Input,
    out: Path,
    out_kind: str,
    columns: Mapping[str, str],
    bands: tuple[Band, ...],
    keep: str,
    id_column: str | None,
    seed: int,
) -> None:
    """Rank rows per slice by hash(key, seed), keep the first n_k, COPY them out in file order."""
    band_names = [b.name for b in bands]
    kept = [c for c in columns if c != "sample_weight" and c not in band_names]
    select = ", ".join([*(f"s.{_ident(c)}" for c in kept), *(f"s.{_ident(b)}" for b in band_names)])
    key = _ident(id_column) if id_column is not None else _RN
    fmt = {"csv": "FORMAT csv, HEADER true", "json": "FORMAT json", "parquet": "FORMAT parquet"}
    out.parent.mkdir(parents=True, exist_ok=True)
    # The n_k rows with the smallest (hash(key, seed), row number) per slice, found with a
    # bounded top-n aggregate (a heap per slice) rather than a window that sorts every row:
    # memory stays flat however large the log is. The row number breaks hash ties.
    top = int(con.execute("SELECT coalesce(max(n_k), 0) FROM alloc").fetchall()[0][0])
    rank = f"{{'h': hash({key}, {int(seed)}::BIGINT), 'rn': {_RN}}}"
    query = f"""
        COPY (
            WITH ranked AS (
                SELECT *, {rank} AS _evd_rank FROM strata WHERE {keep}
            ),
            cut AS (
                SELECT {_STRATUM}, min(_evd_rank, {max(top, 1)}) AS smallest
                FROM ranked GROUP BY {_STRATUM}
            ),
            bound AS (
                SELECT c.{_STRATUM}, c.smallest[a.n_k] AS last_kept, a.pop_k, a.n_k
                FROM cut AS c JOIN alloc AS a USING ({_STRATUM}) WHERE a.n_k > 0
            )
            SELECT {select}, CAST(b.pop_k AS DOUBLE) / b.n_k AS sample_weight
            FROM ranked AS s JOIN bound AS b USING ({_STRATUM})
            WHERE s._evd_rank <= b.last_kept
            ORDER BY s.{_RN}
        ) TO {_lit(str(out))} ({fmt[out_kind]})
    """
    try:
        con.execute(query)
    except duckdb.Error as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise UnreadableFileError(f"cannot sample: {first}", Location(str(src.path))) from exc
