"""A store that cannot be used fails in one line with exit 2: never exit 70, never a traceback.

Foreign DuckDB files (refused, never given our tables), a foreign ``meta`` table, a schema
version that is not a number, truncated files, SQLite files (no extension is downloaded),
directories, devices, empty files, runs without attempts, and a disk that fills up during a
run (the run is marked interrupted; what was committed resumes).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import duckdb
import pytest

from evaldelta.store import Store
from tests.conftest import CliResult, one_line_error
from tests.run.test_faults import stored, write_run
from tests.servers.fake_llm import FakeLLM


def _foreign(path: Path) -> None:
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE customers (id INTEGER, name VARCHAR)")
    con.close()


def _foreign_meta(path: Path) -> None:
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE meta (a INTEGER)")
    con.close()


def _schema_two(path: Path) -> None:
    Store(path).close()
    con = duckdb.connect(str(path))
    con.execute("UPDATE meta SET value = 'two' WHERE key = 'schema_version'")
    con.close()


def _sqlite(path: Path) -> None:
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (a)")
    con.commit()
    con.close()


def _truncated(path: Path) -> None:
    with Store(path) as store:
        store.put_responses([(f"k{i}", {"text": "x" * 4000}) for i in range(200)])
    os.truncate(path, path.stat().st_size // 2)


def _lacking(path: Path) -> None:
    Store(path).close()
    con = duckdb.connect(str(path))
    con.execute("DROP TABLE attempts CASCADE")
    con.close()


BROKEN: dict[str, tuple[Callable[[Path], None], str]] = {
    "foreign tables": (_foreign, "is a DuckDB database with tables of its own (customers)"),
    "foreign meta": (_foreign_meta, "has a table 'meta' that is not evaldelta's (columns a)"),
    "schema 'two'": (_schema_two, "has schema version 'two', which is not a number"),
    "sqlite": (_sqlite, "is a SQLite database, not a run store"),
    "truncated": (_truncated, "cannot be used (the file is truncated or damaged)"),
    "lacking a table": (_lacking, "lacks the table(s) attempts"),
}


@pytest.mark.parametrize("command", ["run", "compare"])
@pytest.mark.parametrize("name", list(BROKEN))
def test_a_store_that_is_not_ours_or_is_broken_is_one_line(
    tmp_path: Path,
    fake: FakeLLM,
    run_cli: Callable[..., CliResult],
    name: str,
    command: str,
) -> None:
    make, message = BROKEN[name]
    store = tmp_path / "bad.duckdb"
    make(store)
    before = store.read_bytes()
    config = write_run(tmp_path, fake.url)
    args = ("run", "--config", str(config)) if command == "run" else ("compare",)
    one_line_error(run_cli(*args, "--store", str(store)), str(store), message)
    assert not fake.requests  # refused before any call
    assert store.read_bytes() == before  # nothing added: a foreign file stays as it was


@pytest.mark.parametrize(
    ("target", "message"),
    [("dir", "is a directory, not a DuckDB file"), ("/dev/zero", "is not a regular file")],
)
def test_run_on_a_directory_or_a_device_says_what_it_is(
    tmp_path: Path,
    fake: FakeLLM,
    run_cli: Callable[..., CliResult],
    target: str,
    message: str,
) -> None:
    store = tmp_path / target if target == "dir" else Path(target)
    if target == "dir":
        store.mkdir()
    config = write_run(tmp_path, fake.url)
    one_line_error(run_cli("run", "--config", str(config), "--store", str(store)), message)
    assert not fake.requests


def test_empty_stores_say_they_hold_no_runs(
    tmp_path: Path, fake: FakeLLM, run_cli: Callable[..., CliResult]
) -> None:
    empty = tmp_path / "empty.duckdb"
    empty.touch()  # what mktemp leaves
    one_line_error(run_cli("compare", "--store", str(empty)), "is an empty file: it holds no runs")
    Store(tmp_path / "fresh.duckdb").close()
    one_line_error(run_cli("compare", "--store", str(tmp_path / "fresh.duckdb")), "holds no runs")
    with Store(tmp_path / "started.duckdb") as store:  # a run stopped before any attempt
        store.begin_run(
            "r-1", cases_path="c", cases_sha256="0", cases=[("c1", {"case_id": "c1"})],
            case_columns=["case_id"], repeats=1, arms={"a": {"kind": "model"}}, pins={},
            evaldelta_version="0",
        )  # fmt: skip
    result = run_cli("compare", "--store", str(tmp_path / "started.duckdb"))
    one_line_error(result, "holds no runs yet (no attempts recorded)")
    assert "header but no data rows" not in result.err
    # an empty file is not a store yet: a run makes it one
    config = write_run(tmp_path, fake.url)
    result = run_cli("run", "--config", str(config), "--store", str(empty), "--no-progress")
    assert result.code == 0, result.err
    assert len(stored(empty)[1]) == 12


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 1 MB tmpfs (root only: the test is skipped where mount is not allowed)."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    if shutil.which("mount") is None or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root and mount(8)")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True, check=False)


def test_a_full_disk_during_run_is_exit_2_and_marks_the_run_interrupted(
    tmp_path: Path,
    tiny_disk: Path,
    fake: FakeLLM,
    run_cli: Callable[..., CliResult],
) -> None:
    # every reply is 20 KB, stored twice (the attempt and the response cache): the 1 MB disk
    # fills after a couple of dozen calls of the 36
    fake.reply = lambda model, prompt, n: f"{model} {n} {prompt} " + "z" * 20_000
    store = tiny_disk / "runs.duckdb"
    config = write_run(tmp_path, fake.url, top="repeats = 3")
    result = run_cli("run", "--config", str(config), "--store", str(store), "--no-progress")
    one_line_error(result, str(store), "No space left on device", "is marked interrupted")
    run, rows = stored(store)  # still readable on the full disk: the WAL replays
    assert run["status"] == "interrupted"
    assert 0 < len(rows) < 36 and all(r["error"] is None for r in rows)
    # moved to a disk with room, the same command resumes: nothing committed is paid again
    roomy = tmp_path / "roomy.duckdb"
    shutil.copy(store, roomy)
    if store.with_name("runs.duckdb.wal").exists():
        shutil.copy(store.with_name("runs.duckdb.wal"), tmp_path / "roomy.duckdb.wal")
    kept = {(r["arm"], r["case_id"], r["repeat"]): r["output"] for r in rows}
    result = run_cli("run", "--config", str(config), "--store", str(roomy), "--no-progress")
    assert result.code == 0, result.err
    assert f"{len(rows)} already stored" in result.err
    run, rows = stored(roomy)
    assert run["status"] == "complete" and len(rows) == 36
    for r in rows:  # every attempt committed before the disk filled is the one kept
        key = (r["arm"], r["case_id"], r["repeat"])
        assert kept.get(key, r["output"]) == r["output"]
    # 3 repeats: 3 draws of each (model, prompt); only the calls in flight when the disk
    # filled (at most max_concurrency = 4 of them) were paid again
    extra = sum(n - 3 for n in fake.delivered.values())
    assert 0 <= extra <= 4, dict(fake.delivered)
