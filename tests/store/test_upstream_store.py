"""The run store records each attempt's upstream hashes; older stores open and migrate."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pytest

from evaldelta.comparison import compare
from evaldelta.sources import Source
from evaldelta.sources.hashes import payload_hash, prompt_hash, retrieval_hash
from evaldelta.store import SCHEMA_VERSION, Store, resolve_run
from tests.run.test_run import KEY, run, write_config
from tests.servers.fake_llm import FakeLLM

ARMS = """
[arms.v1]
provider = "fake"
model = "cheap"
temperature = 0

[arms.v2]
provider = "fake"
model = "strong"
temperature = 0

[arms.v3]
provider = "fake"
model = "cheap"
temperature = 0
user = "Ticket {{ case_id }}, answer briefly: {{ question }}"
"""


@pytest.fixture
def store(tmp_path: Path, fake: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("EVD_TEST_KEY", KEY)
    with (tmp_path / "cases.jsonl").open("w") as fh:
        for i in range(4):
            row: dict[str, Any] = {"case_id": f"c{i}", "task": "faq", "question": f"q{i}"}
            if i < 2:
                row["retrieved_ids"] = ["doc-b", "doc-a"]
            fh.write(json.dumps(row) + "\n")
    run(write_config(tmp_path, fake.url, ARMS), score_regex=r"answer")
    return tmp_path / "runs.duckdb"


def test_every_attempt_records_its_hashes(store: Path):
    run_id = resolve_run(store, None)
    with Store(store, read_only=True) as s:
        rows = {(r["arm"], r["case_id"]): r for r in s.attempts(run_id)}
    c0 = rows[("v1", "c0")]
    messages = [
        {"role": "system", "content": "You answer support tickets."},
        {"role": "user", "content": "Ticket c0: q0"},
    ]  # the config's template rendered on case c0, written out
    assert c0["prompt_hash"] == prompt_hash(messages)
    assert c0["rendered_prompt"] == "system: You answer support tickets.\nuser: Ticket c0: q0"
    params = {"temperature": 0.0, "top_p": None, "max_tokens": None, "seed": None, "stop": []}
    assert c0["payload_hash"] == payload_hash(params)
    assert c0["retrieval_hash"] == retrieval_hash(["doc-a", "doc-b"])
    assert rows[("v1", "c3")]["retrieval_hash"] is None  # the case has no retrieved ids
    assert rows[("v2", "c0")]["prompt_hash"] == c0["prompt_hash"]  # same template
    assert rows[("v3", "c0")]["prompt_hash"] != c0["prompt_hash"]
    assert KEY not in json.dumps(list(rows.values()), default=str)


def test_a_model_release_sees_no_prompt_change_a_prompt_release_declares_one(store: Path):
    source = Source(store, run=resolve_run(store, None))
    result = compare([source], baseline="v1")
    got = {(c.candidate, c.kind): (c.paired, c.compared, c.differing, c.expected_by)
           for c in result.upstream}  # fmt: skip
    assert got == {
        ("v2", "prompt"): (4, 4, 0, ""),
        ("v2", "payload"): (4, 4, 0, ""),
        ("v2", "retrieval"): (4, 2, 0, ""),
        ("v3", "prompt"): (4, 4, 4, "pins"),  # the template differs: a declared prompt change
        ("v3", "payload"): (4, 4, 0, ""),
        ("v3", "retrieval"): (4, 2, 0, ""),
    }
    assert not any(c.confounded for c in result.upstream)
    v3 = next(c for c in result.upstream if c.candidate == "v3" and c.kind == "prompt")
    assert v3.declared == ("prompt",)
    assert v3.examples[0].candidate_text == (
        "system: You answer support tickets.\nuser: Ticket c0, answer briefly: q0"
    )


def _make_v2(store: Path) -> None:
    """Turn a current store into a version-2 one: no hash columns, the old view."""
    con = duckdb.connect(str(store))
    con.execute("DROP VIEW eval_rows")
    for column in ("prompt_hash", "payload_hash", "retrieval_hash", "rendered_prompt"):
        con.execute(f"ALTER TABLE attempts DROP COLUMN {column}")
    con.execute(
        "CREATE VIEW eval_rows AS SELECT a.run_id, a.case_id, a.arm, a.repeat, a.score, "
        "a.output FROM attempts a"
    )
    con.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    con.close()


def test_a_version_2_store_is_read_then_migrated(store: Path, run_cli: Callable[..., Any]):
    _make_v2(store)
    run_id = resolve_run(store, None)
    with Store(store, read_only=True) as s:  # readable as it is
        assert s.version == 2
    result = compare([Source(store, run=run_id)], baseline="v1")
    assert result.upstream == ()  # no hashes recorded: nothing to say, nothing refused
    with Store(store) as s:  # opened for writing: migrated in place
        assert s.version == SCHEMA_VERSION
    with Store(store, read_only=True) as s:
        (version,) = s.con.execute("SELECT value FROM meta").fetchone() or ("",)
        rows = s.attempts(run_id)
    assert version == str(SCHEMA_VERSION) == "4"
    assert rows and all(r["prompt_hash"] is None for r in rows)  # old attempts: null
    res = run_cli("compare", "--store", store, "--baseline", "v1")
    assert res.code == 0, res.err
    assert "Upstream inputs" in res.out  # the columns exist now; the hashes are unrecorded
    assert "not recorded for both arms" in res.out
