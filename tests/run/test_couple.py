"""``run --couple``: every arm sends one seed per (case, repeat), recorded, cached and pinned."""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evaldelta.errors import ConfigError
from evaldelta.run.config import parse_config
from evaldelta.run.coupling import CouplingWarning, couple_seed
from evaldelta.store import Store
from tests.run.test_run import KEY, TWO_ARMS, run, write_cases, write_config
from tests.servers.fake_llm import FakeLLM

OPENAI_ARMS = TWO_ARMS.replace('"fakeanthropic"', '"fake"')


@pytest.fixture
def make(tmp_path: Path, fake: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> Callable[[str], Path]:
    """A run config over six cases against the fake server, with ``body``'s arms."""
    monkeypatch.setenv("EVD_TEST_KEY", KEY)
    write_cases(tmp_path / "cases.jsonl")
    return lambda body: write_config(tmp_path, fake.url, body)


def test_seed_is_deterministic_and_differs_across_cases_repeats_and_runs() -> None:
    seeds = {(c, r): couple_seed(0, f"c{c}", r) for c in range(200) for r in range(3)}
    assert seeds == {(c, r): couple_seed(0, f"c{c}", r) for c in range(200) for r in range(3)}
    assert len(set(seeds.values())) == len(seeds)  # no two (case, repeat) share a seed
    assert all(0 <= s < 2**31 for s in seeds.values())
    assert couple_seed(1, "c0", 0) != couple_seed(0, "c0", 0)
    assert couple_seed(0, "c1", 0) != couple_seed(0, "c10", 0)  # no ambiguity in the join


def _seeds(fake: FakeLLM) -> dict[tuple[str, str], list[Any]]:
    """Each model's seeds by prompt, in request order."""
    out: dict[tuple[str, str], list[Any]] = {}
    for r in fake.requests:
        out.setdefault((r["model"], r["prompt"]), []).append(r["body"].get("seed", "absent"))
    return out


def _prompt_case(prompt: str) -> str:
    return prompt.split("Ticket ", 1)[1].split(":", 1)[0]


def test_both_arms_of_a_case_get_the_same_seed(make: Callable[[str], Path], fake: FakeLLM) -> None:
    summary = run(make(OPENAI_ARMS), repeats=2, couple=True)
    assert summary.status == "complete" and summary.progress.paid_calls == 6 * 2 * 2
    seeds = _seeds(fake)
    for (model, prompt), sent in seeds.items():
        case = _prompt_case(prompt)
        # repeat 0 then repeat 1, each the derived seed of the run seed, case and repeat
        assert sent == [couple_seed(0, case, 0), couple_seed(0, case, 1)], (model, case)
        other = "strong" if model == "cheap" else "cheap"
        assert seeds[(other, prompt)] == sent
    assert len({s for sent in seeds.values() for s in sent}) == 6 * 2


def test_without_couple_no_seed_or_the_arms_own(make: Callable[[str], Path], fake: FakeLLM) -> None:
    body = OPENAI_ARMS.replace("temperature = 0.7", "temperature = 0.7\nseed = 11")
    run(make(body), repeats=2)
    by_model: dict[str, set[Any]] = {}
    for (model, _), sent in _seeds(fake).items():
        by_model.setdefault(model, set()).update(sent)
    assert by_model == {"cheap": {"absent"}, "strong": {11}}


def _pins(config: Path, run_id: str) -> dict[str, dict[str, Any]]:
    with Store(config.parent / "runs.duckdb", read_only=True) as store:
        rows = store.con.execute(
            "SELECT arm, pins_json FROM run_arms WHERE run_id = ?", [run_id]
        ).fetchall()
    return {arm: json.loads(text) for arm, text in rows}


def test_pins_calls_and_cache_record_the_seed(make: Callable[[str], Path], fake: FakeLLM) -> None:
    config = make(OPENAI_ARMS)
    plain = run(config)
    assert all("couple" not in p for p in _pins(config, plain.run_id).values())
    paid = len(fake.requests)
    coupled = run(config, couple=True)
    assert coupled.run_id != plain.run_id  # a coupled run is a run of its own
    # the seed is part of the cache key: nothing of the uncoupled run answers it
    assert coupled.progress.cached_calls == 0 and len(fake.requests) == 2 * paid
    for pins in _pins(config, coupled.run_id).values():
        assert pins["couple"] is True and pins["couple_run_seed"] == 0
        assert pins["params"]["seed"] is None  # the arm's own seed; the calls carry the case's
    with Store(config.parent / "runs.duckdb", read_only=True) as store:
        rows = store.attempts(coupled.run_id)
    for r in rows:
        (call,) = json.loads(r["calls_json"])
        assert call["seed"] == couple_seed(0, r["case_id"], r["repeat"])
    again = run(config, couple=True)  # resumes: every attempt already stored
    assert again.run_id == coupled.run_id and again.progress.done == 0
    assert len(fake.requests) == 2 * paid


def test_another_run_seed_is_another_run_with_other_seeds(
    make: Callable[[str], Path], fake: FakeLLM
) -> None:
    config = make(OPENAI_ARMS)
    config.write_text(
        config.read_text().replace('prices = "prices.toml"', 'prices = "prices.toml"\nseed = 5')
    )
    summary = run(config, couple=True)
    assert {p["couple_run_seed"] for p in _pins(config, summary.run_id).values()} == {5}
    sent = {s for seeds in _seeds(fake).values() for s in seeds}
    assert sent == {couple_seed(5, f"c{i}", 0) for i in range(6)}


def test_anthropic_arm_is_not_coupled_and_says_so_once(
    make: Callable[[str], Path], fake: FakeLLM
) -> None:
    config = make(TWO_ARMS)  # incumbent: openai; candidate: anthropic (no seed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        summary = run(config, couple=True)
    said = [w for w in caught if issubclass(w.category, CouplingWarning)]
    assert len(said) == 1 and "'candidate'" in str(said[0].message)
    assert "anthropic" in str(said[0].message)
    pins = _pins(config, summary.run_id)
    assert pins["incumbent"]["couple"] is True
    assert pins["candidate"]["couple"] is False
    assert "takes no seed" in pins["candidate"]["couple_note"]
    anthropic = [r for r in fake.requests if r["model"] == "strong"]
    assert anthropic and all("seed" not in r["body"] for r in anthropic)


def test_cli_couple_flag_warns_on_stderr(
    make: Callable[[str], Path], fake: FakeLLM, run_cli: Callable[..., Any]
) -> None:
    config = make(TWO_ARMS)
    result = run_cli("run", "--config", str(config), "--couple")
    assert result.code == 0, result.err
    warning = [line for line in result.err.splitlines() if "warning" in line]
    assert len(warning) == 1 and "--couple: arm 'candidate'" in warning[0]
    assert "CouplingWarning" not in result.err  # said once, plainly, not as a Python warning
    cheap = [r["body"].get("seed") for r in fake.requests if r["model"] == "cheap"]
    assert all(isinstance(s, int) for s in cheap)


def test_config_key_and_its_errors() -> None:
    base = '[arms.a]\nprovider = "openai"\nmodel = "m"\n'
    assert parse_config("couple = true\n" + base).couple is True
    assert parse_config(base).couple is False
    with pytest.raises(ConfigError, match=r"couple.*true or false"):
        parse_config('couple = "yes"\n' + base)


def test_compare_reads_coupled_pins_and_reports_the_coupling(
    make: Callable[[str], Path], fake: FakeLLM, run_cli: Callable[..., Any]
) -> None:
    config = make(OPENAI_ARMS)
    summary = run(config, repeats=2, couple=True, score_regex=r"q[0-2] ")
    store = str(config.parent / "runs.duckdb")
    result = run_cli("compare", "--store", store, "--baseline", "incumbent", "--format", "json")
    assert result.code == 0, result.err
    report = json.loads(result.out)
    assert report["pins"]["candidate"]["couple"] is True
    assert not any(d["key"].startswith("couple") for d in report["pin_differences"])
    coupling = report["metrics"][0]["slicings"][0]["pairs"][0]["coupling"]
    assert coupling["coupled"] is True and coupling["run_seed"] == 0
    assert coupling["overall"]["n"] == 6
    text = run_cli("compare", "--store", store, "--run", summary.run_id, "--baseline", "incumbent")
    assert "Arms coupled by seed" in text.out
