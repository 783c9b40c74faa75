"""The types of a sequential comparison (``--sequential``, ``run --until-decided``).

Kept apart from :mod:`evaldelta.comparison.model`, which imports and re-exports them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Look", "Sequential"]


@dataclass(frozen=True)
class Look:
    """One look of a run that stops once the answer is decided (``run --until-decided``).

    ``cases`` and ``calls`` are the totals after the look; ``outcome`` the gate's outcome on
    the confidence sequences then; ``decided`` the slices whose every rule was decided by then
    (they received no further case).
    """

    index: int
    cases: int
    calls: int
    outcome: Literal["pass", "fail", "inconclusive"]
    decided: tuple[str, ...] = ()
    usd: float | None = None


@dataclass(frozen=True)
class Sequential:
    """How a sequential comparison was read: valid at any stopping time (``--sequential``).

    Every paired delta's and arm's interval is a confidence sequence over the cases in the
    order of ``column`` (:func:`evaldelta.stats.anytime_paired`): it may be looked at after
    every case and stopped on at any time, and its p-values (the gate's too) stay valid.
    ``left_out`` names the fixed-sample figures a sequential comparison does not show (they
    would be invalid after peeking). A run that stopped once decided fills ``looks``,
    ``stopping`` (its rule), ``calls`` (spent) and ``fixed_calls`` (what the fixed design,
    every case on every arm, would have made).
    """

    column: str
    method: str
    confidence: float
    cases: int
    left_out: tuple[str, ...] = ()
    looks: tuple[Look, ...] = ()
    stopping: str | None = None
    calls: int | None = None
    fixed_calls: int | None = None
    stopped_because: str | None = None
