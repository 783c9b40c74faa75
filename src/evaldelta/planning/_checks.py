"""Up-front checks of a plan's design: power, alpha, the alternative and the effect.

Checked before any power function runs, so bad input is one :class:`UsageError` (exit 2).
"""

from __future__ import annotations

import math

from evaldelta.comparison.model import MetricResult
from evaldelta.errors import UsageError

__all__ = ["ALTERNATIVES", "check_design", "check_effect_scale"]

ALTERNATIVES = ("two-sided", "larger", "smaller")


def check_design(effect: float | None, power: float, alpha: float, alternative: str) -> None:
    """Raise UsageError for a design the power functions cannot take (checked up front)."""
    if alternative not in ALTERNATIVES:
        raise UsageError(
            f"unknown alternative {alternative!r}; choose one of {', '.join(ALTERNATIVES)}"
        )
    if not 0 < alpha < 1:
        raise UsageError(f"alpha must lie strictly between 0 and 1, not {alpha}")
    if not alpha < power < 1:
        raise UsageError(f"power must lie strictly between alpha ({alpha}) and 1, not {power}")
    if effect is None:
        return
    if not math.isfinite(effect) or effect == 0:
        raise UsageError(f"the effect must be a non-zero number, not {effect}")
    if alternative == "larger" and effect < 0:
        raise UsageError(f"alternative 'larger' needs a positive effect, not {effect}")
    if alternative == "smaller" and effect > 0:
        raise UsageError(f"alternative 'smaller' needs a negative effect, not {effect}")


def check_effect_scale(effect: float | None, metric: MetricResult) -> None:
    """Raise UsageError for an effect no two scores on the metric's scale can differ by.

    ``plan --effect 5`` on pass/fail data asked for 500 points and got ``n/a`` with exit 0
    (issue 24.7): an effect larger than the whole scale is bad input, not an undefined
    result. Pass/fail effects are differences of pass rates (-1 to 1); graded effects are
    checked against the declared scale, else the usual scale the scores fit (no check when
    none fits).
    """
    if effect is None:
        return
    scale = metric.scale_range()
    if scale is None:
        return
    low, high, how = scale
    if abs(effect) <= high - low:
        return
    name = metric.metric
    if how == "pass/fail":
        raise UsageError(
            f"--effect {effect:g} is outside the scale of {name!r}, a pass/fail metric: its "
            f"effects are differences of pass rates, between -1 and 1 (--effect 0.05 is 5 "
            f"points; {effect:g} would be {effect * 100:g} points)"
        )
    raise UsageError(
        f"--effect {effect:g} is larger than the whole scale of {name!r}, {low:g} to "
        f"{high:g} ({how}): no two of its scores differ by that much"
    )
