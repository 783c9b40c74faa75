"""2 arms x 40 cases x 3 repeats, SIGKILLed at 5 random moments, then finished.

The test server answers through the real OpenAI SDK with latency, seeded random 429s and
500s and malformed (non-JSON) bodies, and per-model behaviour (the strong model is slower).
After five kills at seeded random points and a final run, the store must hold every attempt
exactly once, and the server's log must show no repeated call for a finished attempt: every
(model, prompt) draw the store kept was delivered once, and the only extra deliveries are
calls that were in flight when a kill landed (at most one per concurrent slot per kill).
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
from tests.servers.fake_llm import FakeLLM
from tests.test_run import KEY, write_config

ROOT = Path(__file__).resolve().parents[1]
CASES, REPEATS, KILLS, SLOTS = 40, 3, 5, 8  # SLOTS: max_concurrency 4 on each of 2 providers

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
    fake.delay = 0.02
    fake.error_rate = 0.06
    fake.malformed_rate = 0.03
    fake.per_model = {"strong": {"delay": 0.04}}
    fake.seed(7)
    yield fake
    fake.stop()


def _setup(tmp: Path, url: str) -> Path:
    with (tmp / "cases.jsonl").open("w") as handle:
        for i in range(CASES):
            handle.write(f'{{"case_id": "c{i:02d}", "task": "t{i % 2}", "question": "q{i}"}}\n')
    config = write_config(tmp, url, ARMS)
    text = config.read_text().replace("max_retries = 2", "max_retries = 8")
    text += f'\n[providers.fake2]\nkind = "openai"\nbase_url = "{url}/v1"\n'
    text += 'api_key_env = "EVD_TEST_KEY"\nmax_concurrency = 4\nmax_retries = 8\n'
    config.write_text(text)
    return config


def test_five_random_kills_lose_nothing_and_repeat_no_finished_call(
    tmp_path: Path, server: FakeLLM
) -> None:
    config = _setup(tmp_path, server.url)
    command = [sys.executable, "-m", "evaldelta.cli", "run", "--config", str(config),
               "--repeats", str(REPEATS), "--no-progress"]  # fmt: skip
    env = {**os.environ, "EVD_TEST_KEY": KEY, "PYTHONPATH": str(ROOT / "src")}
    rng = random.Random(2026)
    store_path = tmp_path / "runs.duckdb"
    committed_before = []
    for _ in range(KILLS):
        before = sum(server.delivered.values())
        proc = subprocess.Popen(command, env=env, cwd=tmp_path, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while sum(server.delivered.values()) == before and time.monotonic() < deadline:
            time.sleep(0.02)  # wait until this run is calling the server
        time.sleep(rng.uniform(0.05, 1.2))  # then kill it at a random moment
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        if store_path.exists():
            with Store(store_path, read_only=True) as store:
                runs = store.runs()
                committed_before.append(len(store.attempts(runs[0]["run_id"])) if runs else 0)
    for _ in range(3):  # random 5xx may exhaust retries on an attempt: rerun until complete
        done = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True,
                              timeout=300)  # fmt: skip
        assert done.returncode == 0, done.stderr
        if " complete:" in done.stderr:
            break
    assert " complete:" in done.stderr, done.stderr
    # the kills landed mid-run: progress grew between them and was never lost
    assert committed_before == sorted(committed_before)
    assert 0 < committed_before[-1] < CASES * 2 * REPEATS

    with Store(store_path, read_only=True) as store:
        (run,) = store.runs()
        rows = store.attempts(run["run_id"])
    keys = [(r["arm"], r["case_id"], r["repeat"]) for r in rows]
    assert len(keys) == CASES * 2 * REPEATS and len(set(keys)) == len(keys)
    assert all(r["error"] is None and r["output"] for r in rows)

    # Which draw of each (model, prompt) did the store keep? The fake's reply names it.
    kept: Counter[tuple[str, str]] = Counter()
    for r in rows:
        found = re.match(r"(\w+) answer (\d+): ", r["output"])
        assert found, r["output"]
        kept[(found.group(1), r["case_id"])] += 1
    assert set(kept.values()) == {REPEATS}
    delivered = sum(server.delivered.values())
    extra = delivered - CASES * 2 * REPEATS
    assert 0 <= extra <= KILLS * SLOTS, (delivered, extra)
    # every successful delivery is either kept in the store or was in flight at a kill
    served = Counter(
        {(model, re.search(r"c\d\d", prompt).group(0)): n  # type: ignore[union-attr]
         for (model, prompt), n in server.delivered.items()}
    )  # fmt: skip
    for key, n in served.items():
        assert n >= kept[key]
    assert sum(n - kept[k] for k, n in served.items()) == extra
    # the server really did fail now and then, and the runner rode through it
    assert any(r["failure"] in ("429", "500", "malformed") for r in server.requests)
