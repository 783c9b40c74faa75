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

from typing import TYPE_CHECKING

from evaldelta._util._lazy import lazy_names

if TYPE_CHECKING:  # the names, for type checkers; at run time each loads on first use
    from evaldelta.sources._backend import is_default, move_rows, open_backend
    from evaldelta.sources._canonical import (
        TableSet,
        default_metrics,
        locate,
        open_sources,
        read_sources,
    )
    from evaldelta.sources._connect import connect
    from evaldelta.sources._export import ImportResult, import_rows
    from evaldelta.sources._order import ORDER_NAMES
    from evaldelta.sources._pins import display_path, flatten_pins
    from evaldelta.sources._records import read_records
    from evaldelta.sources._registry import (
        Opened,
        Reader,
        detect,
        format_names,
        reader_for,
        readers,
    )
    from evaldelta.sources._report import ImportIssue, ImportReport
    from evaldelta.sources._source import ReadOptions, Source, parse_columns, parse_source

_WHERE = {
    "ORDER_NAMES": "evaldelta.sources._order",
    "ImportIssue": "evaldelta.sources._report",
    "ImportReport": "evaldelta.sources._report",
    "ImportResult": "evaldelta.sources._export",
    "Opened": "evaldelta.sources._registry",
    "ReadOptions": "evaldelta.sources._source",
    "Reader": "evaldelta.sources._registry",
    "Source": "evaldelta.sources._source",
    "TableSet": "evaldelta.sources._canonical",
    "connect": "evaldelta.sources._connect",
    "default_metrics": "evaldelta.sources._canonical",
    "detect": "evaldelta.sources._registry",
    "display_path": "evaldelta.sources._pins",
    "flatten_pins": "evaldelta.sources._pins",
    "format_names": "evaldelta.sources._registry",
    "is_default": "evaldelta.sources._backend",
    "import_rows": "evaldelta.sources._export",
    "locate": "evaldelta.sources._canonical",
    "move_rows": "evaldelta.sources._backend",
    "open_backend": "evaldelta.sources._backend",
    "open_sources": "evaldelta.sources._canonical",
    "parse_columns": "evaldelta.sources._source",
    "parse_source": "evaldelta.sources._source",
    "read_records": "evaldelta.sources._records",
    "read_sources": "evaldelta.sources._canonical",
    "reader_for": "evaldelta.sources._registry",
    "readers": "evaldelta.sources._registry",
}


__getattr__, __dir__ = lazy_names(__name__, _WHERE, globals())

__all__ = [
    "ORDER_NAMES",
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
    "is_default",
    "locate",
    "move_rows",
    "open_backend",
    "open_sources",
    "parse_columns",
    "parse_source",
    "read_records",
    "read_sources",
    "reader_for",
    "readers",
]
