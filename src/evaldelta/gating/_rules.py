"""The gate's rules: outcomes, :class:`RuleResult`, :class:`Verdict`, and one pair's rules.

The reasoning behind every rule (why a rule fails only when its whole interval is past the
bound, and how the fail decisions are adjusted) is in :mod:`evaldelta.gating.verdict`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from evaldelta import stats
from evaldelta.errors import PolicyError
from evaldelta.gating._mix_rules import RuleBreakEven, rule_break_even, standardized_for
from evaldelta.gating.policy import CriticalRule, Policy, StandardizedRule
from evaldelta.model import (
    ALL_CASES,
    ArmSlice,
    CriticalCase,
    MetricResult,
    PairComparison,
    SliceDelta,
    SlicingResult,
    Standardized,
)
from evaldelta.regression._file import Provenance
from evaldelta.stats import ConfidenceInterval

__all__ = [
    "EXIT_CODES",
    "FAIL",
    "INCONCLUSIVE",
    "NOT_RUN",
    "PASS",
    "RuleResult",
    "Verdict",
    "aggregate_only",
    "judge",
]

PASS, FAIL, INCONCLUSIVE = "pass", "fail", "inconclusive"
EXIT_CODES = {PASS: 0, FAIL: 1, INCONCLUSIVE: 3}
NOT_RUN = "was not run by arm"  # the words of a regression case the candidate has no row for


@dataclass(frozen=True)
class RuleResult:
    """One rule on one slice (or on the whole pair, or on one critical case).

    ``estimate`` and ``ci`` are what was judged, ``bound`` what it was judged against
    (``-margin`` for a regression rule, the bar for ``min_score``, the ratio bound, the case
    count, or the K of a ``K of N`` requirement), ``n`` the cases (or scored attempts for a
    critical case). ``leaning`` says which side an inconclusive point estimate falls on.
    ``sentence`` explains the outcome in words; the renderers add the numbers.
    ``regression`` is the provenance of a critical case that comes from a regression set.
    """

    rule: str
    candidate: str
    slice: str | None
    outcome: str
    basis: str
    estimate: float | None
    ci: ConfidenceInterval | None
    bound: float | None
    n: int | None
    sentence: str
    leaning: str | None = None
    method: str | None = None
    case_id: str | None = None
    p_fail: float | None = None  # one-sided p for "below the bound" (interval rules)
    p_fail_adjusted: float | None = None  # after fail_adjust across the family
    regression: tuple[Provenance, ...] = ()
    mix: str | None = None  # the standardized rule's mix
    # the standardized rule: per slice, the shares of the mix at which its outcome changes
    break_even: tuple[RuleBreakEven, ...] = ()


@dataclass(frozen=True)
class Verdict:
    """The gate's result: every rule's outcome, the combined outcome, decision and exit code."""

    outcome: str
    decision: str
    exit_code: int
    on_inconclusive: str
    basis: str
    policy: str
    metric: str
    kind: str
    by: str
    baseline: str
    candidates: tuple[str, ...]
    confidence: float
    rules: tuple[RuleResult, ...]
    fail_adjust: str = "holm"
    family: int = 0  # interval-judged rules whose fail decisions were adjusted together

    def count(self, outcome: str) -> int:
        """How many rules had this outcome."""
        return sum(1 for r in self.rules if r.outcome == outcome)


def judge(
    estimate: float, ci: ConfidenceInterval | None, bound: float, basis: str
) -> tuple[str, str | None]:
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


def _bound_sentence(outcome: str, leaning: str | None, basis: str, what: str, bound: str) -> str:
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


@dataclass(frozen=True)
class _PairGate:
    policy: Policy
    result: MetricResult
    slicing: SlicingResult
    pair: PairComparison
    confidence: float = 0.95  # the comparison's, for the standardized rule's break-even

    def rules(self) -> list[RuleResult]:
        out: list[RuleResult] = []
        deltas = {d.slice: d for d in self.pair.slices}
        arms = {a.slice: a for a in self.slicing.arms if a.arm == self.pair.candidate}
        for name in self.slicing.slices:
            rules = self.policy.rules_for(name)
            delta = deltas.get(name)
            if rules.min_cases is not None:
                out.append(self._min_cases(name, rules.min_cases, delta, arms.get(name)))
            if rules.max_regression is not None:
                out.append(self._regression(name, rules.max_regression, delta))
            if rules.min_score is not None:
                out.append(self._min_score(name, rules.min_score, arms.get(name)))
        if self.policy.standardized is not None:
            out.extend(self._standardized(self.policy.standardized))
        if self.policy.max_cost_ratio is not None:
            out.append(self._cost(self.policy.max_cost_ratio))
        if self.policy.critical is not None:
            out.extend(self._critical(self.policy.critical))
        return out

    def _rule(self, rule: str, slice_name: str | None, **fields: object) -> RuleResult:
        return RuleResult(rule=rule, candidate=self.pair.candidate, slice=slice_name, **fields)  # type: ignore[arg-type]

    def _judged(
        self, result: Any, bound: float, informative: int | None, what: str, bound_name: str
    ) -> dict[str, Any]:
        """Outcome, leaning, sentence and one-sided p of an estimate judged against a bound.

        On the interval basis a zero-width interval, or (for a delta) fewer informative pairs
        than ``min_informative``, makes the rule inconclusive whatever its interval says.
        """
        basis = self.policy.basis
        outcome, leaning = judge(result.estimate, result.ci, bound, basis)
        sentence = _bound_sentence(outcome, leaning, basis, what, bound_name)
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
        need = self.policy.min_informative
        if informative is not None and informative < need:
            return {
                "outcome": INCONCLUSIVE,
                "leaning": lean,
                "sentence": f"the {what} rests on {informative} informative pairs (pairs whose "
                f"scores differ), fewer than min_informative = {need}: the data cannot decide",
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

    def _min_cases(
        self, name: str, need: int, delta: SliceDelta | None, arm: ArmSlice | None
    ) -> RuleResult:
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
        return self._rule(
            "min_cases",
            name,
            outcome=PASS if ok else INCONCLUSIVE,
            basis="count",
            estimate=float(n),
            ci=None,
            bound=float(need),
            n=n,
            sentence=sentence,
        )

    def _regression(self, name: str, margin: float, delta: SliceDelta | None) -> RuleResult:
        res = delta.main if delta is not None else None
        if delta is None or res is None:
            return self._rule(
                "max_regression",
                name,
                outcome=INCONCLUSIVE,
                basis=self.policy.basis,
                estimate=None,
                ci=None,
                bound=-margin,
                n=0,
                sentence="no case of the slice was scored in both arms: no delta to judge",
            )
        what = "paired delta" if delta.basis == "paired" else "unpaired delta (no shared cases)"
        informative = delta.informative if delta.basis == "paired" else None
        return self._rule(
            "max_regression",
            name,
            basis=self.policy.basis,
            estimate=res.estimate,
            ci=res.ci,
            bound=-margin,
            n=delta.n_pairs or None,
            method=res.method,
            **self._judged(res, -margin, informative, what, "-margin"),
        )

    def _min_score(self, name: str, bar: float, arm: ArmSlice | None) -> RuleResult:
        noun = "rate" if self.result.kind == "binary" and not self.result.repeated else "mean"
        if arm is None or arm.scored_cases == 0:
            return self._rule(
                "min_score",
                name,
                outcome=INCONCLUSIVE,
                basis=self.policy.basis,
                estimate=None,
                ci=None,
                bound=bar,
                n=0,
                sentence="the candidate has no scored case in the slice",
            )
        est = arm.estimate
        return self._rule(
            "min_score",
            name,
            basis=self.policy.basis,
            estimate=est.estimate,
            ci=est.ci,
            bound=bar,
            n=arm.scored_cases,
            method=est.method,
            **self._judged(est, bar, None, f"candidate's {noun}", "the bar"),
        )

    def _standardized(self, rule: StandardizedRule) -> list[RuleResult]:
        """One rule per mix judged: every --mix mix for ``chosen`` (see ``_mix_rules``)."""
        found = standardized_for(self.pair, rule.mix)
        if not found:
            have = ", ".join(s.mix for s in self.pair.standardized)
            hint = " (give --traffic for the traffic mix)" if rule.mix == "traffic" else ""
            raise PolicyError(
                f"the comparison has no standardized result under mix {rule.mix!r}{hint}; "
                f"it has: {have}",
                self.policy.where("standardized", "mix", value=rule.mix),
            )
        return [self._standardized_one(rule, std) for std in found]

    def _standardized_one(self, rule: StandardizedRule, std: Standardized) -> RuleResult:
        informative = self.pair.overall.informative if std.delta_basis == "paired" else None
        # under the pairs' own mix the standardized delta is the all-cases paired delta: judge
        # it by that result, so its one-sided p is the one its (score) interval implies
        judged_on: Any = std.delta
        if std.same_as_overall and self.pair.overall.main is not None:
            judged_on = self.pair.overall.main
        judged = self._judged(
            judged_on, -rule.margin, informative, f"fixed-mix delta ({std.mix} mix)", "-margin"
        )
        if std.dropped_slices:
            judged["sentence"] += (
                f"; slices without evidence were dropped: {', '.join(std.dropped_slices)}"
            )
        decided = self.policy.basis == "point" or "p_fail" in judged  # judged on its numbers
        shares = rule_break_even(std, -rule.margin, self.policy.basis, self.confidence, judge)
        return self._rule(
            "standardized_margin",
            ALL_CASES,
            basis=self.policy.basis,
            estimate=std.delta.estimate,
            ci=std.delta.ci,
            bound=-rule.margin,
            n=self.pair.shared_cases or None,
            method=f"{std.delta.method}, {std.mix} mix",
            mix=std.mix,
            break_even=shares if decided else (),
            **judged,
        )

    def _cost(self, limit: float) -> RuleResult:
        cost = self.pair.cost
        if cost is None:
            raise PolicyError(
                "the data has no cost_usd column, so the cost ratio cannot be judged",
                self.policy.where("max_cost_ratio", value=limit),
            )
        if not math.isfinite(cost.ratio):
            outcome, sentence = INCONCLUSIVE, "the baseline's cost is zero: the ratio is undefined"
        elif cost.ratio <= limit:
            outcome, sentence = PASS, "candidate cost over baseline cost is within the bound"
        else:
            outcome, sentence = FAIL, "candidate cost over baseline cost exceeds the bound"
        return self._rule(
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

    def _critical(self, rule: CriticalRule) -> list[RuleResult]:
        evidence = self.pair.critical
        if evidence is None:
            raise PolicyError(
                "the comparison carries no critical-case evidence; compare with the policy's "
                "critical selector (evaldelta gate and compare --policy do)",
                self.policy.where("critical"),
            )
        missing = _not_run(rule, {c.case_id for c in evidence.cases})
        if not evidence.cases and not missing:
            return [
                self._rule(
                    "critical",
                    None,
                    outcome=PASS,
                    basis="attempts",
                    estimate=None,
                    ci=None,
                    bound=None,
                    n=0,
                    sentence=f"no case is selected as critical "
                    f"({evidence.selector}), so there is nothing to require",
                )
            ]
        out = [self._critical_case(rule, case) for case in evidence.cases]
        return out + [self._not_run(case_id, refs) for case_id, refs in missing.items()]

    def _not_run(self, case_id: str, refs: tuple[Provenance, ...]) -> RuleResult:
        """A regression case with no row in either compared arm: reported, not passed."""
        ids = ", ".join(r.id for r in refs)
        return self._rule(
            "critical",
            refs[0].slice,
            outcome=INCONCLUSIVE,
            basis="attempts",
            estimate=None,
            ci=None,
            bound=None,
            n=0,
            sentence=f"regression case {ids} {NOT_RUN} {self.pair.candidate} (nor by "
            f"{self.pair.baseline}): it cannot count as passed",
            case_id=case_id,
            regression=refs,
        )

    def _critical_case(self, rule: CriticalRule, case: CriticalCase) -> RuleResult:
        refs = tuple(r for r in rule.regression if r.case_id == case.case_id)
        passes, scored = case.candidate_passes, case.candidate_scored
        failures = scored - passes
        unscored = case.candidate_attempts - scored
        if rule.require_k is None or rule.require_n is None:
            need = "every attempt must pass"
            if failures > 0:
                outcome = FAIL
                sentence = f"critical case failed in the candidate ({need})"
            elif scored == 0:
                outcome, sentence = INCONCLUSIVE, "the candidate has no scored attempt on it"
            elif unscored > 0:
                outcome = INCONCLUSIVE
                sentence = "some of the candidate's attempts are unlabeled: cannot confirm all"
            else:
                outcome, sentence = PASS, "every attempt of the candidate passed"
            bound = None
        else:
            k, n = rule.require_k, rule.require_n
            if failures > n - k:
                outcome = FAIL
                sentence = f"critical case failed more often than {rule.require} allows"
            elif passes >= k:
                outcome, sentence = PASS, f"at least {k} attempts passed ({rule.require})"
            else:
                outcome = INCONCLUSIVE
                sentence = f"too few scored attempts to reach {rule.require}"
            bound = float(k)
        if refs and case.candidate_attempts == 0:
            sentence = (
                f"regression case {', '.join(r.id for r in refs)} {NOT_RUN} "
                f"{self.pair.candidate}: it cannot count as passed"
            )
        return self._rule(
            "critical",
            case.slice,
            outcome=outcome,
            basis="attempts",
            estimate=float(passes),
            ci=None,
            bound=bound,
            n=scored,
            sentence=sentence,
            case_id=case.case_id,
            regression=refs,
        )


def _not_run(rule: CriticalRule, present: set[str]) -> dict[str, tuple[Provenance, ...]]:
    """The regression cases no compared arm has a row for, by case id, in set order."""
    out: dict[str, list[Provenance]] = {}
    for ref in rule.regression:
        if ref.case_id not in present:
            out.setdefault(ref.case_id, []).append(ref)
    return {case_id: tuple(refs) for case_id, refs in out.items()}


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
            _bound_sentence(outcome, leaning, "interval", "paired all-cases delta", "-margin"),
            leaning=leaning,
            method=method,
        )
    )
    return out[0], out[1]
