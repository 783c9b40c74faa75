"""``evaldelta sample``: a stratified, seeded sample of a traffic log, done inside DuckDB.

The log (CSV, JSONL or Parquet; tens of millions of rows) is never loaded into Python. Three
passes over the file, each a streaming DuckDB query:

1. count rows per slice (after ``--since``), and find the first bad value if any;
2. in Python, allocate the sample over slices (:func:`evaldelta.plan.allocate`): a floor per
   slice (a smaller slice is taken whole), then the rest of ``total`` in proportion to traffic;
3. rank rows inside each slice by ``hash(row key, seed)`` with a window function, keep the
   first ``n_k``, and ``COPY`` them to the output with ``sample_weight = N_k / n_k``.

The row key is the ``--id`` column when given, else the row's position in the file
(``row_number() OVER ()`` on the scan: DuckDB's streaming window keeps file order). The same
file, options and seed give the same sample (for one DuckDB version).
"""

from __future__ import annotations

import csv
import datetime as dt
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from evaldelta.allocation import allocate
from evaldelta.errors import (
    BadValueError,
    Location,
    MissingColumnError,
    UnreadableFileError,
    UsageError,
)
from evaldelta.sources import Source, connect, is_default, open_sources
from evaldelta.sources._errors import reading_errors
from evaldelta.sources.tidy import line_of, output_kind, tidy_kind

__all__ = ["Band", "SampleResult", "StratumSample", "mix_path_for", "parse_band", "sample"]

MISSING = "(missing)"
_RN = "_evaldelta_rn"
_STRATUM = "_evaldelta_stratum"
_TIME = "_evaldelta_time"
_K = "_evaldelta_k"


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


@dataclass(frozen=True)
class StratumSample:
    """One slice: population rows, sampled rows, traffic share and sampling weight."""

    slice: str
    population: int
    sampled: int
    share: float
    weight: float
    taken_whole: bool


@dataclass(frozen=True)
class SampleResult:
    """What ``sample`` did: per slice counts and weights, and where the files went."""

    input: str
    output: str
    mix_file: str
    by: str
    seed: int
    floor: int
    total: int | None
    id_column: str | None
    since: str | None
    time_column: str | None
    bands: tuple[Band, ...]
    population: int
    sampled: int
    excluded_before_since: int
    excluded_no_time: int
    strata: tuple[StratumSample, ...]
    notes: tuple[str, ...] = ()


def _edge(x: float) -> str:
    return str(int(x)) if x.is_integer() and abs(x) < 1e15 else repr(x)


def parse_band(text: str) -> Band:
    """Parse ``COLUMN=EDGES`` (``input_tokens=0,500,2000,8000``); UsageError when malformed."""
    column, sep, rest = text.partition("=")
    if not sep or not column.strip() or not rest.strip():
        raise UsageError(
            f"--band takes COLUMN=EDGES (for example input_tokens=0,500), not {text!r}"
        )
    try:
        edges = tuple(float(e) for e in rest.split(","))
    except ValueError:
        raise UsageError(
            f"--band edges must be numbers separated by commas, not {rest!r}"
        ) from None
    if not all(math.isfinite(e) for e in edges) or any(
        b <= a for a, b in itertools.pairwise(edges)
    ):
        raise UsageError(f"--band edges must be finite and strictly increasing, not {rest!r}")
    return Band(column.strip(), edges)


def mix_path_for(output: Path) -> Path:
    """The mix file written beside ``output``: ``<stem>.mix.csv``."""
    return output.with_name(f"{output.stem}.mix.csv")


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


def _parse_since(since: str) -> dt.datetime:
    try:
        value = dt.datetime.fromisoformat(since.strip())
    except ValueError:
        raise UsageError(
            f"--since takes a date or timestamp like 2026-11-01, not {since!r}"
        ) from None
    return value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)


def _require(columns: Mapping[str, str], name: str, option: str, source: _Input) -> None:
    if name not in columns:
        raise MissingColumnError(
            f"column {name!r} (from {option}) is missing (columns: {', '.join(columns)})",
            Location(str(source.path), 1 if source.kind == "csv" else None, name),
        )


@reading_errors
def sample(
    input: str | Path,
    output: str | Path,
    *,
    by: str | None = None,
    floor: int = 300,
    total: int | None = None,
    seed: int = 0,
    id_column: str | None = None,
    bands: Sequence[Band] = (),
    since: str | None = None,
    time_column: str = "timestamp",
    backend: Any = None,
) -> SampleResult:
    """Draw a stratified sample from a traffic log and write it with sampling weights.

    Strata are the values of ``by`` (null is ``(missing)``), or a derived band column
    (``bands``; ``by`` defaults to the only band). Allocation: each slice gets
    ``min(floor, N_k)`` rows (a smaller slice is taken whole); with ``total``, the rest goes
    in proportion to traffic ``N_k / N`` (proportional allocation, Cochran 1977, section 5.3),
    capped at each slice's rows, integers by largest remainder
    (:func:`evaldelta.plan.allocate`). Within a slice rows are ranked by
    ``hash(row key, seed)`` and the first ``n_k`` kept, a simple random sample without
    replacement per stratum. Each row gets ``sample_weight = N_k / n_k`` (the inverse
    inclusion probability, Horvitz and Thompson 1952), so weights sum to ``N_k`` per slice;
    the traffic shares ``N_k / N`` go to ``<stem>.mix.csv`` beside ``output``. ``since``
    keeps rows whose ``time_column`` is on or after it (UTC; rows without a time are left
    out and counted). ``backend`` must be DuckDB (``None``/``"duckdb"``) for now: the
    ranking and the copy are DuckDB SQL.
    """
    if not is_default(backend):
        raise UsageError(
            f"sample runs on DuckDB only; backend {backend!r} is not supported yet "
            "(compare, gate and plan take --backend)"
        )
    out = Path(output)
    out_kind = output_kind(out)
    if isinstance(floor, bool) or floor < 0:
        raise UsageError(f"--floor must be a non-negative number of rows, not {floor}")
    if total is not None and total < 1:
        raise UsageError(f"--total must be a positive number of rows, not {total}")
    if by is None:
        if len(bands) != 1:
            raise UsageError("give --by COLUMN (or exactly one --band to slice by)")
        by = bands[0].name
    if out.resolve() == Path(input).resolve():
        raise UsageError(f"the output {out} would overwrite the input")
    backend, (opened,) = open_sources([Source(Path(input), format="tidy")], con=connect())
    src = _Input(Path(input), tidy_kind(Path(input)))
    con = backend.con
    try:
        scan = '"' + opened.table.get_name().replace('"', '""') + '"'
        columns = _open(con, scan, src)
        return _run(con, src, out, out_kind, columns, by, floor, total, seed, id_column,
                    tuple(bands), since, time_column)  # fmt: skip
    finally:
        backend.disconnect()


def _run(
    con: duckdb.DuckDBPyConnection,
    src: _Input,
    out: Path,
    out_kind: str,
    columns: dict[str, str],
    by: str,
    floor: int,
    total: int | None,
    seed: int,
    id_column: str | None,
    bands: tuple[Band, ...],
    since: str | None,
    time_column: str,
) -> SampleResult:
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
        _ident(by) if by in band_names else f"COALESCE({_text(by, columns[by])}, {_lit(MISSING)})"
    )
    keep, time_expr = "true", "NULL"
    since_at = None
    if since is not None:
        since_at = _parse_since(since)
        _require(columns, time_column, "--time-column", src)
        time_expr, bad_time = _time_sql(time_column, columns[time_column])
        checks.append((bad_time, time_column, "is not a date or timestamp (needed by --since)"))
        keep = f"({_TIME} IS NOT NULL AND {_TIME} >= {_lit(since_at.isoformat())}::TIMESTAMPTZ)"
    con.execute(
        f"CREATE TEMP VIEW prepared AS SELECT *, {time_expr} AS {_TIME} "
        f"FROM (SELECT *{''.join(', ' + d for d in derived)} FROM src)"
    )
    con.execute(f"CREATE TEMP VIEW strata AS SELECT *, {stratum} AS {_STRATUM} FROM prepared")
    bad_cols = [f"min({_RN}) FILTER (WHERE {pred})" for pred, _, _ in checks]
    query = (
        f"SELECT {_STRATUM}, count(*) FILTER (WHERE {keep}), "
        f"count(*) FILTER (WHERE {_TIME} IS NULL), count(*) "
        + "".join(f", {c}" for c in bad_cols)
        + f" FROM strata GROUP BY {_STRATUM}"
    )
    rows = con.execute(query).fetchall()
    _raise_first_bad(con, src, rows, checks)
    if since is None:
        no_time = 0
        before = 0
    else:
        no_time = sum(int(r[2]) for r in rows)
        before = sum(int(r[3]) - int(r[1]) for r in rows) - no_time
    population = {str(r[0]): int(r[1]) for r in rows if int(r[1]) > 0}
    if not population:
        raise UsageError(
            f"{src.path}: no rows to sample"
            + (f" on or after {since} in column {time_column!r}" if since else "")
        )
    names = sorted(population)
    notes: list[str] = []
    if total is None:
        sizes = {k: min(floor, population[k]) for k in names}
    else:
        alloc = allocate(
            {k: float(population[k]) for k in names},
            dict.fromkeys(names, 1.0),
            total,
            floor,
            available=population,
        )
        sizes = {s.slice: s.n for s in alloc.slices}
        notes.extend(alloc.notes)
    con.execute(f"CREATE TEMP TABLE alloc ({_STRATUM} VARCHAR, n_k BIGINT, pop_k BIGINT)")
    con.executemany(
        "INSERT INTO alloc VALUES (?, ?, ?)", [(k, sizes[k], population[k]) for k in names]
    )
    _copy(con, src, out, out_kind, columns, bands, keep, id_column, seed)
    n_all = sum(population.values())
    strata = []
    for k in names:
        n, pop = sizes[k], population[k]
        if n == 0:
            notes.append(f"slice {k!r} has no sampled rows; it cannot be reweighted")
        strata.append(StratumSample(k, pop, n, pop / n_all, pop / n if n else math.nan, n >= pop))
    mix = mix_path_for(out)
    with mix.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(["slice", "weight"])
        writer.writerows([s.slice, repr(s.share)] for s in strata)
    whole = [s.slice for s in strata if s.taken_whole and s.population < floor]
    if whole:
        notes.append(
            f"taken whole (fewer than {floor} rows): {', '.join(whole)}; their intervals "
            "will be wider than the floor was meant to give"
        )
    return SampleResult(
        input=str(src.path),
        output=str(out),
        mix_file=str(mix),
        by=by,
        seed=seed,
        floor=floor,
        total=total,
        id_column=id_column,
        since=since_at.isoformat() if since_at is not None else None,
        time_column=time_column if since is not None else None,
        bands=bands,
        population=n_all,
        sampled=sum(sizes.values()),
        excluded_before_since=before,
        excluded_no_time=no_time,
        strata=tuple(strata),
        notes=tuple(notes),
    )


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
