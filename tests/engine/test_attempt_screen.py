"""The pivot's screen for a repeated (arm, repeat) in repeated runs (engine/_reduce.py).

With repeats, every case has several rows per arm, so the row-level duplicate check (a
group-by of every row by arm, case and repeat) would run on every comparison: 24 s of a
100M-row one. The pivot instead sums one power of two per attempt (:func:`_attempt_bits`)
and flags a case whose sum has fewer set bits than it has attempts. The screen must be
exact: it flags a case exactly when some (arm, repeat) of it appears twice, and the
row-level check then names the first such row as before.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import evaldelta.engine._pivot as pivot_mod
import evaldelta.engine._reduce as reduce_mod
from evaldelta.comparison import compare
from evaldelta.engine import build_case_table, validate
from evaldelta.errors import DuplicateRowError
from evaldelta.report import render_json
from evaldelta.sources import parse_source
from evaldelta.sources._canonical import read_sources
from evaldelta.sources._fetch import rows as fetch_rows
from tests.rows import csv_text

Write = Callable[[str, str], Path]
ARMS = ("a", "b", "c")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_screen_flags_exactly_the_cases_that_repeat_a_pair(write: Write, seed: int) -> None:
    # 400 cases, 3 arms, repeats 0..4 (15 bits a case); half the cases take each pair at
    # most once, half 0 to 3 times: every kind of carry (a pair twice, three times, two pairs
    # twice, a pair twice beside its neighbour)
    rng = random.Random(seed)
    rows, truth = [], {}
    for i in range(400):
        times = (0, 1, 1) if i % 2 else (0, 0, 1, 1, 1, 2, 3)
        counts = Counter({(arm, r): rng.choice(times) for arm in ARMS for r in range(5)})
        counts[(ARMS[i % 3], 4)] = max(counts[(ARMS[i % 3], 4)], 1)  # the top repeat is 4
        truth[f"c{i}"] = any(k > 1 for k in counts.values())
        for (arm, r), k in counts.items():
            rows += [(f"c{i}", arm, r, rng.randrange(2))] * k
    path = write("rows.csv", csv_text(rows, "case_id,arm,repeat,score"))
    tables = read_sources([parse_source(str(path))])
    checked = validate(tables)
    assert checked.top_repeat(ARMS) == 4
    cases = build_case_table(
        tables, ARMS, "score", single_attempts=False, top_repeat=checked.top_repeat(ARMS)
    )
    got = {
        r["case_id"]: r["_repeated"] for r in fetch_rows(cases.table.select("case_id", "_repeated"))
    }
    assert got == truth
    assert 50 < sum(truth.values()) < 400  # both kinds of case are there


def _repeated_runs(write: Write, repeats: tuple[int, ...], dup: str | None = None) -> Path:
    rows = [
        (f"c{i}", arm, f"s{i % 3}", r, (i + r) % 2)
        for i in range(60)
        for arm in ("v1", "v2")
        for r in repeats
    ]
    if dup is not None:
        rows.append(tuple(dup.split(",")))
    return write("rows.csv", csv_text(rows, "case_id,arm,slice,repeat,score"))


def _count_row_checks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    real, calls = reduce_mod._duplicate, []

    def duplicate(rows: Any, part: int, parts: int) -> Any:
        calls.append(parts)
        return real(rows, part, parts)

    monkeypatch.setattr(reduce_mod, "_duplicate", duplicate)
    return calls


def test_repeated_runs_without_a_duplicate_skip_the_row_level_check(
    write: Write, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _count_row_checks(monkeypatch)
    result = json.loads(render_json(compare([_repeated_runs(write, (0, 1, 2))], baseline="v1")))
    assert result["metrics"]
    assert calls == []


@pytest.mark.parametrize("repeats", [(0, 1, 2), (0, 1, 20)])
def test_a_duplicate_in_repeated_runs_is_named_as_before(
    write: Write, monkeypatch: pytest.MonkeyPatch, repeats: tuple[int, ...]
) -> None:
    # (0, 1, 20): 2 arms x 21 bits is past the screen's 31, so the row-level check runs as
    # it always did; (0, 1, 2): the screen finds the case, the same check names the row
    calls = _count_row_checks(monkeypatch)
    path = _repeated_runs(write, repeats, dup=f"c17,v2,s2,{repeats[1]},0")
    with pytest.raises(DuplicateRowError) as err:
        compare([path], baseline="v1")
    assert f"arm 'v2', case 'c17', repeat {repeats[1]} appears 2 times" in str(err.value)
    assert calls == [1]


def test_the_screen_is_off_past_its_bits() -> None:
    assert pivot_mod._bit_width(2, 0) is None  # no repeats: the counts tell
    assert pivot_mod._bit_width(2, 14) == 15  # 30 bits
    assert pivot_mod._bit_width(2, 15) is None  # 32 bits
    assert pivot_mod._bit_width(3, 9) == 10  # 30 bits
    assert pivot_mod._bit_width(3, 10) is None  # 33 bits
