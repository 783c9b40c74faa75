"""The one way rows come in: a registry of readers, all producing the canonical relation.

::

    Source (a path, FORMAT:PATH, --arm NAME=PATH, --store)
       │  reader_for(): the format named, else recognized from the content (detect)
       ▼
    Reader.open(source, con, options) ─▶ Opened: a table in our column names, pins, report
       │  (tidy files in place; the run store attached; importers' rows spilled to Parquet)
       ▼
    read_sources() ─▶ TableSet: the canonical relation on one connection (connect())

Readers, one module each: :mod:`~evaldelta.sources.tidy` (CSV, TSV, JSONL, Parquet),
:mod:`~evaldelta.sources.runstore`, and :mod:`evaldelta.sources.importers` (Inspect AI,
lm-evaluation-harness, promptfoo, HELM, OpenAI Evals, lighteval). ``compare``, ``gate``,
``plan``, ``sample``, ``score`` and ``run`` take rows only through here.
"""

from evaldelta.sources._canonical import (
    TableSet,
    default_metrics,
    locate,
    open_sources,
    read_sources,
)
from evaldelta.sources._connect import connect
from evaldelta.sources._export import ImportResult, import_rows
from evaldelta.sources._pins import display_path, flatten_pins
from evaldelta.sources._records import read_records
from evaldelta.sources._registry import Opened, Reader, detect, format_names, reader_for, readers
from evaldelta.sources._report import ImportIssue, ImportReport
from evaldelta.sources._source import ReadOptions, Source, parse_columns, parse_source

__all__ = [
    "ImportIssue",
    "ImportReport",
    "ImportResult",
    "Opened",
    "ReadOptions",
    "Reader",
    "Source",
    "TableSet",
    "connect",
    "default_metrics",
    "detect",
    "display_path",
    "flatten_pins",
    "format_names",
    "import_rows",
    "locate",
    "open_sources",
    "parse_columns",
    "parse_source",
    "read_records",
    "read_sources",
    "reader_for",
    "readers",
]
