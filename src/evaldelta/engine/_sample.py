"""The traffic log queries behind ``evaldelta sample``: DuckDB reads, any Ibis backend ranks.

The log (CSV, JSONL or Parquet; tens of millions of rows) is never loaded into Python.
Reading it is the row seam's work, on the embedded DuckDB: :class:`TrafficScan` numbers the
rows in file order and derives the strata (bands, the ``--since`` time, the row key). What
follows are Ibis expressions, on DuckDB or, moved there once, on another backend (Spark):

1. :meth:`TrafficScan.count_strata`: one aggregate per slice: rows kept (on or after
   ``--since``), rows without a time, all rows, and the first bad value's row;
2. :meth:`TrafficScan.write_sample`: given the per-slice sizes that
   :mod:`evaldelta.planning.sampling` allocated, the ``n_k`` rows with the smallest
   ``md5(row key, seed)`` per slice (the row number breaks ties). The rank is uniform, so
   one filtered pass fetches the rows whose rank lies in the lowest share of its range that
   holds ``n_k`` with room to spare (a few more than ``n_k``), and the exact cut is made
   here; the kept rows are written in file order with ``sample_weight = N_k / n_k``.

The rank is the MD5 of the key's text and the seed, a function every engine computes the
same way, so the same file, options and seed give the same sample on DuckDB and on Spark,
and across their versions. The row key is the ``--id`` column when given, else the row's
position in the file.
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
from evaldelta.sources._backend import move_table
from evaldelta.sources._fetch import arrow, rows
from evaldelta.sources.tidy import line_of, tidy_kind

__all__ = ["MISSING", "Band", "StrataCount", "TrafficScan"]

MISSING = "(missing)"
_RN = "_evaldelta_rn"
_STRATUM = "_evaldelta_stratum"
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
    # Parquet numbers its rows as it reads them, in parallel; elsewhere a window does
    # (DuckDB's streaming row_number() keeps file order, but runs the rest on one thread)
    numbered = f"SELECT *, row_number() OVER () - 1 AS {_RN} FROM {scan}"
    try:
        if src.kind == "parquet":
            names = [str(r[0]) for r in con.execute(f"DESCRIBE {scan}").fetchall()]
            if "file_row_number" not in names:
                numbered = (
                    f"SELECT * EXCLUDE (file_row_number), file_row_number AS {_RN} "
                    f"FROM read_parquet({_lit(str(src.path))}, file_row_number = true)"
                )
        con.execute(f"CREATE TEMP VIEW src AS {numbered}")
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


_NUMERIC = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "FLOAT", "DOUBLE", "DECIMAL")


def _numeric(dtype: str) -> bool:
    """Whether DuckDB's type name ``dtype`` is a number type (signed or not, any width)."""
    return dtype.removeprefix("U").startswith(_NUMERIC)


def _number(column: str, dtype: str) -> str:
    if _numeric(dtype):  # as it is: a round trip through text costs a second per 10M rows
        return f"CAST({_ident(column)} AS DOUBLE)"
    return f"TRY_CAST(NULLIF(TRIM({_text(column, dtype)}), '') AS DOUBLE)"


def _band_sql(band: Band, dtype: str) -> tuple[str, str]:
    """The CASE expression for the band label, and the predicate for a bad value.

    A bad value is text that is no number, or NaN; a null (or blank) is missing, not bad.
    """
    v = _number(band.column, dtype)
    labels = band.labels()
    cases = [f"WHEN {v} IS NULL THEN {_lit(MISSING)}"]
    cases.append(f"WHEN {v} < {band.edges[0]!r} THEN {_lit(f'(below {_edge(band.edges[0])})')}")
    for upper, label in zip(band.edges[1:], labels, strict=False):
        cases.append(f"WHEN {v} < {upper!r} THEN {_lit(label)}")
    expr = f"CASE {' '.join(cases)} ELSE {_lit(labels[-1])} END"
    if _numeric(dtype):
        return expr, f"coalesce(isnan({v}), false)"
    raw = f"NULLIF(TRIM({_text(band.column, dtype)}), '')"
    bad = f"({raw} IS NOT NULL AND ({v} IS NULL OR isnan({v})))"
    return expr, bad


def _time_sql(column: str, dtype: str) -> tuple[str, str, str]:
    """The timestamp expression, the predicate for an unparseable one, and its SQL type.

    Text is parsed as TIMESTAMPTZ (an offset counts; none means UTC). A timestamp or date
    without a zone stays as it is and is compared with the UTC instant as a plain
    TIMESTAMP: casting every row to TIMESTAMPTZ cost 0.8 s per 10M rows, for nothing.
    """
    if dtype in ("VARCHAR", "JSON"):
        raw = f"NULLIF(TRIM({_text(column, dtype)}), '')"
        ts = f"TRY_CAST({raw} AS TIMESTAMPTZ)"
        return ts, f"({raw} IS NOT NULL AND {ts} IS NULL)", "TIMESTAMPTZ"
    if dtype == "TIMESTAMP WITH TIME ZONE":
        return _ident(column), "false", "TIMESTAMPTZ"
    if dtype == "TIMESTAMP":
        return _ident(column), "false", "TIMESTAMP"
    if dtype.startswith(("TIMESTAMP", "DATE")):  # TIMESTAMP_S/_MS/_NS, DATE: no zone
        return f"CAST({_ident(column)} AS TIMESTAMP)", "false", "TIMESTAMP"
    raise UsageError(
        f"--time-column {column!r} has type {dtype}, not a timestamp or date (or text holding one)"
    )


def _since_literal(since_at: dt.datetime, kind: str) -> str:
    """``since_at`` as a SQL literal of ``kind``: a plain TIMESTAMP is the UTC wall time."""
    if kind == "TIMESTAMP":
        utc = since_at.astimezone(dt.UTC).replace(tzinfo=None)
        return f"{_lit(utc.isoformat(sep=' '))}::TIMESTAMP"
    return f"{_lit(since_at.isoformat())}::TIMESTAMPTZ"


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
    """One traffic log read on a fresh DuckDB connection (close it, or use ``with``).

    ``backend``: an Ibis connection the ranking runs on (the prepared rows are moved there
    once), or ``None`` for the DuckDB that read the file.
    """

    path: Path
    backend: Any = None
    _src: _Input = field(init=False)
    _reader: Any = field(init=False)
    _con: duckdb.DuckDBPyConnection = field(init=False)
    columns: dict[str, str] = field(init=False)
    _table: Any = field(init=False, default=None)

    def __post_init__(self) -> None:
        self._reader, (opened,) = open_sources([Source(self.path, format="tidy")], con=connect())
        self._src = _Input(self.path, tidy_kind(self.path))
        self._con = self._reader.con
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
        self._reader.disconnect()

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
        aggs: dict[str, Any] = {
            "kept": t.count(where=t[_KEEP]),
            "no_time": t.count(where=t[_TIME].isnull()),
            "all": t.count(),
        }
        for k, (flag, _, _) in enumerate(checks):
            aggs[f"bad{k}"] = t[_RN].min(where=t[flag])
        grouped = rows(t.group_by(_STRATUM).aggregate(**aggs))
        _raise_first_bad(self._con, self._src, grouped, checks)
        kept = {str(r[_STRATUM]): int(r["kept"]) for r in grouped if int(r["kept"]) > 0}
        no_time = before = 0
        if since_at is not None:
            no_time = sum(int(r["no_time"]) for r in grouped)
            before = sum(int(r["all"]) - int(r["kept"]) for r in grouped) - no_time
        return StrataCount(kept=kept, no_time=no_time, before_since=before)

    def _prepare(
        self,
        by: str,
        bands: tuple[Band, ...],
        id_column: str | None,
        since_at: dt.datetime | None,
        time_column: str,
    ) -> list[tuple[str, str, str]]:
        """The prepared view on DuckDB (the row seam's part); its checks as flag columns."""
        con, src, columns = self._con, self._src, self.columns
        band_names = {b.name for b in bands}
        if by not in band_names:
            _require(columns, by, "--by", src)
        if id_column is not None:
            _require(columns, id_column, "--id", src)
        derived: list[str] = []
        checks: list[tuple[str, str, str]] = []  # (flag column, field, message)
        flags: list[str] = []
        for band in bands:
            _require(columns, band.column, "--band", src)
            expr, bad = _band_sql(band, columns[band.column])
            derived.append(f"{expr} AS {_ident(band.name)}")
            flags.append(bad)
            checks.append(
                (f"_evaldelta_bad{len(checks)}", band.column, "is not a number (needed by --band)")
            )
        stratum = (
            _ident(by)
            if by in band_names
            else f"COALESCE({_text(by, columns[by])}, {_lit(MISSING)})"
        )
        time_expr, keep = "NULL::TIMESTAMPTZ", "true"
        if since_at is not None:
            _require(columns, time_column, "--time-column", src)
            time_expr, bad_time, kind = _time_sql(time_column, columns[time_column])
            flags.append(bad_time)
            checks.append(
                (
                    f"_evaldelta_bad{len(checks)}",
                    time_column,
                    "is not a date or timestamp (needed by --since)",
                )
            )
            keep = f"({_TIME} IS NOT NULL AND {_TIME} >= {_since_literal(since_at, kind)})"
        # the key's text: the id as text ("v" before it, so a missing id is not an empty one)
        key = f"CAST({_RN} AS VARCHAR)"
        if id_column is not None:
            text = _text(id_column, columns[id_column])
            key = f"CASE WHEN {_ident(id_column)} IS NULL THEN 'n' ELSE 'v' || {text} END"
        con.execute(
            f"CREATE TEMP VIEW prepared AS SELECT *, {time_expr} AS {_TIME} "
            f"FROM (SELECT *{''.join(', ' + d for d in derived)} FROM src)"
        )
        extra = "".join(
            f", {flag} AS {name}" for flag, (name, _, _) in zip(flags, checks, strict=True)
        )
        con.execute(
            f"CREATE TEMP VIEW strata AS SELECT *, {stratum} AS {_STRATUM}, {key} AS {_KEY}, "
            f"{keep} AS {_KEEP}{extra} FROM prepared"
        )
        table = self._reader.table("strata")
        self._table = (
            table if self.backend is None else move_table(self._reader, table, self.backend)
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
    ) -> None:
        """Write the ``sizes[k]`` rows of each slice with the smallest rank, with weights."""
        wanted = {k: n for k, n in sizes.items() if n > 0}
        chosen = self._choose(wanted, population, bands, seed) if wanted else None
        _write(self._con, self._src, out, out_kind, chosen, self.columns, bands)

    def _choose(
        self,
        sizes: Mapping[str, int],
        population: Mapping[str, int],
        bands: tuple[Band, ...],
        seed: int,
    ) -> Any:
        """The chosen rows (Arrow, in file order, with their weights).

        The rank is uniform, so the rows of a slice whose rank lies below ``p_k`` of its
        range number about ``p_k N_k``: with ``p_k`` set eight standard deviations above
        ``n_k / N_k``, one pass fetches every slice's ``n_k`` smallest and a few more, and
        the exact cut is made here. A slice that comes back short (improbable) is fetched
        again with four times the share, so the sample never depends on the shares.
        """
        import ibis

        t = self._table
        rank = (t[_KEY] + ibis.literal(f":{int(seed)}")).hexdigest("md5")
        t = t.filter(t[_KEEP]).mutate(_rank=rank)
        band_names = [b.name for b in bands]
        kept = [c for c in self.columns if c != "sample_weight" and c not in band_names]
        share = {k: _first_share(n, population[k]) for k, n in sizes.items()}
        fetched: list[Any] = []
        todo = dict(sizes)
        while todo:
            part = _below(t, {k: _rank_bound(share[k]) for k in todo})
            got = arrow(part.select(*kept, *band_names, _STRATUM, _RN, "_rank"))
            counts = _counts(got)
            short = [k for k in todo if counts.get(k, 0) < todo[k] and share[k] < 1.0]
            fetched.append(got.filter(_in(got, [k for k in todo if k not in short])))
            for k in short:
                share[k] = min(1.0, 4 * share[k])
            todo = {k: todo[k] for k in short}
        return _smallest(_concat(fetched), sizes, population)


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


def _counts(table: Any) -> dict[str, int]:
    import pyarrow.compute as pc

    counted = pc.value_counts(table.column(_STRATUM))
    return {str(v["values"]): int(v["counts"]) for v in counted.to_pylist()}


def _in(table: Any, strata: list[str]) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    return pc.is_in(table.column(_STRATUM), value_set=pa.array(strata, pa.string()))


def _concat(tables: list[Any]) -> Any:
    import pyarrow as pa

    return pa.concat_tables(tables) if len(tables) > 1 else tables[0]


def _smallest(fetched: Any, sizes: Mapping[str, int], population: Mapping[str, int]) -> Any:
    """Per slice, the ``sizes[k]`` fetched rows of smallest (rank, row number), in file order.

    Also adds ``sample_weight = N_k / n_k``; refuses (an internal error) a slice that came
    back short, so no allocated row can go missing silently.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    order = pc.sort_indices(
        fetched, sort_keys=[(_STRATUM, "ascending"), ("_rank", "ascending"), (_RN, "ascending")]
    )
    table = fetched.take(order)
    keep: list[int] = []
    weights: list[float] = []
    taken: dict[str, int] = {}
    for index, stratum in enumerate(table.column(_STRATUM).to_pylist()):
        n = sizes.get(stratum, 0)
        if taken.get(stratum, 0) < n:
            taken[stratum] = taken.get(stratum, 0) + 1
            keep.append(index)
            weights.append(population[stratum] / n)
    short = {k: (taken.get(k, 0), n) for k, n in sizes.items() if taken.get(k, 0) != n}
    if short:
        raise AssertionError(f"sample: slices came back short (taken, wanted): {short}")
    chosen = table.take(pa.array(keep, pa.int64())).append_column(
        "sample_weight", pa.array(weights, pa.float64())
    )
    return chosen.take(pc.sort_indices(chosen, sort_keys=[(_RN, "ascending")]))


def _raise_first_bad(
    con: duckdb.DuckDBPyConnection,
    src: _Input,
    grouped: list[dict[str, Any]],
    checks: list[tuple[str, str, str]],
) -> None:
    """Name the first bad value (file, line, field, value), if any check found one."""
    found: list[tuple[int, int]] = []
    for i in range(len(checks)):
        hits = [int(r[f"bad{i}"]) for r in grouped if r[f"bad{i}"] is not None]
        if hits:
            found.append((min(hits), i))
    if not found:
        return
    rn, i = min(found)
    _, field_name, message = checks[i]
    value = con.execute(
        f"SELECT {_text(field_name, 'VARCHAR')} FROM src WHERE {_RN} = ?", [rn]
    ).fetchall()
    raise BadValueError(
        message,
        Location(
            str(src.path), src.line_of(rn), field_name, value[0][0] if value else None, src.unit
        ),
    )


def _write(
    con: duckdb.DuckDBPyConnection,
    src: _Input,
    out: Path,
    out_kind: str,
    chosen: Any,
    columns: Mapping[str, str],
    bands: tuple[Band, ...],
) -> None:
    """COPY the chosen rows (an Arrow table, or none) to ``out`` with DuckDB's writers."""
    band_names = [b.name for b in bands]
    kept = [c for c in columns if c != "sample_weight" and c not in band_names]
    select = ", ".join(_ident(c) for c in [*kept, *band_names, "sample_weight"])
    fmt = {"csv": "FORMAT csv, HEADER true", "json": "FORMAT json", "parquet": "FORMAT parquet"}
    out.parent.mkdir(parents=True, exist_ok=True)
    if chosen is None:  # no row allocated: the file still gets its columns
        body = f"SELECT {select} FROM (SELECT *, NULL::DOUBLE AS sample_weight FROM strata) LIMIT 0"
    else:
        con.register("_evaldelta_sample", chosen)
        body = f"SELECT {select} FROM _evaldelta_sample ORDER BY {_RN}"
    try:
        con.execute(f"COPY ({body}) TO {_lit(str(out))} ({fmt[out_kind]})")
    except duckdb.Error as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise UnreadableFileError(f"cannot sample: {first}", Location(str(src.path))) from exc
    finally:
        if chosen is not None:
            con.unregister("_evaldelta_sample")
