"""The run store's database layer: schema, the guarded connection, file checks.

Split from :mod:`evaldelta.store` (the :class:`~evaldelta.store.Store` API); the store's
layout, durability and safety are described there.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb

from evaldelta.errors import StoreError

__all__ = [
    "ATTEMPT_FIELDS",
    "RESERVED_COLUMNS",
    "RESPONSE_FIELDS",
    "SCHEMA_VERSION",
    "migrations",
]


SCHEMA_VERSION = 4
# version 3: each attempt's upstream hashes (evaldelta.sources.hashes) and its rendered prompt;
# version 4: each attempt's sequence (its case's position in a run --until-decided's order)
# and the looks table of such runs
UPSTREAM_FIELDS = ("prompt_hash", "payload_hash", "retrieval_hash", "rendered_prompt")
RESERVED_COLUMNS = frozenset(
    {"run_id", "case_id", "arm", "repeat", "score", "output", "error", "model_used",
     "model_version", "escalated", "input_tokens", "output_tokens", "cost_usd", "latency_ms",
     "calls_json", "finished_at", "verifier_json", "sequence", *UPSTREAM_FIELDS}
)  # fmt: skip
MetricValues = Mapping[str, tuple[float | None, str | None]]  # metric -> (value, reason)

_DDL = """
CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR);
CREATE TABLE IF NOT EXISTS runs (
    run_id VARCHAR PRIMARY KEY, created_at TIMESTAMP, updated_at TIMESTAMP, status VARCHAR,
    evaldelta_version VARCHAR, cases_path VARCHAR, cases_sha256 VARCHAR, n_cases INTEGER,
    repeats INTEGER, arms VARCHAR, pins_json VARCHAR, case_columns VARCHAR);
CREATE TABLE IF NOT EXISTS run_arms (
    run_id VARCHAR, arm VARCHAR, kind VARCHAR, pins_json VARCHAR,
    reported_model_versions VARCHAR, PRIMARY KEY (run_id, arm));
CREATE TABLE IF NOT EXISTS cases (
    run_id VARCHAR, case_id VARCHAR, position INTEGER, case_json VARCHAR,
    PRIMARY KEY (run_id, case_id));
CREATE TABLE IF NOT EXISTS attempts (
    run_id VARCHAR, arm VARCHAR, case_id VARCHAR, repeat INTEGER, output VARCHAR, score DOUBLE,
    error VARCHAR, model_used VARCHAR, model_version VARCHAR, escalated BOOLEAN,
    input_tokens BIGINT, output_tokens BIGINT, cost_usd DOUBLE, latency_ms DOUBLE,
    calls_json VARCHAR, finished_at TIMESTAMP, verifier_json VARCHAR,
    prompt_hash VARCHAR, payload_hash VARCHAR, retrieval_hash VARCHAR, rendered_prompt VARCHAR,
    sequence INTEGER, PRIMARY KEY (run_id, arm, case_id, repeat));
CREATE TABLE IF NOT EXISTS responses (
    cache_key VARCHAR PRIMARY KEY, provider VARCHAR, model VARCHAR, text VARCHAR,
    model_version VARCHAR, input_tokens BIGINT, output_tokens BIGINT, finish_reason VARCHAR,
    latency_ms DOUBLE, created_at TIMESTAMP);
"""
_DDL_V2 = """
CREATE TABLE IF NOT EXISTS scores (
    run_id VARCHAR, arm VARCHAR, case_id VARCHAR, repeat INTEGER, metric VARCHAR, value DOUBLE,
    reason VARCHAR, PRIMARY KEY (run_id, arm, case_id, repeat, metric));
CREATE TABLE IF NOT EXISTS scorings (
    run_id VARCHAR PRIMARY KEY, source VARCHAR, checks_path VARCHAR, checks_sha256 VARCHAR,
    metrics VARCHAR, meta_json VARCHAR, score_is_pass BOOLEAN, scored_at TIMESTAMP);
"""
# a run --until-decided's looks: what each look sent (cases per slice, JSON), then, once the
# look is judged, the totals after it, the gate's outcome and the slices decided (JSON)
_DDL_V4 = """
CREATE TABLE IF NOT EXISTS looks (
    run_id VARCHAR, look INTEGER, sent_json VARCHAR, cases INTEGER, calls INTEGER, usd DOUBLE,
    outcome VARCHAR, decided_json VARCHAR, started_at TIMESTAMP, judged_at TIMESTAMP,
    PRIMARY KEY (run_id, look));
"""

ATTEMPT_FIELDS = (
    "output", "score", "error", "model_used", "model_version", "escalated",
    "input_tokens", "output_tokens", "cost_usd", "latency_ms", "calls_json", "verifier_json",
    *UPSTREAM_FIELDS, "sequence",
)  # fmt: skip
RESPONSE_FIELDS = ("provider", "model", "text", "model_version", "input_tokens",
                   "output_tokens", "finish_reason", "latency_ms")  # fmt: skip


def migrations(version: int) -> list[str]:
    """The statements that bring a store of schema ``version`` to :data:`SCHEMA_VERSION`.

    1 -> 2: the verifier column and the score tables; 2 -> 3: the upstream hash columns
    (null for attempts recorded before: compare then has no hashes for them); 3 -> 4: the
    attempts' sequence (null for attempts of runs not ordered by run --until-decided) and the
    looks table.
    """
    out: list[str] = []
    if version < 2:
        out += ["ALTER TABLE attempts ADD COLUMN IF NOT EXISTS verifier_json VARCHAR", _DDL_V2]
    if version < 3:
        out += [
            f"ALTER TABLE attempts ADD COLUMN IF NOT EXISTS {c} VARCHAR" for c in UPSTREAM_FIELDS
        ]
    if version < 4:
        out += ["ALTER TABLE attempts ADD COLUMN IF NOT EXISTS sequence INTEGER", _DDL_V4]
    return out


_CONFIG: dict[str, str | bool | int | float | list[str]] = {
    "autoinstall_known_extensions": False,  # opening a store never downloads an extension
    "autoload_known_extensions": False,
}
_TABLES = ("meta", "runs", "run_arms", "cases", "attempts", "responses", "scores", "scorings")
_umask_lock = threading.Lock()
_umask_users: list[int] = []  # the umask to restore, held while any store is open for writing


def _private(begin: bool) -> None:
    """Hold (or release) umask 077 so DuckDB creates the store and its WAL as 0600."""
    with _umask_lock:
        if begin:
            _umask_users.append(os.umask(0o077) if not _umask_users else _umask_users[0])
        elif _umask_users and len(_umask_users) == 1:
            os.umask(_umask_users.pop())
        elif _umask_users:
            _umask_users.pop()


def _failure(path: Path, exc: BaseException) -> StoreError:
    """A DuckDB error as one line naming the store; a short read means a truncated file."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    hint = " (the file is truncated or damaged)" if "read enough bytes" in text else ""
    return StoreError(f"the run store {path} cannot be used{hint}: {text}")


class _Connection:
    """A DuckDB connection whose every failure is a :class:`StoreError` naming the store."""

    def __init__(self, con: duckdb.DuckDBPyConnection, path: Path) -> None:
        self._con, self._path = con, path

    def execute(self, sql: str, params: Any = None) -> duckdb.DuckDBPyConnection:
        try:
            return self._con.execute(sql, params)
        except duckdb.Error as exc:
            raise _failure(self._path, exc) from None

    def executemany(self, sql: str, params: Any) -> duckdb.DuckDBPyConnection:
        try:
            return self._con.executemany(sql, params)
        except duckdb.Error as exc:
            raise _failure(self._path, exc) from None

    def close(self) -> None:
        with contextlib.suppress(duckdb.Error):
            self._con.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._con, name)


def _check_file(path: Path, read_only: bool) -> None:
    """Refuse what is not a DuckDB file before DuckDB opens it; an empty file is replaced."""
    if path.is_dir():
        raise StoreError(f"the run store {path} is a directory, not a DuckDB file")
    if path.exists() and not path.is_file():
        raise StoreError(f"the run store {path} is not a regular file (a device, pipe or socket)")
    if not path.exists():
        if read_only:
            raise StoreError(f"the run store {path} does not exist")
        return
    try:
        with path.open("rb") as handle:
            head = handle.read(16)
        if not head and not read_only:
            path.unlink()  # an empty file (mktemp's) holds nothing: a new store takes its place
    except OSError as exc:
        raise StoreError(f"cannot read the run store {path}: {exc.strerror or exc}") from None
    if not head:
        if read_only:
            raise StoreError(f"the run store {path} is an empty file: it holds no runs")
        return
    if head.startswith(b"SQLite format 3"):
        raise StoreError(f"{path} is a SQLite database, not a run store (a DuckDB file)")
    if head[8:12] != b"DUCK":
        raise StoreError(f"{path} is not a DuckDB database file, so not a run store")


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _json_path(name: str) -> str:
    return "'$.\"" + name.replace("\\", "\\\\").replace('"', '\\"').replace("'", "''") + "\"'"
