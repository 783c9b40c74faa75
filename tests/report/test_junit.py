"""``--format junit``: the verdict as JUnit XML, valid for Jenkins and GitLab.

Every document is validated against the JUnit schema Jenkins' JUnit plugin reads
(``tests/fixtures/junit/jenkins-junit.xsd``, copied from junit-team/junit5 at commit
58dd10f78cc02a30b0022a0484677afe28404a16, path
``platform-tests/src/test/resources/jenkins-junit.xsd``; see ``SOURCE.md`` beside it) with
``xmlschema``, and read back with ``junitparser``, the reader many CI tools use.
"""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import pytest
import xmlschema
from junitparser import Failure, JUnitXml, Skipped

from tests.conftest import ROOT, one_line_error
from tests.rows import csv_text, paired

XSD = ROOT / "tests" / "fixtures" / "junit" / "jenkins-junit.xsd"

# stable: identical arms, 200 pairs; broken: the candidate loses half of 200 cases;
# thin: 10 pairs, one loss (inconclusive under min_cases = 30).
STABLE = [(1, 1)] * 145 + [(0, 0)] * 45 + [(1, 0)] * 5 + [(0, 1)] * 5
BROKEN = [(1, 1)] * 100 + [(1, 0)] * 100
THIN = [(1, 1)] * 9 + [(1, 0)]


def _slice(
    name: str, pairs: list[tuple[int, int]], arms: tuple[str, ...]
) -> list[dict[str, object]]:
    cost = {arm: {"cost_usd": 1.0 if n == 0 else 1.2} for n, arm in enumerate(arms)}
    return paired(pairs, arms=arms, slice=name, case="{slice}-{i}", extra=cost)


@pytest.fixture(scope="module")
def schema() -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(XSD)


@pytest.fixture
def runs(write):  # type: ignore[no-untyped-def]
    arms = ("base", "cand<&>", "v2.1")  # names that XML must escape, and a dotted one
    rows = []
    for name, pairs in (("stable", STABLE), ("broken", BROKEN), ("thin", THIN)):
        rows += _slice(name, pairs, arms)
    return write("runs.csv", csv_text(rows))


POLICY = "max_regression = 0.1\nmin_cases = 30\n"


def _suites(text: str) -> dict[str, object]:
    xml = JUnitXml.fromstring(text)
    return {suite.name: suite for suite in xml}


def test_gate_junit_validates_and_reads_back(run_cli, write, runs, schema, tmp_path):
    policy = write("gate.toml", POLICY)
    out = tmp_path / "verdict.junit.xml"
    result = run_cli(
        "gate", runs, "--policy", policy, "--baseline", "base", "--format", "junit", "-o", out
    )
    assert result.code == 1, result.err  # broken fails
    text = out.read_text()
    schema.validate(text)  # raises on any deviation from Jenkins' schema
    suites = _suites(text)
    assert set(suites) == {"evaldelta gate: cand<&> vs base", "evaldelta gate: v2.1 vs base"}
    suite = suites["evaldelta gate: cand<&> vs base"]
    props = {p.name: p.value for p in suite.properties()}  # type: ignore[attr-defined]
    assert props["evaldelta.baseline"] == "base"
    assert props["evaldelta.candidate"] == "cand<&>"
    assert props["evaldelta.policy_sha256"] == hashlib.sha256(policy.read_bytes()).hexdigest()
    assert props["evaldelta.decision"] == "fail"
    cases = {case.name: case for case in suite}  # type: ignore[attr-defined]
    # one case per rule and slice, grouped by the rule in the class name
    assert {"max_regression[broken]", "max_regression[stable]", "max_regression[thin]"} <= set(
        cases
    )
    assert {c.classname for c in cases.values()} >= {"evaldelta.max_regression"}
    broken = cases["max_regression[broken]"]
    (failure,) = broken.result
    assert isinstance(failure, Failure)
    assert failure.type == "max_regression"
    assert "whole interval" in failure.message
    assert "estimate -50.0 pts" in failure.text and "interval [" in failure.text
    thin = cases["min_cases[thin]"]
    (skipped,) = thin.result
    assert isinstance(skipped, Skipped)
    assert skipped.text.startswith("inconclusive: ")
    assert cases["max_regression[stable]"].is_passed
    assert suite.errors == 0  # type: ignore[attr-defined]
    assert suite.failures == sum(  # type: ignore[attr-defined]
        1 for c in cases.values() if any(isinstance(r, Failure) for r in c.result)
    )
    assert suite.skipped == sum(  # type: ignore[attr-defined]
        1 for c in cases.values() if any(isinstance(r, Skipped) for r in c.result)
    )
    assert "<error" not in text


def test_on_inconclusive_fail_makes_the_inconclusive_rule_a_failure(run_cli, write, schema):
    runs = write("thin.csv", csv_text(_slice("thin", THIN, ("base", "cand"))))
    policy = write("gate.toml", 'min_cases = 30\non_inconclusive = "fail"\n')
    result = run_cli("gate", runs, "--policy", policy, "--baseline", "base", "--format", "junit")
    assert result.code == 1
    schema.validate(result.out)
    (suite,) = _suites(result.out).values()
    failures = [r for case in suite for r in case.result]  # type: ignore[attr-defined]
    assert failures and all(isinstance(r, Failure) for r in failures)
    assert {r.type for r in failures} == {"inconclusive"}


def test_a_pass_is_a_suite_without_failures(run_cli, write, runs, schema):
    policy = write("gate.toml", "max_regression = 2.0\n")
    result = run_cli(
        "gate", runs, "--policy", policy, "--baseline", "base", "--candidate", "v2.1",
        "--format", "junit",
    )  # fmt: skip
    schema.validate(result.out)
    xml = JUnitXml.fromstring(result.out)
    assert [suite.name for suite in xml] == ["evaldelta gate: v2.1 vs base"]
    assert xml.failures == 0
    result = run_cli(
        "gate", runs, "--policy", write("p.toml", "[slices.stable]\nmax_regression = 0.1\n"),
        "--baseline", "base", "--format", "junit",
    )  # fmt: skip
    assert result.code == 0, result.err
    schema.validate(result.out)
    xml = JUnitXml.fromstring(result.out)
    assert xml.failures == 0 and xml.errors == 0
    assert all(case.is_passed for suite in xml for case in suite)  # type: ignore[attr-defined]


def test_compare_policy_junit_equals_gate_junit(run_cli, write, runs, schema):
    policy = write("gate.toml", POLICY)
    gate = run_cli("gate", runs, "--policy", policy, "--baseline", "base", "--format", "junit")
    compare = run_cli(
        "compare", runs, "--policy", policy, "--baseline", "base", "--format", "junit"
    )
    assert compare.code == gate.code == 1
    schema.validate(compare.out)
    assert compare.out == gate.out


def test_junit_without_a_policy_is_a_one_line_error(run_cli, runs):
    result = run_cli("compare", runs, "--baseline", "base", "--format", "junit")
    one_line_error(result, "--policy")


def test_pins_become_properties_and_control_characters_are_dropped(schema):
    from evaldelta import stats
    from evaldelta.gating import evaluate
    from evaldelta.gating.policy import parse_policy
    from evaldelta.report.junit import render_verdict_junit, xml_text

    from ..gating.test_gate_null import make_comparison

    paired = stats.paired_proportions(150, 5, 5, 40, confidence=0.95, interval="newcombe")
    comparison = make_comparison({"all": paired}, kind="binary")
    comparison = dataclasses.replace(
        comparison,
        pins={
            comparison.baseline: {"model": "m-1", "temperature": 0.0},
            comparison.candidates[0]: {"model": "m-2\x1b[31m", "seed": None},
        },
    )
    verdict = evaluate(parse_policy("max_regression = 0.1\n"), comparison)
    text = render_verdict_junit(verdict, comparison, policy_sha256="ab" * 32)
    schema.validate(text)
    props = {p.name: p.value for s in JUnitXml.fromstring(text) for p in s.properties()}  # type: ignore[attr-defined]
    assert props[f"pins.{comparison.baseline}.temperature"] == "0.0"
    assert props[f"pins.{comparison.candidates[0]}.model"] == "m-2[31m"
    assert props[f"pins.{comparison.candidates[0]}.seed"] == "null"
    assert xml_text("a\x00b\x1fc\ud800d\tе") == "abcd\tе"


def test_the_schema_rejects_what_we_never_write(schema):
    # the schema is real: a <skipped message="..."> (what some writers emit) is invalid here
    bad = (
        '<testsuites><testsuite name="s" tests="1"><testcase name="c">'
        '<skipped message="why"/></testcase></testsuite></testsuites>'
    )
    assert not schema.is_valid(bad)


def test_xsd_is_the_recorded_copy():
    text = XSD.read_text()
    assert "junit-4.xsd" in text and "Thales" in text
    assert "58dd10f78cc02a30b0022a0484677afe28404a16" in (XSD.parent / "SOURCE.md").read_text()
    assert Path(XSD).stat().st_size > 5000
