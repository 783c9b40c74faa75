"""``evaldelta import``: any source's rows written out as a tidy file in the long row format.

The output is what every command reads: CSV, JSONL or Parquet with our column names. A
Parquet output also carries each arm's pins and every import report in its key-value
metadata (``evaldelta.pins``, ``evaldelta.import``), so ``compare rows.parquet`` still shows
the pins and what the import could not map. Before anything is written, the rows are checked
as a comparison would check them (one row per arm, case and repeat), so an import never
writes a file that ``compare`` would refuse.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ibis
import ibis.expr.types as ir

from evaldelta.errors import DuplicateRowError, UsageError
from evaldelta.sources._canonical import missing_column, open_sources
from evaldelta.sources._errors import reading_errors
from evaldelta.sources._fetch import arrow
from evaldelta.sources._fetch import rows as fetch_rows
from evaldelta.sources._registry import INTERNAL_COLUMNS, Opened
from evaldelta.sources._report import ImportReport
from evaldelta.sources._source import ReadOptions, Source
from evaldelta.sources._values import as_text
from evaldelta.sources.tidy import PIN_KEY, REPORT_KEY, output_kind

__all__ = ["ImportResult", "import_rows"]


@dataclass(frozen=True)
class ImportResult:
    """What an import wrote: the file, its row count, and every source's report."""

    output: str
    rows: int
    columns: tuple[str, ...]
    reports: tuple[ImportReport, ...]
    pins: dict[str, dict[str, Any]]


def _aligned(opened: Sequence[Opened]) -> ir.Table:
    """All sources' rows as one table: columns by name, a column missing in one is null there."""
    tables = []
    for item in opened:
        table = item.table
        if "arm" not in table.columns:
            table = table.mutate(arm=ibis.literal(item.source.arm or ""))
        tables.append(table.drop(*[c for c in INTERNAL_COLUMNS if c in table.columns]))
    order: dict[str, None] = {}
    types: dict[str, Any] = {}
    for table in tables:
        for name, dtype in table.schema().items():
            order.setdefault(name, None)
            if name in types and types[name] != dtype:
                types[name] = ibis.dtype("string")  # sources disagree: keep the text
            else:
                types.setdefault(name, dtype)
    head = ["case_id", "arm", "repeat"]
    names = [c for c in head if c in order] + [c for c in order if c not in head]
    parts = []
    for table in tables:
        cols = {}
        for name in names:
            dtype = types[name]
            if name not in table.columns:
                cols[name] = ibis.null(dtype)
            elif table[name].type() != dtype:
                cols[name] = as_text(table[name]) if dtype.is_string() else table[name].cast(dtype)
            else:
                cols[name] = table[name]
        parts.append(table.select(**cols))
    return parts[0] if len(parts) == 1 else ibis.union(*parts, distinct=False)


def _check_required(opened: Sequence[Opened]) -> None:
    """Every source has a case id, and an arm unless ``--arm`` names it: checked first."""
    for item in opened:
        required = ["case_id"] + (["arm"] if item.source.arm is None else [])
        for name in required:
            if name not in item.table.columns:
                raise missing_column(name, item.table.columns, "required column", item)


def _check_unique(rows: ir.Table) -> None:
    keys = ["arm", "case_id"] + (["repeat"] if "repeat" in rows.columns else [])
    dup = rows.group_by(keys).aggregate(k=rows.count()).filter(lambda t: t.k > 1).limit(1)
    hits = fetch_rows(dup)
    if hits:
        hit = hits[0]
        raise DuplicateRowError(
            f"the imported rows hold arm {hit['arm']!r}, case {hit['case_id']!r}"
            + (f", repeat {hit['repeat']}" if "repeat" in hit else "")
            + f" {hit['k']} times; two logs of the same arm overlap (name them apart with "
            "--arm NAME=PATH)"
        )


@reading_errors
def import_rows(
    sources: Sequence[Source], output: Path, options: ReadOptions | None = None
) -> ImportResult:
    """Read ``sources`` through the row seam and write them to ``output`` (format by suffix)."""
    kind = output_kind(output)
    for source in sources:
        if source.path.exists() and output.exists() and output.resolve() == source.path.resolve():
            raise UsageError(f"the output {output} would overwrite an input")
    con, opened = open_sources(sources, options)
    _check_required(opened)
    rows = _aligned(opened)
    _check_unique(rows)
    reports = tuple(r for o in opened for r in o.reports)
    pins: dict[str, dict[str, Any]] = {}
    for item in opened:
        for arm, values in item.pins.items():
            pins.setdefault(arm, dict(values))
    output.parent.mkdir(parents=True, exist_ok=True)
    if kind == "parquet":
        count = _write_parquet(con, rows, output, pins, reports)
    else:
        if kind == "csv":
            con.to_csv(rows, output, delim="\t" if output.suffix.lower() == ".tsv" else ",")
        else:
            con.to_json(rows, output)
        count = int(arrow(rows.count()).as_py())
    columns = tuple(rows.columns)
    con.disconnect()
    return ImportResult(str(output), count, columns, reports, pins)


def _write_parquet(
    con: Any,
    rows: ir.Table,
    output: Path,
    pins: dict[str, dict[str, Any]],
    reports: Sequence[ImportReport],
) -> int:
    """Stream the rows into a Parquet file whose metadata holds the pins and the reports."""
    import pyarrow.parquet as pq

    metadata = {
        PIN_KEY: json.dumps(pins, sort_keys=True, default=str).encode(),
        REPORT_KEY: json.dumps([r.to_jsonable() for r in reports], default=str).encode(),
    }
    count = 0
    tmp = output.with_name(output.name + ".part")
    # DuckDB's own Arrow stream (Ibis 12's to_pyarrow_batches calls an API DuckDB 2 dropped)
    reader = con.con.sql(ibis.to_sql(rows, dialect="duckdb")).to_arrow_reader(100_000)
    schema = reader.schema.with_metadata(metadata)
    with pq.ParquetWriter(str(tmp), schema, compression="zstd") as writer:
        for batch in reader:
            writer.write_batch(batch)
            count += batch.num_rows
    tmp.replace(output)
    return count
