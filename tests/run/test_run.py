"""`evaldelta run` end to end against the fake server: store, cache, cascade, cost, keys."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest

from evaldelta.run.cases import load_cases
from evaldelta.run.config import load_config, with_flags
from evaldelta.run.execute import RunSummary, execute, interleave
from evaldelta.run.template import Template
from evaldelta.store import Store
from tests.servers.fake_llm import FakeLLM

KEY = "sk-evd-FAKE-KEY-0123456789abcdef"


def write_cases(path: Path, n: int = 6) -> Path:
    tasks = ["faq", "extraction"]
    with path.open("w") as f:
        for i in range(n):
            hard = "hard" if i % 3 == 0 else "easy"
            row = {"case_id": f"c{i}", "task": tasks[i % 2], "question": f"q{i} {hard}"}
            f.write(json.dumps(row) + "\n")
    return path


def write_config(tmp: Path, url: str, body: str) -> Path:
    text = f"""
cases = "cases.jsonl"
store = "runs.duckdb"
prices = "prices.toml"

[providers.fake]
kind = "openai"
base_url = "{url}/v1"
api_key_env = "EVD_TEST_KEY"
max_concurrency = 4
max_retries = 2

[providers.fakeanthropic]
kind = "anthropic"
base_url = "{url}"
api_key_env = "EVD_TEST_KEY"

[template]
system = "You answer support tickets."
user = "Ticket {{{{ case_id }}}}: {{{{ question }}}}"
{body}
"""
    (tmp / "prices.toml").write_text(
        "[models.cheap]\ninput = 1.0\noutput = 2.0\n[models.strong]\ninput = 10.0\noutput = 20.0\n"
    )
    path = tmp / "run.toml"
    path.write_text(text)
    return path


TWO_ARMS = """
[arms.incumbent]
provider = "fake"
model = "cheap"
temperature = 0

[arms.candidate]
provider = "fakeanthropic"
model = "strong"
temperature = 0.7
"""

CASCADE = """
[arms.always_cheap]
provider = "fake"
model = "cheap"

[arms.always_strong]
provider = "fake"
model = "strong"

[arms.cascade]
kind = "cascade"
cheap = "always_cheap"
strong = "always_strong"
verifier = { regex = "^ANSWER" }
pins = { escalation_threshold = "regex ^ANSWER" }
"""


def cascade_reply(model: str, prompt: str, n: int) -> str:
    if model == "cheap" and "hard" in prompt:
        return "UNSURE"
    return f"ANSWER from {model} #{n}"


def run(config: Path, **flags: object) -> RunSummary:
    cfg = with_flags(load_config(config), **flags)  # type: ignore[arg-type]
    assert cfg.cases is not None
    return asyncio.run(execute(cfg, load_cases(cfg.cases)))


@pytest.fixture
def setup(tmp_path: Path, fake: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> Callable[[str], Path]:
    monkeypatch.setenv("EVD_TEST_KEY", KEY)
    write_cases(tmp_path / "cases.jsonl")

    def make(body: str) -> Path:
        return write_config(tmp_path, fake.url, body)

    return make


def test_two_arms_three_repeats_then_compare_from_the_store(
    setup: Callable[[str], Path], fake: FakeLLM, run_cli: Callable[..., object]
) -> None:
    config = setup(TWO_ARMS)
    summary = run(config, repeats=3, score_regex=r"answer [02]")
    assert summary.status == "complete"
    assert summary.progress.done == 6 * 2 * 3 and summary.progress.paid_calls == 36
    # repeats are real draws: every (model, prompt) was called once per repeat
    assert set(fake.delivered.values()) == {3}
    with Store(config.parent / "runs.duckdb", read_only=True) as store:
        rows = store.attempts(summary.run_id)
        assert {r["repeat"] for r in rows} == {0, 1, 2}
        assert all(r["model_version"] in ("cheap-2024-06-01", "strong-2024-06-01") for r in rows)
        assert all(r["cost_usd"] is not None and r["cost_usd"] > 0 for r in rows)
        assert {r["score"] for r in rows} == {0.0, 1.0}
        view = store.con.execute("SELECT * FROM eval_rows LIMIT 1").fetchdf()
        assert {"task", "question", "score", "cost_usd", "model_used"} <= set(view.columns)
    result = run_cli(
        "compare", "--store", str(config.parent / "runs.duckdb"), "--by", "task",
        "--baseline", "incumbent", "--format", "json",
    )  # fmt: skip
    assert result.code == 0, result.err  # type: ignore[attr-defined]
    report = json.loads(result.out)  # type: ignore[attr-defined]
    assert report["baseline"] == "incumbent" and report["candidates"] == ["candidate"]
    slicing = report["metrics"][0]["slicings"][0]
    assert slicing["by"] == "task"


def test_same_command_again_is_all_cache_and_store(
    setup: Callable[[str], Path], fake: FakeLLM
) -> None:
    config = setup(TWO_ARMS)
    first = run(config, repeats=2)
    calls = len(fake.requests)
    again = run(config, repeats=2)
    assert again.run_id == first.run_id and not again.new_run
    assert again.progress.skipped == 24 and again.progress.done == 0
    assert len(fake.requests) == calls  # nothing paid twice
    # a third repeat is a new run (different pins), whose repeats 0-1 are cache hits
    third = run(config, repeats=3)
    assert third.run_id != first.run_id
    assert third.progress.cached_calls == 24 and third.progress.paid_calls == 12
    assert set(fake.delivered.values()) == {3}


def test_cascade_records_escalation_model_used_and_every_call(
    setup: Callable[[str], Path], fake: FakeLLM
) -> None:
    fake.reply = cascade_reply
    config = setup(CASCADE)
    summary = run(config)
    with Store(config.parent / "runs.duckdb", read_only=True) as store:
        rows = {(r["arm"], r["case_id"]): r for r in store.attempts(summary.run_id)}
        pins = dict(store.con.execute(
            "SELECT arm, pins_json FROM run_arms WHERE run_id = ?", [summary.run_id]
        ).fetchall())  # fmt: skip
    hard = {"c0", "c3"}
    for cid in ("c0", "c1", "c2", "c3", "c4", "c5"):
        r = rows[("cascade", cid)]
        calls = json.loads(r["calls_json"])
        assert r["escalated"] is (cid in hard)
        assert r["model_used"] == ("strong" if cid in hard else "cheap")
        assert [c["model"] for c in calls] == (["cheap", "strong"] if cid in hard else ["cheap"])
        assert r["cost_usd"] == pytest.approx(sum(c["cost_usd"] for c in calls))
        assert r["output"].startswith("ANSWER")
        # the cascade's steps are the same draws as the single-model arms (common draws)
        step = rows[("always_strong" if cid in hard else "always_cheap", cid)]
        assert r["output"] == step["output"]
    assert rows[("always_cheap", "c0")]["escalated"] is None
    cascade_pins = json.loads(pins["cascade"])
    assert cascade_pins["verifier"] == {"kind": "regex", "spec": "^ANSWER"}
    assert cascade_pins["pins"] == {"escalation_threshold": "regex ^ANSWER"}
    # each (model, prompt) was paid once: the cascade reused the single-model arms' calls
    assert set(fake.delivered.values()) == {1}


def test_max_cost_stops_cleanly_and_resumes(setup: Callable[[str], Path], fake: FakeLLM) -> None:
    # one lane of one (sequential), so the stop point is exact; with more lanes, calls in
    # flight when the bound is reached finish and are recorded (the documented overshoot)
    config = setup(TWO_ARMS.replace('"fakeanthropic"', '"fake"'))
    config.write_text(config.read_text().replace("max_concurrency = 4", "max_concurrency = 1"))
    first = run(config, max_cost=0.0005)  # a handful of calls at these prices
    assert first.status == "stopped: max cost"
    assert 0 < first.progress.done < 12
    assert first.progress.spent_usd >= 0.0005
    with Store(config.parent / "runs.duckdb", read_only=True) as store:
        assert len(store.attempts(first.run_id)) == first.progress.done
        assert store.runs()[0]["status"] == "stopped: max cost"
    rest = run(config)
    assert rest.run_id == first.run_id and rest.status == "complete"
    assert rest.progress.skipped == first.progress.done
    assert set(fake.delivered.values()) == {1}


def test_max_cost_needs_prices_for_every_model(setup: Callable[[str], Path]) -> None:
    from evaldelta.errors import UsageError

    config = setup(TWO_ARMS.replace('model = "strong"', 'model = "unpriced"'))
    with pytest.raises(UsageError, match="unpriced has none"):
        run(config, max_cost=1.0)


def test_api_key_never_reaches_the_store_or_the_log(
    setup: Callable[[str], Path], fake: FakeLLM, run_cli: Callable[..., object]
) -> None:
    fake.failures = ["500", "429", "400"]  # errors are recorded too; none may carry the key
    config = setup(TWO_ARMS)
    result = run_cli("run", "--config", str(config))
    assert result.code == 4  # type: ignore[attr-defined]  # the 400 left an errored attempt
    assert "errors: 1 bad_request (first: " in result.err, result.err  # type: ignore[attr-defined]
    assert f"Bearer {KEY}" in fake.auth  # the key was used...
    data = (config.parent / "runs.duckdb").read_bytes()
    wal = config.parent / "runs.duckdb.wal"
    data += wal.read_bytes() if wal.exists() else b""
    for needle in (KEY, KEY[-8:]):
        assert needle.encode() not in data  # ...and is nowhere in the store
        assert needle not in result.out + result.err  # type: ignore[attr-defined]


def test_template_hash_and_pins_are_recorded(setup: Callable[[str], Path]) -> None:
    config = setup(TWO_ARMS + '\n[pins]\nretrieval_snapshot = "idx-2024-06"\n')
    summary = run(config)
    expected = Template(
        user="Ticket {{ case_id }}: {{ question }}", system="You answer support tickets."
    ).sha256
    with Store(config.parent / "runs.duckdb", read_only=True) as store:
        arm_rows = store.con.execute(
            "SELECT arm, pins_json, reported_model_versions FROM run_arms WHERE run_id = ?",
            [summary.run_id],
        ).fetchall()
        run_row = store.runs()[0]
    pins = {arm: json.loads(p) for arm, p, _ in arm_rows}
    assert pins["incumbent"]["template_sha256"] == expected
    assert pins["incumbent"]["params"]["temperature"] == 0
    assert pins["candidate"]["params"]["temperature"] == 0.7
    assert pins["candidate"]["provider_kind"] == "anthropic"
    assert pins["incumbent"]["api_key_env"] == "EVD_TEST_KEY"
    versions = {arm: json.loads(v) for arm, _, v in arm_rows}
    assert versions == {"incumbent": ["cheap-2024-06-01"], "candidate": ["strong-2024-06-01"]}
    run_pins = json.loads(run_row["pins_json"])
    assert run_pins["retrieval_snapshot"] == "idx-2024-06"
    assert run_pins["evaldelta_version"] and run_row["cases_sha256"]


def test_errors_are_recorded_and_retried_on_the_next_run(
    setup: Callable[[str], Path], fake: FakeLLM
) -> None:
    config = setup(TWO_ARMS)
    fake.failures = ["400"]  # not retryable: the attempt fails and says why
    first = run(config)
    assert first.status == "incomplete: errors" and first.progress.errors == 1
    with Store(config.parent / "runs.duckdb", read_only=True) as store:
        errors = [r for r in store.attempts(first.run_id) if r["error"]]
        assert len(errors) == 1 and "HTTP 400" in errors[0]["error"]
        assert errors[0]["score"] is None
    again = run(config)
    assert again.status == "complete" and again.progress.done == 1


def test_interleaving_rotates_arms_and_puts_repeats_outermost() -> None:
    items = list(interleave(3, ["a", "b", "c"], 2))
    assert [(i.repeat, i.case_index, i.arm) for i in items[:6]] == [
        (0, 0, "a"), (0, 0, "b"), (0, 0, "c"), (0, 1, "b"), (0, 1, "c"), (0, 1, "a"),
    ]  # fmt: skip
    assert [i.repeat for i in items] == [0] * 9 + [1] * 9
    firsts = [items[k].arm for k in range(0, 18, 3)]
    assert set(firsts) == {"a", "b", "c"}  # no arm always goes first


def test_cli_run_with_flags_only(
    tmp_path: Path, fake: FakeLLM, run_cli: Callable[..., object], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake.url + "/v1")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    cases = tmp_path / "cases.csv"
    cases.write_text("case_id,prompt,task\n1,hello,a\n2,bye,b\n")
    store = tmp_path / "s.duckdb"
    result = run_cli(
        "run", str(cases), "--arm", "x=openai:m1", "--arm", "y=openai:m2",
        "--repeats", "2", "--store", str(store), "--score-regex", "answer 0",
    )  # fmt: skip
    assert result.code == 0, result.err  # type: ignore[attr-defined]
    assert "8/8 attempts" in result.err  # type: ignore[attr-defined]
    con = duckdb.connect(str(store), read_only=True)
    got = con.execute("SELECT arm, count(*), sum(score) FROM eval_rows GROUP BY arm ORDER BY arm")
    assert got.fetchall() == [("x", 4, 2.0), ("y", 4, 2.0)]
    con.close()


def test_a_stopped_run_is_flagged_when_compared(
    setup: Callable[[str], Path], run_cli: Callable[..., object]
) -> None:
    config = setup(TWO_ARMS.replace('"fakeanthropic"', '"fake"'))
    config.write_text(config.read_text().replace("max_concurrency = 4", "max_concurrency = 1"))
    first = run(config, max_cost=0.0005, score_regex=r"answer [02]")
    assert first.status == "stopped: max cost"
    result = run_cli("compare", "--store", str(config.parent / "runs.duckdb"), "--format", "json")
    assert result.code == 0, result.err  # type: ignore[attr-defined]
    assert "is 'stopped: max cost'" in result.err  # type: ignore[attr-defined]
    assert "attempts recorded so far" in result.err  # type: ignore[attr-defined]


def test_an_interrupted_run_says_so_and_resumes(setup: Callable[[str], Path]) -> None:
    config = setup(TWO_ARMS)
    cfg = with_flags(load_config(config))
    assert cfg.cases is not None
    cases = load_cases(cfg.cases)

    async def interrupt_after_some_calls() -> None:
        seen: list[int] = []

        def on_progress(progress: object) -> None:
            seen.append(1)
            if len(seen) == 3:
                raise KeyboardInterrupt

        await execute(cfg, cases, on_progress=on_progress)

    with pytest.raises(KeyboardInterrupt):
        asyncio.run(interrupt_after_some_calls())
    with Store(config.parent / "runs.duckdb", read_only=True) as store:
        (row,) = store.runs()
        assert row["status"] == "interrupted"
    rest = run(config)
    assert rest.status == "complete" and rest.run_id == row["run_id"]


def test_a_cascade_run_reports_escalation_rate_and_cost_per_arm(
    setup: Callable[[str], Path], fake: FakeLLM, run_cli: Callable[..., object]
) -> None:
    fake.reply = cascade_reply
    config = setup(CASCADE)
    result = run_cli("run", "--config", str(config), "--no-progress")
    assert result.code == 0, result.err  # type: ignore[attr-defined]
    err = result.err  # type: ignore[attr-defined]
    with Store(config.parent / "runs.duckdb", read_only=True) as store:
        (row,) = store.runs()
        attempts = store.attempts(row["run_id"])
    cost = {a: sum(r["cost_usd"] for r in attempts if r["arm"] == a) for a in ("cascade",)}
    # c0 and c3 of the six cases are "hard": the cheap model is unsure, the cascade escalates
    assert re.search(r"arm cascade: 6 attempts, 0 errors, \$[\d.]+ .*escalated 33\.3%", err), err
    assert f"${cost['cascade']:.4f}" in err
    assert re.search(r"arm always_cheap: 6 attempts, 0 errors, \$[\d.]+", err), err
    assert (
        "always_cheap: 6 attempts, 0 errors" in err
        and "escalated" not in err.split("arm always_cheap")[1].splitlines()[0]
    )
