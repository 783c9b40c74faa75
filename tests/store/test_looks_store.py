"""Schema 4: each attempt's sequence, the looks table, and a version-3 store migrated to it."""

from __future__ import annotations

from pathlib import Path

import duckdb

from evaldelta.store import SCHEMA_VERSION, Store


def _store(path: Path) -> None:
    with Store(path) as store:
        store.begin_run(
            "r-1", cases_path="c.jsonl", cases_sha256="0" * 64,
            cases=[("c1", {"case_id": "c1", "task": "faq"}), ("c2", {"case_id": "c2"}),
                   ("c3", {"case_id": "c3", "task": "qa"})],
            case_columns=["case_id", "task"], repeats=2,
            arms={"a": {"kind": "model"}, "b": {"kind": "model"}}, pins={},
            evaldelta_version="0",
        )  # fmt: skip
        for arm, case, repeat, score, seq in [
            ("a", "c1", 0, 1.0, 2), ("a", "c1", 1, 0.0, 2), ("b", "c1", 0, 1.0, 2),
            ("a", "c2", 0, 1.0, 1), ("b", "c3", 0, None, 3),
        ]:  # fmt: skip
            store.put_attempt("r-1", arm, case, repeat, {"score": score, "sequence": seq})


def test_a_look_is_recorded_when_sent_then_when_judged(tmp_path: Path) -> None:
    _store(tmp_path / "s.duckdb")
    with Store(tmp_path / "s.duckdb") as store:
        store.begin_look("r-1", 1, {"faq": 1, "qa": 1})
        assert store.looks("r-1") == [{"look": 1, "sent": {"faq": 1, "qa": 1}, "cases": None,
                                       "calls": None, "usd": None, "outcome": None,
                                       "decided": None}]  # fmt: skip
        store.judge_look("r-1", 1, cases=2, calls=8, usd=None, outcome="fail", decided=["qa"])
    with Store(tmp_path / "s.duckdb", read_only=True) as store:
        (look,) = store.looks("r-1")
    got = (look["cases"], look["calls"], look["outcome"], look["decided"])
    assert got == (2, 8, "fail", ["qa"])


def test_a_version_3_store_is_read_then_migrated(tmp_path: Path) -> None:
    path = tmp_path / "s.duckdb"
    _store(path)
    con = duckdb.connect(str(path))
    con.execute("DROP VIEW eval_rows")
    con.execute("DROP TABLE looks")
    con.execute("ALTER TABLE attempts DROP COLUMN sequence")
    con.execute("CREATE VIEW eval_rows AS SELECT a.run_id, a.case_id, a.score FROM attempts a")
    con.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    con.close()
    with Store(path, read_only=True) as store:  # readable as it is: no looks
        assert store.version == 3 and store.looks("r-1") == []
    with Store(path) as store:
        assert store.version == SCHEMA_VERSION == 4
        assert store.looks("r-1") == []
        assert {r["sequence"] for r in store.attempts("r-1")} == {None}
    con = duckdb.connect(str(path), read_only=True)
    assert "sequence" in [d[0] for d in con.execute("SELECT * FROM eval_rows").description]
    con.close()
