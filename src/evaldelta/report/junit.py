"""A gate :class:`~evaldelta.gating.Verdict` as JUnit XML, for every CI dashboard.

GitLab, Jenkins, Buildkite and Azure DevOps all show test results from JUnit XML; a verdict
is a natural test report. The shape, validated in the tests against the schema Jenkins' JUnit
plugin reads (``tests/fixtures/junit/jenkins-junit.xsd``, with its source in ``SOURCE.md``):

- one ``<testsuite>`` per candidate, named ``evaldelta gate: CANDIDATE vs BASELINE``, whose
  ``<properties>`` carry the baseline, the candidate, the policy file and its sha256, the
  metric, the slicing column, the decision, the basis and the pins of both arms
  (``pins.ARM.KEY``);
- one ``<testcase>`` per rule and slice (or critical case), ``classname="evaldelta.RULE"``
  and ``name="RULE[SLICE]"``, so a dashboard groups the slices of one rule together;
- a failing rule is a ``<failure type=RULE message=SENTENCE>`` whose text holds the
  figures (estimate, interval, bound, n, adjusted p); an inconclusive one is ``<skipped>``
  whose text is the reason (the schema allows ``<skipped>`` no attributes), except when the
  policy's ``on_inconclusive = "fail"`` makes inconclusive fail the gate: then it is a
  ``<failure type="inconclusive">``, so the dashboard agrees with the exit code;
- ``<error>`` is never used for a verdict: a gate that could not decide (bad input) writes
  no report and exits 2;
- every test case's ``<system-out>`` holds its figures, whatever its outcome.

Text from the data is made XML-safe by :func:`xml_text` (characters XML 1.0 forbids are
dropped); ElementTree escapes the rest.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping

from evaldelta.comparison.model import Comparison, Sequential
from evaldelta.gating import FAIL, INCONCLUSIVE, RuleResult, Verdict
from evaldelta.report._format import fmt_p
from evaldelta.report._pins import fmt_pin
from evaldelta.report.sections.sequential import sequential_lines, sequential_view
from evaldelta.report.verdict import (
    anytime,
    interval_column,
    outcome_word,
    rule_numbers,
    rule_where,
    rule_why,
)

__all__ = ["render_verdict_junit", "xml_text"]

# XML 1.0 allows tab, LF, CR and everything from U+0020 except surrogates, U+FFFE and U+FFFF.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(text: str) -> str:
    """Text from the data, safe in an XML 1.0 document: forbidden characters are dropped."""
    return _NOT_XML.sub("", text)


def _figures(rule: RuleResult, binary: bool, interval: str = "interval") -> str:
    """The numbers behind a rule, on one line (``interval``: what its interval is called)."""
    est, ci, bound, n = rule_numbers(rule, binary)
    parts = [f"outcome {outcome_word(rule)}"]
    for label, value in (("estimate", est), (interval, ci), ("bound", bound), ("n", n)):
        if value:
            parts.append(f"{label} {value}")
    if rule.p_fail_adjusted is not None:
        p = "adjusted p (fail)" if interval == "interval" else "adjusted anytime-valid p (fail)"
        parts.append(f"{p} {fmt_p(rule.p_fail_adjusted)}")
    if rule.method:
        parts.append(f"method {rule.method}")
    parts.append(f"basis {rule.basis}")
    return "; ".join(parts)


def _case(
    parent: ET.Element, rule: RuleResult, verdict: Verdict, binary: bool, interval: str
) -> str:
    """One test case; returns how it counts: ``failure``, ``skipped`` or ``pass``."""
    where = rule_where(rule)
    case = ET.SubElement(
        parent,
        "testcase",
        {
            "classname": f"evaldelta.{rule.rule}",
            "name": xml_text(f"{rule.rule}[{where}]" if where else rule.rule),
            "time": "0",
        },
    )
    figures = _figures(rule, binary, interval)
    why = xml_text(rule_why(rule))
    counted = "pass"
    if rule.outcome == FAIL:
        failure = ET.SubElement(case, "failure", {"type": rule.rule, "message": why})
        failure.text = xml_text(f"{why}\n{figures}")
        counted = "failure"
    elif rule.outcome == INCONCLUSIVE and verdict.on_inconclusive == FAIL:
        message = f"inconclusive, and the policy's on_inconclusive = 'fail' fails the gate: {why}"
        failure = ET.SubElement(case, "failure", {"type": "inconclusive", "message": message})
        failure.text = xml_text(f"{message}\n{figures}")
        counted = "failure"
    elif rule.outcome == INCONCLUSIVE:
        skipped = ET.SubElement(case, "skipped")
        skipped.text = xml_text(f"inconclusive: {why}")
        counted = "skipped"
    out = ET.SubElement(case, "system-out")
    out.text = xml_text(figures)
    return counted


def _properties(
    parent: ET.Element,
    verdict: Verdict,
    candidate: str,
    pins: Mapping[str, Mapping[str, object]],
    policy_sha256: str | None,
    sequential: Sequential | None = None,
) -> None:
    props = ET.SubElement(parent, "properties")
    values: list[tuple[str, str]] = [
        ("evaldelta.baseline", verdict.baseline),
        ("evaldelta.candidate", candidate),
        ("evaldelta.policy", verdict.policy),
    ]
    if policy_sha256 is not None:
        values.append(("evaldelta.policy_sha256", policy_sha256))
    values += [
        ("evaldelta.metric", verdict.metric),
        ("evaldelta.by", verdict.by),
        ("evaldelta.decision", verdict.decision),
        ("evaldelta.outcome", verdict.outcome),
        ("evaldelta.exit_code", str(verdict.exit_code)),
        ("evaldelta.basis", verdict.basis),
        ("evaldelta.confidence", repr(verdict.confidence)),
        ("evaldelta.fail_adjust", verdict.fail_adjust),
        ("evaldelta.on_inconclusive", verdict.on_inconclusive),
    ]
    if anytime(verdict, None if sequential is None else True):
        values.append(("evaldelta.intervals", "anytime-valid confidence sequences (sequential)"))
    values += _sequential_properties(sequential)
    for arm in (verdict.baseline, candidate):
        for key, value in sorted((pins.get(arm) or {}).items()):
            values.append((f"pins.{arm}.{key}", fmt_pin(value)))  # type: ignore[arg-type]
    for name, value in values:
        ET.SubElement(props, "property", {"name": xml_text(name), "value": xml_text(value)})


def _sequential_properties(seq: Sequential | None) -> list[tuple[str, str]]:
    """A sequential comparison's order column, method and, for a stopped run, its calls."""
    if seq is None:
        return []
    out = [
        ("evaldelta.sequential.order", seq.column),
        ("evaldelta.sequential.method", seq.method),
        ("evaldelta.sequential.looks", str(len(seq.looks))),
    ]
    for key, value in (
        ("stopping", seq.stopping),
        ("stopped_because", seq.stopped_because),
        ("calls", seq.calls),
        ("fixed_calls", seq.fixed_calls),
    ):
        if value is not None:
            out.append((f"evaldelta.sequential.{key}", str(value)))
    return out


def render_verdict_junit(
    verdict: Verdict,
    comparison: Comparison | None = None,
    *,
    policy_sha256: str | None = None,
) -> str:
    """The verdict as a JUnit XML document (``<testsuites>``, one suite per candidate).

    ``comparison`` supplies the pins and, when sequential, says so: the suite's properties
    name the order column and the stopped run's calls, each figure line calls the interval
    a confidence sequence, and the suite's ``system-out`` holds the report's sequential
    section (with the looks). ``policy_sha256`` is the policy file's hash (the command reads
    the file; this renderer does no I/O).
    """
    binary = verdict.kind == "binary"
    pins: Mapping[str, Mapping[str, object]] = comparison.pins if comparison is not None else {}
    seq = comparison.sequential if comparison is not None else None
    interval = interval_column(verdict, None if seq is None else True)
    story = sequential_lines(sequential_view(comparison)) if comparison is not None else []
    root = ET.Element("testsuites", {"name": "evaldelta gate"})
    totals = {"tests": 0, "failure": 0, "skipped": 0}
    for candidate in verdict.candidates:
        rules = [r for r in verdict.rules if r.candidate == candidate]
        suite = ET.SubElement(
            root,
            "testsuite",
            {"name": xml_text(f"evaldelta gate: {candidate} vs {verdict.baseline}")},
        )
        _properties(suite, verdict, candidate, pins, policy_sha256, seq)
        counts = {"failure": 0, "skipped": 0, "pass": 0}
        for rule in rules:
            counts[_case(suite, rule, verdict, binary, interval)] += 1
        if story:
            out = ET.SubElement(suite, "system-out")
            out.text = xml_text("\n".join(story))
        suite.set("tests", str(len(rules)))
        suite.set("failures", str(counts["failure"]))
        suite.set("errors", "0")
        suite.set("skipped", str(counts["skipped"]))
        suite.set("time", "0")
        totals["tests"] += len(rules)
        totals["failure"] += counts["failure"]
        totals["skipped"] += counts["skipped"]
    root.set("tests", str(totals["tests"]))
    root.set("failures", str(totals["failure"]))
    root.set("errors", "0")
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"
