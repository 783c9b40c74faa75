"""Validation's quick pass (engine/_validate.py): the case ids are checked by the pivot.

The quick pass reads no case id; the per-case pivot, which groups by them anyway, tests
each once. Whatever it cannot vouch for goes to the full validation, so every message,
and the order in which defects are reported, is the full validation's.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import evaldelta.engine.evidence as evidence
from evaldelta.comparison import compare
from evaldelta.errors import BadValueError

Write = Callable[[str, str], Path]
CLEAN = "case_id,arm,score\nc1,a,1\nc2,a,0\nc1,b,1\nc2,b,1\nc1,c,0\nc2,c,0\n"


@pytest.fixture
def full_runs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the runs of the full validation."""
    runs: list[int] = []
    real = evidence.validate

    def counted(*args: Any, **kwargs: Any) -> Any:
        runs.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(evidence, "validate", counted)
    return runs


def test_clean_rows_take_the_quick_pass_only(write: Write, full_runs: list[int]) -> None:
    result = compare([write("c.csv", CLEAN)], baseline="a")
    assert not full_runs
    assert [p.candidate for p in result.slicing().pairs] == ["b", "c"]
    assert not any("spaces around" in n for n in result.notes)


@pytest.mark.parametrize(
    ("old", "new", "line"),
    [
        ("c2,b,1", ",b,1", 5),  # a compared arm's: the pivot finds it
        ("c2,c,0", ",c,0", 7),  # an arm left out of the comparison: its own check finds it
        ("c2,b,1", '"   ",b,1', 5),  # blank once stripped
    ],
)
def test_a_blank_case_id_gets_the_full_validations_message(
    write: Write, full_runs: list[int], old: str, new: str, line: int
) -> None:
    path = write("b.csv", CLEAN.replace(old, new))
    with pytest.raises(BadValueError) as exc:
        compare([path], baseline="a", candidates=["b"])
    assert str(exc.value).startswith(f"{path}, line {line}, field 'case_id'")
    assert "case_id is blank; every row needs a case id" in str(exc.value)
    assert full_runs == [1]


@pytest.mark.parametrize("arm", ["b", "c"])
def test_a_padded_case_id_is_stripped_and_counted(
    write: Write, full_runs: list[int], arm: str
) -> None:
    """Compared or not, a padded id is counted as the full validation counts it."""
    path = write("p.csv", CLEAN.replace(f"c2,{arm}", f"c2 ,{arm}"))
    result = compare([path], baseline="a", candidates=["b"])
    assert full_runs == [1]
    assert result.slicing().pairs[0].overall.n_pairs == 2  # "c2 " paired as c2
    assert any("1 rows had spaces around" in n for n in result.notes)


def test_defects_are_reported_in_the_documented_order(write: Write) -> None:
    """A blank case id comes before a bad score (validate's order), wherever it is."""
    text = CLEAN.replace("c1,a,1", "c1,a,lots").replace("c2,b,1", ",b,1")
    with pytest.raises(BadValueError, match="case_id is blank") as exc:
        compare([write("o.csv", text)], baseline="a")
    assert ", line 5, " in str(exc.value)


def test_a_padded_arm_gives_up_the_quick_pass(write: Write, full_runs: list[int]) -> None:
    result = compare([write("a.csv", CLEAN.replace("c1,b", "c1, b"))], baseline="a")
    assert full_runs == [1]
    assert [p.candidate for p in result.slicing().pairs] == ["b", "c"]
    assert any("1 rows had spaces around" in n for n in result.notes)
