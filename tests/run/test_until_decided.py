"""`run --until-decided` against the fake server: stop once the gate's answer is decided.

The fake server's replies depend on the model and the prompt only (never on how often the
prompt was asked), so a resumed run, or a run on another store, sees the same outputs.
Scores are the regex ``^OK``; a model passes a task's case with the probability its ``bars``
give (a hash of model and prompt, or of the prompt alone for arms that answer alike).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from evaldelta.comparison.model import Sequential
from evaldelta.gating import compare_with_policy
from evaldelta.run.cases import load_cases
from evaldelta.run.config import load_config, with_flags
from evaldelta.run.decided import UntilDecided
from evaldelta.run.execute import RunSummary, execute
from evaldelta.run.order import allocate, make_order
from evaldelta.sources import Source
from evaldelta.store import Store
from tests.conftest import CliResult, one_line_error
from tests.run.test_run import KEY, write_config
from tests.servers.fake_llm import FakeLLM

ROOT = Path(__file__).resolve().parents[2]
TASKS = ("faq", "extraction", "summary")
ARMS = """
[arms.incumbent]
provider = "fake"
model = "cheap"

[arms.candidate]
provider = "fake"
model = "strong"

[score]
regex = "^OK"
"""


def _unit(text: str) -> float:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) / 2**32


def replies(bars: dict[str, dict[str, float]], alike: bool = False) -> Callable[..., str]:
    """OK with probability ``bars[model][task]`` (default 0.85), independently per model."""

    def reply(model: str, prompt: str, n: int) -> str:
        task = next(t for t in TASKS if f"about {t}" in prompt)
        bar = bars.get(model, {}).get(task, 0.85)
        return "OK" if _unit(prompt if alike else model + prompt) < bar else "BAD"

    return reply


def setup_run(tmp: Path, url: str, per_slice: int, margin: float = 0.1) -> Path:
    """Cases (``per_slice`` of each task), a run config and a gate policy in ``tmp``."""
    with (tmp / "cases.jsonl").open("w") as f:
        for i in range(per_slice * len(TASKS)):
            task = TASKS[i % len(TASKS)]
            f.write(json.dumps({"case_id": f"c{i:03d}", "task": task,
                                "question": f"question {i} about {task}"}) + "\n")  # fmt: skip
    (tmp / "gate.toml").write_text(f"[defaults]\nmax_regression = {margin}\n")
    return write_config(tmp, url, ARMS)


def run(config: Path, **plan: object) -> RunSummary:
    cfg = with_flags(load_config(config))
    assert cfg.cases is not None
    until = UntilDecided(policy=config.parent / "gate.toml", by="task", **plan)  # type: ignore[arg-type]
    return asyncio.run(execute(cfg, load_cases(cfg.cases), until_decided=until))


def sequential(summary: RunSummary) -> Sequential:
    assert summary.decision is not None
    seq = summary.decision.comparison.sequential
    assert seq is not None
    return seq


@pytest.fixture
def fake(fake: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> FakeLLM:
    monkeypatch.setenv("EVD_TEST_KEY", KEY)
    return fake


def test_a_regressed_slice_stops_early_fails_and_is_named(tmp_path: Path, fake: FakeLLM) -> None:
    fake.reply = replies({"cheap": {"extraction": 0.9}, "strong": {"extraction": 0.2}})
    config = setup_run(tmp_path, fake.url, per_slice=60)
    summary = run(config, seed=1)
    assert summary.decision is not None
    verdict, seq = summary.decision.verdict, sequential(summary)
    assert verdict.outcome == "fail" and verdict.exit_code == 1
    assert {r.slice for r in verdict.rules if r.outcome == "fail"} == {"extraction"}
    assert seq.stopped_because == "the verdict is decided: fail on extraction"
    assert seq.fixed_calls == 180 * 2 and seq.calls is not None and seq.calls < seq.fixed_calls
    assert seq.calls == len(fake.requests) == seq.looks[-1].calls  # every call, once
    assert seq.looks[-1].outcome == "fail" and "extraction" in seq.looks[-1].decided
    assert [look.cases for look in seq.looks] == [30 * k for k in range(1, len(seq.looks) + 1)]
    assert seq.column == "sequence" and "until decided" in (seq.stopping or "")
    with Store(tmp_path / "runs.duckdb", read_only=True) as store:
        rows = store.attempts(summary.run_id)
        looks = store.looks(summary.run_id)
        status = store.runs()[0]["status"]
    assert status == "complete" and [lk["outcome"] for lk in looks][-1] == "fail"
    by_case: dict[str, set[int]] = {}
    for r in rows:  # every case on every arm, with the one sequence number of its case
        by_case.setdefault(r["case_id"], set()).add(r["sequence"])
    assert all(len(s) == 1 for s in by_case.values())
    assert sorted(s for (s,) in by_case.values()) == list(range(1, seq.looks[-1].cases + 1))
    assert len(rows) == seq.calls

    # the gate on the store, read in the run's order, decides as the run did
    stored = Source(tmp_path / "runs.duckdb", run=summary.run_id)
    _, again = compare_with_policy([stored], tmp_path / "gate.toml", by=("task",), order="sequence")
    assert [(r.slice, r.outcome, r.ci) for r in again.rules] == [
        (r.slice, r.outcome, r.ci) for r in verdict.rules
    ]

    # the same run resumed with --stop all goes on for the full picture, from the same looks
    more = run(config, seed=1, stop="all")
    assert more.run_id == summary.run_id and more.decision is not None
    full = sequential(more)
    assert full.looks[: len(seq.looks)] == seq.looks
    assert full.stopped_because in ("every slice rule is decided", "the cases ran out")
    assert full.calls is not None and seq.calls < full.calls <= full.fixed_calls  # type: ignore[operator]
    assert more.decision.verdict.outcome == "fail"


def test_identical_outputs_run_to_the_budget_inconclusive(
    tmp_path: Path, fake: FakeLLM, run_cli: Callable[..., CliResult]
) -> None:
    fake.reply = replies({}, alike=True)  # both arms answer alike: no pair is informative
    config = setup_run(tmp_path, fake.url, per_slice=40)
    policy = tmp_path / "gate.toml"
    res = run_cli("run", "--config", config, "--until-decided", "--policy", policy, "--by",
                  "task", "--max-calls", "130", "--seed", "2")  # fmt: skip
    assert res.code == 3, res.err
    err = res.err
    assert "evaldelta: look 1: 30 cases, 60 calls" in err
    assert "evaldelta: look 2: 60 cases, 120 calls" in err
    assert "evaldelta: look 3: 65 cases, 130 calls" in err  # cut to what the budget pays
    assert "the budget is spent: --max-calls 130; 130 calls of the fixed design's 240" in err
    assert "look 4" not in err
    assert "Verdict: INCONCLUSIVE (exit 3)" in res.out
    assert len(fake.requests) == 130
    gate = run_cli("gate", "--store", tmp_path / "runs.duckdb", "--policy", policy, "--by",
                   "task", "--sequential", "--order", "sequence")  # fmt: skip
    assert gate.code == 3, gate.err
    assert gate.out == res.out[res.out.index("evaldelta gate") :]


def test_identical_releases_stop_with_pass_once_the_margin_allows(
    tmp_path: Path, fake: FakeLLM
) -> None:
    fake.reply = replies({})  # the same pass rate, drawn independently per arm
    config = setup_run(tmp_path, fake.url, per_slice=150, margin=0.25)
    summary = run(config, seed=1, batch=20)
    assert summary.decision is not None
    verdict, seq = summary.decision.verdict, sequential(summary)
    assert verdict.outcome == "pass" and verdict.exit_code == 0
    assert seq.stopped_because == "the verdict is decided: every slice rule passed"
    assert seq.calls is not None and seq.fixed_calls is not None
    assert seq.calls < seq.fixed_calls
    # a slice decided early received no case after its look
    decided_at = {s: next(lk.index for lk in seq.looks if s in lk.decided) for s in TASKS}
    assert len(set(decided_at.values())) > 1


def test_inconclusive_rules_carry_the_pairs_a_fixed_design_needs(
    tmp_path: Path, fake: FakeLLM
) -> None:
    fake.reply = replies({})
    config = setup_run(tmp_path, fake.url, per_slice=20)
    summary = run(config, seed=4, max_calls=60)
    assert summary.decision is not None
    verdict, seq = summary.decision.verdict, sequential(summary)
    assert verdict.outcome == "inconclusive" and summary.status == "stopped: max calls"
    assert seq.calls == 60 and len(seq.looks) == 1
    undecided = [r for r in verdict.rules if r.rule == "max_regression"]
    assert undecided and all(r.outcome == "inconclusive" for r in undecided)
    assert all(r.plan is not None for r in undecided if r.n)


def test_the_same_seed_gives_the_same_order_and_looks(tmp_path: Path, fake: FakeLLM) -> None:
    fake.reply = replies({"strong": {"extraction": 0.3}})
    seen = []
    for name, seed in (("a", 5), ("b", 5), ("c", 6)):
        folder = tmp_path / name
        folder.mkdir()
        config = setup_run(folder, fake.url, per_slice=30)
        summary = run(config, seed=seed)
        with Store(folder / "runs.duckdb", read_only=True) as store:
            order = {r["case_id"]: r["sequence"] for r in store.attempts(summary.run_id)}
        seen.append((summary.run_id, order, sequential(summary).looks))
    (id_a, order_a, looks_a), (id_b, order_b, looks_b), (id_c, order_c, _) = seen
    assert id_a == id_b != id_c  # the seed is part of the run's identity
    assert order_a == order_b and looks_a == looks_b
    assert order_c != order_a


def test_allocation_is_proportional_with_one_case_per_open_slice() -> None:
    order = make_order(["a"] * 50 + ["b"] * 30 + ["c"] * 5, seed=7)
    assert allocate(order, {}, ["a", "b", "c"], 10) == {"a": 17, "b": 10, "c": 3}
    assert allocate(order, {"c": 4}, ["a", "b", "c"], 10) == {"a": 18, "b": 11, "c": 1}
    assert allocate(order, {"c": 5}, ["a", "b", "c"], 10, cap=7) == {"a": 4, "b": 3}
    assert allocate(order, {}, ["c"], 10) == {"c": 5}  # all it has
    assert allocate(order, {}, ["a", "b", "c"], 10, cap=2) == {"a": 1, "b": 1}
    assert allocate(order, {"c": 5}, ["c"], 10) == {}
    first = order.take({}, {"a": 17, "b": 10, "c": 3})
    assert sorted(first, key=lambda i: order.rank[i]) == first and len(set(first)) == 30
    assert order.take({"a": 17}, {"a": 2}) == list(order.queues["a"][17:19])


@pytest.mark.parametrize(
    ("policy", "flags", "needles"),
    [
        (None, [], ["--until-decided needs --policy FILE"]),
        ("max_cost_ratio = 1.5\n[defaults]\nmin_cases = 5\n", [],
         ["gate.toml", "no rule the sequential gate can judge"]),
        ("[defaults]\nmax_regression = 0.1\n[standardized]\nmix = 'traffic'\nmargin = 0.02\n",
         [], ["gate.toml, line 3", "cannot judge [standardized]", "no anytime-valid form"]),
        ("[defaults]\nmax_regression = 0.1\n[critical]\ncases = ['c001']\n", [],
         ["gate.toml, line 3", "cannot judge [critical]"]),
        ("basis = 'point'\n[defaults]\nmax_regression = 0.1\n", [],
         ["gate.toml, line 1", "basis = 'point' has no anytime-valid form"]),
        ("[slices.nope]\nmax_regression = 0.1\n", [], ["gate.toml", "slice 'nope' is not in"]),
        ("[defaults]\nmax_regression = 0.1\n", ["--batch", "0"],
         ["--batch takes a whole number of cases >= 1, not 0"]),
        ("[defaults]\nmax_regression = 0.1\n", ["--stop", "never"], ["--stop takes verdict"]),
        ("[defaults]\nmax_regression = 0.1\n", ["--max-calls", "1"],
         ["--max-calls 1 does not pay for one case on every arm"]),
        ("[defaults]\nmax_regression = 0.1\n", ["--max-cost", "1"], ["not --max-cost"]),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_and_exit_2_before_any_call(
    tmp_path: Path,
    fake: FakeLLM,
    run_cli: Callable[..., CliResult],
    policy: str | None,
    flags: list[str],
    needles: list[str],
) -> None:
    config = setup_run(tmp_path, fake.url, per_slice=5)
    args = ["run", "--config", config, "--until-decided", "--by", "task", *flags]
    if policy is not None:
        (tmp_path / "gate.toml").write_text(policy)
        args += ["--policy", tmp_path / "gate.toml"]
    one_line_error(run_cli(*args), *needles)
    assert fake.requests == []


def test_until_decided_options_need_the_flag(
    tmp_path: Path, fake: FakeLLM, run_cli: Callable[..., CliResult]
) -> None:
    config = setup_run(tmp_path, fake.url, per_slice=5)
    res = run_cli("run", "--config", config, "--policy", tmp_path / "gate.toml")
    one_line_error(res, "--policy goes with --until-decided")


def _command(config: Path, store: str) -> list[str]:
    return [sys.executable, "-m", "evaldelta.cli", "run", "--config", str(config),
            "--until-decided", "--policy", str(config.parent / "gate.toml"), "--by", "task",
            "--seed", "3", "--store", store]  # fmt: skip


def _stopped(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("evaldelta: stopped")]


def _looks(store: Path) -> list[dict[str, object]]:
    with Store(store, read_only=True) as opened:
        return opened.looks(opened.runs()[0]["run_id"])


def test_a_kill_between_looks_loses_nothing_and_decides_the_same(
    tmp_path: Path, fake: FakeLLM
) -> None:
    fake.reply = replies({"cheap": {"extraction": 0.9}, "strong": {"extraction": 0.3}})
    config = setup_run(tmp_path, fake.url, per_slice=40)
    env = {**os.environ, "EVD_TEST_KEY": KEY, "PYTHONPATH": str(ROOT / "src")}
    whole = subprocess.run(_command(config, "whole.duckdb"), env=env, capture_output=True,
                           text=True, cwd=tmp_path, timeout=300)  # fmt: skip
    assert whole.returncode == 1, whole.stderr
    reference = _looks(tmp_path / "whole.duckdb")
    assert len(reference) >= 3  # the kill below lands with looks still to go

    # killed once look 1 is recorded (its line is printed after the store has it)
    killed = _command(config, "killed.duckdb")
    proc = subprocess.Popen(killed, env=env, cwd=tmp_path, stderr=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, text=True)  # fmt: skip
    assert proc.stderr is not None
    for line in proc.stderr:
        if line.startswith("evaldelta: look 1:"):
            os.kill(proc.pid, signal.SIGKILL)
            break
    proc.wait(30)
    proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    kept = _looks(tmp_path / "killed.duckdb")
    assert kept[0] == reference[0]  # look 1, judged, survived the kill

    # killed in the middle of look 2: its 10th call hangs
    fake.failures = [None] * (int(reference[0]["calls"]) + 9) + ["hang"]  # type: ignore[list-item]
    fake.hanging.clear()
    proc = subprocess.Popen(_command(config, "mid.duckdb"), env=env, cwd=tmp_path,
                            stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)  # fmt: skip
    assert fake.hanging.wait(120), "the run never reached look 2"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(30)
    fake.release.set()
    pending = _looks(tmp_path / "mid.duckdb")
    assert [lk["outcome"] is None for lk in pending] == [False, True]  # look 2 sent, not judged
    assert pending[1]["sent"] == reference[1]["sent"]

    for store in ("killed.duckdb", "mid.duckdb"):
        again = subprocess.run(_command(config, store), env=env, capture_output=True, text=True,
                               cwd=tmp_path, timeout=300)  # fmt: skip
        assert again.returncode == whole.returncode, again.stderr
        assert _looks(tmp_path / store) == reference
        assert _stopped(again.stderr) == _stopped(whole.stderr)
        found = re.search(r"(\d+) already stored", again.stderr)
        assert found and int(found.group(1)) >= int(reference[0]["calls"])  # type: ignore[call-overload]
