"""Issue 26: a sequential comparison's JSON carries its confidence sequences, not their data.

A sequential comparison (every interval an anytime-valid confidence sequence over the cases
in the order of a column) is built end to end: ``compare`` on a CSV, then
``comparison.sequential.anytime`` over arrivals built by hand. Its JSON validates against
the schema, marks each sequence ``"anytime": true`` with its range, and leaves out the
per-case values the sequence was read from (as many as the cases).
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from evaldelta.comparison import compare
from evaldelta.comparison.model import Comparison, Look
from evaldelta.comparison.sequential import anytime
from evaldelta.evidence import ArrivedCase, CaseArrivals
from evaldelta.gating import parse_policy
from evaldelta.report import render_json
from tests.conftest import ROOT
from tests.rows import write_rows

SCHEMA = json.loads((ROOT / "schema" / "comparison.schema.json").read_text())
XSD = ROOT / "tests" / "fixtures" / "junit" / "jenkins-junit.xsd"
POLICY = parse_policy("max_regression = 0.05\nmin_cases = 10\n")

LEAD = "every interval in this report is an anytime-valid 95% confidence sequence"
# what a fixed-sample interval is labelled; a sequential report never says it
FIXED_LABEL = re.compile(r"95% (interval|CI)\b|\bCI\b|exact McNemar")
SEQUENTIAL_WORDS = ("anytime", "confidence sequence", "Sequential", " CS")


def _scores(i: int, graded: bool) -> tuple[int, int]:
    """Case i: chat cases are unchanged; extraction loses about half its passes (or points)."""
    if i % 2 == 0:  # chat
        base = 3 + i % 3 if graded else int(i % 5 != 0)
        return base, base if i % 8 else (base - 1 if graded else 1 - base)
    base = 4 + i % 2 if graded else int(i % 7 != 0)
    return base, (1 + i % 3 if graded else int(i % 3 == 0)) if i % 4 != 1 else base


def _runs(tmp_path: Path, graded: bool) -> tuple[Path, list[CaseArrivals]]:
    rows, arrived = [], {"base": [], "cand": []}  # type: dict[str, list[ArrivedCase]]
    for i in range(120):
        name = "chat" if i % 2 == 0 else "extraction"
        for arm, value in zip(("base", "cand"), _scores(i, graded), strict=True):
            rows.append((f"c{i:03d}", name, arm, value, i))
            arrived[arm].append(ArrivedCase(f"c{i:03d}", name, float(i), float(value)))
    runs = write_rows(tmp_path / "runs.csv", rows, "case_id,slice,arm,score,ts")
    arms = {arm: tuple(cases) for arm, cases in arrived.items()}
    return runs, [CaseArrivals("score", "slice", arms)]


def _looks(n: int) -> tuple[Look, ...]:
    """n looks of 10 cases: chat decided at look 3, the gate fails at the last."""
    return tuple(
        Look(
            index=k,
            cases=10 * k,
            calls=20 * k,
            outcome="fail" if k == n else "inconclusive",
            decided=("chat", "extraction") if k == n else ("chat",) if k >= 3 else (),
            usd=0.01 * k,  # below a dollar: four decimals
        )
        for k in range(1, n + 1)
    )


def _stopped(comparison: Comparison, looks: tuple[Look, ...], fixed: int = 240) -> Comparison:
    seq = comparison.sequential
    assert seq is not None
    seq = dataclasses.replace(
        seq,
        looks=looks,
        stopping="verdict",
        calls=looks[-1].calls,
        fixed_calls=fixed,
        stopped_because="the verdict was decided: max_regression fails on extraction",
    )
    return dataclasses.replace(comparison, sequential=seq)


@pytest.fixture(params=[False, True], ids=["pass-fail", "graded"])
def pair(request: Any, tmp_path: Path) -> tuple[Comparison, Comparison]:
    """(fixed, sequential) comparisons of the same rows."""
    runs, arrivals = _runs(tmp_path, graded=request.param)
    fixed = compare([runs], baseline="base")
    return fixed, anytime(fixed, arrivals, "ts")


@pytest.fixture
def stopped(tmp_path: Path) -> Comparison:
    runs, arrivals = _runs(tmp_path, graded=False)
    return _stopped(anytime(compare([runs], baseline="base"), arrivals, "ts"), _looks(6))


def _keys(doc: Any) -> set[str]:
    if isinstance(doc, dict):
        return set(doc) | {k for v in doc.values() for k in _keys(v)}
    if isinstance(doc, list):
        return {k for v in doc for k in _keys(v)}
    return set()


def test_json_validates_and_leaves_out_the_per_case_values(pair, stopped):
    fixed, seq = pair
    for comparison in (seq, stopped):
        doc = json.loads(render_json(comparison))
        jsonschema.validate(doc, SCHEMA)
        assert "values" not in _keys(doc)
        p = doc["metrics"][0]["slicings"][0]["pairs"][0]
        paired = p["overall"]["paired"]
        assert paired["anytime"] is True and paired["se"] is None
        assert paired["method"].startswith("anytime-valid betting confidence sequence")
        assert paired["low_end"] == -paired["high_end"] and paired["high_end"] > 0
        arm = doc["metrics"][0]["slicings"][0]["arms"][0]["estimate"]
        assert arm["anytime"] is True and arm["confidence"] == 0.95
        assert doc["sequential"]["column"] == "ts"
    assert doc["sequential"]["looks"][-1] == {
        "index": 6,
        "cases": 60,
        "calls": 120,
        "outcome": "fail",
        "decided": ["chat", "extraction"],
        "usd": 0.06,
    }
    plain = json.loads(render_json(fixed))
    jsonschema.validate(plain, SCHEMA)
    assert "anytime" not in _keys(plain) and plain["sequential"] is None


def test_the_schema_rejects_an_anytime_result_that_carries_its_values(stopped):
    doc = json.loads(render_json(stopped))
    doc["metrics"][0]["slicings"][0]["pairs"][0]["overall"]["paired"]["values"] = [1.0]
    assert list(jsonschema.Draft202012Validator(SCHEMA).iter_errors(doc))
