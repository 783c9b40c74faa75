"""Resume after SIGKILL: no finished attempt lost, no finished paid call repeated."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

from evaldelta.store import Store
from tests.run.test_run import KEY, TWO_ARMS, write_cases, write_config
from tests.servers.fake_llm import FakeLLM

ROOT = Path(__file__).resolve().parents[2]


def _command(config: Path) -> list[str]:
    return [sys.executable, "-m", "evaldelta.cli", "run", "--config", str(config), "--repeats", "2"]


def test_kill_mid_run_then_restart_continues(tmp_path: Path, fake: FakeLLM) -> None:
    write_cases(tmp_path / "cases.jsonl", n=5)
    arms = TWO_ARMS.replace("temperature = 0.7", "").replace('"fakeanthropic"', '"fake"')
    config = write_config(tmp_path, fake.url, arms)
    # one lane of one: strictly sequential, so the kill lands with exactly one call in flight
    config.write_text(config.read_text().replace("max_concurrency = 4", "max_concurrency = 1"))
    env = {**os.environ, "EVD_TEST_KEY": KEY, "PYTHONPATH": str(ROOT / "src")}
    fake.failures = [None] * 13 + ["hang"]  # type: ignore[list-item]  # hang the 14th request
    proc = subprocess.Popen(_command(config), env=env, stderr=subprocess.PIPE, cwd=tmp_path)
    assert fake.hanging.wait(60), "the run never reached the hanging request"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    assert proc.stderr is not None
    proc.stderr.close()
    delivered_before = sum(fake.delivered.values())
    assert delivered_before == 13
    with Store(tmp_path / "runs.duckdb", read_only=True) as store:  # replays the WAL
        committed = len(store.attempts(store.runs()[0]["run_id"]))
    assert committed == 13  # every finished call was committed before the next began

    done = subprocess.run(_command(config), env=env, capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    found = re.search(r"(\d+) already stored, (\d+) now, 0 errors\); (\d+) paid calls", done.stderr)
    assert found, done.stderr
    stored, now, paid = map(int, found.groups())
    assert stored + now == 20
    # every call delivered before the kill was committed (answered from store or cache) ...
    assert paid == 20 - delivered_before
    # ... and no (model, prompt) was delivered more than once per repeat
    assert set(fake.delivered.values()) == {2}
    with Store(tmp_path / "runs.duckdb", read_only=True) as store:
        run_id = store.runs()[0]["run_id"]
        rows = store.attempts(run_id)
        assert store.runs()[0]["status"] == "complete"
    assert len(rows) == 20 and all(r["error"] is None for r in rows)
