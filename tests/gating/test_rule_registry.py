"""Adding a gate rule is one file and one line (issue 25, item 3).

The toy rule below lives in this test module, the way a new rule kind would live in its own
module under ``gating/rules/``; one line (:func:`evaldelta.gating.rules.register`, or an
entry in ``RULES``) makes the policy parse its key, the verdict evaluate it (its fail
fails the gate) and the gate's text report print its sentence and figures.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

import pytest

from evaldelta import stats
from evaldelta.comparison.model import ALL_CASES
from evaldelta.errors import PolicyError
from evaldelta.gating import FAIL, PASS, evaluate
from evaldelta.gating.policy import PolicyReader, parse_policy
from evaldelta.gating.results import RuleResult
from evaldelta.gating.rules import RULES, PairGate, Rule, register, rule_of
from evaldelta.gating.synthetic import from_deltas
from evaldelta.report.verdict import render_verdict_text


class MinSlices(Rule):
    """Toy: the comparison must have at least N slices (a count against a floor)."""

    kind = "min_slices"  # type: ignore[assignment]  # a toy kind, not one of RuleKind
    key = "min_slices"
    shape: ClassVar[Any] = "value"
    listed = 6
    figures: ClassVar[Any] = "count"

    def parse(self, reader: PolicyReader, value: object, keys: tuple[str, ...]) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise reader.fail(keys, value, "min_slices must be a whole number >= 1")
        return value

    def evaluate(self, gate: PairGate, setting: Any, slice_name: str | None) -> list[RuleResult]:
        have = len(gate.slicing.slices)
        ok = have >= setting
        return [
            gate.rule(
                self.kind,
                ALL_CASES,
                outcome=PASS if ok else FAIL,
                basis="count",
                estimate=float(have),
                ci=None,
                bound=float(setting),
                n=have,
                sentence="enough slices to judge" if ok else "too few slices to judge the mix",
            )
        ]


@pytest.fixture
def toy() -> Iterator[MinSlices]:
    rule = MinSlices()
    register(rule)  # the one line
    yield rule
    RULES.remove(rule)


def _comparison() -> Any:
    deltas = {
        name: stats.paired_means_from_summary(200, 0.05, 0.3, informative=150)
        for name in ("a", "b")
    }
    return from_deltas(deltas)


def test_without_registration_the_key_is_unknown() -> None:
    with pytest.raises(PolicyError, match="unknown key 'min_slices'"):
        parse_policy("min_slices = 3\n", "p.toml")


def test_a_registered_rule_is_parsed_with_its_own_validation(toy: MinSlices) -> None:
    policy = parse_policy("min_slices = 3\n", "p.toml")
    assert policy.settings == {"min_slices": 3}
    assert rule_of("min_slices") is toy
    with pytest.raises(PolicyError, match=r"line 2.*min_slices must be a whole number"):
        parse_policy("basis = 'interval'\nmin_slices = 0\n", "p.toml")
    with pytest.raises(PolicyError, match=r"or min_slices\)"):  # named among the rules
        parse_policy("basis = 'interval'\n", "p.toml")


def test_a_registered_rule_decides_the_verdict_and_shows_in_the_report(toy: MinSlices) -> None:
    policy = parse_policy("min_slices = 3\n[defaults]\nmax_regression = 0.1\n", "p.toml")
    verdict = evaluate(policy, _comparison())
    mine = [r for r in verdict.rules if r.rule == "min_slices"]
    assert [r.outcome for r in mine] == [FAIL]
    assert verdict.outcome == FAIL and verdict.exit_code == 1
    text = render_verdict_text(verdict)
    assert "Fails: cand: min_slices fails on (all cases)." in text
    row = next(line for line in text.splitlines() if "too few slices" in line)
    assert row.split()[:6] == ["FAIL", "min_slices", "cand", "(all", "cases)", "2"]
    assert ">= 3" in row
    # with the floor met, the same rule passes and the gate follows the other rules
    passing = evaluate(parse_policy("min_slices = 2\n", "p.toml"), _comparison())
    assert passing.outcome == PASS and passing.exit_code == 0
