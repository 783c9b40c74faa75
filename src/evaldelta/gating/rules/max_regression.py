"""``max_regression``: non-inferiority of the slice's delta, within a margin.

An inconclusive result carries what sample would settle the slice against ``-margin``
(:func:`evaldelta.comparison._settle.slice_plan`): the bound is the gate's, so the figure is
computed here, once the outcome is final, and the reports only format it. The pairs to
detect and the MDE do not depend on the bound: they are the slice's own plan's (a
Comparison built without rows, ``gating/synthetic.py``, has none, and gets none here).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, ClassVar

from evaldelta.comparison._settle import slice_plan
from evaldelta.comparison.model import PairComparison
from evaldelta.gating.results import INCONCLUSIVE, RuleResult
from evaldelta.gating.rules._base import FigureStyle, MarginOn, PairGate, Rule, Shape

if TYPE_CHECKING:
    from evaldelta.gating.policy import PolicyReader

__all__ = ["MaxRegression"]


class MaxRegression(Rule):
    """The slice's paired (else unpaired) delta must lie above ``-margin``."""

    kind = "max_regression"
    key = "max_regression"
    shape: ClassVar[Shape] = "slice"
    listed = 0
    figures: ClassVar[FigureStyle] = "delta"
    interval = True
    margin_on: ClassVar[MarginOn | None] = "slice"

    def parse(self, reader: PolicyReader, value: object, keys: tuple[str, ...]) -> float:
        """The validated setting of the key (see the module docstring)."""
        return reader.margin(value, keys)

    def evaluate(self, gate: PairGate, setting: Any, slice_name: str | None) -> list[RuleResult]:
        """The rule's results on one pair."""
        margin: float = setting
        delta = gate.delta(slice_name) if slice_name is not None else None
        res = delta.main if delta is not None else None
        if delta is None or res is None:
            return [
                gate.rule(
                    "max_regression",
                    slice_name,
                    outcome=INCONCLUSIVE,
                    basis=gate.policy.basis,
                    estimate=None,
                    ci=None,
                    bound=-margin,
                    n=0,
                    sentence="no case of the slice was scored in both arms: no delta to judge",
                )
            ]
        what = "paired delta" if delta.basis == "paired" else "unpaired delta (no shared cases)"
        informative = delta.informative if delta.basis == "paired" else None
        return [
            gate.rule(
                "max_regression",
                slice_name,
                basis=gate.policy.basis,
                estimate=res.estimate,
                ci=res.ci,
                bound=-margin,
                n=delta.n_pairs or None,
                method=res.method,
                **gate.judged(res, -margin, informative, what, "-margin"),
            )
        ]

    def settled(self, result: RuleResult, pair: PairComparison, confidence: float) -> RuleResult:
        """An inconclusive result, with the pairs that would settle its slice (module doc)."""
        if result.outcome != INCONCLUSIVE or result.slice is None:
            return result
        delta = next((d for d in pair.slices if d.slice == result.slice), None)
        if delta is None or delta.plan is None:
            return result
        bound = result.bound if result.bound is not None else 0.0
        plan = slice_plan(delta, confidence, bound, known=delta.plan)
        return dataclasses.replace(result, plan=plan)
