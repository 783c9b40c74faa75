"""The per-case pivot's second resort when DuckDB runs out of memory (engine/_reduce.py).

The first ``CREATE TEMP TABLE`` is made to fail the way DuckDB does (an exception named
``OutOfMemoryException``, after Ibis has created the empty table it then fills); the pivot
built in parts must give the same comparison as an untroubled run: every case in exactly one
part, none lost, none twice.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import evaldelta.engine._reduce as reduce_mod
from evaldelta.comparison import compare
from evaldelta.errors import DuplicateRowError
from evaldelta.report import render_json
from tests.rows import write_rows


class OutOfMemoryException(Exception):
    """Named as DuckDB names it: the retry keys on the name."""


def _rows(path: Path, cases: int = 300) -> Path:
    rows = []
    for i in range(cases):
        # some ids carry blanks the canonical relation trims: they must hash as trimmed
        case = f" c{i}" if i % 7 == 0 else f"c{i}"
        rows += [(case, "v1", f"s{i % 3}", i % 2), (f"c{i}", "v2", f"s{i % 3}", (i // 4) % 2)]
    return write_rows(path, rows, "case_id,arm,slice,score")


def _out_of_memory_until(monkeypatch: pytest.MonkeyPatch, parts_that_fit: int) -> list[int]:
    """Make every build with fewer than ``parts_that_fit`` parts fail; record the tries."""
    real = reduce_mod._build_in_parts
    tried: list[int] = []

    def build(con: Any, name: str, rows: Any, pivot: Any, parts: int) -> Any:
        tried.append(parts)
        if parts < parts_that_fit:
            con.raw_sql(f'CREATE TEMP TABLE IF NOT EXISTS "{name}" (x INTEGER)')  # as Ibis does
            raise OutOfMemoryException("Out of Memory Error: could not allocate block")
        return real(con, name, rows, pivot, parts)

    monkeypatch.setattr(reduce_mod, "_build_in_parts", build)
    return tried


@pytest.mark.parametrize("parts_that_fit", [4, 16])
def test_the_pivot_in_parts_gives_the_same_comparison(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parts_that_fit: int
) -> None:
    path = _rows(tmp_path / "rows.csv")
    expected = json.loads(render_json(compare([path], baseline="v1")))
    tried = _out_of_memory_until(monkeypatch, parts_that_fit)
    got = json.loads(render_json(compare([path], baseline="v1")))
    # the quick validation leaves the case ids to the pivot, which finds the padded ones:
    # the full validation strips them, and the pivot is built (in parts) once more
    tries = [p for p in (1, 4, 16) if p <= parts_that_fit]
    assert tried == [*tries, *tries]
    assert got["metrics"] == expected["metrics"]


def test_every_case_lands_in_exactly_one_part(tmp_path: Path) -> None:
    from evaldelta.sources import parse_source, read_sources

    tables = read_sources([parse_source(str(_rows(tmp_path / "rows.csv")))])
    rows = tables.rows
    buckets = reduce_mod._rows(rows.select("case_id", b=(rows.case_id.hash() % 4 + 4) % 4))
    assert {r["b"] for r in buckets} == {0, 1, 2, 3}
    seen: dict[str, set[int]] = {}
    for r in buckets:
        seen.setdefault(r["case_id"], set()).add(r["b"])
    assert len(seen) == 300
    assert all(len(b) == 1 for b in seen.values())


def test_other_errors_are_not_retried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "dup.csv"
    path.write_text("case_id,arm,score\nc1,v1,1\nc1,v1,0\nc1,v2,1\n", encoding="utf-8")
    tried = _out_of_memory_until(monkeypatch, 1)
    with pytest.raises(DuplicateRowError):
        compare([path], baseline="v1")
    assert tried == [1]


def test_out_of_memory_at_the_most_parts_is_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tried = _out_of_memory_until(monkeypatch, 10**6)
    with pytest.raises(OutOfMemoryException):
        compare([_rows(tmp_path / "rows.csv", cases=20)], baseline="v1")
    assert tried == [1, 4, 16, 64, 256]


def _repeated(
    path: Path, dup: str | None = None, cases: int = 200, repeats: tuple[int, ...] = (0, 1)
) -> Path:
    """Every case run twice per arm (every case has several rows), optionally one duplicate."""
    rows = [
        (f"c{i}", arm, f"s{i % 3}", r, (i + r) % 2)
        for i in range(cases)
        for arm in ("v1", "v2")
        for r in repeats
    ]
    if dup is not None:
        rows.append(tuple(dup.split(",")))
    return write_rows(path, rows, "case_id,arm,slice,repeat,score")


def _duplicate_check_out_of_memory_until(monkeypatch: pytest.MonkeyPatch, fit: int) -> list[int]:
    real = reduce_mod._duplicate
    tried: list[int] = []

    def duplicate(rows: Any, part: int, parts: int) -> Any:
        if part == 0:
            tried.append(parts)
        if parts < fit:
            raise OutOfMemoryException("Out of Memory Error: could not allocate block")
        return real(rows, part, parts)

    monkeypatch.setattr(reduce_mod, "_duplicate", duplicate)
    return tried


@pytest.mark.parametrize("dup", ["c77,v2,s2,1,0", "c5,v1,s2,0,1"])
def test_the_duplicate_check_in_parts_reports_the_same_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dup: str
) -> None:
    # every case has two rows per arm: the check groups every row, without the join
    path = _repeated(tmp_path / "rows.csv", dup)
    with pytest.raises(DuplicateRowError) as untroubled:
        compare([path], baseline="v1")
    tried = _duplicate_check_out_of_memory_until(monkeypatch, 16)
    with pytest.raises(DuplicateRowError) as in_parts:
        compare([path], baseline="v1")
    assert tried == [1, 4, 16]
    assert str(in_parts.value) == str(untroubled.value)
    case = dup.split(",")[0]
    assert f"case {case!r}" in str(untroubled.value) and "appears 2 times" in str(untroubled.value)


def test_repeated_runs_without_duplicates_pass_the_check_in_parts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # repeats 0 and 20: past the pivot's attempt screen (tests/engine/test_attempt_screen.py),
    # so the row-level check runs on every row, as it does for such repeats
    path = _repeated(tmp_path / "rows.csv", repeats=(0, 20))
    expected = json.loads(render_json(compare([path], baseline="v1")))
    tried = _duplicate_check_out_of_memory_until(monkeypatch, 4)
    assert json.loads(render_json(compare([path], baseline="v1")))["metrics"] == expected["metrics"]
    assert tried == [1, 4]


def test_a_few_repeated_cases_are_checked_through_the_join(tmp_path: Path) -> None:
    # one case of 300 has two rows in an arm: only its rows are grouped (the semi-join)
    path = _rows(tmp_path / "rows.csv")
    text = path.read_text(encoding="utf-8") + "c3,v1,s0,1\n"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DuplicateRowError, match="case 'c3'"):
        compare([path], baseline="v1")


def test_a_pivot_too_large_for_the_buffer_starts_in_parts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # as if 10 cases filled the buffer: validation counts 300 cases (600 rows of the two
    # compared arms, one repeat), so the first try is the first power of four with room: 64
    # parts of <= 10. The file has a third arm, left out: the pivot filters its rows
    path = _rows(tmp_path / "rows.csv")
    with path.open("a", encoding="utf-8") as fh:
        fh.writelines(f"c{i},v3,s{i % 3},1\n" for i in range(300))
    expected = json.loads(render_json(compare([path], baseline="v1", candidates=["v2"])))
    monkeypatch.setattr(reduce_mod, "_CASES_PER_512MB", 10)
    tried = _out_of_memory_until(monkeypatch, 1)
    got = json.loads(render_json(compare([path], baseline="v1", candidates=["v2"])))
    assert got["metrics"] == expected["metrics"]
    assert tried == [64, 64]  # padded ids: built again after the full validation (above)


def test_a_pivot_of_every_arm_starts_in_one_part(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # unfiltered (the rows hold only the compared arms), DuckDB 2.0 spills the aggregate in
    # one part faster than parts read the file again (bench/README.md); parts stay the retry
    path = _rows(tmp_path / "rows.csv")
    expected = json.loads(render_json(compare([path], baseline="v1")))
    monkeypatch.setattr(reduce_mod, "_CASES_PER_512MB", 10)
    tried = _out_of_memory_until(monkeypatch, 4)
    assert json.loads(render_json(compare([path], baseline="v1")))["metrics"] == expected["metrics"]
    assert tried == [1, 4, 1, 4]


@pytest.mark.parametrize(
    ("limit", "cases", "arms", "parts"),
    [
        ("512MB", 10_000_000, 2, 1),
        ("512MB", 50_000_000, 2, 4),  # 12.5M per part: what ran at 100M rows
        ("512MB", 11_111_111, 3, 4),  # three arms: a wider group per case
        ("2GB", 40_000_000, 2, 1),
        ("512MB", 10**12, 2, 256),  # never past the most parts
    ],
)
def test_first_parts_from_the_buffer_and_the_cases(
    limit: str, cases: int, arms: int, parts: int
) -> None:
    from evaldelta.sources._connect import connect

    con = connect()
    con.con.execute(f"SET memory_limit = '{limit}'")
    assert reduce_mod._first_parts(con, cases, arms) == parts


def test_an_unreadable_buffer_setting_means_one_part() -> None:
    class Odd:
        class con:  # stands in for the DuckDB connection
            @staticmethod
            def execute(query: str) -> Any:
                raise RuntimeError("no such setting")

    assert reduce_mod._first_parts(Odd(), 10**9) == 1


def test_duckdb_draws_no_progress_bar_into_a_file_or_ci_log(tmp_path: Path) -> None:
    # in a plain python process (not under pytest, where DuckDB turns its bar off itself)
    # with stderr going to a file, as in CI: DuckDB's default is on, evaldelta's connection off
    import subprocess
    import sys

    code = (
        "import duckdb\nfrom evaldelta.sources._connect import connect\n"
        "q = \"SELECT current_setting('enable_progress_bar')\"\n"
        "print(duckdb.connect().execute(q).fetchall()[0][0], "
        "connect().con.execute(q).fetchall()[0][0])"
    )
    with (tmp_path / "stderr.log").open("w") as err:
        out = subprocess.run(
            [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=err, text=True, check=True
        )
    assert out.stdout.split() == ["True", "False"]


def test_a_terminal_keeps_duckdbs_progress_bar() -> None:
    # the same process with stderr on a pseudo-terminal: evaldelta leaves DuckDB's bar on
    import os
    import subprocess
    import sys

    code = (
        "from evaldelta.sources._connect import connect\n"
        "q = \"SELECT current_setting('enable_progress_bar')\"\n"
        "print(connect().con.execute(q).fetchall()[0][0])"
    )
    leader, follower = os.openpty()
    try:
        out = subprocess.run(
            [sys.executable, "-c", code],
            stdout=subprocess.PIPE,
            stderr=follower,
            text=True,
            check=True,
        )
    finally:
        os.close(leader)
        os.close(follower)
    assert out.stdout.split() == ["True"]
