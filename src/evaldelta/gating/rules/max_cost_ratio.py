"""``max_cost_ratio``: candidate cost over baseline cost, against a ceiling (no interval)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, ClassVar

from evaldelta.comparison.model import ALL_CASES
from evaldelta.errors import PolicyError
from evaldelta.gating.results import FAIL, INCONCLUSIVE, PASS, RuleResult
from evaldelta.gating.rules._base import FigureStyle, PairGate, Rule, Shape

if TYPE_CHECKING:
    from evaldelta.gating.policy import PolicyReader

__all__ = ["MaxCostRatio"]


class MaxCostRatio(Rule):
    """The pair's cost ratio must be at most the bound."""

    kind = "max_cost_ratio"
    key = "max_cost_ratio"
    shape: ClassVar[Shape] = "value"
    listed = 5
    figures: ClassVar[FigureStyle] = "ratio"

    def parse(self, reader: PolicyReader, value: object, keys: tuple[str, ...]) -> float:
        """The validated setting of the key (see the module docstring)."""
        out = reader.number(value, keys)
        if out <= 0:
            raise reader.fail(keys, value, "a cost ratio must be > 0")
        return out

    def evaluate(self, gate: PairGate, setting: Any, slice_name: str | None) -> list[RuleResult]:
        """The rule's results on one pair."""
        limit: float = setting
        cost = gate.pair.cost
        if cost is None:
            raise PolicyError(
                "the data has no cost_usd column, so the cost ratio cannot be judged",
                gate.policy.where("max_cost_ratio", value=limit),
            )
        if not math.isfinite(cost.ratio):
            outcome, sentence = INCONCLUSIVE, "the baseline's cost is zero: the ratio is undefined"
        elif cost.ratio <= limit:
            outcome, sentence = PASS, "candidate cost over baseline cost is within the bound"
        else:
            outcome, sentence = FAIL, "candidate cost over baseline cost exceeds the bound"
        return [
            gate.rule(
                "max_cost_ratio",
                ALL_CASES,
                outcome=outcome,
                basis="ratio",
                estimate=cost.ratio,
                ci=None,
                bound=limit,
                n=None,
                sentence=sentence,
            )
        ]
