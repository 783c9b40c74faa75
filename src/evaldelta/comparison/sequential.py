"""A sequential comparison: every interval a confidence sequence, valid at any stopping time.

``compare --sequential --order COLUMN`` (and ``run --until-decided`` after each look) reads
the cases in the order they arrived and replaces each fixed-sample interval by the
anytime-valid one of :func:`evaldelta.stats.anytime_paired` (per-case paired deltas of a
slice, in the order the pair became complete: the later of its two arms' arrivals) and
:func:`evaldelta.stats.anytime_mean` (an arm's case values in a slice). Looking after every
case and stopping on any data-dependent rule keeps their coverage, and the gate's fail
p-values (:func:`evaldelta.stats.fail_pvalue` dispatches to the sequences' own) stay valid
under Holm's adjustment across slices and rules. A fixed-sample interval peeked at after
every batch does not: bench/sequential.py shows its false-fail rate beside this one's.

What a sequential comparison leaves out, and says it does (``Sequential.left_out``): the
fixed-mix standardized results and their sweeps (no anytime-valid form here), the unpaired
Welch contrast, the other binary interval method and clustered intervals. The pooled numbers,
the 2x2 tables, the moved cases and each slice's plan (the pairs a fixed design would need)
stay: they are counts and point estimates, not intervals.

The bounds come from the scale, fixed before the data: 0-1 for pass/fail, the declared
``--scale``, else the usual scale the scores fit (an inferred scale is named in the notes).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from evaldelta import stats
from evaldelta.comparison.model import (
    ALL_CASES,
    ArmSlice,
    Comparison,
    MetricResult,
    PairComparison,
    Sequential,
    SliceDelta,
    SlicingResult,
)
from evaldelta.errors import UsageError
from evaldelta.evidence import ArrivedCase, CaseArrivals

__all__ = ["LEFT_OUT", "anytime", "pair_deltas"]

LEFT_OUT = (
    "fixed-mix standardized deltas and their share sweeps",
    "the unpaired (Welch) contrast",
    "the other pass/fail interval method",
    "clustered intervals",
)


def pair_deltas(
    baseline: Sequence[ArrivedCase], candidate: Sequence[ArrivedCase], slice_name: str | None
) -> list[float]:
    """Candidate minus baseline on shared cases (of one slice, or all), in pair-arrival order.

    A pair is complete when its later arm's case arrives; ties go by case id, so the
    order, and every interval read off it, is the same on every run over the same rows.
    """
    base = {c.case_id: c for c in baseline if slice_name is None or c.slice == slice_name}
    pairs = []
    for c in candidate:
        b = base.get(c.case_id)
        if b is None or (slice_name is not None and c.slice != slice_name):
            continue
        pairs.append((max(b.order, c.order), c.case_id, c.value - b.value))
    pairs.sort(key=lambda p: (p[0], p[1]))
    return [d for _, _, d in pairs]


def _arm_values(cases: Sequence[ArrivedCase], slice_name: str) -> list[float]:
    """An arm's case values in one slice (every case for the all-cases row), in arrival order."""
    every = slice_name == ALL_CASES
    chosen = sorted((c.order, c.case_id, c.value) for c in cases if every or c.slice == slice_name)
    return [v for _, _, v in chosen]


def _bounds(result: MetricResult) -> tuple[float, float]:
    found = result.scale_range()
    if found is None:
        raise UsageError(
            f"--sequential needs the scale of metric {result.metric!r} fixed before the data: "
            "its scores fit no usual scale; declare it with --scale LOW,HIGH"
        )
    return found[0], found[1]


def _arm(
    arm: ArmSlice, cases: Sequence[ArrivedCase], lo: float, hi: float, conf: float
) -> ArmSlice:
    est = stats.anytime_mean(_arm_values(cases, arm.slice), lo, hi, conf)
    return dataclasses.replace(arm, estimate=est, clustered_se=None, clustered_ci=None)


def _delta(delta: SliceDelta, deltas: list[float], width: float, conf: float) -> SliceDelta:
    if delta.basis != "paired" or not deltas:
        return dataclasses.replace(delta, unpaired=None, alternative_ci=None, clustered_ci=None)
    res = stats.anytime_paired(deltas, -width, width, conf)
    return dataclasses.replace(
        delta,
        paired=res,
        unpaired=None,
        alternative_ci=None,
        alternative_interval=None,
        clustered_se=None,
        clustered_ci=None,
    )


def _pair(
    pair: PairComparison, arrivals: Mapping[str, tuple[ArrivedCase, ...]], width: float, conf: float
) -> PairComparison:
    base, cand = arrivals.get(pair.baseline, ()), arrivals.get(pair.candidate, ())
    slices = tuple(_delta(d, pair_deltas(base, cand, d.slice), width, conf) for d in pair.slices)
    adjusted = stats.holm([d.paired.pvalue if d.paired else 1.0 for d in slices])
    slices = tuple(
        dataclasses.replace(d, pvalue_holm=p if d.paired is not None else None)
        for d, p in zip(slices, adjusted, strict=True)
    )
    overall = _delta(pair.overall, pair_deltas(base, cand, None), width, conf)
    return dataclasses.replace(
        pair, slices=slices, overall=overall, standardized=(), share_sweeps=()
    )


def _slicing(
    slicing: SlicingResult, found: CaseArrivals, lo: float, hi: float, conf: float
) -> SlicingResult:
    arms = tuple(_arm(a, found.arms.get(a.arm, ()), lo, hi, conf) for a in slicing.arms)
    pairs = tuple(_pair(p, found.arms, hi - lo, conf) for p in slicing.pairs)
    return dataclasses.replace(slicing, arms=arms, pairs=pairs)


def anytime(comparison: Comparison, arrivals: Sequence[CaseArrivals], column: str) -> Comparison:
    """``comparison`` with every interval a confidence sequence over ``arrivals`` (module doc)."""
    conf = comparison.confidence
    by_key = {(a.metric, a.by): a for a in arrivals}
    metrics = []
    cases = 0
    for result in comparison.metrics:
        lo, hi = _bounds(result)
        slicings = []
        for slicing in result.slicings:
            found = by_key.get((result.metric, slicing.by))
            if found is None:
                raise UsageError(f"no arrival order for {result.metric!r} by {slicing.by!r}")
            cases = max(cases, sum(len(v) for v in found.arms.values()))
            slicings.append(_slicing(slicing, found, lo, hi, conf))
        metrics.append(dataclasses.replace(result, slicings=tuple(slicings)))
    notes = _drift_notes(metrics, column)
    seq = Sequential(
        column=column,
        method=stats.ANYTIME_METHOD,
        confidence=conf,
        cases=cases,
        left_out=LEFT_OUT,
    )
    return dataclasses.replace(
        comparison, metrics=tuple(metrics), sequential=seq, notes=(*comparison.notes, *notes)
    )


def _drift_notes(metrics: Sequence[MetricResult], column: str) -> list[str]:
    """A note per interval that excludes its own mean (:func:`evaldelta.stats.drifted`)."""
    places = []
    for m in metrics:
        for s in m.slicings:
            places += [f"{m.metric}, {a.arm}, {a.slice}" for a in s.arms if _drift(a.estimate)]
            for p in s.pairs:
                for d in (*p.slices, p.overall):
                    if _drift(d.paired):
                        places.append(f"{m.metric}, {p.candidate} vs {p.baseline}, {d.slice}")
    if not places:
        return []
    shown = "; ".join(places[:3]) + (f"; and {len(places) - 3} more" if len(places) > 3 else "")
    return [
        f"the outcomes drift along {column!r}: a confidence sequence excludes its own running "
        f"mean ({shown}). The sequences assume the cases arrive in random order (each a fresh "
        "draw from one population); cases ordered by difficulty, source or slice break that, "
        "and these intervals do not hold: a gate rule on them is inconclusive"
    ]


def _drift(result: object) -> bool:
    return bool(getattr(result, "drift", False))
