"""Fetch a query's result as Arrow, without the pandas import Ibis's DuckDB path costs.

Ibis 12's ``DuckDBBackend.to_pyarrow`` imports its converter module, and that module
imports ``ibis.formats.pandas`` and so pandas itself (about 0.45 s), although converting an
Arrow result needs no pandas. On DuckDB we run the same relation Ibis would run and give its
Arrow table to the expression's own result hook with the pandas-free PyArrow mapper, so
the result (column types included) is what ``to_pyarrow`` returns. Any other backend, or an
Ibis without these hooks, takes ``to_pyarrow`` as is.
"""

from __future__ import annotations

import functools
from typing import Any

__all__ = ["arrow", "rows"]


@functools.cache
def _mapper() -> type:
    from ibis.formats.pyarrow import PyArrowData

    class _NullAware(PyArrowData):  # type: ignore[misc]
        """DuckDB types an all-null literal column as INTEGER; Ibis's schema says null."""

        @classmethod
        def convert_scalar(cls, scalar: Any, dtype: Any) -> Any:
            if dtype.is_null():
                import pyarrow as pa

                return pa.scalar(None)
            return super().convert_scalar(scalar, dtype)

        @classmethod
        def convert_column(cls, column: Any, dtype: Any) -> Any:
            if dtype.is_null():
                import pyarrow as pa

                return pa.nulls(len(column))
            return super().convert_column(column, dtype)

    return _NullAware


def arrow(expr: Any) -> Any:
    """``expr.to_pyarrow()``: a ``pyarrow.Table`` for a table, a scalar for a scalar."""
    backend = expr._find_backend()
    relation_of = getattr(backend, "_to_duckdb_relation", None)
    hook = getattr(expr, "__pyarrow_result__", None)
    if relation_of is None or hook is None:
        return expr.to_pyarrow()
    return hook(relation_of(expr).to_arrow_table(), data_mapper=_mapper())


def rows(expr: Any) -> list[dict[str, Any]]:
    """A table expression's result as a list of dicts, one per row."""
    return arrow(expr).to_pylist()  # type: ignore[no-any-return]
