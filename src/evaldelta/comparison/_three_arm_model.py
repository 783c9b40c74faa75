"""The three-arm design's results (always-cheap, cascade, always-strong) the Comparison holds.

They live with the Comparison's types (:mod:`evaldelta.comparison.model` imports and exports
them) and apart from the arithmetic that fills them (:mod:`evaldelta.comparison._three_arm`).
"""

from __future__ import annotations

from dataclasses import dataclass

from evaldelta.stats import PairedResult

__all__ = ["ThreeArmCost", "ThreeArmSlice", "ThreeArmSummary"]


@dataclass(frozen=True)
class ThreeArmCost:
    """What one arm cost in one slice (from ``cost_usd``): total and per case it ran."""

    arm: str
    total_usd: float
    per_case: float


@dataclass(frozen=True)
class ThreeArmSlice:
    """Always-cheap, cascade and always-strong in one slice (or over all cases).

    ``n`` counts the cases all three arms scored; the means, ``gap`` (strong - cheap, the
    most quality at stake in routing) and ``recovered`` (cascade - cheap) are paired over
    them. ``recovered_share`` is recovered / gap: NaN (with a note) when the gap is 0.
    ``escalation_rate`` is the share of the cascade's attempts that escalated (None without
    an ``escalated`` or ``model_used`` column). ``divergent`` is cascade - strong on the
    ``divergent_n`` cases where the cascade kept the cheap model (no attempt escalated): the
    only cases where the two arms called different models.
    """

    slice: str
    n: int
    cheap_mean: float
    cascade_mean: float
    strong_mean: float
    gap: PairedResult
    recovered: PairedResult
    recovered_share: float
    cascade_attempts: int
    escalated_attempts: int | None
    escalation_rate: float | None
    divergent_n: int | None
    divergent: PairedResult | None
    cost: tuple[ThreeArmCost, ...] | None = None


@dataclass(frozen=True)
class ThreeArmSummary:
    """The three-arm design (always-cheap, cascade, always-strong) on one metric and column.

    ``roles_from`` is ``given`` (``three_arm=`` / ``--three-arm``) or ``pins`` (a run
    store's cascade arm names its cheap and strong steps). ``escalation_basis`` says how an
    escalated attempt was told: ``escalated`` (the column), ``model_used`` (differs from
    ``cheap_model``, the always-cheap arm's own model) or ``none``. ``slices`` are sorted by
    gap, largest first.
    """

    cheap: str
    cascade: str
    strong: str
    metric: str
    by: str
    roles_from: str
    escalation_basis: str
    cheap_model: str | None
    slices: tuple[ThreeArmSlice, ...]
    overall: ThreeArmSlice
