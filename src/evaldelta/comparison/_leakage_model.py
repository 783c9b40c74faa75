"""The rubric leakage result types, held in the Comparison (``Comparison.rubric_leakage``).

They live with the Comparison's types (:mod:`evaldelta.comparison.model` imports and exports
them) and apart from the screen that fills them (:mod:`evaldelta.comparison.leakage`, which
imports the model), so the model and the leakage screen do not import each other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from evaldelta.stats._leakage import Asymmetry, LeakageRule

__all__ = ["STYLE_FLAG", "CriterionLeakage", "LeakageExample", "RubricLeakage"]

STYLE_FLAG = "review: possibly style, not requirement"


@dataclass(frozen=True)
class LeakageExample:
    """One case of a flagged criterion: the disfavoured arm fails, the favoured arm passes."""

    case_id: str
    failing_arm: str
    failing_output: str | None
    passing_arm: str
    passing_output: str | None
    reason: str | None = None  # why the failing output failed (the check's reason), if known


@dataclass(frozen=True)
class CriterionLeakage:
    """One criterion: its paired pass rates, split, exact test, flag and examples.

    ``favours`` names the arm the split leans towards (``None`` when b = c).
    """

    criterion: str
    spec: str | None
    asymmetry: Asymmetry
    favours: str | None
    examples: tuple[LeakageExample, ...] = ()

    @property
    def flag(self) -> str | None:
        """The review flag when the rule trips, else None."""
        return STYLE_FLAG if self.asymmetry.flagged else None


@dataclass(frozen=True)
class RubricLeakage:
    """Every criterion of one rubric screened for leakage between a baseline and a candidate.

    ``not_assessed`` maps criteria that could not be screened to the reason (a judge check
    that was not run, a metric with repeats). ``repeated``: pairs are (case, repeat)
    attempts, which the exact test treats as independent.
    """

    baseline: str
    candidate: str
    rule: LeakageRule
    criteria: tuple[CriterionLeakage, ...]
    not_assessed: Mapping[str, str]
    repeated: bool = False

    @property
    def flagged(self) -> tuple[CriterionLeakage, ...]:
        """The criteria the rule flags."""
        return tuple(c for c in self.criteria if c.asymmetry.flagged)
