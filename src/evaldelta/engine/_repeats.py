"""Repeats reduced per case by a reducer other than the mean, before anything is compared.

The engine's per-case pivot averages a case's repeats (the mean reducer, the default). A
harness may reduce them otherwise and report its figures so (an Inspect AI log whose epochs
reducer is ``max`` reports accuracy over each sample's best epoch); comparing on the mean
would then give other figures than the tool's. :func:`reduce_repeats` turns the canonical
relation into one row per (arm, case) whose score is the reducer's value
(:mod:`evaldelta.stats._reducers` defines each; this is the same in the backend), kept as a
temporary table, and every later step runs on it unchanged: the case is still the unit,
and with one attempt per case a pass/fail reduction is compared as pass/fail.

The other columns follow what they mean per case: costs are summed over the attempts,
flags are true when any attempt's is, and labels (cluster, upstream hashes, the model used)
take their first value. Slicing columns are grouped on, so a case whose repeats disagree on
its slice is still refused by the per-case checks, and the rows are checked for a repeated
(arm, case, repeat) before they are merged.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import ibis
import ibis.expr.types as ir

from evaldelta.engine._reduce import _check_duplicates
from evaldelta.sources import TableSet
from evaldelta.sources._fetch import rows as _rows
from evaldelta.stats._reducers import Reducer

__all__ = ["reduce_repeats"]

_IDS = itertools.count()
# A case's attempts beyond this many are not expected of a repeated run; pass@k's exact
# values are tabled per (attempts, passes) up to it, and a larger count is refused.
MAX_ATTEMPTS = 200


def _keys(rows: ir.Table) -> list[str]:
    return ["arm", "case_id", *(c for c in rows.columns if c.startswith("by_"))]


def _other(name: str, col: ir.Column) -> Any:
    """The per-case aggregate of a column that is not a key or a metric."""
    if name == "repeat":
        return ibis.literal(0, type="int64")
    if name in ("cost_usd",):
        return col.sum()
    if name == "sample_weight":
        return col.max()
    if col.type().is_boolean():
        return col.any()
    return col.min()


def _counted(reducer: Reducer, score: ir.FloatingColumn, top: int) -> Any:
    """at_least_k, pass_at_k, pass_k: from each case's attempts ``n`` and passes ``c``."""
    from evaldelta.stats._reducers import reduce_values

    n = score.count()
    c = (score >= reducer.threshold).cast("int64").sum()
    k = reducer.k or 1
    if reducer.kind == "at_least":
        return ibis.ifelse(n > 0, ibis.ifelse(c >= k, 1.0, 0.0), ibis.null("float64"))
    # exact values per (n, c), computed once in Python by the reference function
    branches = [
        ((n == total) & (c == passed), reduce_values([1.0] * passed + [0.0] * (total - passed),
                                                     reducer))
        for total in range(k, top + 1)
        for passed in range(total + 1)
    ]  # fmt: skip
    return ibis.cases(*branches, else_=ibis.null("float64")) if branches else ibis.null("float64")


def _plain(reducer: Reducer, score: ir.FloatingColumn, top: int) -> Any:
    kind = reducer.kind
    if kind == "max":
        return score.max()
    if kind == "min":
        return score.min()
    if kind == "median":
        return score.median()
    if kind == "mean":
        return score.mean()
    return _counted(reducer, score, top)


def _mode(rows: ir.Table, keys: list[str], metric: str) -> ir.Table:
    """Each case's most common value; on a tie, the one of the earliest attempt.

    Values are counted as the tool wrote them where the source keeps that
    (``_tie_<metric>``: Inspect's letters I and N, both 0, are two values), else as numbers.
    """
    scored = rows.filter(rows[metric].notnull())
    tie = f"_tie_{metric[2:]}"
    by = tie if tie in rows.columns else metric
    counted = scored.group_by([*keys, by]).aggregate(
        _k=scored.count(), _first=scored.repeat.min(), _v=scored[metric].min()
    )
    # most attempts first, then the earliest: one key, largest wins
    rank = counted._k.cast("int64") * (1 << 32) - counted._first
    return counted.group_by(keys).aggregate(**{metric: counted._v.argmax(rank)})


def reduce_repeats(
    tables: TableSet, reducer: Reducer, arms: Sequence[str], metrics: Sequence[str]
) -> TableSet:
    """``tables`` with one row per (arm, case): each metric reduced by ``reducer``.

    ``arms`` are validation's (every arm present); ``metrics`` the compared ones. Raises
    :class:`~evaldelta.errors.DuplicateRowError` on a repeated (arm, case, repeat) first,
    naming its row, and :class:`~evaldelta.errors.BadValueError` when a case has more than
    :data:`MAX_ATTEMPTS` attempts for a counting reducer.
    """
    from evaldelta.errors import BadValueError

    rows = tables.rows
    _check_duplicates(tables, rows, tuple(arms), None)
    keys = _keys(rows)
    top = 0
    if reducer.counts_passes and reducer.kind != "at_least":
        sizes = rows.group_by(keys).aggregate(n=rows.count())
        top = int(_rows(sizes.aggregate(top=sizes.n.max()))[0]["top"] or 0)
        if top > MAX_ATTEMPTS:
            raise BadValueError(
                f"a case has {top} attempts in one arm; --reduce {reducer.name} takes at "
                f"most {MAX_ATTEMPTS}"
            )
    scores = {f"m_{m}" for m in metrics}
    aggs: dict[str, Any] = {}
    for name in rows.columns:
        if name in keys:
            continue
        if name in scores and reducer.kind != "mode":
            aggs[name] = _plain(reducer, rows[name], top)
        elif name not in scores:
            aggs[name] = _other(name, rows[name])
    reduced = rows.group_by(keys).aggregate(**aggs)
    if reducer.kind == "mode":
        for name in sorted(scores):
            mode = _mode(rows, keys, name)
            reduced = reduced.left_join(mode, keys).select(
                *keys, *[c for c in reduced.columns if c not in keys], name
            )
    reduced = reduced.select(*rows.columns)  # the canonical column order
    con = tables.con
    kept = con.create_table(f"_evd_reduced_{next(_IDS)}", reduced, temp=True)
    return replace(tables, rows=kept, plain_rows=None)
