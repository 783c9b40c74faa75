"""The planning figures the Comparison holds: pairs to settle a slice, and the share sweeps.

They live with the Comparison's types (:mod:`evaldelta.comparison.model` imports and exports
them) and apart from the arithmetic that fills them (:mod:`evaldelta.comparison._settle`),
so the reports, the JSON among them, print numbers the Comparison already carries.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["DetectTest", "ShareSweep", "SlicePlan", "SweepPoint", "SweepReason"]

# how pairs to detect were computed: the exact McNemar test (single-attempt pass/fail, with
# Connor's 1987 normal approximation beside it), or the paired t from the noncentral t
DetectTest = Literal["exact_mcnemar", "paired_t"]
# why a slice's share is swept, in the order the reasons are checked
SweepReason = Literal[
    "worst slice", "nearest break-even", "largest weight x delta", "next largest weight x delta"
]


@dataclass(frozen=True)
class SlicePlan:
    """What sample would settle one paired slice against ``bound`` (NaN: undefined).

    ``pairs_to_settle``: the paired n at which the slice's own interval would clear
    ``bound`` if the observed delta and its spread held; never fewer than the slice has
    while its interval contains the bound. ``pairs_to_detect``: the paired n that detects
    the delta at 80% power, alpha 0.05 two-sided (``pairs_to_detect_normal``: Connor's
    approximation beside the exact McNemar n; None when that test could not be solved).
    ``mde``: the smallest delta detectable at today's n. ``sd``: the per-pair sd used.
    """

    bound: float
    pairs_to_settle: float
    pairs_to_detect: float
    pairs_to_detect_normal: float | None
    mde: float
    sd: float
    test: DetectTest


@dataclass(frozen=True)
class SweepPoint:
    """The standardized delta and its interval at one share of the swept slice."""

    share: float
    delta: float
    low: float
    high: float


@dataclass(frozen=True)
class ShareSweep:
    """One slice's share of the headline mix swept from 0 to 100% (raw metric units).

    ``share`` is the slice's share today and ``delta`` the standardized delta there;
    ``sign_flip`` the share at which the delta changes sign (None: no share in [0, 1]),
    ``interval_flips`` the shares at which an end of the interval crosses zero; ``why``
    says why the slice was chosen.
    """

    slice: str
    mix: str
    share: float
    delta: float
    sign_flip: float | None
    interval_flips: tuple[float, ...]
    why: tuple[SweepReason, ...]
    curve: tuple[SweepPoint, ...]
