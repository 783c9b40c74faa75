"""Read eval rows in place (CSV, JSONL, Parquet) and project them onto the long row format.

Files are never loaded into Python: DuckDB scans them and Ibis expressions describe the
projection, so the same code runs on another Ibis backend. Line numbers are not carried
through the main pipeline (a window over tens of millions of rows is not free); when a
check fails, :func:`locate` scans the one file again to name the line.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ibis
import ibis.expr.types as ir

from evaldelta.errors import Location, MissingColumnError, UnreadableFileError

__all__ = ["Source", "TableSet", "connect", "locate", "read_sources"]

CSV_SUFFIXES = {".csv", ".tsv", ".txt"}
JSON_SUFFIXES = {".jsonl", ".ndjson", ".json"}
PARQUET_SUFFIXES = {".parquet", ".pq"}
TRUE_WORDS = ("true", "t", "yes", "pass", "passed")
FALSE_WORDS = ("false", "f", "no", "fail", "failed")


@dataclass(frozen=True)
class Source:
    """One input file, and the arm it holds when the file has no ``arm`` column."""

    path: Path
    arm: str | None = None

    @property
    def kind(self) -> str:
        """``csv``, ``json`` or ``parquet``, from the file name."""
        suffix = self.path.suffix.lower()
        if suffix in CSV_SUFFIXES:
            return "csv"
        if suffix in JSON_SUFFIXES:
            return "json"
        if suffix in PARQUET_SUFFIXES:
            return "parquet"
        raise UnreadableFileError(
            f"cannot tell the format from the suffix {suffix!r}; "
            "use .csv, .tsv, .jsonl, .json or .parquet",
            Location(str(self.path)),
        )

    @property
    def unit(self) -> str:
        """What a position in this file is called in messages."""
        return "row" if self.kind == "parquet" else "line"

    def line_of(self, row_index: int) -> int:
        """Turn a 0-based data row index into the number a person finds in the file."""
        if self.kind == "csv":
            return row_index + 2  # 1-based, after the header line
        return row_index + 1


@dataclass(frozen=True)
class TableSet:
    """The canonical relation over all sources, with the facts needed to describe it."""

    con: Any
    rows: ir.Table
    sources: tuple[Source, ...]
    slice_columns: tuple[str, ...]
    metrics: tuple[str, ...]
    has_cluster: bool
    has_cost: bool


def connect() -> Any:
    """An in-memory DuckDB connection that spills to disk instead of growing without bound.

    ``EVALDELTA_MEMORY_LIMIT`` (default ``1GB``) caps DuckDB's buffer memory; larger
    reductions spill to a temporary directory under the system's temp folder.
    """
    limit = os.environ.get("EVALDELTA_MEMORY_LIMIT", "1GB")
    spill = Path(tempfile.gettempdir()) / "evaldelta-duckdb"
    return ibis.duckdb.connect(memory_limit=limit, temp_directory=str(spill))


def _scan(con: Any, source: Source) -> ir.Table:
    """Scan one file with DuckDB; turn every read failure into a one-line error."""
    path = source.path
    if not path.exists():
        raise UnreadableFileError("file does not exist", Location(str(path)))
    if path.is_dir():
        raise UnreadableFileError("is a directory, not a file", Location(str(path)))
    if path.stat().st_size == 0:
        raise UnreadableFileError("file is empty", Location(str(path)))
    kind = source.kind
    try:
        if kind == "csv":
            delim = "\t" if path.suffix.lower() == ".tsv" else ","
            table = con.read_csv(str(path), all_varchar=True, delim=delim, header=True)
        elif kind == "json":
            table = con.read_json(str(path))
        else:
            table = con.read_parquet(str(path))
        table.schema()  # forces DuckDB to open and sniff the file now
    except Exception as exc:  # DuckDB raises several unrelated classes; all mean "unreadable"
        raise UnreadableFileError(
            f"cannot read as {kind.upper()}: {_first_line(exc)}", Location(str(path))
        ) from exc
    return table


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _as_text(col: ir.Value) -> ir.StringValue:
    """A column as text; a JSON-typed column (mixed types in JSONL) loses its quotes."""
    text = col.cast("string")
    if col.type().is_json():
        quoted = text.startswith('"') & text.endswith('"') & (text.length() >= 2)
        text = quoted.ifelse(text.substr(1, text.length() - 2), text)
    return text


def _as_score(col: ir.Value) -> ir.FloatingValue:
    """Parse a score: numbers as they are, booleans and pass/fail words as 1/0, blank as null."""
    dtype = col.type()
    if dtype.is_boolean():
        return col.cast("int64").cast("float64")
    if dtype.is_numeric():
        return col.cast("float64")
    text = _as_text(col).strip().lower()
    return (
        ibis.cases(
            (text.isin(TRUE_WORDS), ibis.literal(1.0)),
            (text.isin(FALSE_WORDS), ibis.literal(0.0)),
            else_=text.try_cast("float64"),
        )
    ).cast("float64")


def score_is_unparseable(col: ir.Value) -> ir.BooleanValue:
    """True where a non-blank value does not parse as a score."""
    if col.type().is_boolean() or col.type().is_numeric():
        return ibis.literal(False)
    text = _as_text(col).strip()
    return text.notnull() & (text != "") & _as_score(col).isnull()


def read_sources(
    sources: list[Source],
    *,
    slice_columns: tuple[str, ...] = ("slice",),
    metrics: tuple[str, ...] = ("score",),
    con: Any | None = None,
) -> TableSet:
    """Scan every source and return one canonical relation.

    Columns: ``case_id``, ``arm``, ``repeat``, one string column per slicing column
    (``slice`` defaults to ``all`` when absent), one float column per metric (null =
    unlabeled), ``cluster`` (string or null), ``cost_usd`` (float or null) and ``_src``
    (the index of the source, for locating lines later). The raw metric values are kept as
    ``_raw_<metric>`` so validation can name an unparseable value.
    """
    if not sources:
        raise UnreadableFileError("no input files were given")
    con = con if con is not None else connect()
    scanned = [_scan(con, s) for s in sources]
    has_cluster = any("cluster" in t.columns for t in scanned)
    has_cost = any("cost_usd" in t.columns for t in scanned)
    projected = []
    for index, (source, table) in enumerate(zip(sources, scanned, strict=True)):
        projected.append(
            _project(index, source, table, slice_columns, metrics, has_cluster, has_cost)
        )
    rows = projected[0] if len(projected) == 1 else ibis.union(*projected, distinct=False)
    return TableSet(
        con=con,
        rows=rows,
        sources=tuple(sources),
        slice_columns=slice_columns,
        metrics=metrics,
        has_cluster=has_cluster,
        has_cost=has_cost,
    )


def _project(
    index: int,
    source: Source,
    table: ir.Table,
    slice_columns: tuple[str, ...],
    metrics: tuple[str, ...],
    has_cluster: bool,
    has_cost: bool,
) -> ir.Table:
    path = str(source.path)
    columns = set(table.columns)
    required = ["case_id", *metrics]
    if source.arm is None:
        required.append("arm")
    for name in required:
        if name not in columns:
            raise MissingColumnError(
                f"required column {name!r} is missing (columns: {', '.join(table.columns)})",
                Location(path, 1 if source.kind == "csv" else None, name),
            )
    for name in slice_columns:
        if name not in columns and name != "slice":
            raise MissingColumnError(
                f"slicing column {name!r} (from --by) is missing "
                f"(columns: {', '.join(table.columns)})",
                Location(path, 1 if source.kind == "csv" else None, name),
            )
    out: dict[str, ir.Value] = {
        "case_id": _as_text(table.case_id),
        "arm": ibis.literal(source.arm) if source.arm is not None else _as_text(table.arm),
        "_raw_repeat": _as_text(table["repeat"]) if "repeat" in columns else ibis.null("string"),
    }
    out["repeat"] = (
        _as_text(table["repeat"]).strip().try_cast("int64").fill_null(0)
        if "repeat" in columns
        else ibis.literal(0, type="int64")
    )
    for name in slice_columns:
        out[f"by_{name}"] = (
            _as_text(table[name]).fill_null("(missing)") if name in columns else ibis.literal("all")
        )
    for name in metrics:
        out[f"m_{name}"] = _as_score(table[name])
        out[f"_bad_{name}"] = score_is_unparseable(table[name])
        out[f"_raw_{name}"] = _as_text(table[name])
    if has_cluster:
        out["cluster"] = _as_text(table.cluster) if "cluster" in columns else ibis.null("string")
    if has_cost:
        cost = table.cost_usd if "cost_usd" in columns else None
        out["cost_usd"] = (
            cost.cast("string").try_cast("float64") if cost is not None else ibis.null("float64")
        )
    out["_src"] = ibis.literal(index, type="int64")
    return table.select(**out)


def locate(
    tables: TableSet, source_index: int, conditions: dict[str, object], field: str
) -> Location:
    """Find the first line of one source where the named columns equal the given values.

    Only called after a check failed, so scanning the file once more is affordable.
    """
    source = tables.sources[source_index]
    con = tables.con
    raw = _scan(con, source)
    numbered = raw.mutate(_row_index=ibis.row_number())
    pred: ir.BooleanValue | None = None
    for name, value in conditions.items():
        if name == "arm" and source.arm is not None:
            continue
        if name not in numbered.columns:
            continue
        col = _as_text(numbered[name])
        clause = col.isnull() if value is None else (col == str(value))
        pred = clause if pred is None else (pred & clause)
    query = numbered if pred is None else numbered.filter(pred)
    hit = query.order_by("_row_index").limit(1).select("_row_index").to_pyarrow().to_pylist()
    line = source.line_of(int(hit[0]["_row_index"])) if hit else None
    return Location(str(source.path), line, field, conditions.get(field), unit=source.unit)
