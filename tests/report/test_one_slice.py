"""Rows without a ``slice`` column (issue 24.1).

``--by slice`` on such rows gave one slice, ``all``, without a word, and every table showed
``all`` beside ``all cases``. Now the comparison's notes say so and name the columns that
look like slicing columns, every format shows it (the loud ones up front and on stderr),
and no format prints a one-slice table beside its own total.
"""

from __future__ import annotations

import io
import json
import re

import pytest
from rich.console import Console

from evaldelta.comparison import compare
from evaldelta.report import render_json, render_markdown, render_text
from evaldelta.report.html import render_html
from evaldelta.report.terminal import terminal_renderables
from tests.rows import csv_text


def _rows(extra: bool = True, **more: str) -> str:
    rows = []
    for i in range(40):
        for arm, p in (("v1", 3), ("v2", 2)):
            row: dict[str, object] = {"case_id": f"c{i}", "arm": arm, "score": int(i % p == 0)}
            if extra:
                row["metadata.slice"] = "abc"[i % 3]
                row["doc.question"] = f"question {i} text"
                row["vars.topic"] = "xy"[i % 2]
                row["note"] = "same"
            rows.append(row | more)
    return csv_text(rows)


@pytest.fixture
def noslice(write):  # type: ignore[no-untyped-def]
    return write("noslice.csv", _rows())


def _terminal(result) -> str:  # type: ignore[no-untyped-def]
    buf = io.StringIO()
    Console(file=buf, width=200, no_color=True).print(terminal_renderables(result))
    return buf.getvalue()


def test_the_missing_slice_column_is_said_with_the_lookalikes(noslice) -> None:  # type: ignore[no-untyped-def]
    result = compare([noslice], baseline="v1", by=["slice"])
    (note,) = [n for n in result.notes if n.startswith("--by slice:")]
    assert "the rows have no 'slice' column" in note and "one slice, 'all'" in note
    # metadata.slice first (its name says slice), then vars.topic; not the question text
    # (a value per case), not 'note' (one value), not the score
    assert "columns that look like slicing columns: metadata.slice, vars.topic" in note
    assert "doc.question" not in note and "note" not in note.split(":")[-1]
    assert note.endswith("(--by metadata.slice)")
    # met by the default --by: said as an ordinary note (not up front, not on stderr)
    default = compare([noslice], baseline="v1")
    assert any(
        n.startswith("The rows have no 'slice' column (the default --by slice), so every case")
        and n.endswith("metadata.slice, vars.topic (--by metadata.slice)")
        for n in default.notes
    )


def test_no_format_prints_the_one_slice_beside_its_total(noslice) -> None:  # type: ignore[no-untyped-def]
    result = compare([noslice], baseline="v1", by=["slice"])
    text, md, page, term = (
        render_text(result), render_markdown(result), render_html(result), _terminal(result)
    )  # fmt: skip
    # text and terminal: no row for the slice 'all' in either table, the note up front
    for out in (text, term):
        assert not re.search(r"^[\s│]*all(?! cases)\s", out, flags=re.M), out
        assert "One slice, all: the all-cases row is the whole table" in " ".join(out.split())
        assert out.index("--by slice: the rows have no") < out.index("Answer:")
    assert "Per slice" not in text and "Chosen mix" not in text and "weights:" not in text
    assert "| all |" not in md and "| **all cases** |" in md
    assert md.startswith("> ⚠️ --by slice: the rows have no")
    assert "Standardized" not in md
    assert "<td>all</td>" not in page and 'id="forest-0-mark-' not in page
    assert 'class="flag loud-note"' in page and "One slice, all:" in page
    assert "chosen mix (actual)" not in page  # no standardized rate beside the pooled one
    doc = json.loads(render_json(result))
    assert any(n.startswith("--by slice:") for n in doc["notes"])  # JSON keeps the slice


def test_the_cli_says_it_on_stderr_and_a_plain_file_quietly(run_cli, noslice, write) -> None:  # type: ignore[no-untyped-def]
    res = run_cli("compare", noslice, "--baseline", "v1", "--by", "slice")
    assert res.code == 0
    assert "evaldelta: WARNING: --by slice: the rows have no 'slice' column" in res.err
    res = run_cli("compare", noslice, "--baseline", "v1")
    assert "WARNING" not in res.err and "(--by metadata.slice)" in res.out
    plain = write("plain.csv", _rows(extra=False))
    res = run_cli("compare", plain, "--baseline", "v1")
    assert res.code == 0 and "WARNING" not in res.err  # nothing else to slice by: a note
    assert "The rows have no 'slice' column: every case is in one slice" in res.out
    res = run_cli("compare", plain, "--baseline", "v1", "--by", "slice")
    assert "no column looks like a slicing column either" in res.err


def test_a_real_one_slice_column_is_not_shown_twice_either(write) -> None:  # type: ignore[no-untyped-def]
    rows = _rows(extra=False, slice="only")
    result = compare([write("one.csv", rows)], baseline="v1")
    assert not any("slice" in n for n in result.notes)  # the column exists: nothing missing
    text = render_text(result)
    assert "One slice, only:" in text and not re.search(r"^\s+only\s", text, flags=re.M)
