"""The header says what scale a graded score is on (issue 10: 0-100 taken as graded silently)."""

from __future__ import annotations

from pathlib import Path

from evaldelta.comparison import compare
from evaldelta.report import render_markdown, render_text
from tests.rows import paired, write_rows

# (baseline, candidate) scores per case
HUNDRED = [(10.0 * i, 10.0 * i + 5) for i in range(1, 9)] + [(0.0, 100.0)]
GRADED = [(1.0 + i % 4, 2.0 + i % 4) for i in range(12)]
BINARY = [(float(i % 2), float((i + 1) % 2)) for i in range(12)]


def test_a_0_100_score_is_named_as_such(tmp_path: Path) -> None:
    path = write_rows(tmp_path / "rows.csv", paired(HUNDRED))
    result = compare([str(path)], baseline="base")
    head = render_text(result).splitlines()[1]
    assert "scores 0 to 100, read as a 0-100 scale, inferred" in head
    assert "read as a 0-100 scale" in render_markdown(result)


def test_declared_scale_wins_and_pass_fail_says_nothing(tmp_path: Path) -> None:
    path = write_rows(tmp_path / "rows.csv", paired(GRADED))
    declared = compare([str(path)], baseline="base", scale=(1.0, 5.0))
    assert "declared scale 1 to 5" in render_text(declared).splitlines()[1]
    binary = write_rows(tmp_path / "rows.csv", paired(BINARY))
    assert "scale" not in render_text(compare([str(binary)], baseline="base")).splitlines()[1]


def test_the_arm_table_names_its_interval(tmp_path: Path) -> None:
    binary = write_rows(tmp_path / "rows.csv", paired(BINARY))
    text = render_text(compare([str(binary)], baseline="base"))
    assert "own cases (95% intervals: Wilson, Poisson-edged at 1-3 passes or fails)" in text
    graded = write_rows(tmp_path / "rows.csv", paired(GRADED))
    assert "(95% intervals: t on case means)" in render_text(
        compare([str(graded)], baseline="base")
    )
