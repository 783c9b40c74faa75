"""Secrets stay secret: keys masked in everything stored, printed and reported; private files."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from pathlib import Path

import duckdb

from evaldelta.run.providers._common import MASK, Redactor, redact
from evaldelta.store import Store
from tests.conftest import CliResult
from tests.run.test_faults import write_run
from tests.run.test_run import KEY
from tests.servers.fake_llm import FakeLLM

NEEDLES = (KEY, KEY[:14], KEY[:8], KEY[-8:])


def _store_bytes(path: Path) -> bytes:
    wal = path.with_name(path.name + ".wal")
    return path.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


def test_redact_masks_the_key_its_long_prefixes_and_its_tail() -> None:
    assert redact(f"echo {KEY}!", KEY) == f"echo {MASK}!"
    assert redact(f"key {KEY[:14]}**** is wrong", KEY) == f"key {MASK}**** is wrong"
    assert redact(f"key {KEY[:8]}", KEY) == f"key {MASK}"
    assert redact(f"key {KEY[:7]}", KEY) == f"key {KEY[:7]}"  # 7 characters are not a leak
    assert redact(f"...{KEY[-8:]} rejected", KEY) == f"...{MASK} rejected"
    both = Redactor([KEY, "short", None, "not-needed", "another-secret-value"])
    assert both.secrets == (KEY, "another-secret-value")  # longest first; "short" is no key
    assert both.text(f"{KEY} and another-secret-value") == f"{MASK} and {MASK}"


def test_a_key_echoed_in_a_reply_or_an_error_is_masked_in_store_log_and_reports(
    tmp_path: Path, fake: FakeLLM, run_cli: Callable[..., CliResult]
) -> None:
    fake.reply = lambda model, prompt, n: f"{model} says: your key is {KEY}, or {KEY[:14]}..."
    fake.failures = ["400"]
    fake.error_message = "bad request for key {key:.14}****"
    config = write_run(tmp_path, fake.url)
    result = run_cli("run", "--config", str(config), "--no-progress", "--score-regex", "says")
    assert result.code == 4, result.err  # the 400 left one errored attempt
    store = tmp_path / "runs.duckdb"
    data = _store_bytes(store)
    outputs = [
        run_cli("compare", "--store", str(store), "--format", fmt, "--baseline", "incumbent")
        for fmt in ("json", "html", "text", "markdown")
    ]
    for out in outputs:
        assert out.code == 0, out.err
    for needle in NEEDLES:
        assert needle.encode() not in data, needle
        assert needle not in result.out + result.err, needle
        for out in outputs:
            assert needle not in out.out + out.err, needle
    with Store(store, read_only=True) as opened:
        (run,) = opened.runs()
        rows = opened.attempts(run["run_id"])
        cached = opened.con.execute("SELECT text FROM responses").fetchall()
    texts = [r["output"] for r in rows if r["output"]]
    assert texts and all(f"your key is {MASK}, or {MASK}..." in t for t in texts)
    assert all(MASK in json.loads(r["calls_json"])[0]["text"] for r in rows if r["output"])
    assert all(MASK in text for (text,) in cached)
    (errored,) = [r for r in rows if r["error"]]
    assert f"bad request for key {MASK}****" in errored["error"]


def test_stores_are_private_and_never_load_extensions(tmp_path: Path) -> None:
    path = tmp_path / "new" / "runs.duckdb"
    before = os.umask(0o022)
    try:
        with Store(path) as store:
            store.put_response("k", {"text": "hello"})
            wal = path.with_name("runs.duckdb.wal")
            assert wal.exists()
            assert stat.S_IMODE(wal.stat().st_mode) == 0o600
            store.con.execute("CHECKPOINT")  # DuckDB deletes the WAL and writes a new one later
            store.put_response("k2", {"text": "again"})
            assert stat.S_IMODE(wal.stat().st_mode) == 0o600
            settings = store.con.execute(
                "SELECT current_setting('autoinstall_known_extensions'), "
                "current_setting('autoload_known_extensions')"
            ).fetchone()
            assert settings == (False, False)
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert os.umask(0o022) == 0o022  # the umask is restored once the store is closed
    finally:
        os.umask(before)
    with Store(path, read_only=True) as store:
        assert store.con.execute("SELECT count(*) FROM responses").fetchone() == (2,)
    other = duckdb.connect(str(tmp_path / "plain.duckdb"))  # our umask did not leak
    other.close()
    assert stat.S_IMODE((tmp_path / "plain.duckdb").stat().st_mode) == 0o644 & ~before
