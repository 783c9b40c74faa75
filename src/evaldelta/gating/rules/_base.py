"""What every gate rule is: a :class:`Rule` class, and :class:`PairGate`, one pair it judges.

A rule owns its policy key (where it sits, :data:`Shape`, and how its value is validated:
:meth:`Rule.parse`), its evaluation on one candidate-baseline pair (:meth:`Rule.evaluate`,
which writes each :class:`~evaldelta.gating.results.RuleResult`'s sentence) and the layout
of its figures in the reports (:attr:`Rule.figures`, a :data:`FigureStyle` the renderers
format without knowing the rule). The registry in :mod:`evaldelta.gating.rules` lists them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from evaldelta import stats
from evaldelta.comparison.model import (
    ArmSlice,
    MetricResult,
    PairComparison,
    SliceDelta,
    SlicingResult,
)
from evaldelta.gating.results import (
    FAIL,
    INCONCLUSIVE,
    PASS,
    RuleKind,
    RuleResult,
    bound_sentence,
    judge,
)

if TYPE_CHECKING:
    from evaldelta.gating.policy import Policy, PolicyReader

__all__ = ["FigureStyle", "MarginOn", "PairGate", "Rule", "Shape"]

# where a rule's key sits in the policy: "slice" at the top level, in [defaults] and in
# [slices.NAME] (one result per slice); "value" a top-level value and "table" a top-level
# table (one or more results per pair)
Shape = Literal["slice", "value", "table"]
# how the reports lay out a rule's estimate, interval, bound and n: a delta (percentage
# points for a pass/fail metric), a level (a rate or mean against a bar), a count against a
# floor, a ratio against a ceiling, a critical case's passed attempts, or plain numbers
FigureStyle = Literal["delta", "level", "count", "ratio", "attempts", "plain"]
# the delta a rule's bound is a margin on, which the reports draw beside it: a slice's delta
# (the forest plot, the plan rows) or a mix's standardized delta (the mix table, the sweeps)
MarginOn = Literal["slice", "mix"]


class Rule:
    """One rule kind. Subclasses set the class attributes and implement the two methods."""

    kind: ClassVar[RuleKind]  # the name every RuleResult of the rule carries
    key: ClassVar[str]  # its policy key (a table's name for shape "table")
    shape: ClassVar[Shape]
    listed: ClassVar[int]  # where its key is listed in the policy's messages (gate.toml order)
    figures: ClassVar[FigureStyle] = "plain"
    interval: ClassVar[bool] = False  # its fail decisions join the family-wise adjustment
    margin_on: ClassVar[MarginOn | None] = None

    @classmethod
    def mention(cls) -> str:
        """The key as a message names it: ``max_regression``, ``[standardized]``."""
        return f"[{cls.key}]" if cls.shape == "table" else cls.key

    def parse(self, reader: PolicyReader, value: object, keys: tuple[str, ...]) -> Any:
        """The validated setting of the key (``value`` as read, at ``keys``)."""
        raise NotImplementedError

    def evaluate(self, gate: PairGate, setting: Any, slice_name: str | None) -> list[RuleResult]:
        """The rule's results on one pair (``slice_name`` for a slice rule, else None)."""
        raise NotImplementedError

    def settled(self, result: RuleResult, pair: PairComparison, confidence: float) -> RuleResult:
        """The result with what its final outcome adds (after the family-wise adjustment)."""
        return result


@dataclass(frozen=True)
class PairGate:
    """One candidate-baseline pair as the rules see it, with the helpers they share."""

    policy: Policy
    result: MetricResult
    slicing: SlicingResult
    pair: PairComparison
    confidence: float = 0.95  # the comparison's, for the standardized rule's break-even
    sequential: bool = False  # the comparison's intervals are confidence sequences

    def delta(self, slice_name: str) -> SliceDelta | None:
        """The pair's delta on one slice."""
        return next((d for d in self.pair.slices if d.slice == slice_name), None)

    def arm(self, slice_name: str) -> ArmSlice | None:
        """The candidate's side of one slice."""
        cand = self.pair.candidate
        return next((a for a in self.slicing.arms if a.arm == cand and a.slice == slice_name), None)

    def rule(self, rule: RuleKind, slice_name: str | None, **fields: Any) -> RuleResult:
        """A result of this pair's candidate."""
        return RuleResult(rule=rule, candidate=self.pair.candidate, slice=slice_name, **fields)

    def judged(
        self, result: Any, bound: float, informative: int | None, what: str, bound_name: str
    ) -> dict[str, Any]:
        """Outcome, leaning, sentence and one-sided p of an estimate judged against a bound.

        On the interval basis a zero-width interval, or (for a delta) fewer informative pairs
        than ``min_informative``, makes the rule inconclusive whatever its interval says.
        """
        basis = self.policy.basis
        outcome, leaning = judge(result.estimate, result.ci, bound, basis)
        sentence = bound_sentence(outcome, leaning, basis, what, bound_name)
        if basis != "interval" or not math.isfinite(result.estimate):
            return {"outcome": outcome, "leaning": leaning, "sentence": sentence}
        lean = FAIL if result.estimate < bound else PASS
        ci = result.ci
        if ci is not None and math.isfinite(ci.low) and ci.high - ci.low <= 0.0:
            return {
                "outcome": INCONCLUSIVE,
                "leaning": lean,
                "sentence": f"the interval of the {what} has zero width: it rests on no "
                "variation, so the data cannot decide",
            }
        if getattr(result, "drift", False):
            return {
                "outcome": INCONCLUSIVE,
                "leaning": lean,
                "sentence": f"the confidence sequence of the {what} excludes its own running "
                "mean: the outcomes drift along the order, so the cases did not arrive in "
                "random order and the sequence does not hold; the data cannot decide",
            }
        need = self.policy.min_informative
        if informative is not None and informative < need:
            return {
                "outcome": INCONCLUSIVE,
                "leaning": lean,
                "sentence": f"the {what} rests on {informative} informative pairs (pairs whose "
                f"scores differ), fewer than min_informative = {need}: the data cannot decide",
            }
        if hasattr(result, "fail_pvalue"):  # a confidence sequence: valid at any n of cases
            return {
                "outcome": outcome,
                "leaning": leaning,
                "sentence": f"{sentence} (anytime-valid)",
                "p_fail": stats.fail_pvalue(result, bound),
            }
        cases = getattr(result, "n", None)
        if (
            informative is not None
            and self.result.kind == "binary"
            and self.result.repeated
            and isinstance(result, stats.PairedResult)
            and cases is not None
            and cases < stats.MIN_REPEAT_CASES
        ):
            return {
                "outcome": INCONCLUSIVE,
                "leaning": lean,
                "sentence": f"the {what} of pass/fail repeats rests on {cases} cases, fewer "
                f"than {stats.MIN_REPEAT_CASES}: its interval's coverage is not assured there "
                "(docs/calibration.md), so the data cannot decide",
            }
        p_fail = stats.fail_pvalue(result, bound)
        return {"outcome": outcome, "leaning": leaning, "sentence": sentence, "p_fail": p_fail}
