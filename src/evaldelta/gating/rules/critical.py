"""``[critical]``: cases that must pass in the candidate, whatever their weight.

The cases are named by id, a flag column or a tag, and every case of a regression set
(``regression_set`` here, or ``gate --regression-set``: :mod:`evaldelta.gating._regression`)
joins them. A regression case no compared arm has a row for is reported as not run and
counted inconclusive, as a critical case without a scored attempt is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from evaldelta.comparison.model import CriticalCase
from evaldelta.errors import PolicyError
from evaldelta.gating.results import FAIL, INCONCLUSIVE, PASS, RuleResult
from evaldelta.gating.rules._base import FigureStyle, PairGate, Rule, Shape
from evaldelta.regression._file import Provenance

if TYPE_CHECKING:
    from evaldelta.gating.policy import PolicyReader

__all__ = ["NOT_RUN", "Critical", "CriticalRule"]

KEYS = ("cases", "column", "tag", "require", "pass_threshold", "regression_set")
NOT_RUN = "was not run by arm"  # the words of a regression case the candidate has no row for


@dataclass(frozen=True)
class CriticalRule:
    """Cases that must pass in the candidate: ids and/or a flag column and/or a tag.

    ``require_k`` of ``require_n`` attempts must pass; both None means every scored attempt.
    ``pass_threshold`` None means the default (score >= 1, for a binary metric).
    ``regression`` holds the cases of the regression sets named in ``regression_sets``
    (``[critical] regression_set``, ``gate --regression-set``), with their provenance.
    """

    cases: tuple[str, ...] = ()
    column: str | None = None
    tag: str | None = None
    require_k: int | None = None
    require_n: int | None = None
    pass_threshold: float | None = None
    regression: tuple[Provenance, ...] = ()
    regression_sets: tuple[str, ...] = ()

    @property
    def require(self) -> str:
        """``all`` or ``K of N``, as written in the policy."""
        if self.require_k is None:
            return "all"
        return f"{self.require_k} of {self.require_n}"


class Critical(Rule):
    """Every scored attempt of a critical case passes (or ``K of N``); one failure fails."""

    kind = "critical"
    key = "critical"
    shape: ClassVar[Shape] = "table"
    listed = 4
    figures: ClassVar[FigureStyle] = "attempts"

    def parse(self, reader: PolicyReader, value: object, keys: tuple[str, ...]) -> CriticalRule:
        """The validated setting of the key (see the module docstring)."""
        table = reader.table(value, keys)
        reader.known(table, KEYS, keys)
        cases: tuple[str, ...] = ()
        if "cases" in table:
            ids = table["cases"]
            if not isinstance(ids, list) or not all(isinstance(c, str) and c for c in ids):
                raise reader.fail(
                    (*keys, "cases"), ids, "cases must be a list of case ids (strings)"
                )
            cases = tuple(dict.fromkeys(ids))
        column = reader.string(table["column"], (*keys, "column")) if "column" in table else None
        tag = reader.string(table["tag"], (*keys, "tag")) if "tag" in table else None
        regression: tuple[Provenance, ...] = ()
        sets: tuple[str, ...] = ()
        if "regression_set" in table:
            where = (*keys, "regression_set")
            named = reader.string(table["regression_set"], where)
            path = Path(reader.path).parent / named
            if not path.is_file():
                raise reader.fail(where, named, f"the regression set {str(path)!r} does not exist")
            from evaldelta.regression._file import load_set

            regression = tuple(c.provenance() for c in load_set(path).cases)
            sets = (str(path),)
        if not cases and column is None and tag is None and not sets:
            raise reader.fail(
                keys, None, "[critical] needs cases, column or tag (or a regression_set)"
            )
        k = n = None
        if "require" in table:
            k, n = _require(reader, table["require"], (*keys, "require"))
        threshold = (
            reader.number(table["pass_threshold"], (*keys, "pass_threshold"))
            if "pass_threshold" in table
            else None
        )
        return CriticalRule(cases, column, tag, k, n, threshold, regression, sets)

    def evaluate(self, gate: PairGate, setting: Any, slice_name: str | None) -> list[RuleResult]:
        """The rule's results on one pair."""
        rule: CriticalRule = setting
        evidence = gate.pair.critical
        if evidence is None:
            raise PolicyError(
                "the comparison carries no critical-case evidence; compare with the policy's "
                "critical selector (evaldelta gate and compare --policy do)",
                gate.policy.where("critical"),
            )
        missing = _missing(rule, {c.case_id for c in evidence.cases})
        if not evidence.cases and not missing:
            return [
                gate.rule(
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
        out = [_case(gate, rule, case) for case in evidence.cases]
        return out + [_not_run(gate, case_id, refs) for case_id, refs in missing.items()]


def _require(
    reader: PolicyReader, value: object, keys: tuple[str, ...]
) -> tuple[int | None, int | None]:
    if value == "all":
        return None, None
    found = re.fullmatch(r"\s*(\d+)\s+of\s+(\d+)\s*", value) if isinstance(value, str) else None
    if found is None:
        raise reader.fail(keys, value, "require must be 'all' or 'K of N' (e.g. '2 of 3')")
    k, n = int(found.group(1)), int(found.group(2))
    if not 1 <= k <= n:
        raise reader.fail(keys, value, "require 'K of N' needs 1 <= K <= N")
    return k, n


def _not_run(gate: PairGate, case_id: str, refs: tuple[Provenance, ...]) -> RuleResult:
    """A regression case with no row in either compared arm: reported, not passed."""
    ids = ", ".join(r.id for r in refs)
    return gate.rule(
        "critical",
        refs[0].slice,
        outcome=INCONCLUSIVE,
        basis="attempts",
        estimate=None,
        ci=None,
        bound=None,
        n=0,
        sentence=f"regression case {ids} {NOT_RUN} {gate.pair.candidate} (nor by "
        f"{gate.pair.baseline}): it cannot count as passed",
        case_id=case_id,
        regression=refs,
    )


def _case(gate: PairGate, rule: CriticalRule, case: CriticalCase) -> RuleResult:
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
            f"{gate.pair.candidate}: it cannot count as passed"
        )
    return gate.rule(
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


def _missing(rule: CriticalRule, present: set[str]) -> dict[str, tuple[Provenance, ...]]:
    """The regression cases no compared arm has a row for, by case id, in set order."""
    out: dict[str, list[Provenance]] = {}
    for ref in rule.regression:
        if ref.case_id not in present:
            out.setdefault(ref.case_id, []).append(ref)
    return {case_id: tuple(refs) for case_id, refs in out.items()}
