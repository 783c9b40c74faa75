"""Compose the three-arm summary (always-cheap, cascade, always-strong) for compare.

The roles come from ``compare(three_arm=(cheap, cascade, strong))`` or, failing that, from a
run store's pins: a compared arm of ``kind = cascade`` whose ``cheap.arm`` and
``strong.arm`` are both compared arms (:func:`evaldelta.engine._three_arm.roles_from_pins`).
The sums come from :mod:`evaldelta.engine._three_arm` through the evidence; the intervals
from the paired per-case statistics. Pure: no query runs here.
"""

from __future__ import annotations

import math

from evaldelta import stats
from evaldelta.comparison._notes import Notes
from evaldelta.comparison.model import ALL_CASES, ThreeArmCost, ThreeArmSlice, ThreeArmSummary
from evaldelta.evidence import ALL, ThreeArmEvidence, ThreeArmStats

__all__ = ["three_arm_summary"]


def three_arm_summary(ev: ThreeArmEvidence, *, confidence: float, notes: Notes) -> ThreeArmSummary:
    """Attach the paired intervals to the three arms' per-slice sums."""
    roles, metric, by, roles_from = ev.roles, ev.metric, ev.by, ev.roles_from
    cheap, cascade, strong = roles
    esc, rows = ev.escalation, ev.rows
    if esc is None:
        notes.items.append(
            "three arms: no escalated or model_used column, so the escalation rate and the "
            "divergent subset are not reported"
        )
    elif esc.cheap_models_seen > 1:
        notes.items.append(
            f"three arms: {cheap} used {esc.cheap_models_seen} models; escalation is read as "
            f"model_used other than its most frequent one, {esc.cheap_model!r}"
        )
    built = [_slice(r, roles, confidence, notes, metric) for r in rows]
    overall = built[-1]
    slices = sorted(built[:-1], key=_gap_key)
    return ThreeArmSummary(
        cheap=cheap,
        cascade=cascade,
        strong=strong,
        metric=metric,
        by=by,
        roles_from=roles_from,
        escalation_basis=esc.basis if esc is not None else "none",
        cheap_model=esc.cheap_model if esc is not None else None,
        slices=tuple(slices),
        overall=overall,
    )


def _gap_key(s: ThreeArmSlice) -> tuple[int, float, str]:
    est = s.gap.estimate
    return (1, 0.0, s.slice) if not math.isfinite(est) else (0, -est, s.slice)


def _paired(n: int, mean: float, sd: float, confidence: float) -> stats.PairedResult:
    return stats.paired_means_from_summary(n, mean, sd, confidence)


def _slice(
    r: ThreeArmStats,
    roles: tuple[str, str, str],
    confidence: float,
    notes: Notes,
    metric: str,
) -> ThreeArmSlice:
    label = ALL_CASES if r.slice == ALL else r.slice
    with notes.capture(f"{metric}, three arms, slice {label}"):
        gap = _paired(r.n, r.gap.mean, r.gap.sd, confidence)
        rec = _paired(r.n, r.recovered.mean, r.recovered.sd, confidence)
        div = (
            _paired(r.divergent.n, r.divergent.mean, r.divergent.sd, confidence)
            if r.divergent is not None
            else None
        )
    share = math.nan
    if r.n and gap.estimate != 0 and math.isfinite(gap.estimate):
        share = rec.estimate / gap.estimate
    elif r.n:
        note = (
            f"{metric}, three arms, slice {label}: {roles[2]} and {roles[0]} have the same mean "
            "(gap 0), so the share of the gap the cascade recovered is undefined (n/a)"
        )
        if note not in notes.items:
            notes.items.append(note)
    rate = None
    if r.escalation_known:
        rate = (r.escalated_attempts or 0) / r.escalation_known
    cost = None
    if r.cost_usd is not None:
        cost = tuple(
            ThreeArmCost(arm, total, total / k if k else math.nan)
            for arm, total, k in zip(roles, r.cost_usd, r.cases, strict=True)
        )
    n = r.n
    return ThreeArmSlice(
        slice=label,
        n=n,
        cheap_mean=r.cheap_total / n if n else math.nan,
        cascade_mean=r.cascade_total / n if n else math.nan,
        strong_mean=r.strong_total / n if n else math.nan,
        gap=gap,
        recovered=rec,
        recovered_share=share,
        cascade_attempts=r.cascade_attempts,
        escalated_attempts=r.escalated_attempts,
        escalation_rate=rate,
        divergent_n=r.divergent.n if r.divergent is not None else None,
        divergent=div,
        cost=cost,
    )
