"""What the gate decides: outcomes, one :class:`RuleResult` per rule judged, the :class:`Verdict`.

These are the gate's decision types, the ones the reports render (``report/verdict.py``,
``report/junit.py``) and may import; the gate never imports the reports. The reasoning
behind every rule (why a rule fails only when its whole interval is past the bound, and how
the fail decisions are adjusted) is in :mod:`evaldelta.gating.verdict`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final, Literal

from evaldelta.comparison.model import SlicePlan
from evaldelta.gating._mix_rules import RuleBreakEven
from evaldelta.regression._file import Provenance
from evaldelta.stats import ConfidenceInterval

__all__ = [
    "EXIT_CODES",
    "FAIL",
    "INCONCLUSIVE",
    "PASS",
    "Basis",
    "FailAdjust",
    "OnInconclusive",
    "Outcome",
    "RuleKind",
    "RuleResult",
    "Verdict",
    "bound_sentence",
    "judge",
]

Outcome = Literal["pass", "fail", "inconclusive"]
Basis = Literal["interval", "point"]  # a policy's basis: judged on the interval or the estimate
FailAdjust = Literal["holm", "bonferroni", "none"]
OnInconclusive = Literal["fail", "warn", "pass"]
# every rule kind a RuleResult names: the policy's rules (gating/rules/) and the reviewer's
# aggregate-only contrast of the demo (gating/rules/aggregate.py)
RuleKind = Literal[
    "min_cases",
    "max_regression",
    "min_score",
    "standardized_margin",
    "max_cost_ratio",
    "critical",
    "aggregate_welch",
    "aggregate_paired",
]
# what a rule was judged on: a policy basis, or a count, a ratio, a critical case's attempts
JudgedOn = Literal["interval", "point", "count", "ratio", "attempts"]

PASS: Final = "pass"
FAIL: Final = "fail"
INCONCLUSIVE: Final = "inconclusive"
EXIT_CODES: dict[Outcome, int] = {PASS: 0, FAIL: 1, INCONCLUSIVE: 3}


@dataclass(frozen=True)
class RuleResult:
    """One rule on one slice (or on the whole pair, or on one critical case).

    ``estimate`` and ``ci`` are what was judged, ``bound`` what it was judged against
    (``-margin`` for a regression rule, the bar for ``min_score``, the ratio bound, the case
    count, or the K of a ``K of N`` requirement), ``n`` the cases (or scored attempts for a
    critical case). ``leaning`` says which side an inconclusive point estimate falls on.
    ``sentence`` explains the outcome in words; the renderers add the numbers, laid out as
    the rule's kind says (:func:`evaldelta.gating.rules.rule_of`).
    ``regression`` is the provenance of a critical case that comes from a regression set.
    """

    rule: RuleKind
    candidate: str
    slice: str | None
    outcome: Outcome
    basis: JudgedOn
    estimate: float | None
    ci: ConfidenceInterval | None
    bound: float | None
    n: int | None
    sentence: str
    leaning: Outcome | None = None
    method: str | None = None
    case_id: str | None = None
    p_fail: float | None = None  # one-sided p for "below the bound" (interval rules)
    p_fail_adjusted: float | None = None  # after fail_adjust across the family
    regression: tuple[Provenance, ...] = ()
    mix: str | None = None  # the standardized rule's mix
    # the standardized rule: per slice, the shares of the mix at which its outcome changes
    break_even: tuple[RuleBreakEven, ...] = ()
    # an inconclusive max_regression rule: what sample would settle the slice against its
    # bound (:meth:`evaldelta.gating.rules._base.Rule.settled`)
    plan: SlicePlan | None = None


@dataclass(frozen=True)
class Verdict:
    """The gate's result: every rule's outcome, the combined outcome, decision and exit code."""

    outcome: Outcome
    decision: Outcome
    exit_code: int
    on_inconclusive: OnInconclusive
    basis: Basis
    policy: str
    metric: str
    kind: str
    by: str
    baseline: str
    candidates: tuple[str, ...]
    confidence: float
    rules: tuple[RuleResult, ...]
    fail_adjust: FailAdjust = "holm"
    family: int = 0  # interval-judged rules whose fail decisions were adjusted together

    def count(self, outcome: str) -> int:
        """How many rules had this outcome."""
        return sum(1 for r in self.rules if r.outcome == outcome)


def judge(
    estimate: float, ci: ConfidenceInterval | None, bound: float, basis: str
) -> tuple[Outcome, Outcome | None]:
    """Judge ``estimate`` (with interval ``ci``) against ``bound``: higher is better.

    ``basis="interval"``: pass when ``ci.low >= bound``, fail when ``ci.high < bound``,
    otherwise inconclusive with a leaning (``"fail"`` when the estimate is below the bound).
    ``basis="point"``: pass when ``estimate >= bound``, else fail. Undefined numbers give
    inconclusive. Returns ``(outcome, leaning)``.
    """
    if not math.isfinite(estimate):
        return INCONCLUSIVE, None
    if basis == "point":
        return (PASS if estimate >= bound else FAIL), None
    if ci is None or not (math.isfinite(ci.low) and math.isfinite(ci.high)):
        return INCONCLUSIVE, None
    if ci.low >= bound:
        return PASS, None
    if ci.high < bound:
        return FAIL, None
    return INCONCLUSIVE, (FAIL if estimate < bound else PASS)


def bound_sentence(outcome: str, leaning: str | None, basis: str, what: str, bound: str) -> str:
    """Words for a judged rule: ``what`` is the quantity, ``bound`` the bound's name."""
    if basis == "point":
        side = "at or above" if outcome == PASS else "below"
        if outcome == INCONCLUSIVE:
            return f"the {what} is undefined"
        return f"the point estimate of the {what} is {side} {bound} (point basis: no interval)"
    if outcome == PASS:
        return f"the whole interval of the {what} lies at or above {bound}"
    if outcome == FAIL:
        return f"the whole interval of the {what} lies below {bound}"
    if leaning is None:
        return f"the interval of the {what} is undefined: the data cannot decide"
    lean = (
        "leaning fail: the point estimate is below"
        if leaning == FAIL
        else ("leaning pass: the point estimate is at or above")
    )
    return f"the interval of the {what} straddles {bound}: the data cannot decide ({lean} it)"
