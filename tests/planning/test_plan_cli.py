"""The plan and sample commands through the real CLI entry point."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pytest

from evaldelta.demo import data_path
from tests.rows import csv_text, paired

Run = Callable[..., Any]


def test_plan_sd_leads_with_the_answer(run_cli: Run) -> None:
    res = run_cli("plan", "--sd", "1.1", "--effect", "0.25")
    assert res.code == 0, res.err
    lines = res.out.splitlines()
    assert lines[3] == "to detect +0.250: 154 paired cases."
    assert "paired t, exact noncentral t" in res.out
    assert "Unpaired contrast: 305 per arm" in res.out


def test_plan_forty_tickets(run_cli: Run) -> None:
    with data_path("seed002.csv") as path:
        res = run_cli("plan", "--from", path, "--baseline", "incumbent", "--effect", "0.05")
    assert res.code == 0, res.err
    # the exact McNemar test reaches 80% power first at 337 pairs; Connor (1987) says 312
    assert "to detect +5.0 pts: 337 paired cases (297 more than the pilot's 40)" in res.out
    assert "exact McNemar test" in res.out
    assert "Connor (1987)'s normal approximation says 312 pairs" in res.out
    assert "b = c = 0" in res.out  # refund_request: undefined, shown as n/a


def test_plan_json_and_markdown(run_cli: Run, tmp_path: Path) -> None:
    out = tmp_path / "plan.json"
    res = run_cli("plan", "--p-only-candidate", "0.075", "--p-only-baseline", "0.025",
                  "--format", "json", "-o", out)  # fmt: skip
    assert res.code == 0, res.err
    data = json.loads(out.read_text())
    assert data["schema_version"] == "1.0" and data["source"] == "discordance"
    assert data["pairs"][0]["overall"]["n_required"] == 337
    assert math.ceil(data["pairs"][0]["overall"]["n_normal"]) == 312
    assert data["pairs"][0]["overall"]["mde"] is None
    md = run_cli("plan", "--sd", "1.1", "--effect", "0.5", "--format", "markdown")
    assert md.code == 0 and "| (given sd) |" in md.out and "| 40 | 77 |" in md.out


def test_plan_allocation_cli(run_cli: Run) -> None:
    with data_path("seed004.csv") as path, data_path("traffic004.csv") as traffic:
        args = ["--from", path, "--baseline", "always_strong", "--candidate", "cascade"]
        res = run_cli("plan", *args, "--traffic", traffic, "--budget", "3000")
    assert res.code == 0, res.err
    assert "Allocation of 3,000 cases" in res.out
    assert "no --effect given: minimum detectable effects only" in res.out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("plan",), "give a pilot"),
        (("plan", "--sd", "1.1"), "--sd needs --effect"),
        (("plan", "--sd", "1", "--effect", "0.1", "--budget", "10"), "both --traffic and --budget"),
        (("plan", "--sd", "1", "--effect", "0.1", "--floor", "10"), "--floor applies"),
        (("plan", "--sd", "1", "--effect", "0.1", "--alpha", "2"), "alpha"),
        (("plan", "--sd", "1", "--effect", "0.1", "--baseline", "x"), "name arms of a pilot"),
        (("plan", "--from", "x.csv", "--sd", "1"), "--sd is for planning without a pilot"),
        (("plan", "--from", "missing.csv"), "does not exist"),
        (("plan", "--p-only-candidate", "0.1"), "both --p-only-candidate"),
    ],
)
def test_plan_usage_errors_exit_2(run_cli: Run, args: tuple[str, ...], message: str) -> None:
    res = run_cli(*args)
    assert res.code == 2
    assert message in res.err and len(res.err.strip().splitlines()) == 1


def test_sample_cli(run_cli: Run, tmp_path: Path) -> None:
    log = tmp_path / "traffic.jsonl"
    duckdb.sql(
        f"""COPY (SELECT i AS id, CASE WHEN i % 10 = 0 THEN 'rare' ELSE 'common' END AS task,
                  i * 3 AS input_tokens FROM range(5000) t(i)) TO '{log}' (FORMAT json)"""
    )
    out = tmp_path / "sample.csv"
    res = run_cli("sample", log, "--by", "task", "--floor", "600", "--seed", "5",
                  "--band", "input_tokens=0,500,2000,8000", "-o", out)  # fmt: skip
    assert res.code == 0, res.err
    assert res.out.startswith("Sampled 1,100 of 5,000 rows")
    assert "taken whole" in res.out and "rare" in res.out
    assert (tmp_path / "sample.mix.csv").exists()
    header = out.read_text().splitlines()[0]
    assert header == "id,task,input_tokens,input_tokens_band,sample_weight"
    js = run_cli("sample", log, "--by", "task", "-o", out, "--format", "json")
    assert json.loads(js.out)["strata"][0]["slice"] == "common"


def test_sample_cli_errors(run_cli: Run, write: Callable[[str, str], Path]) -> None:
    log = write("t.csv", "task,tok\na,1\na,x\n")
    res = run_cli("sample", log, "--band", "tok=0,5", "-o", log.with_name("o.csv"))
    assert res.code == 2
    assert "line 3, field 'tok', value 'x'" in res.err
    res = run_cli("sample", log, "--by", "task", "--band", "tok", "-o", log.with_name("o.csv"))
    assert res.code == 2 and "--band takes COLUMN=EDGES" in res.err


@pytest.mark.parametrize(
    ("data", "args", "effect", "needle"),
    [
        # issue 24.7: 5 on pass/fail data was "+500.0 pts ... n/a" with exit 0
        ("seed002.csv", ("--baseline", "incumbent"), "5", "5 would be 500 points"),
        ("seed002.csv", ("--baseline", "incumbent"), "-1.5", "between -1 and 1"),
        ("seed004.csv", ("--baseline", "always_strong", "--candidate", "cascade"), "4.5",
         "larger than the whole scale of 'score', 1 to 5 (inferred)"),
    ],
)  # fmt: skip
def test_plan_refuses_an_effect_outside_the_scale(
    run_cli: Run, data: str, args: tuple[str, ...], effect: str, needle: str
) -> None:
    from tests.conftest import one_line_error

    with data_path(data) as path:
        one_line_error(run_cli("plan", "--from", path, *args, "--effect", effect), needle)


def test_plan_keeps_an_effect_inside_the_scale(run_cli: Run, write: Callable[..., Path]) -> None:
    with data_path("seed002.csv") as path:
        res = run_cli("plan", "--from", path, "--baseline", "incumbent", "--effect", "1")
    assert res.code == 0, res.err  # 100 points: the edge of the scale, allowed (n/a, noted)
    # graded scores are checked against the scale they fit: 0 to 22 is read as 0-100
    rows = csv_text(paired([(i, i + 3) for i in range(20)], arms=("a", "b")))
    res = run_cli("plan", "--from", write("g.csv", rows), "--effect", "5")
    assert res.code == 0, res.err
