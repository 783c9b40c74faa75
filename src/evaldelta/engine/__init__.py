"""Rows -> validated relation -> sufficient statistics (DuckDB by default, through Ibis)."""

from evaldelta.engine._critical import (
    CriticalSelector,
    CriticalStats,
    critical_stats,
    reduce_critical,
)
from evaldelta.engine._reduce import (
    ALL,
    ArmSliceStats,
    CaseTable,
    Moments,
    PairSliceStats,
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
    "ALL",
    "ArmSliceStats",
    "CaseTable",
    "CriticalSelector",
    "CriticalStats",
    "Moments",
    "PairSliceStats",
    "SliceReduction",
    "build_case_table",
    "critical_stats",
    "list_cases",
    "reduce_critical",
    "reduce_slices",
    "slice_weight_totals",
    "validate",
]
