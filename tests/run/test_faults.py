"""Faults against the test server: every failure ends in a clear line and the right exit code.

All-401 (stop early, exit 4), an unknown host, a 429 storm with ``Retry-After: 86400``
(capped, budgeted), connection resets mid-response, bodies that drip slower than the
timeout, a server that dies and comes back, and ``max_wall_seconds``. Where retries are
counted, the run's summary must equal what the server saw: requests = calls + retries.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evaldelta.run.cases import load_cases
from evaldelta.run.config import load_config, with_flags
from evaldelta.run.execute import RunSummary, execute
from evaldelta.run.limits import Clock
from evaldelta.store import Store
from tests.conftest import CliResult
from tests.run.test_run import KEY
from tests.run.test_run_limits import FakeClock
from tests.servers.fake_llm import FakeLLM

ARMS = """
[arms.incumbent]
provider = "fake"
model = "cheap"
temperature = 0

[arms.candidate]
provider = "fake"
model = "strong"
temperature = 0
"""


def write_run(
    tmp: Path,
    url: str,
    *,
    provider: str = "",
    top: str = "",
    cases: int = 6,
    arms: str = ARMS,
) -> Path:
    """Cases (``prompt`` column) and a run config with one provider, ``fake``."""
    with (tmp / "cases.jsonl").open("w") as handle:
        for i in range(cases):
            handle.write(json.dumps({"case_id": f"c{i}", "prompt": f"question {i}"}) + "\n")
    path = tmp / "run.toml"
    path.write_text(
        f'cases = "cases.jsonl"\nstore = "runs.duckdb"\n{top}\n'
        f'[providers.fake]\nkind = "openai"\nbase_url = "{url}/v1"\n'
        f'api_key_env = "EVD_TEST_KEY"\n{provider}\n{arms}'
    )
    return path


def run_config(path: Path, clock: Clock | None = None) -> RunSummary:
    cfg = with_flags(load_config(path))
    assert cfg.cases is not None
    return asyncio.run(execute(cfg, load_cases(cfg.cases), clock=clock))


def summary_counts(err: str) -> dict[str, int]:
    """The numbers of the CLI's summary line."""
    found = re.search(
        r"\((\d+) already stored, (\d+) now, (\d+) errors.*?\); (\d+) paid calls, (\d+) from "
        r"cache, (\d+) retries",
        err,
    )
    assert found, err
    names = ("stored", "now", "errors", "paid", "cached", "retries")
    return dict(zip(names, map(int, found.groups()), strict=True))


def stored(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    with Store(path, read_only=True) as store:
        (run,) = store.runs()
        return run, store.attempts(run["run_id"])


def test_all_401_exits_4_after_three_identical_failures(
    tmp_path: Path, fake: FakeLLM, run_cli: Callable[..., CliResult]
) -> None:
    fake.always = "401"
    fake.error_message = "Incorrect API key provided: {key:.14}****"  # a 14-character prefix
    config = write_run(tmp_path, fake.url, provider="max_concurrency = 1")
    result = run_cli("run", "--config", str(config), "--no-progress")
    assert result.code == 4, result.err
    assert "stopped: repeated error: 3/12 attempts" in result.err
    assert "9 not attempted" in result.err
    assert "stopped early: 3 calls to provider 'fake' failed alike (auth, HTTP 401" in result.err
    kinds = re.findall(r"^  errors: (\d+) (\w+) \(first: (.*)\)$", result.err, re.M)
    assert [(n, kind) for n, kind, _ in kinds] == [("3", "auth")]
    assert "HTTP 401" in kinds[0][2] and "Incorrect API key provided: ***" in kinds[0][2]
    assert len(fake.requests) == 3  # nothing launched after the third failure, no retries
    assert KEY[:8] not in result.err
    run, rows = stored(tmp_path / "runs.duckdb")
    assert run["status"] == "stopped: repeated error"
    assert len(rows) == 3 and all("HTTP 401" in r["error"] for r in rows)
    assert not any(KEY[:8] in r["error"] for r in rows)


def test_an_unknown_host_is_not_retried_and_stops_the_run(
    tmp_path: Path,
    fake: FakeLLM,
    run_cli: Callable[..., CliResult],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = socket.getaddrinfo

    def resolve(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "unknown-host.test":  # no resolver is asked: the test stays offline
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    config = write_run(tmp_path, "http://unknown-host.test", provider="max_concurrency = 1")
    start = time.monotonic()
    result = run_cli("run", "--config", str(config), "--no-progress")
    assert time.monotonic() - start < 20
    assert result.code == 4, result.err
    assert summary_counts(result.err)["retries"] == 0
    assert "stopped early: 3 calls to provider 'fake' failed alike (dns" in result.err
    assert re.search(r"errors: 3 dns \(first: .*Name or service not known", result.err)


def test_a_429_storm_with_retry_after_86400_waits_60_s_at_most_within_the_budget(
    tmp_path: Path, fake: FakeLLM
) -> None:
    fake.always = "429"
    fake.retry_after = "86400"
    # defaults: max_retry_after = 60, retry_budget_seconds = 300
    config = write_run(tmp_path, fake.url, provider="max_retries = 10", cases=4)
    clock = FakeClock()
    summary = run_config(config, clock=clock)
    assert clock.sleeps and max(clock.sleeps) == 60.0  # never a day
    # five waits of 60 s fill each call's 300 s budget: the sixth retry is not made
    assert summary.progress.retries == 8 * 5
    assert len(fake.requests) == 8 + summary.progress.retries  # what the server saw
    assert summary.status == "incomplete: errors"
    assert dict(summary.progress.error_kinds) == {"retry_budget": 8}
    first = summary.progress.first_errors["retry_budget"]
    assert "Retry-After of 86400 s capped at 60 s" in first
    assert "retry budget of 300 s" in first and "HTTP 429" in first


def test_retry_after_86400_in_real_time_is_capped_by_max_retry_after(
    tmp_path: Path, fake: FakeLLM, run_cli: Callable[..., CliResult]
) -> None:
    fake.failures = ["429", "429", "429"]
    fake.retry_after = "86400"
    config = write_run(tmp_path, fake.url, provider="max_retry_after = 0.1\nmax_retries = 4")
    start = time.monotonic()
    result = run_cli("run", "--config", str(config), "--no-progress")
    assert time.monotonic() - start < 20
    assert result.code == 0, result.err
    counts = summary_counts(result.err)
    assert counts["retries"] == 3 == len(fake.requests) - counts["paid"]


def test_max_wall_seconds_stops_launching_calls(
    tmp_path: Path, fake: FakeLLM, run_cli: Callable[..., CliResult]
) -> None:
    fake.delay = 0.2
    config = write_run(
        tmp_path, fake.url, provider="max_concurrency = 1", top="max_wall_seconds = 0.5"
    )
    result = run_cli("run", "--config", str(config), "--no-progress")
    assert result.code == 0, result.err  # a budget the user set: a clean stop, like max_cost
    assert "stopped: max wall time" in result.err and "not attempted" in result.err
    run, rows = stored(tmp_path / "runs.duckdb")
    assert run["status"] == "stopped: max wall time" and 0 < len(rows) < 12


def test_connection_resets_mid_response_are_retried_and_counted(
    tmp_path: Path, fake: FakeLLM, run_cli: Callable[..., CliResult]
) -> None:
    fake.failures = ["reset", None, "reset", None, None, "reset"]
    config = write_run(tmp_path, fake.url, provider="max_retries = 4")
    result = run_cli("run", "--config", str(config), "--no-progress")
    assert result.code == 0, result.err
    counts = summary_counts(result.err)
    assert counts["retries"] == 3 == len(fake.requests) - counts["paid"]
    assert sum(r["failure"] == "reset" for r in fake.requests) == 3
    assert set(fake.delivered.values()) == {1}  # each draw delivered (and paid) once
    _, rows = stored(tmp_path / "runs.duckdb")
    assert len(rows) == 12 and all(r["error"] is None for r in rows)


def test_a_body_dripping_slower_than_the_timeout_times_out_and_is_retried(
    tmp_path: Path, fake: FakeLLM, run_cli: Callable[..., CliResult]
) -> None:
    fake.drip_seconds = 3.0  # each byte comes in ~10 ms; the whole body would take 3 s
    fake.failures = ["drip", "drip", "drip"]
    config = write_run(
        tmp_path, fake.url, provider="timeout = 0.3\nmax_retries = 1\nmax_concurrency = 1"
    )
    start = time.monotonic()
    result = run_cli("run", "--config", str(config), "--no-progress")
    assert time.monotonic() - start < 20
    # the first attempt timed out twice (its one retry too): an error of kind timeout; the
    # second timed out once and its retry succeeded
    assert result.code == 4, result.err
    assert "errors: 1 timeout (first: call timed out after 0.3 s)" in result.err
    counts = summary_counts(result.err)
    assert counts["retries"] == 2 and len(fake.requests) == counts["paid"] + 1 + 2
    again = run_cli("run", "--config", str(config), "--no-progress")
    assert again.code == 0 and summary_counts(again.err)["now"] == 1, again.err


def test_a_server_that_dies_and_comes_back_loses_nothing(
    tmp_path: Path, fake: FakeLLM, run_cli: Callable[..., CliResult]
) -> None:
    # The server is down for 40 s; the downtime is a parameter, 3 s here, so the
    # test stays fast: the backoff (8 retries: 0.25-0.5 s, 0.5-1 s, ... up to 30 s) has to
    # outlast it the same way.
    fake.downtime = 3.0
    fake.delay = 0.02
    fake.failures = [None] * 5 + ["down"]
    config = write_run(tmp_path, fake.url, provider="max_retries = 8")
    start = time.monotonic()
    result = run_cli("run", "--config", str(config), "--no-progress")
    elapsed = time.monotonic() - start
    assert result.code == 0, result.err
    assert len(fake.outages) == 1 and elapsed >= fake.downtime
    counts = summary_counts(result.err)
    assert counts["retries"] >= 1 and counts["paid"] == 12
    assert set(fake.delivered.values()) == {1}  # nothing paid twice
    run, rows = stored(tmp_path / "runs.duckdb")
    assert run["status"] == "complete"
    assert len(rows) == 12 and all(r["error"] is None and r["output"] for r in rows)
