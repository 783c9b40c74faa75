"""Read eval rows in place (CSV, JSONL, Parquet) and project them onto the long row format.

Files are never loaded into Python: DuckDB scans them and Ibis expressions describe the
projection, so the same code runs on another Ibis backend. Line numbers are not carried
through the main pipeline (a window over tens of millions of rows is not free); when a
check fails, :func:`locate` scans the one file again to name the line.
"""

from __future__ import annotations

import hashlib
import os
import re
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
    run: str | None = None  # set: ``path`` is a run store (evaldelta.store); read this run

    @property
    def kind(self) -> str:
        """``csv``, ``json``, ``parquet`` from the file name, or ``store`` for a run store."""
        if self.run is not None:
            return "store"
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
        return "row" if self.kind in ("parquet", "store") else "line"

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
    critical_flags: tuple[str, ...] = ()  # "column" / "tag": flag columns that were projected
    has_weight: bool = False  # a sample_weight column (written by `evaldelta sample`)
    has_model_used: bool = False  # a model_used column (the model that answered an attempt)
    has_escalated: bool = False  # an escalated column (a cascade sent the attempt onwards)


def connect() -> Any:
    """An in-memory DuckDB connection that spills to disk instead of growing without bound.

    ``EVALDELTA_MEMORY_LIMIT`` (default ``512MB``) caps DuckDB's buffer memory; larger
    reductions spill to a temporary directory under the system's temp folder.
    """
    limit = os.environ.get("EVALDELTA_MEMORY_LIMIT", "512MB")
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
        elif kind == "store":
            table = _scan_store(con, source)
        else:
            table = con.read_parquet(str(path))
        table.schema()  # forces DuckDB to open and sniff the file now
    except Exception as exc:  # DuckDB raises several unrelated classes; all mean "unreadable"
        raise UnreadableFileError(
            f"cannot read as {kind.upper()}: {_first_line(exc)}", Location(str(path))
        ) from exc
    return table


def _scan_store(con: Any, source: Source) -> ir.Table:
    """One run of a run store: its ``eval_rows`` view, the store attached read-only."""
    path = str(source.path.resolve())
    alias = "evaldelta_store_" + hashlib.sha256(path.encode("utf-8")).hexdigest()[:10]
    quoted = path.replace("'", "''")
    con.raw_sql(f"ATTACH IF NOT EXISTS '{quoted}' AS {alias} (READ_ONLY)")
    table = con.table("eval_rows", database=(alias, "main"))
    return table.filter(table.run_id == source.run)


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
    critical_column: str | None = None,
    critical_tag: str | None = None,
) -> TableSet:
    """Scan every source and return one canonical relation.

    Columns: ``case_id``, ``arm``, ``repeat``, one string column per slicing column
    (``slice`` defaults to ``all`` when absent), one float column per metric (null =
    unlabeled), ``cluster`` (string or null), ``cost_usd`` (float or null), ``model_used``
    (string) and ``escalated`` (boolean) when a source has them, and ``_src``
    (the index of the source, for locating lines later). The raw metric values are kept as
    ``_raw_<metric>`` so validation can name an unparseable value. ``critical_column`` adds
    ``_crit_col`` (a truthy value in that column) and ``critical_tag`` adds ``_crit_tag``
    (the ``tags`` column contains the tag), when at least one source has the column; which
    were added is recorded in ``critical_flags``.
    """
    if not sources:
        raise UnreadableFileError("no input files were given")
    con = con if con is not None else connect()
    scanned = [_scan(con, s) for s in sources]
    has_cluster = any("cluster" in t.columns for t in scanned)
    has_cost = any("cost_usd" in t.columns for t in scanned)
    flags: dict[str, str] = {}
    if critical_column is not None and any(critical_column in t.columns for t in scanned):
        flags["column"] = critical_column
    if critical_tag is not None and any("tags" in t.columns for t in scanned):
        flags["tag"] = critical_tag
    has_weight = any("sample_weight" in t.columns for t in scanned)
    has_model_used = any("model_used" in t.columns for t in scanned)
    has_escalated = any("escalated" in t.columns for t in scanned)
    projected = []
    for index, (source, table) in enumerate(zip(sources, scanned, strict=True)):
        extra = _critical_flags(table, flags)
        if has_weight:
            extra.update(_weight_columns(table))
        extra.update(_routing_columns(table, has_model_used, has_escalated))
        projected.append(
            _project(index, source, table, slice_columns, metrics, has_cluster, has_cost, extra)
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
        critical_flags=tuple(flags),
        has_weight=has_weight,
        has_model_used=has_model_used,
        has_escalated=has_escalated,
    )


def _routing_columns(
    table: ir.Table, has_model_used: bool, has_escalated: bool
) -> dict[str, ir.Value]:
    """``model_used`` as text and ``escalated`` as a boolean (null where absent or unparsed)."""
    out: dict[str, ir.Value] = {}
    if has_model_used:
        out["model_used"] = (
            _as_text(table.model_used).strip().nullif("")
            if "model_used" in table.columns
            else ibis.null("string")
        )
    if has_escalated:
        if "escalated" not in table.columns:
            out["escalated"] = ibis.null("boolean")
        else:
            col = table.escalated
            if col.type().is_boolean():
                out["escalated"] = col
            elif col.type().is_numeric():
                out["escalated"] = col != 0
            else:
                text = _as_text(col).strip().lower()
                out["escalated"] = ibis.cases(
                    (text.isin([*TRUE_WORDS, "1", "1.0", "y"]), ibis.literal(True)),
                    (text.isin([*FALSE_WORDS, "0", "0.0", "n"]), ibis.literal(False)),
                    else_=ibis.null("boolean"),
                )
    return out


def _weight_columns(table: ir.Table) -> dict[str, ir.Value]:
    """``sample_weight`` as a float (null where a source lacks it) and its raw text."""
    if "sample_weight" not in table.columns:
        return {"sample_weight": ibis.null("float64"), "_raw_sample_weight": ibis.null("string")}
    col = table.sample_weight
    value = (
        col.cast("float64")
        if col.type().is_numeric()
        else _as_text(col).strip().try_cast("float64")
    )
    return {"sample_weight": value, "_raw_sample_weight": _as_text(col)}


def _critical_flags(table: ir.Table, flags: dict[str, str]) -> dict[str, ir.Value]:
    """Boolean flag columns for critical cases (false where a source lacks the column)."""
    out: dict[str, ir.Value] = {}
    if "column" in flags:
        name = flags["column"]
        if name not in table.columns:
            out["_crit_col"] = ibis.literal(False)
        else:
            col = table[name]
            if col.type().is_boolean():
                out["_crit_col"] = col.fill_null(False)
            elif col.type().is_numeric():
                out["_crit_col"] = (col != 0).fill_null(False)
            else:
                text = _as_text(col).strip().lower()
                out["_crit_col"] = text.isin([*TRUE_WORDS, "1", "1.0", "y"]).fill_null(False)
    if "tag" in flags:
        if "tags" not in table.columns:
            out["_crit_tag"] = ibis.literal(False)
        else:
            sep = r"""[\s,;|"'\[\]]"""
            pattern = f"(^|{sep}){re.escape(flags['tag'])}($|{sep})"
            out["_crit_tag"] = table["tags"].cast("string").re_search(pattern).fill_null(False)
    return out


def _project(
    index: int,
    source: Source,
    table: ir.Table,
    slice_columns: tuple[str, ...],
    metrics: tuple[str, ...],
    has_cluster: bool,
    has_cost: bool,
    extra: dict[str, ir.Value] | None = None,
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
    }
    if "repeat" not in columns:
        out["_raw_repeat"] = ibis.null("string")
        out["repeat"] = ibis.literal(0, type="int64")
    elif table["repeat"].type().is_integer():
        out["_raw_repeat"] = ibis.null("string")  # nothing to parse, nothing can be bad
        out["repeat"] = table["repeat"].cast("int64").fill_null(0)
    else:
        out["_raw_repeat"] = _as_text(table["repeat"])
        out["repeat"] = _as_text(table["repeat"]).strip().try_cast("int64").fill_null(0)
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
        if "cost_usd" not in columns:
            out["cost_usd"] = ibis.null("float64")
        elif table.cost_usd.type().is_numeric():
            out["cost_usd"] = table.cost_usd.cast("float64")
        else:
            out["cost_usd"] = _as_text(table.cost_usd).strip().try_cast("float64")
    out.update(extra or {})
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
