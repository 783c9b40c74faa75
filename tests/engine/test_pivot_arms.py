"""The pivot over rows with arms that are not compared (engine/_pivot.py, ``others``).

Their rows are left out by each aggregate's own condition instead of a filter before the
group-by (twice as fast on large inputs, bench/README.md). What they say must not count: a
case only they have is no case of the comparison, and a slice only they give a case is no
conflict, while comparing them too sees both.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from evaldelta.comparison import compare
from evaldelta.errors import SliceConflictError
from evaldelta.report import render_json
from tests.rows import csv_text

Write = Callable[[str, str], Path]


def _rows(write: Write) -> Path:
    rows = []
    for i in range(30):
        rows += [(f"c{i}", "a", f"t{i % 2}", i % 2), (f"c{i}", "b", f"t{i % 2}", (i // 2) % 2)]
    rows += [("c3", "c", "t9", 1)]  # the third arm puts c3 in another slice
    rows += [(f"only{i}", "c", f"t{i % 2}", 1) for i in range(5)]  # and has cases of its own
    return write("rows.csv", csv_text(rows, "case_id,arm,slice,score"))


def test_other_arms_rows_count_for_nothing(write: Write) -> None:
    path = _rows(write)
    got = json.loads(render_json(compare([path], baseline="a", candidates=["b"])))
    two_arms = write(
        "two.csv",
        "".join(
            line + "\n"
            for line in path.read_text(encoding="utf-8").splitlines()
            if ",c," not in line
        ),
    )
    alone = json.loads(render_json(compare([two_arms], baseline="a")))
    assert got["metrics"] == alone["metrics"]


def test_comparing_the_other_arm_too_sees_its_slice(write: Write) -> None:
    with pytest.raises(SliceConflictError, match="case 'c3' is in two slices of 'slice'"):
        compare([_rows(write)], baseline="a", candidates=["b", "c"])
