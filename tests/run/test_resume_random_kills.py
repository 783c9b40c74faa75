"""2 arms x 60 cases x 3 repeats, SIGKILLed at 20 seeded random moments, then finished.

The test server answers through the real OpenAI SDK with latency, seeded random 429s and
500s and malformed (non-JSON) bodies, and per-model behaviour (the strong model is slower).
After each kill the store must open (never corrupt: every table reads in full, each attempt
once) and hold at least what it held before; after the twentieth, runs of the same command
finish it, with an exit code that says what happened (-9 for a kill, 0 complete, 4 errors).
The server's log must show no repeated call for a finished attempt: every (model, prompt)
draw the store kept was delivered once, and the only extra deliveries are calls that were in
flight when a kill landed (at most one per concurrent slot per kill).

Only requests for this test's own prompts ("Ticket cNN: q... kill-test") are counted: a
request that is not ours (a client from elsewhere that found the port) is set aside instead
of breaking the accounting, which is what made an earlier version of this test flaky.
"""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from evaldelta.store import Store
from tests.run.test_run import KEY, write_config
from tests.servers.fake_llm import FakeLLM

ROOT = Path(__file__).resolve().parents[2]
CASES, REPEATS, KILLS, SLOTS = 60, 3, 20, 4  # SLOTS: max_concurrency 2 on each of 2 providers
TOTAL = CASES * 2 * REPEATS
OURS = re.compile(r"Ticket (c\d\d): q\d+ kill-test")

ARMS = """
[arms.incumbent]
provider = "fake"
model = "cheap"
temperature = 0

[arms.candidate]
provider = "fake2"
model = "strong"
temperature = 0
"""


@pytest.fixture
def server() -> Iterator[FakeLLM]:
    fake = FakeLLM().start()
    fake.delay = 0.05
    fake.error_rate = 0.06
    fake.malformed_rate = 0.03
    fake.per_model = {"strong": {"delay": 0.1}}
    fake.seed(7)
    yield fake
    fake.stop()


def _setup(tmp: Path, url: str) -> Path:
    with (tmp / "cases.jsonl").open("w") as handle:
        for i in range(CASES):
            handle.write(
                f'{{"case_id": "c{i:02d}", "task": "t{i % 2}", "question": "q{i} kill-test"}}\n'
            )
    config = write_config(tmp, url, ARMS)
    # two slots per provider: slow enough that 20 kills of at most 0.4 s of calls each cannot
    # finish the 360 attempts (about 40 a second at most), fast enough to finish after
    text = config.read_text().replace("max_retries = 2", "max_retries = 8")
    text = text.replace("max_concurrency = 4", "max_concurrency = 2")
    text += f'\n[providers.fake2]\nkind = "openai"\nbase_url = "{url}/v1"\n'
    text += 'api_key_env = "EVD_TEST_KEY"\nmax_concurrency = 2\nmax_retries = 8\n'
    config.write_text(text)
    return config


def _check_store(path: Path) -> int:
    """Open the store read-only (replaying its WAL), read every table in full; attempts."""
    with Store(path, read_only=True) as store:
        runs = store.runs()
        assert len(runs) <= 1
        for table in ("meta", "runs", "run_arms", "cases", "attempts", "responses", "eval_rows"):
            store.con.execute(f"SELECT * FROM {table}").fetchall()
        if not runs:
            return 0
        rows = store.attempts(runs[0]["run_id"])
    keys = [(r["arm"], r["case_id"], r["repeat"]) for r in rows]
    assert len(set(keys)) == len(keys)
    assert all(r["output"] for r in rows if r["error"] is None)
    return len(rows)


def _ours(server: FakeLLM) -> Counter[tuple[str, str]]:
    """Deliveries per (model, case) of this test's prompts."""
    served: Counter[tuple[str, str]] = Counter()
    for (model, prompt), n in server.delivered.items():
        found = OURS.search(prompt)
        if found is not None:
            served[(model, found.group(1))] += n
    return served


@pytest.mark.slow
def test_twenty_random_kills_lose_nothing_and_repeat_no_finished_call(
    tmp_path: Path, server: FakeLLM
) -> None:
    config = _setup(tmp_path, server.url)
    command = [sys.executable, "-m", "evaldelta.cli", "run", "--config", str(config),
               "--repeats", str(REPEATS), "--no-progress"]  # fmt: skip
    env = {**os.environ, "EVD_TEST_KEY": KEY, "PYTHONPATH": str(ROOT / "src")}
    rng = random.Random(2026)
    store_path = tmp_path / "runs.duckdb"
    committed = [0]
    for _ in range(KILLS):
        before = sum(server.delivered.values())
        proc = subprocess.Popen(command, env=env, cwd=tmp_path, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while sum(server.delivered.values()) == before and time.monotonic() < deadline:
            assert proc.poll() is None, "the run finished before it could be killed"
            time.sleep(0.01)  # wait until this run is calling the server
        time.sleep(rng.uniform(0.0, 0.4))  # then kill it at a random moment
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(10) == -signal.SIGKILL  # the exit code says it was killed
        committed.append(_check_store(store_path) if store_path.exists() else 0)
    for _ in range(3):  # random 5xx may exhaust retries on an attempt: rerun until complete
        done = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True,
                              timeout=300)  # fmt: skip
        complete = " complete:" in done.stderr
        assert done.returncode == (0 if complete else 4), done.stderr  # 4: errored attempts
        if complete:
            break
    assert complete, done.stderr
    # the kills landed mid-run: progress grew between them and was never lost
    assert committed == sorted(committed), committed
    assert 0 < committed[-1] < TOTAL, committed
    assert _check_store(store_path) == TOTAL

    with Store(store_path, read_only=True) as store:
        (run,) = store.runs()
        rows = store.attempts(run["run_id"])
    assert run["status"] == "complete"
    assert all(r["error"] is None and r["output"] for r in rows)

    # Which draw of each (model, prompt) did the store keep? The fake's reply names it.
    kept: Counter[tuple[str, str]] = Counter()
    for r in rows:
        found = re.match(r"(\w+) answer (\d+): ", r["output"])
        assert found, r["output"]
        kept[(found.group(1), r["case_id"])] += 1
    assert set(kept.values()) == {REPEATS}
    served = _ours(server)
    extra = sum(served.values()) - TOTAL
    assert 0 <= extra <= KILLS * SLOTS, extra
    # every successful delivery is either kept in the store or was in flight at a kill
    for key, n in served.items():
        assert n >= kept[key]
    assert sum(n - kept[k] for k, n in served.items()) == extra
    # the server really did fail now and then, and the runner rode through it
    assert any(r["failure"] in ("429", "500", "malformed") for r in server.requests)
