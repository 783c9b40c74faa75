"""The upstream change detector on the bundled tickets (data/seed002_upstream.csv)."""

from __future__ import annotations

from importlib.resources import files

import pandas as pd

from evaldelta.sources.hashes import payload_hash, prompt_hash, retrieval_hash

DATA = files("evaldelta.data")


def _load(name: str) -> pd.DataFrame:
    with DATA.joinpath(name).open("r", encoding="utf-8") as fh:
        return pd.read_csv(fh, dtype=str, keep_default_na=False)


def test_the_generators_hashes_are_the_librarys():
    """tools/generate_demo_data.py re-implements the hashes; they agree with evaldelta's."""
    df = _load("seed002_upstream.csv")
    assert len(df) == 80
    for row in df.itertuples():
        system, user = str(row.rendered_prompt).split("\nuser: ", 1)
        messages = [{"role": "system", "content": system.removeprefix("system: ")},
                    {"role": "user", "content": user}]  # fmt: skip
        assert row.prompt_hash == prompt_hash(messages)
        assert row.retrieval_hash == retrieval_hash(row.retrieved_ids)
        assert row.payload_hash == payload_hash({"temperature": 0.0, "max_tokens": 400})


def test_same_scores_as_seed002_and_four_tickets_moved():
    up, base = _load("seed002_upstream.csv"), _load("seed002.csv")
    assert up[list(base.columns)].equals(base)
    wide = up.pivot(index="case_id", columns="arm", values="retrieval_hash")
    moved = sorted(wide.index[wide.incumbent != wide.candidate])
    assert len(moved) == 4
    prompts = up.pivot(index="case_id", columns="arm", values="prompt_hash")
    assert sorted(prompts.index[prompts.incumbent != prompts.candidate]) == moved


def test_the_demo_shows_the_detector_and_the_refusal():
    from evaldelta.demo.upstream import upstream_demo, upstream_demo_text

    result = upstream_demo()
    counts = {c.kind: (c.compared, c.differing, c.confounded) for c in result.upstream}
    assert counts == {
        "prompt": (40, 4, True),
        "payload": (40, 0, False),
        "retrieval": (40, 4, True),
    }
    text = upstream_demo_text()
    assert "4 of 40 paired cases saw a different rendered prompt between incumbent and " in text
    assert "gate.toml: the gate refuses to decide" in text
    assert "Verdict: PASS (exit 0)" in text  # with [upstream] allow
