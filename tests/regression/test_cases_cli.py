"""`evaldelta cases add` from a rows file and from a run store; `cases list` in its formats."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evaldelta.regression import load_set
from evaldelta.run.cases import load_cases
from evaldelta.run.config import load_config
from evaldelta.run.execute import execute
from tests.conftest import one_line_error
from tests.run.test_run import KEY, TWO_ARMS, write_cases, write_config
from tests.servers.fake_llm import FakeLLM

ROWS = """\
case_id,slice,arm,repeat,score,output,order_number,check.length
T1,delivery,prod,0,1,fine,1001,1
T2,delivery,prod,0,0,"It ships by Friday.
Promise.",1002,1
T2,delivery,prod,1,1,ok on a retry,1002,1
T3,refund,prod,0,0,no refund,1003,0
T1,delivery,next,0,1,fine,1001,1
"""
ADD = ("--reason", "promised a date", "--source", "INC-4471", "--found-by", "support-qa")


@pytest.fixture
def rows(write: Callable[[str, str], Path]) -> Path:
    return write("rows.csv", ROWS)


def test_add_takes_the_failing_attempts_of_the_release(
    rows: Path, tmp_path: Path, run_cli: Any
) -> None:
    reg = tmp_path / "regression.toml"
    res = run_cli(
        "cases", "add", "--from", rows, "--release", "prod", *ADD, "--set", reg,
        "--date", "2026-11-30",
    )  # fmt: skip
    assert res.code == 0, res.err
    assert res.out.splitlines() == [
        "added R-0001: T2 (delivery), failed by prod, from incident INC-4471",
        "added R-0002: T3 (refund), failed by prod, from incident INC-4471",
        f"{reg}: revision 1, 2 cases",
    ]
    t2, t3 = load_set(reg).cases
    # T2's failing attempt is repeat 0 (repeat 1 passed): its output, with the line break
    assert (t2.score, t2.output) == (0.0, "It ships by Friday.\nPromise.")
    assert t2.fields == {"order_number": "1002"}  # scores, checks and output are not inputs
    assert (t2.added_at, t2.found_by, t2.failed_release, t2.metric) == (
        "2026-11-30", "support-qa", "prod", "score",
    )  # fmt: skip
    assert (t3.slice, t3.output) == ("refund", "no refund")


def test_add_names_a_case_the_checks_passed(rows: Path, tmp_path: Path, run_cli: Any) -> None:
    """A person found T1 wrong although every check passed it: --case adds it anyway."""
    reg = tmp_path / "regression.toml"
    res = run_cli("cases", "add", "--from", rows, "--release", "next", "--case", "T1", *ADD,
                  "--set", reg)  # fmt: skip
    assert res.code == 0, res.err
    (t1,) = load_set(reg).cases
    assert (t1.case_id, t1.score, t1.failed_release) == ("T1", 1.0, "next")


def test_add_refuses_and_explains(rows: Path, tmp_path: Path, run_cli: Any) -> None:
    reg = tmp_path / "regression.toml"
    one_line_error(run_cli("cases", "add", "--from", rows, *ADD, "--set", reg), "--release ARM")
    one_line_error(
        run_cli("cases", "add", "--from", rows, "--release", "next", *ADD, "--set", reg),
        "no attempt of arm 'next'", "--case ID",
    )  # fmt: skip
    one_line_error(
        run_cli("cases", "add", "--from", rows, "--release", "prod", "--case", "T9", *ADD),
        "case 'T9' has no attempt of arm 'prod'",
    )  # fmt: skip
    one_line_error(run_cli("cases", "add", "--from", rows, "--release", "prod"), "--reason TEXT")
    one_line_error(
        run_cli("cases", "add", "--from", tmp_path / "nope.csv", *ADD), "nope.csv"
    )  # the row seam's own message
    assert (
        run_cli("cases", "add", "--from", rows, "--release", "prod", *ADD, "--set", reg).code == 0
    )
    again = run_cli("cases", "add", "--from", rows, "--release", "prod", "--case", "T3", *ADD,
                    "--set", reg)  # fmt: skip
    one_line_error(again, "case T3 from INC-4471 is already R-0002", "nothing was added")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["regression.toml", "rows.csv"]


def test_list_formats(rows: Path, tmp_path: Path, run_cli: Any) -> None:
    reg = tmp_path / "regression.toml"
    run_cli("cases", "add", "--from", rows, "--release", "prod", *ADD, "--set", reg,
            "--date", "2026-11-30")  # fmt: skip
    text = run_cli("cases", "list", "--set", reg)
    assert text.code == 0, text.err
    lines = text.out.splitlines()
    assert lines[0] == f"{reg}: 2 cases, revision 1 (format version 1)"
    assert lines[2].split() == [
        "R-0001", "T2", "delivery", "prod", "incident", "INC-4471", "support-qa", "2026-11-30",
        "1", "promised", "a", "date",
    ]  # fmt: skip
    doc = json.loads(run_cli("cases", "list", "--set", reg, "--format", "json").out)
    assert doc["revision"] == 1 and doc["cases"][1]["output"] == "no refund"
    out = tmp_path / "replay.jsonl"
    assert run_cli("cases", "list", "--set", reg, "--format", "jsonl", "-o", out).code == 0
    cases = load_cases(out)  # the runner's own reader: the set replays with `evaldelta run`
    assert cases.ids == ["T2", "T3"]
    assert dict(cases.rows[0][1]) == {"case_id": "T2", "slice": "delivery", "order_number": "1002"}


# -- from a run store ---------------------------------------------------------------------
CHECKS = """\
checks:
  - {id: no_commitment_date, spec: No date., kind: no_commitment_date}
"""


def reply(model: str, prompt: str, n: int) -> str:
    if model == "strong" and "Ticket c1:" in prompt:
        return "ANSWER: it ships by Friday."
    return f"ANSWER from {model} #{n}"


@pytest.fixture
def fake(fake: FakeLLM) -> FakeLLM:
    fake.reply = reply
    return fake


def test_add_from_a_run_store(
    tmp_path: Path, fake: FakeLLM, monkeypatch: pytest.MonkeyPatch, run_cli: Any
) -> None:
    monkeypatch.setenv("EVD_TEST_KEY", KEY)
    write_cases(tmp_path / "cases.jsonl")
    cfg = load_config(write_config(tmp_path, fake.url, TWO_ARMS))
    assert cfg.cases is not None
    asyncio.run(execute(cfg, load_cases(cfg.cases)))
    (tmp_path / "checks.yaml").write_text(CHECKS)
    store = tmp_path / "runs.duckdb"
    assert run_cli("score", "--checks", tmp_path / "checks.yaml", "--store", store).code == 0
    reg = tmp_path / "regression.toml"
    res = run_cli(
        "cases", "add", "--from", store, "--release", "candidate", "--metric", "pass",
        "--by", "task", *ADD, "--set", reg, "--date", "2026-11-30",
    )  # fmt: skip
    assert res.code == 0, res.err
    (case,) = load_set(reg).cases  # only c1 promised a date
    assert (case.case_id, case.slice, case.failed_release) == ("c1", "extraction", "candidate")
    assert case.output == "ANSWER: it ships by Friday."
    assert (case.metric, case.score) == ("pass", 0.0)
    assert case.fields == {"question": "q1 easy"}  # the case's own columns: replayable
    policy = tmp_path / "gate.toml"
    policy.write_text(
        'metric = "pass"\n[critical]\nregression_set = "regression.toml"\n'
        '[pins]\nallow = ["params.temperature"]\n'  # TWO_ARMS differ in temperature
    )
    gate = run_cli("gate", store, "--policy", policy, "--baseline", "incumbent")
    assert gate.code == 1, gate.err
    assert (
        "candidate: fails regression case R-0001 (c1), added from incident INC-4471 by "
        "support-qa on 2026-11-30: promised a date"
    ) in gate.out
