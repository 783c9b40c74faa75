"""Pins from a run store, side by side in every report; input paths as a person names them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from evaldelta.comparison import compare
from evaldelta.demo.scenarios import SCENARIOS, run_scenario
from evaldelta.report import render_json, render_text
from evaldelta.report.html import render_html
from evaldelta.sources import Source, display_path, flatten_pins
from evaldelta.store import Store, resolve_run
from tests.run.test_run import KEY, TWO_ARMS, run, write_cases, write_config
from tests.servers.fake_llm import FakeLLM

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "schema" / "comparison.schema.json").read_text())

ARMS = {
    "v1": {
        "kind": "model",
        "provider_kind": "openai",
        "model": "small",
        "params": {"temperature": 0, "top_p": None, "stop": ["\n"]},
        "template_sha256": "abc123",
        "api_key_env": "MY_KEY_ENV",
    },
    "v2": {
        "kind": "model",
        "provider_kind": "openai",
        "model": "large",
        "params": {"temperature": 0.0, "top_p": 0.9, "stop": ["\n"]},
        "template_sha256": "abc123",
        "api_key_env": "MY_KEY_ENV",
    },
}


def _store(path: Path, arms: dict[str, dict[str, object]] = ARMS) -> Path:
    """A finished run written through the store's own API: 24 cases, 2 tasks, graded."""
    cases = [(f"c{i}", {"case_id": f"c{i}", "task": ("faq", "extract")[i % 2]}) for i in range(24)]
    with Store(path) as store:
        store.begin_run(
            "run-1",
            cases_path="cases.jsonl",
            cases_sha256="0" * 64,
            cases=cases,
            case_columns=["task"],
            repeats=1,
            arms=arms,
            pins={"retrieval_snapshot": "idx-2024-06"},
            evaldelta_version="test",
        )
        for k, arm in enumerate(arms):
            for i, (cid, _) in enumerate(cases):
                score = ((i * 7 + k * 3) % 10) / 10
                store.put_attempt("run-1", arm, cid, 0, {"score": score, "cost_usd": 0.01})
        store.finish_run("run-1", "complete")
    return path


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> object:
    path = _store(tmp_path_factory.mktemp("pins") / "runs.duckdb")
    return compare([Source(path, run="run-1")], baseline="v1", by=("task",))


def test_pins_are_flattened_per_compared_arm(stored) -> None:
    pins = stored.pins
    assert list(pins) == ["v1", "v2"]
    assert pins["v1"]["params.temperature"] == 0 and pins["v2"]["params.top_p"] == 0.9
    assert pins["v1"]["params.stop"] == '["\\n"]'  # lists: compact JSON text
    assert pins["v2"]["run.retrieval_snapshot"] == "idx-2024-06"  # the run's own pins
    assert pins["v2"]["reported_model_versions"] == "[]"
    assert all(isinstance(v, str | int | float | bool | type(None)) for v in pins["v1"].values())


def test_json_carries_pins_and_validates(stored) -> None:
    doc = json.loads(render_json(stored))
    jsonschema.validate(doc, SCHEMA)
    assert doc["pins"]["v2"]["model"] == "large"


def test_text_lists_only_the_differing_pins(stored) -> None:
    text = render_text(stored)
    first, head = text.split("\n", 1)[0], text.split("\n", 1)[1].split("evaldelta compare ·", 1)[0]
    assert first == "baseline v1 (--baseline); candidates: v2"
    # top_p differs and is not part of the declared arm difference: the loud warning next
    assert head.startswith("!! PINS DIFFER BEYOND THE ARMS' DECLARED DIFFERENCE: params.top_p")
    assert "\nPins that differ between the arms (" in head
    assert re.search(r"model\s+small\s+large", head)
    assert re.search(r"params\.top_p\s+null\s+0\.9", head)
    # equal pins (0 and 0.0 are one temperature) are counted, not listed
    for same in ("params.temperature", "template_sha256", "api_key_env", "retrieval_snapshot"):
        assert same not in head
    assert "8 more, the same in every arm, are listed in JSON and HTML" in head


def test_html_pins_table_highlights_the_differences(stored) -> None:
    page = render_html(stored)
    section = page.split('<section id="pins">', 1)[1].split("</section>", 1)[0]
    differing = re.findall(r'<tr class="differs"><td class="pin"><code>([^<]+)</code>', section)
    assert differing == ["model", "params.top_p"]
    assert "<th>v1</th><th>v2</th>" in section
    same = section.split("<details>", 1)[1]
    assert "same in every arm" in same and "<code>template_sha256</code>" in same
    assert "<code>params.temperature</code>" in same


def test_no_pins_without_a_store() -> None:
    result = run_scenario(next(s for s in SCENARIOS if s.key == "000"))
    assert result.pins == {}
    assert 'id="pins"' not in render_html(result)
    assert not render_text(result).startswith("Pins")


def test_a_pin_named_like_a_secret_is_redacted() -> None:
    flat = flatten_pins({"provider": {"api_key": "sk-live-123", "api_key_env": "OPENAI_API_KEY"}})
    assert flat == {"provider.api_key": "[redacted]", "provider.api_key_env": "OPENAI_API_KEY"}


def test_pins_of_a_real_run_never_carry_the_api_key(
    tmp_path: Path, fake: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVD_TEST_KEY", KEY)
    write_cases(tmp_path / "cases.jsonl")
    config = write_config(
        tmp_path, fake.url, TWO_ARMS + '\n[pins]\nretrieval_snapshot = "idx-2024-06"\n'
    )
    summary = run(config, score_regex=r"answer [02]")
    store = config.parent / "runs.duckdb"
    result = compare([Source(store, run=resolve_run(store, None))], baseline="incumbent")
    assert result.pins["incumbent"]["model"] == "cheap"
    assert result.pins["candidate"]["model"] == "strong"
    assert result.pins["candidate"]["params.temperature"] == 0.7
    assert result.pins["candidate"]["reported_model_versions"] == '["strong-2024-06-01"]'
    assert result.pins["incumbent"]["api_key_env"] == "EVD_TEST_KEY"  # the name, not the key
    assert result.inputs == (f"{store} (run {summary.run_id})",)
    for rendered in (render_json(result), render_text(result), render_html(result)):
        assert KEY not in rendered and KEY[-8:] not in rendered
        assert not re.search(r"sk-[A-Za-z0-9-]{8,}", rendered)  # no key-looking value invented
    text = render_text(result)
    assert re.search(r"model\s+cheap\s+strong", text)


def test_bundled_demo_data_is_named_by_file_name() -> None:
    result = run_scenario(next(s for s in SCENARIOS if s.key == "004"))
    assert result.inputs == ("seed004.csv",)
    header = render_html(result).split("</header>", 1)[0]
    assert "<code>seed004.csv</code>" in header and "/src/evaldelta/data" not in header


def test_paths_under_the_current_folder_are_relative(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = tmp_path / "sub" / "runs.csv"
    runs.parent.mkdir()
    runs.write_text("case_id,arm,score\nc1,a,1\nc2,a,0\nc1,b,1\nc2,b,1\n")
    monkeypatch.chdir(tmp_path)
    assert compare([runs]).inputs == (str(Path("sub") / "runs.csv"),)
    assert compare([Path("sub/runs.csv")]).inputs == ("sub/runs.csv",)
    elsewhere = Path("/definitely/not/here.csv")
    assert display_path(elsewhere, cwd=tmp_path) == str(elsewhere)
