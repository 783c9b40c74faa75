"""`evaldelta score --store`: scores written back into the run store, read by compare."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pytest

from evaldelta.run.cases import load_cases
from evaldelta.run.config import load_config, with_flags
from evaldelta.run.execute import RunSummary, execute
from evaldelta.store import SCHEMA_VERSION, Store
from tests.conftest import one_line_error
from tests.rows import write_rows
from tests.run.test_run import KEY, TWO_ARMS, write_cases, write_config
from tests.servers.fake_llm import FakeLLM

CHECKS = """\
checks:
  - {id: answered, spec: Answers., kind: regex_required, pattern: '^ANSWER'}
  - {id: no_commitment_date, spec: No date., kind: no_commitment_date}
"""


def reply(model: str, prompt: str, n: int) -> str:
    """cheap is unsure on hard cases; strong promises a date on c1."""
    if model == "cheap" and "hard" in prompt:
        return "UNSURE"
    if model == "strong" and "Ticket c1:" in prompt:
        return "ANSWER: it ships by Friday."
    return f"ANSWER from {model} #{n}"


@pytest.fixture
def fake(fake: FakeLLM) -> FakeLLM:
    fake.reply = reply
    return fake


@pytest.fixture
def tmp(tmp_path: Path, fake: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("EVD_TEST_KEY", KEY)
    write_cases(tmp_path / "cases.jsonl")
    write_config(tmp_path, fake.url, TWO_ARMS)
    (tmp_path / "checks.yaml").write_text(CHECKS)
    return tmp_path


def run(config: Path, **flags: Any) -> RunSummary:
    cfg = with_flags(load_config(config), **flags)
    assert cfg.cases is not None
    return asyncio.run(execute(cfg, load_cases(cfg.cases)))


def view(store: Path, run_id: str) -> list[dict[str, Any]]:
    con = duckdb.connect(str(store), read_only=True)
    try:
        cur = con.execute(
            "SELECT * FROM eval_rows WHERE run_id = ? ORDER BY arm, case_id, repeat", [run_id]
        )
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
    finally:
        con.close()


def test_score_store_then_compare_on_pass_and_a_check(
    tmp: Path, run_cli: Callable[..., Any]
) -> None:
    summary = run(tmp / "run.toml")
    store = tmp / "runs.duckdb"
    res = run_cli("score", "--checks", tmp / "checks.yaml", "--store", store)
    assert res.code == 0, res.err
    assert f"scored 12 attempts of run {summary.run_id} on 2 checks: 9/12" in res.err
    rows = {(r["arm"], r["case_id"]): r for r in view(store, summary.run_id)}
    assert rows[("incumbent", "c0")]["check.answered"] == 0.0  # cheap was unsure
    assert "^ANSWER" in rows[("incumbent", "c0")]["reason.answered"]
    assert rows[("incumbent", "c0")]["pass"] == 0.0
    assert rows[("candidate", "c1")]["check.no_commitment_date"] == 0.0
    assert rows[("candidate", "c2")]["pass"] == 1.0
    assert all(r["score"] is None for r in rows.values())  # the runner had no scorer
    with Store(store, read_only=True) as s:
        scoring = s.scoring(summary.run_id)
    assert scoring is not None and len(scoring["checks_sha256"]) == 64
    assert json.loads(scoring["metrics"]) == ["pass", "check.answered", "check.no_commitment_date"]
    assert json.loads(scoring["meta_json"])["included_checks"] == ["answered", "no_commitment_date"]
    res = run_cli(
        "compare", "--store", store, "--baseline", "incumbent", "--format", "json",
        "--metric", "pass", "--metric", "check.no_commitment_date",
    )  # fmt: skip
    assert res.code == 0, res.err
    report = json.loads(res.out)
    metrics = {m["metric"]: m for m in report["metrics"]}
    assert set(metrics) == {"pass", "check.no_commitment_date"}


def test_rescoring_replaces_and_says_so(tmp: Path, run_cli: Callable[..., Any]) -> None:
    summary = run(tmp / "run.toml")
    store = tmp / "runs.duckdb"
    assert run_cli("score", "--checks", tmp / "checks.yaml", "--store", store).code == 0
    other = tmp / "other.yaml"
    other.write_text("- {id: answered, spec: s, kind: regex_required, pattern: '^ANSWER'}\n")
    res = run_cli("score", "--checks", other, "--store", store, "--run", summary.run_id[:6])
    assert res.code == 0, res.err
    assert f"replaced the earlier scores of run {summary.run_id}" in res.err
    assert "checks.yaml" in res.err
    rows = view(store, summary.run_id)
    assert "check.no_commitment_date" not in rows[0]  # nothing of the old file remains
    assert {r["pass"] for r in rows if r["arm"] == "candidate"} == {1.0}
    with Store(store, read_only=True) as s:
        metrics = s.con.execute("SELECT DISTINCT metric FROM scores ORDER BY 1").fetchall()
    assert metrics == [("check.answered",), ("pass",)]


def test_score_store_bad_input_is_one_line(tmp: Path, run_cli: Callable[..., Any]) -> None:
    summary = run(tmp / "run.toml")
    store = tmp / "runs.duckdb"
    res = run_cli("score", "--checks", tmp / "nope.yaml", "--store", store)
    one_line_error(res, "nope.yaml")
    needs = tmp / "needs.yaml"
    needs.write_text(
        "- {id: order, spec: s, kind: contains_field, field: order_number}\n"
        "- {id: other, spec: s, kind: regex_required, pattern: x}\n"
    )
    res = run_cli("score", "--checks", needs, "--store", store)
    one_line_error(res, "'order_number'", "check 'order'", summary.run_id, "--cases")
    res = run_cli("score", "--checks", tmp / "checks.yaml", "--store", store, "--run", "zzz")
    one_line_error(res, "run 'zzz' is not in the store")
    res = run_cli("score", "--checks", tmp / "checks.yaml", "--store", tmp / "none.duckdb")
    one_line_error(res, "does not exist")
    res = run_cli("score", tmp / "cases.jsonl", "--checks", tmp / "checks.yaml", "--store", store)
    one_line_error(res, "not both")
    # the field can come from --cases, joined on case_id
    extra = tmp / "extra.csv"
    write_rows(extra, [{"case_id": f"c{i}", "order_number": f"c{i}"} for i in range(6)])
    res = run_cli("score", "--checks", needs, "--store", store, "--cases", extra)
    assert res.code == 0, res.err


def test_a_version_1_store_is_read_then_migrated(tmp: Path, run_cli: Callable[..., Any]) -> None:
    summary = run(tmp / "run.toml")
    store = tmp / "runs.duckdb"
    con = duckdb.connect(str(store))
    con.execute("DROP TABLE scores; DROP TABLE scorings")
    con.execute("DROP VIEW eval_rows; ALTER TABLE attempts DROP COLUMN verifier_json")
    con.execute(
        "CREATE VIEW eval_rows AS SELECT a.run_id, a.case_id, a.arm, a.repeat, a.score "
        "FROM attempts a"
    )
    con.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    con.close()
    with Store(store, read_only=True) as s:  # readable as it is
        assert s.version == 1 and s.scoring(summary.run_id) is None
    res = run_cli("score", "--checks", tmp / "checks.yaml", "--store", store)
    assert res.code == 0, res.err
    with Store(store, read_only=True) as s:
        assert s.version == SCHEMA_VERSION
        (version,) = s.con.execute("SELECT value FROM meta").fetchone() or ("",)
    assert version == str(SCHEMA_VERSION)
    assert {r["pass"] for r in view(store, summary.run_id)} == {0.0, 1.0}
