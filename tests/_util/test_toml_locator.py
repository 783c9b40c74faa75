"""The one TOML key locator the policy, the regression set and the run config share."""

from __future__ import annotations

from evaldelta._util._toml import line_of, locate_keys


def test_arrays_of_tables_are_indexed_and_their_subtables_follow():
    text = (
        "version = 1\n"
        "[[cases]]\n"
        'id = "R-0001"\n'
        "[cases.fields]\n"
        '"a.b" = 1\n'
        "[[cases]]\n"
        'id = "R-0002"\n'
    )
    lines = locate_keys(text)
    assert lines["version"] == 1
    assert (lines["cases.0"], lines["cases.0.id"], lines["cases.0.fields"]) == (2, 3, 4)
    assert lines["cases.0.fields.a.b"] == 5
    assert (lines["cases.1"], lines["cases.1.id"]) == (6, 7)


def test_multi_line_strings_and_arrays_hide_their_lines_and_brackets_in_strings_do_not_count():
    text = (
        'output = """\n'
        "fake = 1\n"
        '"""\n'
        'reason = "see [1"\n'
        "allow = [\n"
        "  'x = [',\n"
        "]\n"
        "after = 2  # [\n"
        "last = 3\n"
    )
    lines = locate_keys(text)
    assert "fake" not in lines
    assert (lines["reason"], lines["allow"], lines["after"], lines["last"]) == (4, 5, 8, 9)


def test_line_of_falls_back_to_the_nearest_enclosing_table():
    lines = {"slices": 3, "slices.a": 4}
    assert line_of(lines, ("slices", "a", "min_cases")) == 4
    assert line_of(lines, ("slices", "b")) == 3
    assert line_of(lines, ("other",)) is None
