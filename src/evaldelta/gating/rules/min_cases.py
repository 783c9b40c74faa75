"""``min_cases``: a slice with too few cases is inconclusive, never passed silently."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from evaldelta.gating.results import INCONCLUSIVE, PASS, RuleResult
from evaldelta.gating.rules._base import FigureStyle, PairGate, Rule, Shape

if TYPE_CHECKING:
    from evaldelta.gating.policy import PolicyReader

__all__ = ["MinCases"]


class MinCases(Rule):
    """Paired cases of the slice (scored cases of the candidate without shared ones) >= N."""

    kind = "min_cases"
    key = "min_cases"
    shape: ClassVar[Shape] = "slice"
    listed = 2
    figures: ClassVar[FigureStyle] = "count"

    def parse(self, reader: PolicyReader, value: object, keys: tuple[str, ...]) -> int:
        """The validated setting of the key (see the module docstring)."""
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise reader.fail(keys, value, "min_cases must be a whole number >= 1")
        return value

    def evaluate(self, gate: PairGate, setting: Any, slice_name: str | None) -> list[RuleResult]:
        """The rule's results on one pair."""
        assert slice_name is not None
        need: int = setting
        delta, arm = gate.delta(slice_name), gate.arm(slice_name)
        if delta is not None and delta.basis == "paired":
            n, what = delta.n_pairs, "paired cases"
        else:
            n, what = (arm.scored_cases if arm else 0), "scored cases (no shared cases)"
        ok = n >= need
        sentence = (
            f"enough {what} to judge the slice"
            if ok
            else f"too few {what} to judge the slice: inconclusive, never passed silently"
        )
        return [
            gate.rule(
                "min_cases",
                slice_name,
                outcome=PASS if ok else INCONCLUSIVE,
                basis="count",
                estimate=float(n),
                ci=None,
                bound=float(need),
                n=n,
                sentence=sentence,
            )
        ]
