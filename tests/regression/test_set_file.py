"""The regression set file: round trip, append-only growth, duplicates, one-line errors."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaldelta.errors import RegressionSetError
from evaldelta.regression import (
    Attempt,
    RegressionCase,
    add_cases,
    append_text,
    case_block,
    load_set,
    parse_set,
)
from evaldelta.regression._file import HEADER
from tests.conftest import one_line_error

DAY = dt.date(2026, 11, 30)


def attempt(case_id: str, output: str | None = "It ships by Friday.", **fields: Any) -> Attempt:
    return Attempt(case_id, "delivery", "candidate", "pass", 0.0, output, fields)


def add(path: Path, *attempts: Attempt, source: str = "INC-4471") -> Any:
    return add_cases(
        path, list(attempts), reason="promised a date", source=source, found_by="support-qa",
        added_at=DAY,
    )  # fmt: skip


# no lone surrogates: they cannot be written as UTF-8 at all
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60)
FIELD_VALUE = st.one_of(
    TEXT,
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=True),
)


@settings(derandomize=True, max_examples=200, deadline=None)
@given(
    output=TEXT,
    reason=TEXT.filter(lambda s: s.strip() != ""),
    fields=st.dictionaries(TEXT.filter(lambda s: s != ""), FIELD_VALUE, max_size=4),
)
def test_any_text_round_trips(output: str, reason: str, fields: dict[str, Any]) -> None:
    """Whatever a reply or a ticket holds (quotes, backslashes, control characters, line
    breaks, triple quotes), the file gives back exactly what was written."""
    case = RegressionCase(
        id="R-0001", case_id="T1", slice="s", reason=reason, source="INC-1", found_by="qa",
        added_at="2026-11-30", revision=1, failed_release="cand", metric="pass", score=0.0,
        output=output, fields=fields,
    )  # fmt: skip
    text = append_text(None, [case], "r.toml")
    (back,) = parse_set(text, "r.toml").cases
    assert back == case


def test_append_keeps_every_existing_line_and_counts_up(tmp_path: Path) -> None:
    path = tmp_path / "regression.toml"
    first = add(path, attempt("T2301", order_number="2301"), attempt("T2240"))
    assert [c.id for c in first.added] == ["R-0001", "R-0002"]
    assert first.set.revision == 1 and {c.revision for c in first.added} == {1}
    before = path.read_text().splitlines()
    second = add(path, attempt("T2213"), source="REV-0093")
    assert [c.id for c in second.added] == ["R-0003"] and second.set.revision == 2
    after = path.read_text().splitlines()
    # the only changed line is the set's revision; the rest is the old text plus a block
    changed = [i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b]
    assert [before[i] for i in changed] == ["revision = 1"]
    assert [after[i] for i in changed] == ["revision = 2"]
    assert after[len(before) :] == ["", *case_block(second.added[0]).splitlines()]
    back = load_set(path)
    assert [c.id for c in back.cases] == ["R-0001", "R-0002", "R-0003"]  # id order = file order
    assert back.cases[0].fields == {"order_number": "2301"}
    assert back.cases[2].source == "REV-0093" and back.cases[2].revision == 2


def test_a_new_set_starts_from_the_commented_header(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "regression.toml"
    add(path, attempt("T1"))
    text = path.read_text()
    assert text.startswith(HEADER.replace("revision = 0", "revision = 1"))
    assert text.count("\n[[cases]]\n") == 1


def test_the_same_case_from_the_same_source_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "regression.toml"
    add(path, attempt("T2301"))
    before = path.read_bytes()
    with pytest.raises(RegressionSetError, match="T2301 from INC-4471 is already R-0001"):
        add(path, attempt("T9"), attempt("T2301"))
    assert path.read_bytes() == before  # nothing was added, not even T9
    again = add(path, attempt("T2301"), source="INC-5000")  # another incident: a new case
    assert [c.id for c in again.added] == ["R-0002"]


def test_an_id_is_never_reused_after_a_hand_deletion(tmp_path: Path) -> None:
    path = tmp_path / "regression.toml"
    add(path, attempt("T1"), attempt("T2"))
    text = path.read_text()
    start = text.index('[[cases]]\nid = "R-0002"')
    path.write_text(text[:start].rstrip() + "\n")  # a reviewer dropped R-0002
    out = add(path, attempt("T3"))
    assert [c.id for c in out.added] == ["R-0002"]  # the highest kept is R-0001
    path.write_text(text)
    assert [c.id for c in add(path, attempt("T4")).added] == ["R-0003"]


BAD = [
    ("version = 1\nrevision = 1\n[[cases]]\nid = 'R-0001'\n", "line 3", "has no 'case_id'"),
    ('version = 1\nrevision = "one"\n', "line 2, field 'revision'", "whole number"),
    ("version = 2\nrevision = 0\n", "line 1, field 'version'", "version 1 only"),
    ("version = 1\nrevison = 0\n", "line 2", "did you mean 'revision'"),
    ("version = 1\nrevision = 0\n[[cases]\n", "line 3", "not valid TOML"),
]


@pytest.mark.parametrize(("text", "where", "why"), BAD)
def test_bad_files_are_one_line_errors(
    text: str, where: str, why: str, write: Callable[[str, str], Path], run_cli: Any
) -> None:
    path = write("regression.toml", text)
    one_line_error(run_cli("cases", "list", "--set", path), "regression.toml", where, why)


def _good(tmp_path: Path) -> tuple[Path, list[str]]:
    path = tmp_path / "regression.toml"
    add(path, attempt("T1", output="line one\nline two\n"), attempt("T2", depot="Leeds"))
    return path, path.read_text().splitlines()


@pytest.mark.parametrize(
    ("old", "new", "field", "why"),
    [
        ('added_at = "2026-11-30"', 'added_at = "30/11/2026"', "added_at", "ISO date"),
        ('id = "R-0002"', 'id = "R-0001"', "id", "ids must increase"),
        ('id = "R-0002"', 'id = "R2"', "id", "looks like R-0001"),
        ('source_kind = "incident"', 'source_kind = "rumour"', "source_kind", "must be one of"),
        ("revision = 1", "revision = 3", "revision", "past the set's revision"),
        ('case_id = "T2"', 'case_id = "T1"', "case_id", "already R-0001"),
        ('depot = "Leeds"', "depot = [1, 2]", "fields.depot", "string, number or true/false"),
    ],
)
def test_a_bad_value_is_named_by_its_own_line(
    tmp_path: Path, run_cli: Any, old: str, new: str, field: str, why: str
) -> None:
    path, lines = _good(tmp_path)
    # the second case's line (the last occurrence), so the line number must be found, not 1
    index = max(i for i, line in enumerate(lines) if line == old)
    lines[index] = new
    path.write_text("\n".join(lines) + "\n")
    res = run_cli("cases", "list", "--set", path)
    one_line_error(res, f"line {index + 1}", f"field {field!r}", why)


def test_multi_line_outputs_do_not_confuse_the_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "regression.toml"
    tricky = 'id = "R-0009"\n[[cases]]\nreason = \'\'\'\nsource = "x"\n'
    add(path, attempt("T1", output=tricky), attempt("T2"))
    lines = path.read_text().splitlines()
    index = max(i for i, line in enumerate(lines) if line == 'found_by = "support-qa"')
    lines[index] = 'found_by = ""'
    with pytest.raises(RegressionSetError) as err:
        parse_set("\n".join(lines) + "\n", "r.toml")
    assert err.value.location is not None
    assert (err.value.location.line, err.value.location.field) == (index + 1, "found_by")
