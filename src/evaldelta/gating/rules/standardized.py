"""``[standardized]``: non-inferiority of the fixed-mix delta under a named mix.

``mix = "chosen"`` (the default) judges every ``--mix`` mix, one result each, with the
shares at which its outcome would change (:mod:`evaldelta.gating._mix_rules`). A
sequential comparison has no standardized result (no anytime-valid form of it): the rule
is then a policy error, not judged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from evaldelta.comparison.model import ALL_CASES, Standardized
from evaldelta.errors import PolicyError
from evaldelta.gating._mix_rules import rule_break_even, standardized_for
from evaldelta.gating.results import RuleResult, judge
from evaldelta.gating.rules._base import FigureStyle, MarginOn, PairGate, Rule, Shape

if TYPE_CHECKING:
    from evaldelta.gating.policy import PolicyReader

__all__ = ["StandardizedMargin", "StandardizedRule"]

KEYS = ("mix", "margin")


@dataclass(frozen=True)
class StandardizedRule:
    """Non-inferiority of the fixed-mix delta under the named mix."""

    mix: str
    margin: float


class StandardizedMargin(Rule):
    """The fixed-mix delta of each judged mix must lie above ``-margin``."""

    kind = "standardized_margin"
    key = "standardized"
    shape: ClassVar[Shape] = "table"
    listed = 3
    figures: ClassVar[FigureStyle] = "delta"
    interval = True
    margin_on: ClassVar[MarginOn | None] = "mix"

    def parse(self, reader: PolicyReader, value: object, keys: tuple[str, ...]) -> StandardizedRule:
        """The validated setting of the key (see the module docstring)."""
        table = reader.table(value, keys)
        reader.known(table, KEYS, keys)
        if "margin" not in table:
            raise reader.fail(keys, None, "[standardized] needs a margin")
        return StandardizedRule(
            mix=reader.string(table.get("mix", "chosen"), (*keys, "mix")),
            margin=reader.margin(table["margin"], (*keys, "margin")),
        )

    def evaluate(self, gate: PairGate, setting: Any, slice_name: str | None) -> list[RuleResult]:
        """One result per mix judged: every --mix mix for ``chosen``."""
        rule: StandardizedRule = setting
        if gate.sequential:
            raise PolicyError(
                "[standardized] has no anytime-valid form, so a sequential gate "
                "(--sequential) cannot judge it: it judges max_regression, min_score, "
                "min_cases, critical cases and max_cost_ratio; gate without --sequential, or "
                "use a policy without [standardized]",
                gate.policy.where("standardized"),
            )
        found = standardized_for(gate.pair, rule.mix)
        if not found:
            have = ", ".join(s.mix for s in gate.pair.standardized)
            hint = " (give --traffic for the traffic mix)" if rule.mix == "traffic" else ""
            raise PolicyError(
                f"the comparison has no standardized result under mix {rule.mix!r}{hint}; "
                f"it has: {have}",
                gate.policy.where("standardized", "mix", value=rule.mix),
            )
        return [_one(gate, rule, std) for std in found]


def _one(gate: PairGate, rule: StandardizedRule, std: Standardized) -> RuleResult:
    pair, basis = gate.pair, gate.policy.basis
    informative = pair.overall.informative if std.delta_basis == "paired" else None
    # under the pairs' own mix the standardized delta is the all-cases paired delta: judge
    # it by that result, so its one-sided p is the one its (score) interval implies
    judged_on: Any = std.delta
    if std.same_as_overall and pair.overall.main is not None:
        judged_on = pair.overall.main
    judged = gate.judged(
        judged_on, -rule.margin, informative, f"fixed-mix delta ({std.mix} mix)", "-margin"
    )
    if std.dropped_slices:
        judged["sentence"] += (
            f"; slices without evidence were dropped: {', '.join(std.dropped_slices)}"
        )
    decided = basis == "point" or "p_fail" in judged  # judged on its numbers
    shares = rule_break_even(std, -rule.margin, basis, gate.confidence, judge)
    return gate.rule(
        "standardized_margin",
        ALL_CASES,
        basis=basis,
        estimate=std.delta.estimate,
        ci=std.delta.ci,
        bound=-rule.margin,
        n=pair.shared_cases or None,
        method=f"{std.delta.method}, {std.mix} mix",
        mix=std.mix,
        break_even=shares if decided else (),
        **judged,
    )
