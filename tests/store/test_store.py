"""The run store: schema version, the eval_rows view, run resolution, compare errors."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest

from evaldelta.errors import StoreError
from evaldelta.store import SCHEMA_VERSION, Store, resolve_run


def _store_with_run(path: Path, run_id: str = "r-abc") -> None:
    with Store(path) as store:
        store.begin_run(
            run_id, cases_path="c.jsonl", cases_sha256="0" * 64,
            cases=[("c1", {"case_id": "c1", "task": "faq", "score": 9, 'we"ird': "x"})],
            case_columns=["case_id", "task", "score", 'we"ird'], repeats=1,
            arms={"a": {"kind": "model"}}, pins={}, evaldelta_version="0",
        )  # fmt: skip
        store.put_attempt(run_id, "a", "c1", 0, {"output": "hi", "score": 1.0})


def test_view_exposes_case_columns_but_never_shadows_attempt_columns(tmp_path: Path) -> None:
    _store_with_run(tmp_path / "s.duckdb")
    con = duckdb.connect(str(tmp_path / "s.duckdb"), read_only=True)
    cur = con.execute("SELECT * FROM eval_rows")
    names = [d[0] for d in cur.description]
    row = dict(zip(names, cur.fetchone() or (), strict=True))
    con.close()
    assert row["task"] == "faq" and row['we"ird'] == "x"
    assert row["score"] == 1.0  # the attempt's score, not the case's column
    assert names.count("score") == 1


def test_schema_version_is_checked(tmp_path: Path) -> None:
    path = tmp_path / "s.duckdb"
    _store_with_run(path)
    con = duckdb.connect(str(path))
    con.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    con.close()
    with pytest.raises(
        StoreError, match=f"schema version 99; this evaldelta reads version {SCHEMA_VERSION}"
    ):
        Store(path)
    other = tmp_path / "other.duckdb"
    duckdb.connect(str(other)).close()
    with pytest.raises(StoreError, match="not an evaldelta run store"):
        Store(other, read_only=True)


def test_resolve_run_by_prefix_and_newest(tmp_path: Path) -> None:
    path = tmp_path / "s.duckdb"
    _store_with_run(path, "r-abc")
    _store_with_run(path, "r-abd")
    assert resolve_run(path, "r-abc") == "r-abc"
    with pytest.raises(StoreError, match="matches several runs"):
        resolve_run(path, "r-ab")
    with pytest.raises(StoreError, match="is not in the store"):
        resolve_run(path, "zzz")
    assert resolve_run(path, None) in ("r-abc", "r-abd")


def test_compare_store_errors_are_one_line(tmp_path: Path, run_cli: Callable[..., object]) -> None:
    result = run_cli("compare", "--store", str(tmp_path / "none.duckdb"))
    assert result.code == 2  # type: ignore[attr-defined]
    assert "does not exist" in result.err and result.err.count("\n") == 1  # type: ignore[attr-defined]
    _store_with_run(tmp_path / "s.duckdb")
    result = run_cli("compare", "--store", str(tmp_path / "s.duckdb"), "--run", "nope")
    assert result.code == 2 and "run 'nope' is not in the store" in result.err  # type: ignore[attr-defined]
    result = run_cli("compare", "--run", "x", str(tmp_path / "f.csv"))
    assert result.code == 2 and "--run needs --store" in result.err  # type: ignore[attr-defined]
