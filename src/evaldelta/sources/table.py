"""A table that already lives on the backend (``--backend URL --table NAME``), read in place.

The table holds the long row format (``case_id``, ``arm``, ``score``, ``slice``, ...), as a
tidy file would; nothing is copied: the canonical projection is an Ibis expression over it,
run by that backend. ``NAME`` may be qualified (``db.table``, ``catalog.db.table``). A row
is located by its case, arm and repeat, since a table has no line numbers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evaldelta.errors import Location, UnreadableFileError
from evaldelta.sources._registry import Opened, Reader, register
from evaldelta.sources._source import ReadOptions, Source
from evaldelta.sources.tidy import apply_columns

__all__ = ["TableReader"]


@register
class TableReader(Reader):
    """A table of the backend connection, in the long row format (never recognized by content)."""

    name = "table"
    title = "a table on the --backend connection (--table NAME), in the long row format"
    options = frozenset({"columns"})

    def open(self, source: Source, con: Any, options: ReadOptions) -> Opened:
        """Look the table up on ``con`` and map its column names (``--columns``)."""
        name = str(source.path)
        *database, leaf = name.split(".")
        try:
            table = con.table(leaf, database=tuple(database)) if database else con.table(leaf)
        except Exception as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise UnreadableFileError(
                f"no such table on the backend ({first})", Location(name)
            ) from None
        table = apply_columns(table, options.columns, source.path)

        def locate(conditions: Mapping[str, object], field: str) -> Location:
            where = ", ".join(f"{k}={v!r}" for k, v in conditions.items() if k != field)
            return Location(f"{name} ({where})" if where else name, None, field, None, unit="row")

        return Opened(source=source, table=table, locate=locate, unit="row")
