"""A :class:`~evaldelta.comparison.model.Comparison` built from per-slice results, without rows.

For simulations of the gate (``bench/calibrate.py``, ``tests/gating/test_gate_null.py``) and for
gating paired results computed elsewhere: ``evaluate(policy, from_deltas({...}))`` judges
them by the same rules as a comparison of rows. One metric, one slicing ("slice"),
baseline ``base`` against candidate ``cand``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from evaldelta import stats
from evaldelta.comparison.model import (
    SCHEMA_VERSION,
    ArmSlice,
    Comparison,
    MetricResult,
    PairComparison,
    Pooled,
    SliceDelta,
    SlicingResult,
)

__all__ = ["from_deltas"]


def _arm(arm: str, name: str, est: stats.Estimate) -> ArmSlice:
    return ArmSlice(arm, name, est.n, est.n, est.n, 0, est.n, est, math.nan, est.estimate)


def _delta(name: str, res: stats.PairedResult) -> SliceDelta:
    return SliceDelta(
        slice=name,
        basis="paired",
        n_pairs=res.n,
        baseline_mean=math.nan,
        candidate_mean=math.nan,
        paired=res,
        unpaired=None,
        pvalue_holm=None,
        table=None,
        informative=res.informative,
        informative_share=None,
        only_in_baseline=0,
        only_in_candidate=0,
        unscored_in_one=0,
    )


def from_deltas(
    deltas: Mapping[str, stats.PairedResult],
    *,
    kind: str = "graded",
    candidate_estimates: Mapping[str, stats.Estimate] | None = None,
    confidence: float = 0.95,
    version: str = "synthetic",
) -> Comparison:
    """A Comparison whose slices carry ``deltas`` (the first also stands for all cases).

    ``candidate_estimates`` gives the candidate's per-slice rate or mean, for ``min_score``
    rules; ``kind`` is ``"binary"`` or ``"graded"``.
    """
    if not deltas:
        raise ValueError("deltas must hold at least one slice.")
    names = tuple(deltas)
    first = next(iter(deltas.values()))
    arms = tuple(_arm("cand", s, e) for s, e in (candidate_estimates or {}).items())
    pair = PairComparison(
        baseline="base",
        candidate="cand",
        shared_cases=sum(r.n for r in deltas.values()),
        paired_available=True,
        overall=_delta("(all cases)", first),
        slices=tuple(_delta(s, r) for s, r in deltas.items()),
        standardized=(),
        pooled=Pooled(0.0, 0.0, 0.0, 0.0, 0.0),
        simpson=None,
        only_in_baseline=(),
        only_in_candidate=(),
        discordant_total=0,
        discordant=(),
    )
    metric = MetricResult(
        "score", kind, False, "attempt", (SlicingResult("slice", names, arms, (pair,)),)
    )
    return Comparison(
        schema_version=SCHEMA_VERSION,
        evaldelta_version=version,
        inputs=(),
        baseline="base",
        candidates=("cand",),
        arms_present=("base", "cand"),
        confidence=confidence,
        interval="newcombe",
        mix="actual",
        traffic=None,
        metrics=(metric,),
    )
