"""Tidy row files (CSV, TSV, JSONL, Parquet) in the long row format, read in place by DuckDB.

The file is never loaded into Python: DuckDB scans it and the projection is an Ibis
expression. Line numbers are not carried through the main pipeline (a window over tens of
millions of rows is not free); when a check fails, :meth:`TidyReader.locate` scans the one
file again to name the line. ``--columns case_id=id,arm=model`` maps a file's own names onto
ours. A Parquet file written by ``evaldelta import`` carries its arms' pins and the import
report in its key-value metadata, and they are read back from there.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import ibis
import ibis.expr.types as ir

from evaldelta.errors import Location, UnreadableFileError, UsageError
from evaldelta.sources._fetch import rows as fetch_rows
from evaldelta.sources._registry import Opened, Reader, register
from evaldelta.sources._report import ImportReport
from evaldelta.sources._source import ReadOptions, Source
from evaldelta.sources._values import as_text

__all__ = [
    "PIN_KEY",
    "REPORT_KEY",
    "TidyReader",
    "line_of",
    "output_kind",
    "read_records",
    "scan",
    "tidy_kind",
]

CSV_SUFFIXES = {".csv", ".tsv", ".txt"}
JSON_SUFFIXES = {".jsonl", ".ndjson", ".json"}
PARQUET_SUFFIXES = {".parquet", ".pq"}
PIN_KEY = b"evaldelta.pins"
REPORT_KEY = b"evaldelta.import"
_FORCED = {"csv": "csv", "tsv": "csv", "jsonl": "json", "json": "json", "parquet": "parquet"}


def tidy_kind(path: Path, forced: str | None = None) -> str:
    """``csv``, ``json`` or ``parquet``: the format named, else the suffix, else the content."""
    if forced in _FORCED:
        return _FORCED[forced]
    suffix = path.suffix.lower()
    if suffix in CSV_SUFFIXES:
        return "csv"
    if suffix in JSON_SUFFIXES:
        return "json"
    if suffix in PARQUET_SUFFIXES:
        return "parquet"
    try:
        with path.open("rb") as fh:
            head = fh.read(4096)
    except OSError:
        head = b""
    if head[:4] == b"PAR1":
        return "parquet"
    if head[:4] == b"PK\x03\x04":
        raise UnreadableFileError(
            "is a zip archive but not a log evaldelta reads (Inspect AI .eval logs are zips "
            "with a header.json or _journal/start.json)",
            Location(str(path)),
        )
    if b"\x00" in head:
        raise UnreadableFileError(
            "is a binary file of no format evaldelta reads (rows: CSV, TSV, JSONL or "
            "Parquet; logs: Inspect AI, lm-eval, promptfoo, ...)",
            Location(str(path)),
        )
    if head.lstrip()[:1] in (b"{", b"["):
        return "json"
    return "csv"


def output_kind(path: Path) -> str:
    """The format to write ``path`` in, from its suffix (an unknown suffix is a usage error)."""
    suffix = path.suffix.lower()
    for kind, suffixes in (("csv", CSV_SUFFIXES), ("json", JSON_SUFFIXES),
                           ("parquet", PARQUET_SUFFIXES)):  # fmt: skip
        if suffix in suffixes:
            return kind
    raise UsageError(
        f"cannot tell the output format from the suffix of {path.name!r}; "
        "use .csv, .tsv, .jsonl or .parquet"
    )


def _delimiter(path: Path, forced: str | None) -> str:
    return "\t" if forced == "tsv" or path.suffix.lower() == ".tsv" else ","


def line_of(kind: str, row_index: int) -> int:
    """A 0-based data row index as the number a person finds in the file."""
    return row_index + 2 if kind == "csv" else row_index + 1  # CSV: 1-based, after the header


def read_records(path: Path) -> tuple[tuple[str, ...], list[dict[str, Any]], str]:
    """A small tidy file (a case file) as Python records: its columns, rows and row unit.

    Read by the same reader as eval rows, so a missing, empty or malformed file fails the
    same way, with the file named.
    """
    from evaldelta.sources._canonical import open_sources
    from evaldelta.sources._source import Source

    con, (opened,) = open_sources([Source(path, format="tidy")])
    try:
        table = opened.table
        return tuple(table.columns), fetch_rows(table), opened.unit
    finally:
        con.disconnect()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def scan(con: Any, path: Path, forced: str | None = None) -> ir.Table:
    """Scan one tidy file with DuckDB; every read failure is a one-line error."""
    if not path.exists():
        raise UnreadableFileError("file does not exist", Location(str(path)))
    if path.is_dir():
        raise UnreadableFileError("is a directory, not a file", Location(str(path)))
    if not path.is_file():
        raise UnreadableFileError("is not a regular file", Location(str(path)))
    if path.stat().st_size == 0:
        raise UnreadableFileError("file is empty", Location(str(path)))
    kind = tidy_kind(path, forced)
    if kind == "csv":
        _check_width(path, _delimiter(path, forced))
    try:
        if kind == "csv":
            table = con.read_csv(
                str(path), all_varchar=True, delim=_delimiter(path, forced), header=True
            )
        elif kind == "json":
            table = con.read_json(str(path))
        else:
            table = con.read_parquet(str(path))
        table.schema()  # forces DuckDB to open and sniff the file now
    except Exception as exc:  # DuckDB raises several unrelated classes; all mean "unreadable"
        if kind == "csv":
            found = _csv_problem(path, _delimiter(path, forced))
            if found is not None:
                line, problem = found
                raise UnreadableFileError(
                    f"cannot read as CSV: {problem}", Location(str(path), line)
                ) from exc
        raise UnreadableFileError(
            f"cannot read as {kind.upper()}: {_first_line(exc)}", Location(str(path))
        ) from exc
    if kind == "csv":
        _check_header(path, table, _delimiter(path, forced))
    return table


def _check_width(path: Path, delimiter: str) -> None:
    """Refuse a CSV wider than :data:`~evaldelta._util._limits.MAX_COLUMNS` before DuckDB reads it.

    DuckDB's reader holds about 64 KB per column, so 8,000 columns pass its default 512 MB
    buffer however few the rows; the header (its first MB) says how wide the file is.
    """
    import csv

    from evaldelta._util._limits import MAX_COLUMNS

    with path.open("rb") as fh:
        head = fh.read(1 << 20).split(b"\n", 1)[0].decode("utf-8", errors="replace")
    if head.count(delimiter) < MAX_COLUMNS:
        return
    width = len(next(csv.reader([head], delimiter=delimiter), []))
    if width > MAX_COLUMNS:
        raise UnreadableFileError(
            f"has {width:,} columns, more than the {MAX_COLUMNS:,} evaldelta reads (the "
            "CSV reader's buffer holds about 64 KB per column); keep the columns you compare",
            Location(str(path), 1),
        )


def _csv_problem(path: Path, delimiter: str) -> tuple[int, str] | None:
    """After DuckDB could not read a CSV: the first line Python's csv module objects to.

    DuckDB's sniffer says only that sniffing failed; this names the line (an unterminated
    quote, a row with more or fewer fields than the header). Runs only on failure.
    """
    import csv

    try:
        with path.open(encoding="utf-8", newline="") as fh:
            reader = csv.reader(fh, delimiter=delimiter, strict=True)
            width = None
            for row in reader:
                if width is None:
                    width = len(row)
                elif row and len(row) != width:
                    return reader.line_num, (
                        f"this row has {len(row)} fields where the header has {width}"
                    )
    except csv.Error as exc:
        return reader.line_num, f"{exc} (an unterminated quote? the file may be cut short)"
    except UnicodeDecodeError as exc:
        return 0, f"the file is not UTF-8 text ({exc.reason} at byte {exc.start})"
    return None


def _check_header(path: Path, table: ir.Table, delimiter: str) -> None:
    """The header names each column once, in this dialect.

    DuckDB renames a repeated name (``score,score`` becomes ``score``, ``score_1``) and the
    second column would be ignored in silence; a one-column header holding ``;`` or tabs is
    a file in another dialect.
    """
    import csv

    with path.open(encoding="utf-8-sig", errors="replace", newline="") as fh:
        names = next(csv.reader(fh, delimiter=delimiter), [])
    seen: set[str] = set()
    for name in names:
        if name.strip() in seen:
            raise UnreadableFileError(
                "the header names this column twice; every column needs its own name",
                Location(str(path), 1, name.strip()),
            )
        seen.add(name.strip())
    if names and len(names) != len(table.columns):  # DuckDB read another line as the header
        found = _csv_problem(path, delimiter)
        line, problem = found if found is not None else (1, "the rows do not match the header")
        raise UnreadableFileError(f"cannot read as CSV: {problem}", Location(str(path), line))
    if len(table.columns) != 1:
        return
    name = table.columns[0]
    for sep, what in ((";", "semicolon"), ("\t", "tab"), ("|", "pipe")):
        if sep in name and name.count(sep) >= 1:
            fix = "name the file .tsv" if sep == "\t" else "convert it to commas"
            raise UnreadableFileError(
                f"the header looks {what}-separated ({name[:60]!r}); this reader splits CSV on "
                f"commas ({fix})",
                Location(str(path), 1),
            )


def _metadata(path: Path) -> tuple[dict[str, dict[str, Any]], tuple[ImportReport, ...]]:
    """Pins and the import report an ``evaldelta import`` Parquet file carries, if any."""
    import pyarrow.parquet as pq

    try:
        meta = pq.read_schema(str(path)).metadata or {}
    except Exception:  # a file DuckDB could read but pyarrow cannot: no metadata then
        return {}, ()
    pins: dict[str, dict[str, Any]] = {}
    reports: tuple[ImportReport, ...] = ()
    from evaldelta._util._json_bounds import check_json

    for key in (PIN_KEY, REPORT_KEY):  # nested past the limit: refused before json.loads
        if key in meta:
            check_json(meta[key], str(path))
    try:
        if PIN_KEY in meta:
            loaded = json.loads(meta[PIN_KEY])
            pins = {str(k): dict(v) for k, v in loaded.items() if isinstance(v, dict)}
        if REPORT_KEY in meta:
            reports = tuple(ImportReport.from_jsonable(r) for r in json.loads(meta[REPORT_KEY]))
    except (ValueError, TypeError, KeyError, AttributeError):
        raise UnreadableFileError(
            "the evaldelta metadata of this Parquet file is damaged", Location(str(path))
        ) from None
    return pins, reports


def apply_columns(table: ir.Table, columns: Mapping[str, str], path: Path) -> ir.Table:
    """Rename a file's own columns to ours (``--columns case_id=id``)."""
    if not columns:
        return table
    present = set(table.columns)
    for ours, theirs in columns.items():
        if theirs not in present:
            raise UsageError(
                f"--columns {ours}={theirs}: {path} has no column {theirs!r} "
                f"(columns: {', '.join(table.columns)})"
            )
        if ours in present and ours != theirs and ours not in columns.values():
            raise UsageError(
                f"--columns {ours}={theirs}: {path} already has a column {ours!r}; "
                f"map that one too or drop the mapping"
            )
    renamed = table.rename({f"__evd_{o}": t for o, t in columns.items()})
    return renamed.rename({o: f"__evd_{o}" for o in columns})


@register
class TidyReader(Reader):
    """The long row format in a CSV, TSV, JSONL or Parquet file."""

    name = "tidy"
    title = "tidy rows: CSV, TSV, JSONL or Parquet in the long row format"
    aliases = ("csv", "tsv", "jsonl", "json", "parquet")
    options = frozenset({"columns"})

    def open(self, source: Source, con: Any, options: ReadOptions) -> Opened:
        """Scan the file in place, map its column names, read pins an import left in it."""
        forced = source.format if source.format != "tidy" else None
        table = apply_columns(scan(con, source.path, forced), options.columns, source.path)
        kind = tidy_kind(source.path, forced)
        pins, reports = _metadata(source.path) if kind == "parquet" else ({}, ())
        defaults = reports[0].default_metrics if reports else ("score",)

        def locate(conditions: Mapping[str, object], field: str) -> Location:
            return _locate(con, source, forced, options, conditions, field)

        return Opened(
            source=source,
            table=table,
            locate=locate,
            unit="row" if kind == "parquet" else "line",
            pins=pins,
            reports=reports,
            default_metrics=defaults,
        )


def _locate(
    con: Any,
    source: Source,
    forced: str | None,
    options: ReadOptions,
    conditions: Mapping[str, object],
    field: str,
) -> Location:
    """Find the first line of the file where the named columns equal the given values.

    Only called after a check failed, so scanning the file once more is affordable.
    """
    kind = tidy_kind(source.path, forced)
    raw = apply_columns(scan(con, source.path, forced), options.columns, source.path)
    numbered = raw.mutate(_row_index=ibis.row_number())
    pred: ir.BooleanValue | None = None
    for name, value in conditions.items():
        if name == "arm" and source.arm is not None:
            continue
        if name not in numbered.columns:
            continue
        col = as_text(numbered[name]).strip()
        clause = col.isnull() if value is None else (col == str(value).strip())
        pred = clause if pred is None else (pred & clause)
    query = numbered if pred is None else numbered.filter(pred)
    hit = fetch_rows(query.order_by("_row_index").limit(1).select("_row_index"))
    line = line_of(kind, int(hit[0]["_row_index"])) if hit else None
    unit = "row" if kind == "parquet" else "line"
    return Location(str(source.path), line, field, conditions.get(field), unit=unit)
