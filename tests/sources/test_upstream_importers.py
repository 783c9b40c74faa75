"""Importers fill the upstream hashes from what their logs carry (real fixtures).

References: the prompt text (and generation kwargs) as each log itself records it, hashed
with :mod:`evaldelta.sources.hashes`'s definition (tests/comparison/test_upstream.py pins that
definition to hand-written canonical JSON).
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq

from evaldelta.comparison import compare
from evaldelta.sources import Source, import_rows
from evaldelta.sources.hashes import payload_hash, prompt_hash

from .helpers import LOGS


def _rows(paths: list[Path], tmp_path: Path) -> list[dict]:  # type: ignore[type-arg]
    out = tmp_path / "rows.parquet"
    import_rows([Source(p) for p in paths], out)
    return pq.read_table(out).to_pylist()


def test_promptfoo_rendered_prompt_and_config(tmp_path: Path) -> None:
    path = LOGS / "promptfoo" / "v0.121.20" / "results.json"
    logged = json.loads(path.read_text())["results"]["results"]
    raw = {(r["provider"]["label"] if isinstance(r["provider"], dict) else r["provider"],
            r["prompt"]["label"], r["testCase"].get("description")): r["prompt"]
           for r in logged}  # fmt: skip
    rows = _rows([path], tmp_path)
    assert rows and all(r["prompt_hash"] for r in rows)
    for row in rows:
        provider, label = row["arm"].split(" / ")
        prompt = raw[(provider, label, row["case_id"])]
        assert row["prompt_hash"] == prompt_hash(prompt["raw"])
        assert row["rendered_prompt"] == prompt["raw"]
        assert row["payload_hash"] == payload_hash(prompt["config"])
    result = compare([path], baseline="model-a / terse")
    got = {(c.candidate, c.kind): (c.compared, c.differing, c.expected_by) for c in result.upstream}
    # a model change (same prompts) sees none; a prompt change sees all 8, declared by its pins
    assert got[("model-b / terse", "prompt")] == (8, 0, "")
    assert got[("model-a / verbose", "prompt")] == (8, 8, "pins")
    assert not any(c.confounded for c in result.upstream)


def test_lmeval_prompt_and_generation_kwargs(tmp_path: Path) -> None:
    base = LOGS / "lmeval" / "v0.4.13"
    arms = sorted(base.glob("arm-seed*/evaldelta__dummy-*"))
    rows = _rows(arms, tmp_path)
    logged = {}
    for sample in sorted(base.glob("arm-seed1/*/samples_evaldelta_gen_*.jsonl")):
        for line in sample.read_text().splitlines():
            d = json.loads(line)
            logged[d["doc_id"]] = d["arguments"]["gen_args_0"]
    gen = [r for r in rows if r["task"] == "evaldelta_gen" and r["arm"] == "evaldelta/dummy-a"]
    assert gen
    for row in gen:
        args = logged[int(row["case_id"].rsplit("/", 1)[-1])]  # case ids: evaldelta_gen/0
        assert row["prompt_hash"] == prompt_hash(args["arg_0"])
        assert row["payload_hash"] == payload_hash(args["arg_1"])
    mc = [r for r in rows if r["task"] != "evaldelta_gen"]
    assert mc and all(r["prompt_hash"] and r["payload_hash"] is None for r in mc)
    result = compare(arms)
    got = {c.kind: (c.paired, c.compared, c.differing) for c in result.upstream}
    assert got == {"prompt": (30, 30, 0), "payload": (30, 15, 0)}


def test_inspect_messages_before_the_first_reply(tmp_path: Path) -> None:
    logs = sorted((LOGS / "inspect" / "v0.3.285" / "json").glob("*.json"))
    rows = _rows(logs, tmp_path)
    first = json.loads(logs[0].read_text())["samples"][0]
    asked = [m for m in first["messages"] if m["role"] != "assistant"][:1]
    assert asked and asked[0]["role"] == "user"
    mine = [r for r in rows if r["case_id"] == first["id"] and r["repeat"] == first["epoch"] - 1]
    assert mine[0]["prompt_hash"] == prompt_hash([{"role": "user", "content": asked[0]["content"]}])
    assert all(r["prompt_hash"] for r in rows)
