"""The types of repeat reliability: pass@k, pass^k and the spread of repeats.

Kept apart from :mod:`evaldelta.comparison.model`, which imports and re-exports them.
Built by :mod:`evaldelta.comparison._reliability` from the engine's counts of cases.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from evaldelta.stats._results import Estimate, PairedResult

__all__ = [
    "ArmReliability",
    "ArmSpread",
    "IdenticalRepeats",
    "MetricReliability",
    "PassHatDelta",
    "Reliability",
]


@dataclass(frozen=True)
class ArmReliability:
    """One arm in one slice (``__all__``: every case): its rate beside pass@k and pass^k.

    ``rate``: the mean over the arm's ``cases`` of each case's share of passing attempts
    (the comparison's own rate, on the same cases). The rest are
    :class:`evaldelta.stats.RepeatReliability`'s: ``pass_at_k`` and ``pass_hat_k`` over the
    ``scored`` cases with at least k attempts, of which ``always_pass``, ``always_fail`` and
    ``mixed``; ``short``: the cases with fewer.
    """

    arm: str
    slice: str
    rate: float
    cases: int
    pass_at_k: Estimate
    pass_hat_k: Estimate
    always_pass: int
    always_fail: int
    mixed: int
    scored: int
    short: int


@dataclass(frozen=True)
class PassHatDelta:
    """The candidate's pass^k minus the baseline's on shared cases of one slice.

    ``holm``: Holm's adjusted p-value across the slices (nan for ``__all__``, which is not
    in the family); ``short``: shared cases left out for fewer than k attempts in an arm.
    """

    candidate: str
    slice: str
    delta: PairedResult
    holm: float
    short: int


@dataclass(frozen=True)
class ArmSpread:
    """A graded metric: how far one arm's scores move between repeats of a case.

    :class:`evaldelta.stats.RepeatSpread`'s figures: ``mean_sd`` (the mean within-case
    standard deviation, t interval over cases, clipped at 0), ``pooled_sd``, over the
    ``cases`` with 2 or more scored attempts; ``short``: the others.
    """

    arm: str
    slice: str
    mean_sd: Estimate
    pooled_sd: float
    cases: int
    short: int


@dataclass(frozen=True)
class IdenticalRepeats:
    """Cases of one arm with 2 or more stored outputs, and those whose outputs are equal."""

    arm: str
    cases: int
    identical: int
    share: float


@dataclass(frozen=True)
class MetricReliability:
    """One metric's repeats on the first slicing column (slices, then ``__all__``)."""

    metric: str
    by: str
    binary: bool
    arms: tuple[ArmReliability, ...] = ()
    pairs: tuple[PassHatDelta, ...] = ()
    spread: tuple[ArmSpread, ...] = ()


@dataclass(frozen=True)
class Reliability:
    """Reliable or lucky: how each arm does across repeats of the same case.

    ``k``: the number of attempts pass@k and pass^k are about (pass^k: every one of k
    attempts passes; pass@k: at least one does); ``k_from``: ``--k``, or ``repeats`` (the
    largest number of attempts every compared arm has on some case). ``identical``: per arm
    whose source stores outputs, its cases with byte-identical repeats.
    """

    k: int
    k_from: Literal["--k", "repeats"]
    metrics: tuple[MetricReliability, ...]
    identical: tuple[IdenticalRepeats, ...] = ()
