"""The run store: one embedded DuckDB file (default ``.evaldelta/runs.duckdb``), schema-versioned.

Tables::

    meta       key, value                      schema_version
    runs       one row per run: status, case file and its hash, repeats, evaldelta version,
               free-form pins, the case columns
    run_arms   one row per (run, arm): provider kind and endpoint, requested model, every
               generation parameter, template hash, verifier / scorer, the model versions
               the API reported (filled when the run finishes or stops)
    cases      one row per (run, case): the case row as JSON
    attempts   one row per (run, arm, case, repeat): output, score, error, model_used,
               escalated, tokens, cost, latency, every call made (JSON) and, for a
               cascade, the verifier's result (JSON: which checks failed, the judge's score);
               the upstream hashes (prompt, payload, retrieval) and the rendered prompt;
               ``sequence``, the case's position in a ``run --until-decided``'s order
    scores     one row per (run, arm, case, repeat, metric): value and reason; written by
               ``evaldelta score --store`` or ``evaldelta run --checks``
    scorings   one row per scored run: the checks file, its sha256, the metric names, and
               the judges' pins; a run is scored by one checks file at a time
    responses  the response cache: one row per successful paid call, keyed on provider,
               model, parameters, rendered prompt and repeat index
    looks      one row per look of a ``run --until-decided``: what it sent, the totals after
               it, the gate's outcome and the slices decided (:mod:`evaldelta.store._looks`)
    eval_rows  VIEW: attempts in the long row format plus the case's columns and one column
               per stored metric (``pass``, ``check.<id>``, ``reason.<id>``,
               ``judge_score[.<id>]``, ``pairwise.<id>``), which
               ``evaldelta compare --store PATH [--run ID] [--metric pass]`` reads in place.
               Its ``score`` column is the runner's own scorer (``[score]`` regex/python,
               or the overall pass with ``run --checks``; null when there is none).

Schema versions: 1 (no scores), 2 (no upstream hashes) and 3 (no sequence, no looks) are
read as they are and migrated in place to 4 when first opened for writing (``evaldelta run``,
``evaldelta score --store``).

Durability: DuckDB commits each statement (autocommit), writing it to the write-ahead log
before the call returns; a killed process loses nothing committed, and the next open replays
the log. :meth:`Store.close` checkpoints. There is one writer: the runner makes every write
from its event-loop thread, one at a time, and DuckDB's file lock keeps other processes out
(so a run still ``running`` in a store another process can open was killed: it is reported
as ``interrupted``). No API key is ever a value written here (the runner masks them).

Safety: every DuckDB failure is a one-line :class:`StoreError` naming the store (a
truncated file, a full disk, a foreign table). A file that is not DuckDB's (a SQLite
database, a directory, ``/dev/zero``) is refused before DuckDB sees it, and DuckDB's
extension auto-install and auto-load are off, so opening a store never downloads anything.
A DuckDB file with tables of its own is never given ours. The store and its write-ahead log
are created readable by the user only: while a store is open for writing, the process umask
is ``077`` (DuckDB re-creates the ``.wal`` after each checkpoint, with the umask's mode).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import duckdb

from evaldelta.errors import StoreError
from evaldelta.store._db import (
    _CONFIG,
    _DDL,
    _DDL_V2,
    _DDL_V4,
    _TABLES,
    ATTEMPT_FIELDS,
    RESERVED_COLUMNS,
    RESPONSE_FIELDS,
    SCHEMA_VERSION,
    MetricValues,
    _check_file,
    _Connection,
    _failure,
    _now,
    _private,
    migrations,
)
from evaldelta.store._looks import Looks
from evaldelta.store._view import View

__all__ = [
    "ATTEMPT_FIELDS",
    "RESERVED_COLUMNS",
    "RESPONSE_FIELDS",
    "SCHEMA_VERSION",
    "Store",
    "configured_arms",
    "iter_pins",
    "resolve_run",
    "run_status",
]


class Store(Looks, View):
    """An open run store; use as a context manager, or call :meth:`close`."""

    def __init__(self, path: str | Path, *, read_only: bool = False) -> None:
        self.path = Path(path)
        self.version: int | None = SCHEMA_VERSION
        self.read_only = read_only
        _check_file(self.path, read_only)
        if not read_only:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            _private(True)
        try:
            con = duckdb.connect(str(self.path), read_only=read_only, config=_CONFIG)
        except duckdb.Error as exc:
            if not read_only:
                _private(False)
            first = " ".join(str(exc).split()) or type(exc).__name__
            if "lock" in first.lower():
                raise StoreError(
                    f"the run store {self.path} is in use by another process ({first})"
                ) from None
            raise _failure(self.path, exc) from None
        self.con = _Connection(con, self.path)
        try:
            self._check_schema(read_only)
        except BaseException:
            self.close()
            raise

    def _check_schema(self, read_only: bool) -> None:
        tables = {
            str(name) if schema == "main" else f"{schema}.{name}"
            for schema, name in self.con.execute(
                "SELECT schema_name, table_name FROM duckdb_tables() WHERE NOT internal AND "
                "database_name = current_database()"
            ).fetchall()
        }
        if "meta" not in tables:
            if tables:
                shown = ", ".join(sorted(tables)[:5])
                refuse = "" if read_only else "; refusing to add our tables to it: give a new file"
                raise StoreError(
                    f"{self.path} is a DuckDB database with tables of its own ({shown}), not an "
                    f"evaldelta run store{refuse}"
                )
            if read_only:
                raise StoreError(f"{self.path} is not an evaldelta run store (no meta table)")
            self.con.execute(_DDL + _DDL_V2 + _DDL_V4)
            self.con.execute("INSERT INTO meta VALUES ('schema_version', ?)", [str(SCHEMA_VERSION)])
            self._refresh_view()
            return
        version = self._schema_version()
        self.version = version
        lacking = [t for t in _TABLES[: 8 if version >= 2 else 6] if t not in tables]
        if lacking and version <= SCHEMA_VERSION:
            raise StoreError(
                f"the run store {self.path} lacks the table(s) {', '.join(lacking)}: it is "
                "damaged, or not a store written by evaldelta run"
            )
        if version < SCHEMA_VERSION and read_only:
            return  # readable as it is (no scores, no hashes); migrated when opened for writing
        if version < SCHEMA_VERSION:
            self._migrate(version)
            return
        if version != SCHEMA_VERSION:
            raise StoreError(
                f"the run store {self.path} has schema version {version}; this evaldelta "
                f"reads version {SCHEMA_VERSION}"
            )

    def _schema_version(self) -> int:
        """The meta table's schema_version; a meta table that is not ours is an error."""
        columns = {
            str(r[0])
            for r in self.con.execute(
                "SELECT column_name FROM duckdb_columns() WHERE database_name = "
                "current_database() AND schema_name = 'main' AND table_name = 'meta'"
            ).fetchall()
        }
        if not {"key", "value"} <= columns:
            raise StoreError(
                f"{self.path} has a table 'meta' that is not evaldelta's (columns "
                f"{', '.join(sorted(columns))}), so it is not a run store"
            )
        row = self.con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if row is None:
            raise StoreError(
                f"{self.path} has a meta table without a schema_version: not a run store"
            )
        try:
            return int(str(row[0]).strip())
        except ValueError:
            raise StoreError(
                f"the run store {self.path} has schema version {row[0]!r}, which is not a "
                f"number; this evaldelta reads version {SCHEMA_VERSION}"
            ) from None

    def _migrate(self, version: int) -> None:
        """Bring an older store to this schema, in one transaction (:func:`migrations`)."""
        with self.transaction():
            for statement in migrations(version):
                self.con.execute(statement)
            self.con.execute(
                "UPDATE meta SET value = ? WHERE key = 'schema_version'", [str(SCHEMA_VERSION)]
            )
        self.version = SCHEMA_VERSION
        self._refresh_view()

    def __enter__(self) -> Store:
        return self

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """One transaction around several writes: committed together, or rolled back."""
        self.con.execute("BEGIN TRANSACTION")
        try:
            yield
        except BaseException:
            self._rollback()
            raise
        try:
            self.con.execute("COMMIT")
        except StoreError:  # a failed commit (a full disk) leaves nothing to roll back
            self._rollback()
            raise

    def _rollback(self) -> None:
        with contextlib.suppress(StoreError):  # no transaction left after a failed commit
            self.con.execute("ROLLBACK")

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Checkpoint (fold the write-ahead log into the file) and close (idempotent)."""
        if getattr(self, "_closed", False):
            return
        self._closed = True
        if not self.read_only:  # a full disk cannot checkpoint: the WAL keeps every commit
            with contextlib.suppress(StoreError):
                self.con.execute("CHECKPOINT")
        self.con.close()
        if not self.read_only:
            _private(False)

    # -- runs ------------------------------------------------------------------------------
    def begin_run(
        self,
        run_id: str,
        *,
        cases_path: str,
        cases_sha256: str,
        cases: Sequence[tuple[str, Mapping[str, Any]]],
        case_columns: Sequence[str],
        repeats: int,
        arms: Mapping[str, Mapping[str, Any]],
        pins: Mapping[str, Any],
        evaldelta_version: str,
    ) -> bool:
        """Record a new run (and its cases and arm pins); False when it exists (a resume)."""
        if self.con.execute("SELECT 1 FROM runs WHERE run_id = ?", [run_id]).fetchone():
            self.set_status(run_id, "running")
            return False
        now = _now()
        with self.transaction():
            self.con.execute(
                "INSERT INTO runs VALUES (?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?)",
                [run_id, now, now, evaldelta_version, cases_path, cases_sha256, len(cases),
                 repeats, json.dumps(list(arms)), json.dumps(pins, sort_keys=True, default=str),
                 json.dumps(list(case_columns))],
            )  # fmt: skip
            self.con.executemany(
                "INSERT INTO run_arms VALUES (?, ?, ?, ?, NULL)",
                [
                    [run_id, name, str(p.get("kind")), json.dumps(p, sort_keys=True, default=str)]
                    for name, p in arms.items()
                ],
            )
            self.con.executemany(
                "INSERT INTO cases VALUES (?, ?, ?, ?)",
                [
                    [run_id, cid, i, json.dumps(dict(row), default=str)]
                    for i, (cid, row) in enumerate(cases)
                ],
            )
        self._refresh_view()
        return True

    def set_status(self, run_id: str, status: str) -> None:
        """Set a run's status (running, complete, stopped: ...)."""
        self.con.execute(
            "UPDATE runs SET status = ?, updated_at = ? WHERE run_id = ?", [status, _now(), run_id]
        )

    def finish_run(self, run_id: str, status: str) -> None:
        """Record the status and, per arm, the model versions the API reported."""
        rows = self.con.execute(
            "SELECT arm, list(DISTINCT model_version ORDER BY model_version) FROM attempts "
            "WHERE run_id = ? AND model_version IS NOT NULL GROUP BY arm",
            [run_id],
        ).fetchall()
        for arm, versions in rows:
            self.con.execute(
                "UPDATE run_arms SET reported_model_versions = ? WHERE run_id = ? AND arm = ?",
                [json.dumps(list(versions)), run_id, arm],
            )
        self.set_status(run_id, status)

    def runs(self) -> list[dict[str, Any]]:
        """Every run, newest first."""
        cur = self.con.execute("SELECT * FROM runs ORDER BY created_at DESC, run_id")
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]

    # -- attempts and the response cache ----------------------------------------------------
    def finished(self, run_id: str) -> set[tuple[str, str, int]]:
        """(arm, case_id, repeat) of attempts finished without an error."""
        rows = self.con.execute(
            "SELECT arm, case_id, repeat FROM attempts WHERE run_id = ? AND error IS NULL",
            [run_id],
        ).fetchall()
        return {(str(a), str(c), int(r)) for a, c, r in rows}

    def put_attempt(
        self, run_id: str, arm: str, case_id: str, repeat: int, values: Mapping[str, Any]
    ) -> None:
        """Commit one attempt (replacing an earlier errored one)."""
        self.put_attempts([(run_id, arm, case_id, repeat, values)])

    def put_attempts(self, rows: Sequence[tuple[str, str, str, int, Mapping[str, Any]]]) -> None:
        """Write several attempts in one statement (replacing earlier errored ones).

        One multi-row statement costs about what one single-row statement does in DuckDB,
        which is what lets the runner's group commit keep up with many calls in flight.
        """
        if not rows:
            return
        names = ", ".join(("run_id", "arm", "case_id", "repeat", *ATTEMPT_FIELDS, "finished_at"))
        marks = "(" + ", ".join("?" * (len(ATTEMPT_FIELDS) + 5)) + ")"
        params: list[Any] = []
        now = _now()
        for run_id, arm, case_id, repeat, values in rows:
            params += [run_id, arm, case_id, repeat, *(values.get(f) for f in ATTEMPT_FIELDS), now]
        self.con.execute(
            f"INSERT OR REPLACE INTO attempts ({names}) VALUES {', '.join([marks] * len(rows))}",
            params,
        )

    def cached(self, key: str) -> dict[str, Any] | None:
        """The stored response for a cache key, or None."""
        cur = self.con.execute(
            f"SELECT {', '.join(RESPONSE_FIELDS)} FROM responses WHERE cache_key = ?", [key]
        )
        row = cur.fetchone()
        return dict(zip(RESPONSE_FIELDS, row, strict=True)) if row else None

    def put_response(self, key: str, values: Mapping[str, Any]) -> None:
        """Commit one successful call's response under its cache key."""
        self.put_responses([(key, values)])

    def put_responses(self, rows: Sequence[tuple[str, Mapping[str, Any]]]) -> None:
        """Write several responses under their cache keys in one statement."""
        if not rows:
            return
        marks = "(" + ", ".join("?" * (len(RESPONSE_FIELDS) + 2)) + ")"
        params: list[Any] = []
        now = _now()
        for key, values in rows:
            params += [key, *(values.get(f) for f in RESPONSE_FIELDS), now]
        self.con.execute(
            f"INSERT OR REPLACE INTO responses VALUES {', '.join([marks] * len(rows))}", params
        )

    def arm_totals(self, run_id: str) -> list[dict[str, Any]]:
        """Per arm: attempts, errors, total cost and a cascade's escalation rate.

        The cost is null when any attempt's price is unknown (never a partial sum); the
        escalation rate is null for arms that do not escalate.
        """
        cur = self.con.execute(
            "SELECT arm, count(*) AS attempts, count(error) AS errors, "
            "CASE WHEN count(cost_usd) = count(*) THEN sum(cost_usd) END AS cost_usd, "
            "avg(CASE WHEN escalated THEN 1.0 WHEN escalated IS NOT NULL THEN 0.0 END) "
            "AS escalation_rate FROM attempts WHERE run_id = ? GROUP BY arm ORDER BY arm",
            [run_id],
        )
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]

    def attempts(self, run_id: str) -> list[dict[str, Any]]:
        """Every attempt of a run, as dicts (for tests and small exports)."""
        cur = self.con.execute(
            "SELECT * FROM attempts WHERE run_id = ? ORDER BY arm, case_id, repeat", [run_id]
        )
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]

    # -- scores -----------------------------------------------------------------------------
    def scoring(self, run_id: str) -> dict[str, Any] | None:
        """How a run was scored (checks file, sha256, metrics, pins), or None."""
        if self.version == 1:
            return None
        cur = self.con.execute("SELECT * FROM scorings WHERE run_id = ?", [run_id])
        row = cur.fetchone()
        if row is None:
            return None
        names = [d[0] for d in cur.description]
        return dict(zip(names, row, strict=True))

    def begin_scoring(
        self,
        run_id: str,
        *,
        source: str,
        checks_path: str,
        checks_sha256: str,
        metrics: Sequence[str],
        meta: Mapping[str, Any],
        score_is_pass: bool,
        replace: bool,
    ) -> dict[str, Any] | None:
        """Record that ``run_id`` is scored by one checks file; return the earlier scoring.

        ``replace``: drop the run's earlier scores (a rescoring). Otherwise (a run resuming
        with ``--checks``) an earlier scoring by a different checks file is an error: the
        two would mix in one column.
        """
        previous = self.scoring(run_id)
        if previous is not None and not replace and previous["checks_sha256"] != checks_sha256:
            raise StoreError(
                f"run {run_id} is scored by {previous['checks_path']} (sha256 "
                f"{str(previous['checks_sha256'])[:12]}), not by {checks_path} (sha256 "
                f"{checks_sha256[:12]}); rescore it with evaldelta score --store instead of "
                "mixing two checks files"
            )
        with self.transaction():
            if replace:
                self.con.execute("DELETE FROM scores WHERE run_id = ?", [run_id])
            self.con.execute("DELETE FROM scorings WHERE run_id = ?", [run_id])
            self.con.execute(
                "INSERT INTO scorings VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [run_id, source, checks_path, checks_sha256, json.dumps(list(metrics)),
                 json.dumps(meta, sort_keys=True, default=str), score_is_pass, _now()],
            )  # fmt: skip
        self._refresh_view()
        return previous

    def put_scores(
        self,
        run_id: str,
        rows: Iterable[tuple[str, str, int, MetricValues]],
        *,
        follow_pass: bool = True,
    ) -> None:
        """Commit the metric values of attempts ``(arm, case_id, repeat, {metric: ...})``.

        When the run's scoring says ``score_is_pass`` (``run --checks``), the attempts'
        ``score`` follows the ``pass`` written here, so it never keeps an older file's pass
        (``follow_pass=False``: the caller writes that score itself, as the runner does).
        """
        scoring = self.scoring(run_id)
        if scoring is None:
            raise StoreError(f"run {run_id} has no scoring recorded; call begin_scoring first")
        values = [
            [run_id, arm, case_id, repeat, metric, value, reason]
            for arm, case_id, repeat, metrics in rows
            for metric, (value, reason) in metrics.items()
        ]
        with self.transaction():
            if values:
                self.con.executemany(
                    "INSERT OR REPLACE INTO scores VALUES (?, ?, ?, ?, ?, ?, ?)", values
                )
            if scoring["score_is_pass"] and follow_pass:
                self.con.execute(
                    "UPDATE attempts a SET score = s.value FROM scores s WHERE a.run_id = ? "
                    "AND s.run_id = a.run_id AND s.arm = a.arm AND s.case_id = a.case_id "
                    "AND s.repeat = a.repeat AND s.metric = 'pass'",
                    [run_id],
                )

    def rows(self, run_id: str) -> list[dict[str, Any]]:
        """A run's attempts with their case's fields (attempt columns win), for scoring."""
        cur = self.con.execute(
            "SELECT a.arm, a.case_id, a.repeat, a.output, a.error, a.model_used, "
            "a.model_version, c.case_json FROM attempts a JOIN cases c ON a.run_id = c.run_id "
            "AND a.case_id = c.case_id WHERE a.run_id = ? ORDER BY c.position, a.arm, a.repeat",
            [run_id],
        )
        names = [d[0] for d in cur.description]
        out = []
        for row in cur.fetchall():
            item = dict(zip(names, row, strict=True))
            case = json.loads(item.pop("case_json") or "{}")
            out.append({**case, **item})
        return out


def resolve_run(path: str | Path, run: str | None) -> str:
    """The run id to read from a store: ``run`` (an id or a unique prefix), or the newest."""
    with Store(path, read_only=True) as store:
        runs = [str(r["run_id"]) for r in store.runs()]
        counts = dict(
            store.con.execute("SELECT run_id, count(*) FROM attempts GROUP BY run_id").fetchall()
        )
    if not runs or not counts:
        raise StoreError(f"the run store {path} holds no runs yet (no attempts recorded)")
    if run is None:
        chosen = runs[0]
    else:
        hits = [r for r in runs if r == run] or [r for r in runs if r.startswith(run)]
        if len(hits) != 1:
            what = "matches several runs" if hits else "is not in the store"
            raise StoreError(f"run {run!r} {what}; runs in {path}: {', '.join(runs)}")
        chosen = hits[0]
    if not counts.get(chosen):
        raise StoreError(
            f"run {chosen} in the run store {path} holds no attempts yet (it stopped before "
            "any call finished); rerun the same evaldelta run to record some"
        )
    return chosen


def configured_arms(path: str | Path, run_id: str) -> tuple[str, ...]:
    """The arms of a run in the order its config named them (the first is the baseline)."""
    with Store(path, read_only=True) as store:
        for row in store.runs():
            if str(row["run_id"]) == run_id:
                try:
                    names = json.loads(row.get("arms") or "[]")
                except ValueError:
                    return ()
                return tuple(str(n) for n in names) if isinstance(names, list) else ()
    return ()


def run_status(path: str | Path, run_id: str) -> str:
    """The recorded status of a run: complete, interrupted, stopped: ...

    A run recorded as ``running`` whose store this process could open was killed (a live
    run holds DuckDB's file lock): it is reported as ``interrupted``.
    """
    with Store(path, read_only=True) as store:
        for row in store.runs():
            if str(row["run_id"]) == run_id:
                status = str(row.get("status") or "unknown")
                return "interrupted" if status == "running" else status
    raise StoreError(f"run {run_id!r} is not in the store {path}")


def iter_pins(path: str | Path, run_id: str) -> Iterable[tuple[str, dict[str, Any]]]:
    """(arm, pins) of a run, with the reported model versions merged in."""
    with Store(path, read_only=True) as store:
        rows = store.con.execute(
            "SELECT arm, pins_json, reported_model_versions FROM run_arms WHERE run_id = ? "
            "ORDER BY arm",
            [run_id],
        ).fetchall()
    for arm, pins, versions in rows:
        out = json.loads(pins)
        out["reported_model_versions"] = json.loads(versions) if versions else []
        yield str(arm), out
