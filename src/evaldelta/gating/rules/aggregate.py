"""The reviewer's aggregate-only checks of seed 004, for contrast with the gate (the demo).

Not policy rules: no key parses into them and the gate never evaluates them. They are here
so the reports lay out their figures like every rule's (:data:`CONTRAST`).
"""

from __future__ import annotations

from typing import ClassVar

from evaldelta.comparison.model import ALL_CASES, PairComparison
from evaldelta.gating.results import (
    FAIL,
    INCONCLUSIVE,
    PASS,
    Outcome,
    RuleResult,
    bound_sentence,
    judge,
)
from evaldelta.gating.rules._base import FigureStyle, Rule

__all__ = ["CONTRAST", "AggregatePaired", "AggregateWelch", "aggregate_only"]


class AggregateWelch(Rule):
    """The unpaired all-cases interval contains zero or lies above ``-margin``."""

    kind = "aggregate_welch"
    figures: ClassVar[FigureStyle] = "delta"


class AggregatePaired(Rule):
    """The paired all-cases delta judged against ``-margin`` on the interval basis."""

    kind = "aggregate_paired"
    figures: ClassVar[FigureStyle] = "delta"


CONTRAST: tuple[Rule, ...] = (AggregateWelch(), AggregatePaired())


def aggregate_only(pair: PairComparison, margin: float) -> tuple[RuleResult, RuleResult]:
    """The reviewer's aggregate-only checks of seed 004, for contrast with the gate.

    First, "aggregate difference inside the confidence interval": the unpaired (Welch)
    interval on all cases contains zero, or lies above ``-margin`` -> pass, else fail.
    Second, the paired all-cases delta judged against ``-margin`` on the interval basis.
    Neither looks at a slice: a catastrophic 3% slice can pass both.
    """
    out = []
    welch = pair.overall.unpaired
    if welch is None:
        out.append(
            RuleResult(
                "aggregate_welch",
                pair.candidate,
                ALL_CASES,
                INCONCLUSIVE,
                "interval",
                None,
                None,
                -margin,
                None,
                "no unpaired interval on all cases",
            )
        )
    else:
        inside = welch.ci.low <= 0.0 <= welch.ci.high or welch.ci.low >= -margin
        sentence = (
            "the aggregate difference is inside the confidence interval (it contains zero): "
            "'equivalent within noise'"
            if welch.ci.low <= 0.0 <= welch.ci.high
            else "the whole aggregate interval lies above -margin"
            if inside
            else "the aggregate interval excludes zero and reaches below -margin"
        )
        out.append(
            RuleResult(
                "aggregate_welch",
                pair.candidate,
                ALL_CASES,
                PASS if inside else FAIL,
                "interval",
                welch.estimate,
                welch.ci,
                -margin,
                pair.overall.n_pairs or None,
                sentence,
                method=welch.method,
            )
        )
    paired = pair.overall.paired
    outcome: Outcome
    leaning: Outcome | None
    if paired is None:
        outcome, leaning, est, ci, method = INCONCLUSIVE, None, None, None, None
    else:
        outcome, leaning = judge(paired.estimate, paired.ci, -margin, "interval")
        est, ci, method = paired.estimate, paired.ci, paired.method
    out.append(
        RuleResult(
            "aggregate_paired",
            pair.candidate,
            ALL_CASES,
            outcome,
            "interval",
            est,
            ci,
            -margin,
            pair.overall.n_pairs or None,
            bound_sentence(outcome, leaning, "interval", "paired all-cases delta", "-margin"),
            leaning=leaning,
            method=method,
        )
    )
    return out[0], out[1]
