"""The traffic log queries behind ``evaldelta sample``: Ibis expressions, any backend.

The log (CSV, JSONL or Parquet; tens of millions of rows) is never loaded into Python.
Reading a file is the row seam's work, on the embedded DuckDB, which numbers its rows in
file order; a table that already lives on a backend (``--backend URL --table NAME``) is read
there, in place. Everything after that is Ibis expressions, on DuckDB or on that backend (a
file's prepared rows are moved there once when ``--backend`` names another engine):

1. :meth:`TrafficScan.count_strata`: the strata (bands, the ``--since`` time, the row key)
   and one aggregate per slice: rows kept (on or after ``--since``), rows without a time,
   all rows, and the first bad value's row;
2. :meth:`TrafficScan.write_sample`: given the per-slice sizes that
   :mod:`evaldelta.planning.sampling` allocated, the ``n_k`` rows with the smallest
   ``md5(row key, seed)`` per slice (the row's position breaks ties). The rank is uniform, so
   one filtered pass fetches the rows whose rank lies in the lowest share of its range that
   holds ``n_k`` with room to spare (a few more than ``n_k``), and the exact cut is made
   here; the kept rows are written in order with ``sample_weight = N_k / n_k``.

The rank is the MD5 of the key's text and the seed, a function every engine computes the
same way, so the same file, options and seed give the same sample on DuckDB and on Spark,
and across their versions. The row key is the ``--id`` column when given, else the row's
position in the file. A table has no positions: it needs ``--id``, its ids must be unique
among the rows kept (else ties could fall either way), and the sample is written in the
order of the key's text.
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import TracebackType
from typing import Any

import duckdb
import ibis
import ibis.expr.datatypes as idt
import ibis.expr.types as ir

from evaldelta.engine._sample_cases import (
    CASE,
    arm_count,
    case_aggregates,
    case_column,
    case_columns,
    case_counts,
    check_cases,
    several_arms,
)
from evaldelta.engine._sample_write import _RN, _STRATUM, _Cut, _ident, _lit, _write
from evaldelta.errors import (
    BadValueError,
    Location,
    MissingColumnError,
    UnreadableFileError,
    UsageError,
)
from evaldelta.sources import Source, connect, open_sources
from evaldelta.sources._backend import move_table
from evaldelta.sources._canonical import close_column
from evaldelta.sources._fetch import arrow, rows
from evaldelta.sources._values import as_text
from evaldelta.sources.tidy import line_of, tidy_kind

__all__ = ["MISSING", "Band", "StrataCount", "TrafficScan"]

MISSING = "(missing)"
_TIME = "_evaldelta_time"
_KEY = "_evaldelta_key"
_KEEP = "_evaldelta_keep"


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


@dataclass(frozen=True)
class _Input:
    """The traffic log (a file, or a table's name), and how its rows are named in messages."""

    name: str
    kind: str  # csv, jsonl, parquet, or table
    id_column: str | None = None  # a table's row key (its rows have no positions)

    @property
    def unit(self) -> str:
        return "line" if self.kind in ("csv", "jsonl") else "row"

    def location(self, position: Any, field_name: str, value: object) -> Location:
        """Where the row at ``position`` is: a file's line, or a table row by its id."""
        if self.kind != "table":
            return Location(self.name, line_of(self.kind, int(position)), field_name, value,
                            self.unit)  # fmt: skip
        key = str(position)
        where = "missing" if key == "n" else repr(key[1:])
        return Location(f"{self.name} ({self.id_column}={where})", None, field_name, value, "row")


def _open(con: duckdb.DuckDBPyConnection, scan: str, src: _Input) -> None:
    """Create the numbered view ``src`` over the scanned file (the row seam's part)."""
    # Parquet numbers its rows as it reads them, in parallel; elsewhere a window does
    # (DuckDB's streaming row_number() keeps file order, but runs the rest on one thread)
    numbered = f"SELECT *, row_number() OVER () - 1 AS {_RN} FROM {scan}"
    try:
        if src.kind == "parquet":
            names = [str(r[0]) for r in con.execute(f"DESCRIBE {scan}").fetchall()]
            if "file_row_number" not in names:
                numbered = (
                    f"SELECT * EXCLUDE (file_row_number), file_row_number AS {_RN} "
                    f"FROM read_parquet({_lit(src.name)}, file_row_number = true)"
                )
        con.execute(f"CREATE TEMP VIEW src AS {numbered}")
        con.execute("DESCRIBE src").fetchall()
    except duckdb.Error as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise UnreadableFileError(
            f"cannot read as {src.kind.upper()}: {first}", Location(src.name)
        ) from exc


def _number(col: ir.Value) -> ir.FloatingValue:
    """A column as a number: numbers as they are (text would cost a second per 10M rows)."""
    if col.type().is_numeric():
        return col.cast("float64")
    return _raw(col).try_cast("float64")


def _raw(col: ir.Value) -> ir.StringValue:
    """A column's text, trimmed; blank is null."""
    return as_text(col).strip().nullif("")


def _band(band: Band, col: ir.Value) -> tuple[ir.StringValue, ir.BooleanValue]:
    """The band label, and the predicate for a bad value.

    A bad value is text that is no number, or NaN; a null (or blank) is missing, not bad.
    """
    v = _number(col)
    labels = band.labels()
    branches = [(v.isnull(), MISSING), (v < band.edges[0], f"(below {_edge(band.edges[0])})")]
    branches += [(v < upper, label) for upper, label in zip(band.edges[1:], labels, strict=False)]
    label = ibis.cases(*branches, else_=labels[-1])
    if col.type().is_numeric():
        return label, v.isnan().fill_null(False)
    return label, _raw(col).notnull() & (v.isnull() | v.isnan()).fill_null(True)


_UTC = idt.Timestamp(timezone="UTC")


def _time(col: ir.Value, column: str) -> tuple[ir.TimestampValue, ir.BooleanValue, bool]:
    """The timestamp, the predicate for an unparseable one, and whether it has a zone.

    Text is parsed as a timestamp with a zone (an offset counts; none means UTC). A
    timestamp or date without a zone stays as it is and is compared with the UTC instant as
    a plain timestamp: casting every row to one with a zone cost 0.8 s per 10M rows.
    """
    dtype = col.type()
    if dtype.is_string() or dtype.is_json():
        ts = _raw(col).try_cast(_UTC)
        return ts, _raw(col).notnull() & ts.isnull(), True
    if dtype.is_timestamp() and dtype.timezone is not None:
        return col, ibis.literal(False), True
    if dtype.is_timestamp() and dtype.scale in (None, 6):
        return col, ibis.literal(False), False
    if dtype.is_timestamp() or dtype.is_date():  # seconds, millis, nanos, dates: no zone
        return col.cast("timestamp"), ibis.literal(False), False
    raise UsageError(
        f"--time-column {column!r} has type {dtype}, not a timestamp or date (or text holding one)"
    )


def _since(since_at: dt.datetime, zoned: bool) -> ir.TimestampScalar:
    """``since_at`` as a timestamp literal: for a plain timestamp, the UTC wall time."""
    if zoned:
        return ibis.literal(since_at.isoformat()).cast(_UTC)
    utc = since_at.astimezone(dt.UTC).replace(tzinfo=None)
    return ibis.literal(utc.isoformat(sep=" ")).cast("timestamp")


def _require(
    columns: Mapping[str, object], name: str, option: str, source: _Input, rest: str = ""
) -> None:
    """A named column exists; else one line with the close name, as the option to type.

    ``rest`` is what the option takes after the column (a band's ``=EDGES``).
    """
    if name not in columns:
        close = close_column(name, list(columns))
        typed = f"{option} {close}{rest}"
        hint = f"; did you mean {close!r}? ({typed})" if close is not None else ""
        raise MissingColumnError(
            f"column {name!r} (from {option}) is missing (columns: {', '.join(columns)}){hint}",
            Location(source.name, 1 if source.kind == "csv" else None, name),
        )


@dataclass(frozen=True)
class StrataCount:
    """Units per slice: kept (on or after ``--since``), and the rows without a time or before.

    The unit is a row, or a case when the log holds several arms (``unit``, :mod:`._sample_cases`);
    ``rows`` counts the kept rows either way, ``arms`` the arms of the kept rows.
    """

    kept: dict[str, int]
    no_time: int
    before_since: int
    unit: str = "row"
    rows: int = 0
    arms: int = 1


@dataclass
class TrafficScan:
    """One traffic log, read on a fresh DuckDB connection (close it, or use ``with``).

    ``backend``: an Ibis connection the ranking runs on (a file's prepared rows are moved
    there once), or ``None`` for the DuckDB that read the file. ``table``: the name of a
    table on ``backend`` that holds the log (``path`` is then unused), read in place; its
    rows are keyed by ``id_column``, which :meth:`count_strata` requires.
    """

    path: Path | None
    backend: Any = None
    table: str | None = None
    _src: _Input = field(init=False)
    _reader: Any = field(init=False)
    _con: duckdb.DuckDBPyConnection = field(init=False)
    _rows: Any = field(init=False)
    columns: dict[str, idt.DataType] = field(init=False)
    _table: Any = field(init=False, default=None)
    _case: str | None = field(init=False, default=None)  # the unit: rows, or these cases

    def __post_init__(self) -> None:
        if self.table is not None:
            self._open_table(self.table)
            return
        path = Path(str(self.path))
        self._reader, (opened,) = open_sources([Source(path, format="tidy")], con=connect())
        self._src = _Input(str(path), tidy_kind(path))
        self._con = self._reader.con
        try:
            _open(self._con, _ident(opened.table.get_name()), self._src)
            self._rows = self._reader.table("src")
            self.columns = {k: v for k, v in self._rows.schema().items() if k != _RN}
        except BaseException:
            self.close()
            raise

    def _open_table(self, name: str) -> None:
        _, (opened,) = open_sources([Source(Path(name), format="table")], con=self.backend)
        self._reader = connect()  # an embedded DuckDB that writes the output file
        self._con = self._reader.con
        self._src = _Input(name, "table")
        self._rows = opened.table
        self.columns = dict(self._rows.schema().items())

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
        self._reader.disconnect()  # (a backend given is the caller's to close)

    def count_strata(
        self,
        by: str,
        bands: tuple[Band, ...],
        id_column: str | None,
        since_at: dt.datetime | None,
        time_column: str,
    ) -> StrataCount:
        """Check the named columns, define the strata and count the rows of each."""
        checks = self._prepare(by, bands, id_column, since_at, time_column)
        t = self._table
        aggs: dict[str, Any] = {"kept": t.count(where=t[_KEEP]), "all": t.count()}
        if since_at is not None:
            aggs["no_time"] = t.count(where=t[_TIME].isnull())
        if self._src.kind == "table":  # no positions: a tie of two ids could fall either way
            aggs["ids"] = t[_KEY].nunique(where=t[_KEEP])
        if CASE in t.columns:  # an arm column: several arms make the unit a case
            aggs.update(case_aggregates(t, t[_KEEP]))
        for k, (flag, _, _) in enumerate(checks):
            aggs[f"bad{k}"] = t[_RN].min(where=t[flag])
        grouped = rows(t.group_by(_STRATUM).aggregate(**aggs))
        self._raise_first_bad(grouped, checks)
        kept = {str(r[_STRATUM]): int(r["kept"]) for r in grouped if int(r["kept"]) > 0}
        no_time = before = 0
        if since_at is not None:
            no_time = sum(int(r["no_time"]) for r in grouped)
            before = sum(int(r["all"]) - int(r["kept"]) for r in grouped) - no_time
        counted = StrataCount(kept, no_time, before, rows=sum(kept.values()))
        if CASE in t.columns and several_arms(grouped):
            check_cases(t, grouped, self._src, case_column(self.columns, id_column), by)
            self._case = CASE
            return replace(counted, kept=case_counts(grouped), unit="case", arms=arm_count(t))
        _refuse_repeated_ids(self._src, grouped)
        return counted

    def _prepare(
        self,
        by: str,
        bands: tuple[Band, ...],
        id_column: str | None,
        since_at: dt.datetime | None,
        time_column: str,
    ) -> list[tuple[str, str, str]]:
        """The prepared rows (strata, key, kept or not) with their checks as flag columns."""
        src, columns, t = self._src, self.columns, self._rows
        band_names = {b.name for b in bands}
        if by not in band_names:
            _require(columns, by, "--by", src)
        if id_column is not None:
            _require(columns, id_column, "--id", src)
        elif src.kind == "table":
            raise UsageError(
                f"--table {src.name}: give --id COLUMN, the row key (a table's rows have no order)"
            )
        derived: dict[str, ir.Value] = {}
        checks: list[tuple[str, str, str]] = []  # (flag column, field, message)
        flags: dict[str, ir.Value] = {}
        for band in bands:
            edges = ",".join(_edge(e) for e in band.edges)
            _require(columns, band.column, "--band", src, f"={edges}")
            derived[band.name], flags[f"_evaldelta_bad{len(checks)}"] = _band(band, t[band.column])
            checks.append(
                (f"_evaldelta_bad{len(checks)}", band.column, "is not a number (needed by --band)")
            )
        stratum = derived[by] if by in band_names else as_text(t[by]).fill_null(MISSING)
        keep: ir.BooleanValue = ibis.literal(True)
        if since_at is not None:
            _require(columns, time_column, "--time-column", src)
            when, flags[f"_evaldelta_bad{len(checks)}"], zoned = _time(t[time_column], time_column)
            checks.append(
                (
                    f"_evaldelta_bad{len(checks)}",
                    time_column,
                    "is not a date or timestamp (needed by --since)",
                )
            )
            derived[_TIME] = when
            keep = when.notnull() & (when >= _since(since_at, zoned))
        # the key's text: the id as text ("v" before it, so a missing id is not an empty one)
        if id_column is not None:
            idc = t[id_column]
            key = ibis.cases((idc.isnull(), "n"), else_=ibis.literal("v") + as_text(idc))
        else:
            key = t[_RN].cast("string")
        if src.kind == "table":
            src = _Input(src.name, src.kind, id_column)
            self._src = src
            derived[_RN] = key  # a table's rows are ordered by their key
        derived.update(case_columns(t, columns, id_column))
        prepared = t.mutate(**derived, **flags, **{_STRATUM: stratum, _KEY: key, _KEEP: keep})
        self._table = (
            prepared
            if self.backend is None or src.kind == "table"
            else move_table(self._reader, prepared, self.backend)
        )
        return checks

    def write_sample(
        self,
        out: Path,
        out_kind: str,
        sizes: Mapping[str, int],
        population: Mapping[str, int],
        bands: tuple[Band, ...],
        id_column: str | None,
        seed: int,
    ) -> int:
        """Write the ``sizes[k]`` units of each slice with the smallest rank, with weights.

        The units are rows, or cases (every row of each) after :meth:`count_strata` found
        several arms. Returns the rows written.
        """
        wanted = {k: n for k, n in sizes.items() if n > 0}
        written = _written(self.columns, bands)
        if not wanted:  # no row, with the columns' types: the file still gets them
            empty = self._table.select(*written, _RN).limit(0)
            none = arrow(empty.mutate(sample_weight=ibis.null("float64")))
            return _write(self._con, self._src, out, out_kind, [none], None, written)
        pieces, final = self._choose(wanted, population, bands, seed)
        cut = _Cut(wanted, population, final, self._case)
        return _write(self._con, self._src, out, out_kind, pieces, cut, written)

    def _raise_first_bad(
        self, grouped: list[dict[str, Any]], checks: list[tuple[str, str, str]]
    ) -> None:
        """Name the first bad value (file and line, or table and id; field, value), if any."""
        first = _first_bad(grouped, checks)
        if first is None:
            return
        position, i = first
        _, field_name, message = checks[i]
        t = self._table
        at = t.filter(t[_RN] == position).select(v=as_text(t[field_name])).limit(1)
        value = rows(at)
        raise BadValueError(
            message, self._src.location(position, field_name, value[0]["v"] if value else None)
        )

    def _choose(
        self,
        sizes: Mapping[str, int],
        population: Mapping[str, int],
        bands: tuple[Band, ...],
        seed: int,
    ) -> tuple[list[Any], dict[str, int]]:
        """The fetched rows (Arrow tables), and the one each slice's rows are cut from.

        The rank is uniform, so the rows of a slice whose rank lies below ``p_k`` of its
        range number about ``p_k N_k``: with ``p_k`` set eight standard deviations above
        ``n_k / N_k``, one pass fetches every slice's ``n_k`` smallest and a few more, and
        the exact cut is made afterwards (:class:`_Cut`). A slice that comes back short
        (improbable) is fetched again with four times the share, so the sample never
        depends on the shares.
        """
        t = self._table
        key = t[self._case] if self._case is not None else t[_KEY]  # a case's rows: one rank
        rank = (key + ibis.literal(f":{int(seed)}")).hexdigest("md5")
        t = t.filter(t[_KEEP]).mutate(_rank=rank)
        unit = [self._case] if self._case is not None else []
        share = {k: _first_share(n, population[k]) for k, n in sizes.items()}
        fetched: list[Any] = []
        final: dict[str, int] = {}
        todo = dict(sizes)
        while todo:
            part = _below(t, {k: _rank_bound(share[k]) for k in todo})
            got = arrow(part.select(*_written(self.columns, bands), _STRATUM, _RN, "_rank", *unit))
            counts = _counts(got, self._case)
            short = [k for k in todo if counts.get(k, 0) < todo[k] and share[k] < 1.0]
            final.update({k: len(fetched) for k in todo if k not in short})
            lost = {k: (counts.get(k, 0), n) for k, n in todo.items() if counts.get(k, 0) < n}
            if lost.keys() - set(short):  # every row fetched, and still short: a bug
                raise AssertionError(f"sample: slices came back short (fetched, wanted): {lost}")
            fetched.append(got)
            for k in short:
                share[k] = min(1.0, 4 * share[k])
            todo = {k: todo[k] for k in short}
        return fetched, final


def _written(columns: Mapping[str, object], bands: tuple[Band, ...]) -> list[str]:
    """The sample's columns before its weight: the log's own, then the band columns.

    An existing ``sample_weight`` column is replaced, and a band column the log already
    has is written once, as derived.
    """
    band_names = [b.name for b in bands]
    own = [c for c in columns if c != "sample_weight" and c not in band_names]
    return [*own, *band_names]


def _below(t: Any, bounds: Mapping[str, str]) -> Any:
    """The rows of the bounded slices whose rank lies below their slice's bound.

    A CASE over a few slices (no join to probe); a join with a small table over many.
    """
    import ibis

    if len(bounds) <= 64:
        bound = ibis.cases(*((t[_STRATUM] == k, b) for k, b in bounds.items()), else_="")
        return t.filter(t._rank < bound)
    table = ibis.memtable(
        {"_k": list(bounds), "_below": list(bounds.values())},
        schema={"_k": "string", "_below": "string"},
    )
    joined = t.join(table, t[_STRATUM] == table._k)
    return joined.filter(joined._rank < joined._below).drop("_k", "_below")


def _first_share(n: int, population: int) -> float:
    """The share of a slice's rank range that holds its ``n`` smallest, with room to spare."""
    return float(min(1.0, (n + 8.0 * n**0.5 + 64.0) / population))


def _rank_bound(share: float) -> str:
    """The hex rank below which a ``share`` of the range lies ("g" sorts after every digit)."""
    if share >= 1.0:
        return "g"
    return f"{int(share * 16**8):08x}"


def _counts(table: Any, case: str | None = None) -> dict[str, int]:
    """Units fetched per slice: rows, or distinct cases."""
    import pyarrow.compute as pc

    if case is not None:
        grouped = table.group_by(_STRATUM).aggregate([(case, "count_distinct")])
        names, counts = grouped.column(_STRATUM), grouped.column(f"{case}_count_distinct")
        return {str(k): int(n) for k, n in zip(names.to_pylist(), counts.to_pylist(), strict=True)}
    counted = pc.value_counts(table.column(_STRATUM))
    return {str(v["values"]): int(v["counts"]) for v in counted.to_pylist()}


def _first_bad(
    grouped: list[dict[str, Any]], checks: list[tuple[str, str, str]]
) -> tuple[Any, int] | None:
    """The first bad row's position (line number or key) and the check it fails, if any."""
    found: list[tuple[Any, int]] = []
    for i in range(len(checks)):
        hits = [r[f"bad{i}"] for r in grouped if r[f"bad{i}"] is not None]
        if hits:
            found.append((min(hits), i))
    return min(found) if found else None


def _refuse_repeated_ids(src: _Input, grouped: list[dict[str, Any]]) -> None:
    """A table's kept rows must have distinct ids: they rank the rows, and break ties."""
    if src.kind != "table":
        return
    repeated = sum(int(r["kept"]) - int(r["ids"]) for r in grouped)
    if repeated:
        raise UsageError(
            f"--table {src.name}: --id {src.id_column!r} is not unique (rows that repeat an "
            f"id of their slice: {repeated:,}); a table has no row order to break such ties, "
            "so the sample would not be reproducible: give a unique --id"
        )
