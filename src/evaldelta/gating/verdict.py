"""The gate: a :class:`~evaldelta.gating.policy.Policy` and a Comparison give a Verdict.

Pure: no I/O, no clock; numbers are carried unrounded and formatted only in
``report/verdict.py``. Every rule has three outcomes.

Why a rule fails only when the whole interval is past the bound
---------------------------------------------------------------
A non-inferiority rule ``max_regression = m`` asks whether the candidate's paired delta
``d`` is above ``-m``. With ``basis = "interval"`` (the default) and a two-sided
``(1 - alpha)`` interval ``[low, high]`` on ``d``:

- **pass** when ``low >= -m``: the data rule out a regression larger than the margin;
- **fail** only when ``high < -m``: the data rule out everything but such a regression;
- **inconclusive** otherwise: the interval straddles ``-m``, so the data cannot tell
  (reported as *leaning fail* when the point estimate is below ``-m``).

Under the null (both arms drawn from the same distribution, true ``d = 0 >= -m``), the
gate fails a slice only if the interval's upper bound lies below ``-m <= 0 = d``; for an
interval with nominal coverage that happens with probability at most ``alpha / 2`` (the
upper bound misses the true value from below at most ``alpha / 2`` of the time), and the
larger the margin, the rarer. ``tests/gating/test_gate_null.py`` checks this by simulation for
the paired t, the Wald and the Newcombe intervals. A rule that failed whenever the *point
estimate* lies below ``-m`` would, at ``m = 0``, fail half of all identical releases: that
is ``basis = "point"``, offered for teams that want the plain worst-slice rule of the seed
("no named slice regresses by more than 0.15"), and labelled as such in every verdict.

The same three-way structure applies to ``min_score`` (the candidate's slice rate or mean
and its Wilson or t interval against the bar) and to ``[standardized] margin`` (the
fixed-mix delta and its interval; under ``mix = "chosen"`` once per ``--mix`` mix, each
with the shares at which its outcome would change: :mod:`evaldelta.gating._mix_rules`).
Each rule kind is one module of :mod:`evaldelta.gating.rules`, listed once in its ``RULES``.
``min_cases`` makes a thin slice inconclusive, never a
silent pass. ``max_cost_ratio`` compares the cost ratio with its bound (no interval).
Critical cases pass when every scored attempt of the candidate passes (or ``K of N``); a
single failure fails the gate and names the case.

Error rates for the whole release
---------------------------------
The gate passes only when every rule passes: an intersection-union test, which needs no
adjustment for its pass decision (Berger 1982, "Multiparameter hypothesis testing and
acceptance sampling", Technometrics 24:295-300). Its *fail* decision is a union: it fails
when any rule fails, so with K rules each failing identical releases alpha/2 of the time,
the gate would fail them up to K alpha/2 of the time (9.6% with 5 slices, 33% with 20).
So the fail decisions are adjusted across the family of interval-basis rules of every
slice and candidate, every one evaluated, an inconclusive one included (it enters with
p = 1: it cannot fail): each rule's one-sided p-value for "below its bound", the one its
interval implies (:func:`evaldelta.stats.fail_pvalue`), is adjusted by Holm's step-down
method (Holm 1979, Scand. J. Statistics 6:65-70; ``fail_adjust = "holm"``, the default) or
Bonferroni's, and a rule fails only when its adjusted p-value is at most alpha/2. Identical
releases then fail the gate at most alpha/2 of the time, whatever the number of slices
(``tests/gating/test_gate_null.py`` checks K = 1, 5, 20 and 50). A rule whose interval lies below
its bound but does not survive the adjustment is inconclusive, leaning fail, and says so.

A rule never passes or fails on an interval of zero width, nor (for a delta) on fewer
informative pairs than ``min_informative`` (default 10; pairs whose delta is not zero), nor
on a paired t of pass/fail repeats over fewer than ``stats.MIN_REPEAT_CASES`` (30) cases: it
is inconclusive and says what it rests on.

The verdict's ``outcome`` is fail if any rule fails, else inconclusive if any rule is,
else pass. ``decision`` applies ``on_inconclusive`` (``fail`` / ``pass`` turn an
inconclusive outcome into that decision; ``warn`` keeps it) and ``exit_code`` is 0 for a
pass decision, 1 for fail, 3 for inconclusive.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

from evaldelta import stats
from evaldelta.comparison.model import Comparison, MetricResult, PairComparison, SlicingResult
from evaldelta.errors import PolicyError, UsageError
from evaldelta.gating.policy import Policy
from evaldelta.gating.results import (
    EXIT_CODES,
    FAIL,
    INCONCLUSIVE,
    PASS,
    Outcome,
    RuleResult,
    Verdict,
    judge,
)
from evaldelta.gating.rules import RULES, PairGate, rule_of
from evaldelta.gating.rules.aggregate import aggregate_only

__all__ = [
    "EXIT_CODES",
    "FAIL",
    "INCONCLUSIVE",
    "PASS",
    "RuleResult",
    "Verdict",
    "aggregate_only",
    "evaluate",
    "judge",
]


def evaluate(
    policy: Policy,
    comparison: Comparison,
    *,
    metric: str | None = None,
    by: str | None = None,
    candidates: Sequence[str] | None = None,
) -> Verdict:
    """Apply ``policy`` to ``comparison`` and return the :class:`Verdict`.

    ``metric`` (default: the policy's, else the comparison's first) and ``by`` (default:
    the first slicing) choose what is gated; ``candidates`` limits the pairs (default: all).
    Raises :class:`PolicyError`, located in the policy file, for a slice, metric, mix, cost
    or critical evidence the comparison lacks.
    """
    result = _metric(policy, comparison, metric)
    slicing = _slicing(result, by)
    for name in policy.slices:
        if name not in slicing.slices:
            raise PolicyError(
                f"slice {name!r} is not in the data (slices of {slicing.by!r}: "
                f"{', '.join(slicing.slices)})",
                policy.where("slices", name, value=name),
            )
    pairs = [p for p in slicing.pairs if candidates is None or p.candidate in candidates]
    if candidates is not None:
        for name in candidates:
            if name not in {p.candidate for p in slicing.pairs}:
                raise UsageError(f"candidate {name!r} is not in the comparison")
    rules: list[RuleResult] = []
    anytime = comparison.sequential is not None  # intervals valid at any stopping time
    for pair in pairs:
        gate = PairGate(policy, result, slicing, pair, comparison.confidence, anytime)
        rules.extend(_pair_rules(gate))
    rules, family = _adjust_fails(rules, policy.fail_adjust, 1.0 - comparison.confidence)
    rules = _settled(rules, pairs, comparison.confidence)
    outcome: Outcome = (
        FAIL
        if any(r.outcome == FAIL for r in rules)
        else INCONCLUSIVE
        if any(r.outcome == INCONCLUSIVE for r in rules) or not rules
        else PASS
    )
    decision: Outcome = outcome
    if outcome == INCONCLUSIVE and policy.on_inconclusive != "warn":
        decision = policy.on_inconclusive
    return Verdict(
        outcome=outcome,
        decision=decision,
        exit_code=EXIT_CODES[decision],
        on_inconclusive=policy.on_inconclusive,
        basis=policy.basis,
        policy=policy.path,
        metric=result.metric,
        kind=result.kind,
        by=slicing.by,
        baseline=comparison.baseline,
        candidates=tuple(p.candidate for p in pairs),
        confidence=comparison.confidence,
        rules=tuple(rules),
        fail_adjust=policy.fail_adjust,
        family=family,
    )


def _settled(
    rules: list[RuleResult], pairs: Sequence[PairComparison], confidence: float
) -> list[RuleResult]:
    """Each result with what its final outcome adds (:meth:`Rule.settled`)."""
    by_candidate = {p.candidate: p for p in pairs}
    out = []
    for r in rules:
        rule, pair = rule_of(r.rule), by_candidate.get(r.candidate)
        out.append(rule.settled(r, pair, confidence) if rule and pair else r)
    return out


def _pair_rules(gate: PairGate) -> list[RuleResult]:
    """Every registered rule the policy sets, on one pair: per slice, then the pair's own.

    In the registry's order (:data:`evaldelta.gating.rules.RULES`): the order the verdict
    lists them in before it sorts them by outcome.
    """
    out: list[RuleResult] = []
    policy = gate.policy
    for name in gate.slicing.slices:
        own = policy.rules_for(name)
        for rule in RULES:
            setting = own.get(rule.key) if rule.shape == "slice" else None
            if setting is not None:
                out.extend(rule.evaluate(gate, setting, name))
    for rule in RULES:
        setting = policy.settings.get(rule.key) if rule.shape != "slice" else None
        if setting is not None:
            out.extend(rule.evaluate(gate, setting, None))
    return out


def _adjust_fails(
    rules: list[RuleResult], method: str, alpha: float
) -> tuple[list[RuleResult], int]:
    """Control the family-wise rate of the fail decisions (see the module docstring).

    The family is every interval-basis rule evaluated, whatever its outcome (issue 24, item
    15): a rule that could not be decided (too few informative pairs, a zero-width or
    undefined interval) enters with p = 1, since it cannot fail. Leaving those out shrank
    the family to the decidable, often extreme, slices: identical releases at the margin
    with sparse graded slices failed 0.041 of the time at 50 slices instead of at most
    alpha/2. A p-value of 1 in place of one that could not be relied on keeps Holm's
    guarantee (any valid p-value may be replaced by a larger one). A rule fails when its
    adjusted p-value is at most ``alpha / 2``; one that failed on its own interval but not
    after the adjustment becomes inconclusive, leaning fail.
    """
    judged = {r.kind for r in RULES if r.interval}  # the rules judged on an interval
    family = [i for i, r in enumerate(rules) if r.basis == "interval" and r.rule in judged]
    raw = [
        float(rules[i].p_fail)  # type: ignore[arg-type]
        if rules[i].p_fail is not None and math.isfinite(rules[i].p_fail)  # type: ignore[arg-type]
        else 1.0
        for i in family
    ]
    if method == "holm":
        adjusted = list(stats.holm(raw))
    elif method == "bonferroni":
        adjusted = [min(1.0, p * len(raw)) for p in raw]
    else:
        adjusted = raw
    out = list(rules)
    for i, p_adj in zip(family, adjusted, strict=True):
        rule = out[i]
        if rule.p_fail is None or not math.isfinite(rule.p_fail):
            continue  # counted in the family, never failed: nothing to adjust
        if rule.outcome == FAIL and p_adj > alpha / 2:
            out[i] = dataclasses.replace(
                rule,
                outcome=INCONCLUSIVE,
                leaning=FAIL,
                p_fail_adjusted=p_adj,
                sentence=(
                    f"{rule.sentence} at its own level, but not after {method}'s adjustment "
                    f"across {len(family)} rules (adjusted p {p_adj:.3g} > {alpha / 2:g}): "
                    "leaning fail, the data cannot decide"
                ),
            )
        else:
            out[i] = dataclasses.replace(rule, p_fail_adjusted=p_adj)
    return out, len(family)


def _metric(policy: Policy, comparison: Comparison, metric: str | None) -> MetricResult:
    name = metric or policy.metric or comparison.metrics[0].metric
    for m in comparison.metrics:
        if m.metric == name:
            return m
    have = ", ".join(m.metric for m in comparison.metrics)
    if metric is None and policy.metric is not None:
        raise PolicyError(
            f"metric {name!r} is not in the comparison (metrics: {have})",
            policy.where("metric", value=name),
        )
    raise UsageError(f"metric {name!r} is not in the comparison (metrics: {have})")


def _slicing(result: MetricResult, by: str | None) -> SlicingResult:
    if by is None:
        return result.slicings[0]
    for s in result.slicings:
        if s.by == by:
            return s
    raise UsageError(f"slicing column {by!r} is not in the comparison")
