"""Rows -> validated relation -> sufficient statistics (DuckDB by default, through Ibis).

Only the queries live here; the plain types they return (:class:`~evaldelta.evidence.Evidence`
and its parts) are :mod:`evaldelta.evidence`'s, which loads no backend.
"""

from evaldelta.engine._critical import critical_stats, reduce_critical
from evaldelta.engine._reduce import (
    CaseTable,
    build_case_table,
    list_cases,
    slice_weight_totals,
)
from evaldelta.engine._slices import (
    SliceReduction,
    reduce_slices,
)
from evaldelta.engine._validate import validate

__all__ = [
    "CaseTable",
    "SliceReduction",
    "build_case_table",
    "critical_stats",
    "list_cases",
    "reduce_critical",
    "reduce_slices",
    "slice_weight_totals",
    "validate",
]
