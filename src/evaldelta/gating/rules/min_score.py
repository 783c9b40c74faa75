"""``min_score``: the candidate's own slice rate or mean must clear an acceptance bar."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from evaldelta.gating.results import INCONCLUSIVE, RuleResult
from evaldelta.gating.rules._base import FigureStyle, PairGate, Rule, Shape

if TYPE_CHECKING:
    from evaldelta.gating.policy import PolicyReader

__all__ = ["MinScore"]


class MinScore(Rule):
    """The candidate's slice estimate (Wilson or t interval) must lie at or above the bar."""

    kind = "min_score"
    key = "min_score"
    shape: ClassVar[Shape] = "slice"
    listed = 1
    figures: ClassVar[FigureStyle] = "level"
    interval = True

    def parse(self, reader: PolicyReader, value: object, keys: tuple[str, ...]) -> float:
        """The validated setting of the key (see the module docstring)."""
        return reader.number(value, keys)

    def evaluate(self, gate: PairGate, setting: Any, slice_name: str | None) -> list[RuleResult]:
        """The rule's results on one pair."""
        bar: float = setting
        result = gate.result
        noun = "rate" if result.kind == "binary" and not result.repeated else "mean"
        arm = gate.arm(slice_name) if slice_name is not None else None
        if arm is None or arm.scored_cases == 0:
            return [
                gate.rule(
                    "min_score",
                    slice_name,
                    outcome=INCONCLUSIVE,
                    basis=gate.policy.basis,
                    estimate=None,
                    ci=None,
                    bound=bar,
                    n=0,
                    sentence="the candidate has no scored case in the slice",
                )
            ]
        est = arm.estimate
        return [
            gate.rule(
                "min_score",
                slice_name,
                basis=gate.policy.basis,
                estimate=est.estimate,
                ci=est.ci,
                bound=bar,
                n=arm.scored_cases,
                method=est.method,
                **gate.judged(est, bar, None, f"candidate's {noun}", "the bar"),
            )
        ]
