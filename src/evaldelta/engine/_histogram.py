"""Bounded: a histogram of the per-case paired deltas, per slice and over all cases.

Computed in the backend from the per-case pivot (:class:`~evaldelta.engine.CaseTable`): one
pass for each slice's range, count and number of distinct non-zero deltas, one grouped
count over ``(slice, bin)``. The result is at most ``max_bins`` counts per slice whatever
the number of cases. Deltas exactly zero (the pairs that cancel out of the difference) are
counted on their own and kept out of the bins, so the informative pairs are what the bins
show. The bins are fixed-width over ``[min, max]`` of a slice's non-zero deltas; their
number is ``min(max_bins, distinct non-zero values, ceil(2 n^(1/3)))`` (the Rice rule, so a
small slice is not cut into empty bins).
"""

from __future__ import annotations

import math
from typing import Any

import ibis
import pyarrow as pa

from evaldelta.engine._reduce import CaseTable
from evaldelta.evidence import ALL, DeltaBins
from evaldelta.sources._fetch import rows as _rows

__all__ = ["MAX_BINS", "delta_histograms"]

MAX_BINS = 40


def _bins(n_nonzero: int, distinct: int, max_bins: int) -> int:
    if n_nonzero == 0:
        return 0
    rice = math.ceil(2.0 * math.pow(n_nonzero, 1 / 3))
    return max(1, min(max_bins, distinct, rice))


def delta_histograms(
    cases: CaseTable, by: str, candidate_index: int, *, max_bins: int = MAX_BINS
) -> dict[str, DeltaBins]:
    """Per slice of ``by`` (and ``ALL``): the candidate-minus-baseline case deltas, binned."""
    w = cases.table
    j = candidate_index
    d = w[f"m{j}"] - w.m0
    paired = w.filter(w.m0.notnull() & w[f"m{j}"].notnull()).select(
        slice=w[f"s_{by}"], d=d, nz=d != 0
    )
    nonzero = paired.filter(paired.nz)
    ranges = {
        "lo": nonzero.d.min(),
        "hi": nonzero.d.max(),
        "k": nonzero.d.count(),
        "distinct": nonzero.d.nunique(),
    }
    per_slice = {str(r["slice"]): r for r in _rows(nonzero.group_by("slice").aggregate(**ranges))}
    overall = _rows(nonzero.aggregate(**ranges))[0]
    totals = {
        str(r["slice"]): int(r["n"])
        for r in _rows(paired.group_by("slice").aggregate(n=paired.count()))
    }
    n_all = sum(totals.values())

    specs: dict[str, tuple[float, float, int]] = {}
    for name, r in [*per_slice.items(), (ALL, overall)]:
        k = _bins(int(r["k"] or 0), int(r["distinct"] or 0), max_bins)
        if k:
            specs[name] = (float(r["lo"]), float(r["hi"]), k)

    counts: dict[str, list[int]] = {name: [0] * k for name, (_, _, k) in specs.items()}
    slice_specs = {s: v for s, v in specs.items() if s != ALL}
    if slice_specs:
        spec_table = ibis.memtable(
            pa.table(
                {
                    "spec_slice": pa.array(list(slice_specs), pa.string()),
                    "lo": pa.array([v[0] for v in slice_specs.values()], pa.float64()),
                    "hi": pa.array([v[1] for v in slice_specs.values()], pa.float64()),
                    "nb": pa.array([v[2] for v in slice_specs.values()], pa.int64()),
                }
            )
        )
        joined = nonzero.join(spec_table, nonzero.slice == spec_table.spec_slice)
        binned = joined.select(
            slice=joined.slice, b=_bin_expr(joined.d, joined.lo, joined.hi, joined.nb)
        )
        for r in _rows(binned.group_by(["slice", "b"]).aggregate(c=binned.count())):
            counts[str(r["slice"])][int(r["b"])] = int(r["c"])
    if ALL in specs:
        lo, hi, k = specs[ALL]
        b = _bin_expr(nonzero.d, ibis.literal(lo), ibis.literal(hi), ibis.literal(k))
        binned_all = nonzero.select(b=b)
        for r in _rows(binned_all.group_by("b").aggregate(c=binned_all.count())):
            counts[ALL][int(r["b"])] = int(r["c"])

    out: dict[str, DeltaBins] = {}
    for name in [*sorted(totals), ALL]:
        n = n_all if name == ALL else totals.get(name, 0)
        if n == 0:
            continue
        spec = specs.get(name)
        edges: tuple[float, ...] = ()
        if spec is not None:
            lo, hi, k = spec
            width = (hi - lo) / k
            edges = tuple([lo + i * width for i in range(k)] + [hi])
        bins = tuple(counts.get(name, []))
        out[name] = DeltaBins(slice=name, n=n, zero=n - sum(bins), edges=edges, counts=bins)
    return out


def _bin_expr(d: Any, lo: Any, hi: Any, nb: Any) -> Any:
    """The 0-based bin of ``d`` in ``nb`` equal bins over ``[lo, hi]`` (``hi`` in the last)."""
    width = (hi - lo) / nb
    raw = ((d - lo) / width.nullif(0)).floor().fill_null(0).cast("int64")
    return ibis.greatest(ibis.least(raw, nb.cast("int64") - 1), 0)
