"""`evaldelta run --checks` and cascade verifiers from a checks file (mechanical and judge)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evaldelta.errors import ConfigError, MissingColumnError, UsageError
from evaldelta.run.config import load_config
from evaldelta.store import Store
from tests.conftest import one_line_error
from tests.run.test_run import CASCADE, write_config
from tests.servers.fake_llm import FakeLLM
from tests.store.test_score_store import CHECKS, fake, run, tmp, view  # noqa: F401  (fixtures)

HARD = {"c0", "c3"}


def test_run_with_checks_scores_each_attempt(tmp: Path, fake: FakeLLM) -> None:  # noqa: F811
    summary = run(tmp / "run.toml", checks=tmp / "checks.yaml")
    assert summary.status == "complete"
    store = tmp / "runs.duckdb"
    rows = {(r["arm"], r["case_id"]): r for r in view(store, summary.run_id)}
    for (arm, cid), r in rows.items():
        bad = (arm == "incumbent" and cid in HARD) or (arm == "candidate" and cid == "c1")
        assert r["pass"] == (0.0 if bad else 1.0)
        assert r["score"] == r["pass"]  # with --checks, score is the overall pass
    assert rows[("candidate", "c1")]["check.no_commitment_date"] == 0.0
    with Store(store, read_only=True) as s:
        pins = json.loads(s.runs()[0]["pins_json"])
        scoring = s.scoring(summary.run_id)
    assert pins["scorer"]["kind"] == "checks" and len(pins["scorer"]["checks_sha256"]) == 64
    assert scoring is not None and scoring["source"] == "run --checks"
    calls = len(fake.requests)
    again = run(tmp / "run.toml", checks=tmp / "checks.yaml")  # resumes: nothing new
    assert again.run_id == summary.run_id and again.progress.done == 0
    assert len(fake.requests) == calls
    plain = run(tmp / "run.toml")  # without checks: another run (its calls all cached)
    assert plain.run_id != summary.run_id and len(fake.requests) == calls


def test_rescoring_a_checks_run_moves_its_score_too(
    tmp: Path,  # noqa: F811
    run_cli: Callable[..., Any],
) -> None:
    summary = run(tmp / "run.toml", checks=tmp / "checks.yaml")
    other = tmp / "other.yaml"
    other.write_text("- {id: long, spec: s, kind: word_count, min: 100}\n")  # everything fails
    res = run_cli("score", "--checks", other, "--store", tmp / "runs.duckdb")
    assert res.code == 0, res.err
    assert "its score column follows the new pass" in res.err
    rows = view(tmp / "runs.duckdb", summary.run_id)
    assert {r["score"] for r in rows} == {0.0} and {r["pass"] for r in rows} == {0.0}
    # resuming the run with its own checks file now would mix two files: refused
    from evaldelta.errors import StoreError

    with pytest.raises(StoreError, match="mixing two checks files"):
        run(tmp / "run.toml", checks=tmp / "checks.yaml")


def test_score_checks_in_the_config_and_cli_flag(
    tmp: Path,  # noqa: F811
    run_cli: Callable[..., Any],
) -> None:
    config = tmp / "run.toml"
    config.write_text(config.read_text() + '\n[score]\nchecks = "checks.yaml"\n')
    assert load_config(config).checks is not None
    res = run_cli("run", "--config", config)
    assert res.code == 0, res.err
    res = run_cli("run", "--config", config, "--score-regex", "x")
    one_line_error(res, "--checks scores the run")
    res = run_cli("run", "--config", tmp / "run.toml", "--checks", tmp / "missing.yaml")
    one_line_error(res, "missing.yaml", "does not exist")
    plain = tmp / "plain.toml"
    plain.write_text(config.read_text().replace('[score]\nchecks = "checks.yaml"\n', ""))
    res = run_cli("run", "--config", plain, "--checks", tmp / "checks.yaml")
    assert res.code == 0, res.err
    assert "12/12 attempts" in res.err and "--metric pass" in res.err
    with pytest.raises(UsageError, match="does not exist"):
        run(tmp / "run.toml", checks=tmp / "nope.yaml")
    config.write_text(config.read_text().replace('"checks.yaml"', '"gone.yaml"'))
    with pytest.raises(ConfigError, match=r"score\.checks.*the checks file does not exist"):
        load_config(config)


def test_run_checks_needing_a_missing_case_field(tmp: Path) -> None:  # noqa: F811
    needs = tmp / "needs.yaml"
    needs.write_text("- {id: order, spec: s, kind: contains_field, field: order_number}\n")
    with pytest.raises(MissingColumnError, match=r"'order_number'.*check 'order'.*columns: "):
        run(tmp / "run.toml", checks=needs)


CHECKS_CASCADE = CASCADE.replace(
    'verifier = { regex = "^ANSWER" }', 'verifier = { checks = "verify.yaml" }'
)


def test_cascade_with_a_checks_verifier_escalates_exactly_the_failures(
    tmp: Path,  # noqa: F811
    fake: FakeLLM,  # noqa: F811
) -> None:
    (tmp / "verify.yaml").write_text(CHECKS)
    config = write_config(tmp, fake.url, CHECKS_CASCADE)
    summary = run(config)
    with Store(tmp / "runs.duckdb", read_only=True) as s:
        rows = {r["case_id"]: r for r in s.attempts(summary.run_id) if r["arm"] == "cascade"}
        pins = dict(s.con.execute("SELECT arm, pins_json FROM run_arms").fetchall())
    assert {cid for cid, r in rows.items() if r["escalated"]} == HARD
    for cid, r in rows.items():
        why = json.loads(r["verifier_json"])
        assert why["kind"] == "checks" and why["passed"] is (cid not in HARD)
        assert set(why["failed"]) == ({"answered"} if cid in HARD else set())
        assert r["model_used"] == ("strong" if cid in HARD else "cheap")
    assert "^ANSWER" in json.loads(rows["c0"]["verifier_json"])["failed"]["answered"]
    verifier = json.loads(pins["cascade"])["verifier"]
    assert verifier["kind"] == "checks" and len(verifier["checks_sha256"]) == 64


JUDGE_CHECKS = """\
checks:
  - id: confident
    spec: The reply is confident.
    kind: judge
    rubric: Score how confident the reply is.
    model: judge-model
    provider: fake
    graded: [1, 5]
"""


def test_cascade_with_a_judge_verifier_against_the_fake_server(
    tmp: Path,  # noqa: F811
    fake: FakeLLM,  # noqa: F811
) -> None:
    base = fake.reply

    def reply(model: str, prompt: str, n: int) -> str:
        if model == "judge-model":
            score = 2 if "UNSURE" in prompt else 5
            return json.dumps({"verdict": "pass", "score": score, "reason": f"got {score}"})
        return base(model, prompt, n)

    fake.reply = reply
    (tmp / "judge.yaml").write_text(JUDGE_CHECKS)
    body = CASCADE.replace(
        'verifier = { regex = "^ANSWER" }',
        'verifier = { judge = "confident", threshold = 3.5, checks = "judge.yaml" }',
    )
    config = write_config(tmp, fake.url, body)
    summary = run(config)
    with Store(tmp / "runs.duckdb", read_only=True) as s:
        rows = {r["case_id"]: r for r in s.attempts(summary.run_id) if r["arm"] == "cascade"}
        pins = dict(s.con.execute("SELECT arm, pins_json FROM run_arms").fetchall())
    assert {cid for cid, r in rows.items() if r["escalated"]} == HARD
    why = json.loads(rows["c0"]["verifier_json"])
    assert (why["kind"], why["score"], why["threshold"], why["passed"]) == (
        "judge",
        2.0,
        3.5,
        False,
    )
    assert json.loads(rows["c1"]["verifier_json"])["score"] == 5.0
    judged = [r for r in fake.requests if r["model"] == "judge-model"]
    assert len(judged) == 6  # one judge call per cascade attempt
    bodies = json.dumps([r["body"] for r in judged])
    for name in ("always_cheap", "always_strong", "cascade"):
        assert name not in bodies  # blinded: no arm names reach the judge
    verifier = json.loads(pins["cascade"])["verifier"]
    assert verifier["judge_pins"]["model"] == "judge-model" and verifier["threshold"] == 3.5


def test_bad_verifiers_are_config_errors(tmp: Path) -> None:  # noqa: F811
    (tmp / "judge.yaml").write_text(JUDGE_CHECKS)
    for verifier, message in [
        ('{ judge = "nope", checks = "judge.yaml" }', "no judge check 'nope'"),
        ('{ judge = "confident" }', "a judge verifier needs checks"),
        ('{ checks = "judge.yaml" }', "has no mechanical checks"),
        ('{ checks = "judge.yaml", threshold = 2 }', "threshold needs judge"),
    ]:
        body = CASCADE.replace('{ regex = "^ANSWER" }', verifier)
        config = write_config(tmp, "http://x", body)
        with pytest.raises(ConfigError, match=message):
            load_config(config)


def test_judge_calls_go_through_the_providers_lane(
    tmp: Path,  # noqa: F811
    fake: FakeLLM,  # noqa: F811
) -> None:
    """A judge verifier's calls obey the lane (concurrency bound, retries) and are paid for."""
    base = fake.reply

    def reply(model: str, prompt: str, n: int) -> str:
        if model == "judge-model":
            return json.dumps({"verdict": "pass", "score": 5, "reason": "fine"})
        return base(model, prompt, n)

    fake.reply = reply
    fake.delay = 0.02
    (tmp / "judge.yaml").write_text(JUDGE_CHECKS)
    body = CASCADE.replace(
        'verifier = { regex = "^ANSWER" }',
        'verifier = { judge = "confident", threshold = 3.5, checks = "judge.yaml" }',
    )
    config = write_config(tmp, fake.url, body)
    text = config.read_text().replace("max_concurrency = 4", "max_concurrency = 1")
    (tmp / "prices.toml").write_text(
        (tmp / "prices.toml").read_text() + "[models.judge-model]\ninput = 5.0\noutput = 5.0\n"
    )
    config.write_text(text)
    fake.failures = [None, None, "429"]  # type: ignore[list-item]  # retried by the lane
    summary = run(config)
    assert summary.status == "complete"
    assert fake.max_in_flight == 1  # judge calls waited for the same single slot
    judged = [r for r in fake.requests if r["model"] == "judge-model" and r["failure"] is None]
    assert len(judged) == 6
    # 12 arm calls are paid (always_cheap and always_strong, 6 each: the cascade reuses their
    # draws), plus the 6 judge calls, which now count as paid calls with a cost
    assert summary.progress.paid_calls == 12 + 6
    assert summary.progress.spent_usd > 0
