"""The per-case table's checks, computed by the first reduction (engine/_reduce.py).

When validation knows that no arm repeats an attempt, :func:`build_case_table` runs no
query of its own: its checks (duplicate rows, a case in two slices of any slicing column,
unchecked case ids) become aggregates of the first slice reduction, which scans the table
anyway, and are settled before any statistic is used. Each must still be refused.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import evaldelta.engine._reduce as reduce_mod
from evaldelta.comparison import compare
from evaldelta.engine import build_case_table, reduce_slices, validate
from evaldelta.errors import DuplicateRowError, SliceConflictError
from evaldelta.report import render_json
from evaldelta.sources import parse_source
from evaldelta.sources._canonical import read_sources
from tests.rows import csv_text

Write = Callable[[str, str], Path]
ROWS = csv_text(
    [
        (f"c{i}", arm, f"t{i % 2}", f"l{i % 3}", (i + k) % 2)
        for i in range(12)
        for k, arm in enumerate("ab")
    ],
    "case_id,arm,task,lang,score",
)


def test_the_table_is_built_without_a_query_of_its_own(
    write: Write, monkeypatch: pytest.MonkeyPatch
) -> None:
    tables = read_sources([parse_source(str(write("r.csv", ROWS)))], slice_columns=("task",))
    checked = validate(tables)
    assert checked.single_attempts(("a", "b"))

    def no_query(expr: Any) -> Any:
        raise AssertionError("build_case_table queried")

    monkeypatch.setattr(reduce_mod, "_rows", no_query)
    cases = build_case_table(tables, ("a", "b"), "score", single_attempts=True)
    assert set(cases.checks or {}) == {"multi", "cases", "clash0"}
    monkeypatch.undo()
    deferred = reduce_slices(cases, "task", checks=True)
    now = reduce_slices(build_case_table(tables, ("a", "b"), "score"), "task")
    assert deferred == now


def test_a_duplicate_row_is_refused(write: Write) -> None:
    path = write("d.csv", ROWS + "c3,b,t1,l0,1\n")
    with pytest.raises(DuplicateRowError, match="'c3'"):
        compare([path], by=["task"])


def test_a_case_in_two_slices_of_the_second_column_is_refused(write: Write) -> None:
    """The first reduction groups by task; it still finds the case whose lang differs."""
    path = write("s.csv", ROWS.replace("c4,b,t0,l1", "c4,b,t0,l2"))
    with pytest.raises(SliceConflictError, match=r"case 'c4' is in two slices of 'lang'"):
        compare([path], by=["task", "lang"])


def test_a_duplicate_among_repeats_is_refused(write: Write) -> None:
    """With repeats every case has several rows: the duplicate is found among them."""
    text = csv_text(
        [
            (f"c{i}", arm, f"t{i % 2}", r, (i + r) % 2)
            for i in range(8)
            for arm in "ab"
            for r in (0, 1)
        ],
        "case_id,arm,task,repeat,score",
    )
    path = write("rep.csv", text)
    out = json.loads(render_json(compare([path], by=["task"])))
    assert out["metrics"][0]["slicings"][0]["pairs"][0]["overall"]["n_pairs"] == 8
    with pytest.raises(DuplicateRowError, match="'c2'"):
        compare([write("dup.csv", text + "c2,b,t0,1,0\n")], by=["task"])
