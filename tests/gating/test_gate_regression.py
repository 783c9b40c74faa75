"""The gate with a regression set: its cases are critical, named with their provenance."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from evaldelta.regression import Attempt, add_cases
from evaldelta.report.schema import verdict_schema
from tests.conftest import ROOT, one_line_error

# c1: the candidate fails it (the baseline passes); c2: both pass; c3: only the baseline ran
ROWS = """\
case_id,arm,slice,score
c1,base,tickets,1
c1,cand,tickets,0
c2,base,tickets,1
c2,cand,tickets,1
c3,base,tickets,1
c4,base,tickets,0
c4,cand,tickets,0
"""
INCIDENT = "fails regression case R-0001 (c1), added from incident INC-4471 by support-qa on "
INCIDENT += "2026-11-30: promised delivery by Friday"


def _add(path: Path, case_id: str, source: str, kind: str = "incident", **extra: Any) -> None:
    attempt = Attempt(case_id, "tickets", "cand", "score", 0.0, "It ships by Friday.", {})
    add_cases(
        path, [attempt], reason=extra.get("reason", "promised delivery by Friday"),
        source=source, found_by=extra.get("found_by", "support-qa"), source_kind=kind,
        added_at=extra.get("day", dt.date(2026, 11, 30)),
    )  # fmt: skip


@pytest.fixture
def rows(write: Callable[[str, str], Path]) -> Path:
    return write("runs.csv", ROWS)


@pytest.fixture
def reg(tmp_path: Path) -> Path:
    path = tmp_path / "regression.toml"
    _add(path, "c1", "INC-4471")
    _add(path, "c2", "REV-0093", "review", found_by="quality-review", day=dt.date(2026, 12, 1))
    return path


def _gate(run_cli: Any, rows: Path, *args: Any) -> Any:
    return run_cli("gate", rows, "--baseline", "base", *args)


def test_the_verdict_names_a_failing_regression_case_with_its_provenance(
    run_cli: Any, rows: Path, reg: Path
) -> None:
    res = _gate(run_cli, rows, "--regression-set", reg)
    assert res.code == 1, res.err
    lines = res.out.splitlines()
    assert lines[1] == "Verdict: FAIL (exit 1). Rules: 1 fail, 1 pass."
    assert lines[2:4] == ["Fails:", f"  - cand: {INCIDENT}"]
    passed = next(line for line in lines if "R-0002 case c2" in line)
    assert passed.split()[:2] == ["PASS", "critical"]
    assert "added from review REV-0093 by quality-review on 2026-12-01" in passed


def test_json_carries_the_provenance_and_validates(run_cli: Any, rows: Path, reg: Path) -> None:
    res = _gate(run_cli, rows, "--regression-set", reg, "--format", "json")
    doc = json.loads(res.out)
    schema = json.loads((ROOT / "schema" / "verdict.schema.json").read_text())
    jsonschema.validate(doc, schema)
    (c1,) = [r for r in doc["rules"] if r["case_id"] == "c1"]
    assert c1["outcome"] == "fail"
    assert c1["regression"] == [
        {
            "id": "R-0001", "case_id": "c1", "slice": "tickets",
            "reason": "promised delivery by Friday", "source": "INC-4471",
            "source_kind": "incident", "found_by": "support-qa", "added_at": "2026-11-30",
            "revision": 1, "failed_release": "cand",
        }
    ]  # fmt: skip
    broken = dict(doc, rules=[dict(c1, regression=[{"id": "R-0001"}])])
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(broken))


def test_committed_verdict_schema_is_what_the_code_derives() -> None:
    committed = json.loads((ROOT / "schema" / "verdict.schema.json").read_text())
    assert committed == verdict_schema(), (
        "schema/verdict.schema.json is stale: regenerate it with python -c 'import json; "
        "from evaldelta.report.schema import verdict_schema; "
        "print(json.dumps(verdict_schema(), indent=2, sort_keys=True))'"
    )
    jsonschema.Draft202012Validator.check_schema(committed)


def test_a_case_the_rows_lack_is_reported_not_passed(
    run_cli: Any, rows: Path, tmp_path: Path
) -> None:
    """c3 has no candidate row, c9 no row at all: both inconclusive (exit 3), both named."""
    path = tmp_path / "regression.toml"
    _add(path, "c2", "INC-1")
    _add(path, "c3", "INC-2")
    _add(path, "c9", "INC-3")
    res = _gate(run_cli, rows, "--regression-set", path)
    assert res.code == 3, res.err
    lines = res.out.splitlines()
    assert lines[1] == "Verdict: INCONCLUSIVE (exit 3). Rules: 2 inconclusive, 1 pass."
    assert lines[2:4] == [
        "Not run: regression case R-0002 (c3) was not run by arm cand; counted inconclusive, "
        "not passed.",
        "Not run: regression case R-0003 (c9) was not run by arm cand; counted inconclusive, "
        "not passed.",
    ]
    assert "R-0003 was not run by arm cand (nor by base)" in res.out
    doc = json.loads(_gate(run_cli, rows, "--regression-set", path, "--format", "json").out)
    by_case = {r["case_id"]: r for r in doc["rules"]}
    assert (by_case["c9"]["outcome"], by_case["c9"]["n"]) == ("inconclusive", 0)
    assert by_case["c9"]["regression"][0]["id"] == "R-0003"
    md = _gate(run_cli, rows, "--regression-set", path, "--format", "markdown").out
    assert "- Not run: regression case R-0003 (c9) was not run by arm cand" in md


def test_union_with_the_policy_and_the_policy_key(
    run_cli: Any, rows: Path, reg: Path, tmp_path: Path
) -> None:
    sub = tmp_path / "ci"
    sub.mkdir()
    reg.rename(sub / "regression.toml")
    policy = sub / "gate.toml"
    policy.write_text('[critical]\ncases = ["c4", "c1"]\nregression_set = "regression.toml"\n')
    res = _gate(run_cli, rows, "--policy", policy, "--format", "json")  # cwd is not ci/
    assert res.code == 1, res.err
    rules = {r["case_id"]: r for r in json.loads(res.out)["rules"]}
    assert sorted(rules) == ["c1", "c2", "c4"]  # one rule per case: ids and set together
    assert [p["id"] for p in rules["c1"]["regression"]] == ["R-0001"]
    assert rules["c4"]["regression"] == [] and rules["c4"]["outcome"] == "fail"
    text = _gate(run_cli, rows, "--policy", policy).out
    assert f"cand: {INCIDENT}" in text
    assert "cand: critical fails on case c4 (tickets)" in text  # the old phrase, unchanged


def test_two_sets_and_a_case_found_twice(
    run_cli: Any, rows: Path, reg: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other.toml"
    _add(other, "c1", "INC-5000", reason="promised Monday")
    res = _gate(run_cli, rows, "--regression-set", reg, "--regression-set", other)
    assert res.code == 1
    fails = [line for line in res.out.splitlines() if line.startswith("  - ")]
    assert fails == [
        f"  - cand: {INCIDENT}; regression case R-0001 (c1), added from incident INC-5000 by "
        "support-qa on 2026-11-30: promised Monday"
    ]


def test_bad_set_or_policy_key_is_one_line(
    run_cli: Any, rows: Path, write: Callable[[str, str], Path]
) -> None:
    policy = write("gate.toml", '[critical]\nregression_set = "missing.toml"\n')
    one_line_error(
        _gate(run_cli, rows, "--policy", policy),
        "gate.toml, line 2, field 'critical.regression_set'", "does not exist",
    )  # fmt: skip
    bad = write("bad.toml", 'version = 1\nrevision = 1\n[[cases]]\nid = "R-1"\n')
    one_line_error(_gate(run_cli, rows, "--regression-set", bad), "bad.toml, line 3")
    one_line_error(run_cli("gate", rows), "--policy FILE", "--regression-set FILE")
