"""Every kind of bad input gets one line naming the file (and line, field, value) and exit 2."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest

from tests.conftest import one_line_error

GOOD = "case_id,arm,slice,score\nc1,a,s1,1\nc2,a,s1,0\nc1,b,s1,1\nc2,b,s1,1\n"


def test_good_input_works(run_cli, write):
    res = run_cli("compare", write("runs.csv", GOOD))
    assert res.code == 0, res.err
    assert "all cases" in res.out and "2 pairs" in res.out


def test_missing_file(run_cli, tmp_path: Path):
    missing = tmp_path / "nope.csv"
    one_line_error(run_cli("compare", missing), str(missing), "does not exist")


def test_empty_file(run_cli, write):
    path = write("empty.csv", "")
    one_line_error(run_cli("compare", path), str(path), "empty")


def test_header_only_file(run_cli, write):
    path = write("header.csv", "case_id,arm,score\n")
    one_line_error(run_cli("compare", path), str(path), "no data rows")


def test_missing_required_column(run_cli, write):
    path = write("noscore.csv", "case_id,arm,slice\nc1,a,s\nc1,b,s\n")
    one_line_error(run_cli("compare", path), str(path), "line 1", "'score'", "missing")


def test_missing_by_column(run_cli, write):
    path = write("runs.csv", GOOD)
    one_line_error(run_cli("compare", path, "--by", "task"), "'task'", "missing")


def test_non_numeric_score(run_cli, write):
    text = GOOD + "c3,a,s1,1\nc3,b,s1,maybe\n"
    path = write("bad.csv", text)
    # c3,b is the 7th line of the file (header is line 1)
    one_line_error(run_cli("compare", path), str(path), "line 7", "'score'", "'maybe'")


def test_non_numeric_score_jsonl(run_cli, write):
    rows = [
        '{"case_id": "c1", "arm": "a", "score": 1}',
        '{"case_id": "c1", "arm": "b", "score": "high"}',
    ]
    path = write("bad.jsonl", "\n".join(rows) + "\n")
    one_line_error(run_cli("compare", path), str(path), "line 2", "'high'")


def test_duplicate_rows(run_cli, write):
    path = write("dup.csv", GOOD + "c2,b,s1,0\n")
    one_line_error(run_cli("compare", path), str(path), "duplicate row", "'c2'", "line 5")


def test_bad_repeat(run_cli, write):
    path = write("rep.csv", "case_id,arm,repeat,score\nc1,a,0,1\nc1,b,first,1\n")
    one_line_error(run_cli("compare", path), str(path), "line 3", "repeat", "'first'")


def test_unknown_baseline(run_cli, write):
    path = write("runs.csv", GOOD)
    one_line_error(run_cli("compare", path, "--baseline", "zeta"), "'zeta'", "'a', 'b'")


def test_unknown_candidate(run_cli, write):
    path = write("runs.csv", GOOD)
    one_line_error(run_cli("compare", path, "--candidate", "zeta"), "'zeta'")


def test_single_arm(run_cli, write):
    path = write("one.csv", "case_id,arm,score\nc1,a,1\nc2,a,0\n")
    one_line_error(run_cli("compare", path), "only one arm", "('a')")


@pytest.mark.parametrize(
    ("mix_text", "needles"),
    [
        ("slice,weight\ns1,1\nzz,2\n", ["line 3", "'zz'", "not in the data"]),
        ("slice,weight\ns1,-1\n", ["line 2", "'-1'", ">= 0"]),
        ("slice,weight\ns1,0\n", ["all weights are zero"]),
        ("slice,weight\ns1,lots\n", ["line 2", "'lots'", "not a number"]),
        ("name,share\ns1,1\n", ["line 1", "slice,weight"]),
    ],
)
def test_bad_mix_file(run_cli, write, mix_text: str, needles: list[str]):
    runs = write("runs.csv", GOOD)
    mix = write("mix.csv", mix_text)
    one_line_error(run_cli("compare", runs, "--mix", mix), str(mix), *needles)


def test_bad_traffic_json(run_cli, write):
    runs = write("runs.csv", GOOD)
    traffic = write("traffic.json", '{\n  "s1": 1,\n  "s9": 2\n}\n')
    one_line_error(run_cli("compare", runs, "--traffic", traffic), str(traffic), "line 3", "'s9'")


def test_malformed_traffic_json(run_cli, write):
    runs = write("runs.csv", GOOD)
    traffic = write("traffic.json", '{"s1": 1,,}')
    one_line_error(run_cli("compare", runs, "--traffic", traffic), str(traffic), "JSON")


def test_truncated_parquet(run_cli, tmp_path: Path, write):
    good = tmp_path / "good.parquet"
    csv = write("runs.csv", GOOD)
    duckdb.sql(f"copy (select * from read_csv('{csv}')) to '{good}' (format parquet)")
    data = good.read_bytes()
    bad = tmp_path / "truncated.parquet"
    bad.write_bytes(data[: len(data) // 2])
    one_line_error(run_cli("compare", bad), str(bad), "cannot read as PARQUET")


def test_not_parquet_at_all(run_cli, write):
    bad = write("junk.parquet", "this is not parquet\n")
    one_line_error(run_cli("compare", bad), str(bad), "PARQUET")


def test_unknown_suffix_is_read_by_its_content(run_cli, write):
    # The format comes from the content: CSV text named .dat is CSV.
    res = run_cli("compare", write("runs.dat", GOOD))
    assert res.code == 0, res.err
    assert "2 pairs" in res.out


def test_a_zip_that_is_no_known_log(run_cli, tmp_path: Path):
    import zipfile

    bad = tmp_path / "book.xlsx"  # a spreadsheet is a zip archive, not a log we read
    with zipfile.ZipFile(bad, "w") as zf:
        zf.writestr("xl/workbook.xml", "<workbook/>")
    one_line_error(run_cli("compare", bad), str(bad), "zip archive")


def test_a_binary_file_of_no_known_format(run_cli, tmp_path: Path):
    bad = tmp_path / "blob.bin"
    bad.write_bytes(bytes(range(256)) * 4)
    one_line_error(run_cli("compare", bad), str(bad), "binary")


def test_slice_differs_between_arms(run_cli, write):
    text = "case_id,arm,slice,score\nc1,a,s1,1\nc1,b,s2,1\nc2,a,s1,0\nc2,b,s1,1\n"
    path = write("clash.csv", text)
    one_line_error(run_cli("compare", path), str(path), "'c1'", "two slices", "'s1'", "'s2'")


def test_score_outside_declared_scale(run_cli, write):
    path = write("scale.csv", "case_id,arm,score\nc1,a,4.5\nc1,b,7\n")
    one_line_error(run_cli("compare", path, "--scale", "1,5"), "line 3", "outside", "[1, 5]")


def test_bad_scale_option(run_cli, write):
    path = write("runs.csv", GOOD)
    one_line_error(run_cli("compare", path, "--scale", "5"), "--scale")


def test_bad_arm_option(run_cli, write):
    path = write("runs.csv", GOOD)
    one_line_error(run_cli("compare", "--arm", str(path)), "NAME=FILE")


def test_blank_case_id(run_cli, write):
    path = write("blank.csv", "case_id,arm,score\nc1,a,1\n,b,1\n")
    one_line_error(run_cli("compare", path), "line 3", "case_id")


def test_confidence_out_of_range(run_cli, write):
    path = write("runs.csv", GOOD)
    one_line_error(run_cli("compare", path, "--confidence", "1.5"), "confidence")


def test_usage_error_from_typer_is_exit_2(run_cli):
    res = run_cli("compare", "--no-such-option")
    assert res.code == 2
    assert "Traceback" not in res.err


def test_error_message_has_no_traceback_shape(run_cli, write):
    path = write("bad.csv", GOOD + "c3,a,s1,x\n")
    res = run_cli("compare", path)
    assert not re.search(r"File \".*\", line \d+", res.err)


def test_unwritable_output_is_one_line_exit_2(run_cli, write, tmp_path: Path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    res = run_cli("compare", write("runs.csv", GOOD), "-o", blocker / "report.txt")
    one_line_error(res, str(blocker))


def test_an_unexpected_bug_is_one_line_exit_70(run_cli, write, monkeypatch):
    import evaldelta.comparison

    def broken(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise RuntimeError("boom")

    monkeypatch.setattr(evaldelta.comparison, "compare", broken)
    monkeypatch.delenv("EVALDELTA_DEBUG", raising=False)
    res = run_cli("compare", write("runs.csv", GOOD))
    assert res.code == 70
    lines = res.err.strip().splitlines()
    assert len(lines) == 1 and "internal error: RuntimeError: boom" in lines[0]
    assert "Traceback" not in res.err


def test_all_unlabeled_is_a_clear_error(run_cli, write):
    path = write("nulls.csv", "case_id,arm,score\nc1,a,\nc1,b,\n")
    one_line_error(run_cli("compare", path), "all 2 are unlabeled", "evaldelta score")


def test_overflowing_scores_are_a_clear_error(run_cli, write):
    path = write("big.csv", "case_id,arm,score\nc1,a,1e308\nc1,b,-1e308\nc2,a,1\nc2,b,2\n")
    # refused in validation since issue 23 (the score range), before any sum could overflow
    one_line_error(run_cli("compare", path), "line 2", "'score'", "'1e308'", "1e15")


def test_one_arm_unlabeled_says_why_nothing_is_paired(run_cli, write):
    path = write("half.csv", "case_id,arm,score\nc1,a,\nc2,a,\nc1,b,1\nc2,b,0\n")
    res = run_cli("compare", path)
    assert res.code == 0, res.err
    assert "share no scored case (2 cases are in both arms but unlabeled in one)" in res.out


def test_out_of_memory_is_a_one_line_error_naming_the_limit(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Past DuckDB's buffer limit the command says which setting to raise (exit 2, not 70)."""
    import os
    import subprocess
    import sys

    import duckdb

    path = tmp_path / "rows.parquet"
    duckdb.sql(
        "SELECT 'c' || (i // 2) AS case_id, CASE WHEN i % 2 = 0 THEN 'a' ELSE 'b' END AS arm, "
        # a case's slice from its id ('s' || (i % 7) put each case in two slices, an error
        # the old validation ran out of memory before the pivot could report)
        "'s' || ((i // 2) % 7) AS slice, (hash(i) % 2)::DOUBLE AS score FROM range(400000) t(i)"
    ).write_parquet(str(path))
    env = {**os.environ, "EVALDELTA_MEMORY_LIMIT": "8MB"}
    env.pop("EVALDELTA_DEBUG", None)
    res = subprocess.run(
        [sys.executable, "-m", "evaldelta.cli", "compare", str(path), "-o", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        env=env,
    )
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in res.stderr
    assert "out of memory" in lines[0] and "EVALDELTA_MEMORY_LIMIT=8MB" in lines[0]
