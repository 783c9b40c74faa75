"""The row seam: one registry of readers, recognized by content; nothing reads around it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from evaldelta.comparison import compare
from evaldelta.sources import Source, detect, format_names, parse_source, readers

from ..conftest import ROOT, one_line_error
from .helpers import LOGS

GOOD = "id,model,correct,slice\nc1,a,1,s\nc2,a,0,s\nc1,b,1,s\nc2,b,1,s\n"


def test_every_reader_declares_itself() -> None:
    names = {r.name for r in readers()}
    assert {"tidy", "store", "inspect", "lmeval", "promptfoo"} <= names
    assert {"csv", "jsonl", "parquet", "lm-eval"} <= format_names()
    for reader in readers():
        assert reader.title and reader.name.islower()


def test_rows_are_read_only_through_the_seam() -> None:
    """No module outside sources/ scans a file or connects a backend of its own."""
    scans = {"read_csv", "read_json", "read_parquet", "read_csv_auto"}
    offenders = []
    for path in sorted((ROOT / "src" / "evaldelta").rglob("*.py")):
        rel = path.relative_to(ROOT / "src" / "evaldelta").as_posix()
        if rel.startswith("sources/"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr in scans:
                offenders.append(f"{rel}: .{node.attr}")
            if isinstance(node, ast.Attribute) and node.attr == "connect":
                base = node.value
                if (
                    isinstance(base, ast.Name)
                    and base.id == "duckdb"
                    and not rel.startswith("store/")
                ):
                    offenders.append(f"{rel}: duckdb.connect")
                if isinstance(base, ast.Attribute) and base.attr == "duckdb":
                    offenders.append(f"{rel}: ibis.duckdb.connect")
    assert offenders == []


def test_columns_map_a_files_own_names(run_cli, write) -> None:  # type: ignore[no-untyped-def]
    path = write("theirs.csv", GOOD)
    res = run_cli(
        "compare", path, "--columns", "case_id=id,arm=model", "--columns", "score=correct"
    )
    assert res.code == 0, res.err
    assert "2 pairs" in res.out


def test_a_missing_column_with_a_close_name_says_did_you_mean(run_cli, write) -> None:  # type: ignore[no-untyped-def]
    path = write("theirs.csv", GOOD)
    one_line_error(run_cli("compare", path), str(path), "'case_id'", "did you mean 'id'",
                   "--columns case_id=id")  # fmt: skip


@pytest.mark.parametrize(("sep", "word"), [(";", "semicolon"), ("\t", "tab")])
def test_a_header_in_another_dialect_says_so(run_cli, write, sep: str, word: str) -> None:  # type: ignore[no-untyped-def]
    path = write("semi.csv", GOOD.replace(",", sep))
    one_line_error(run_cli("compare", path), str(path), f"{word}-separated")


def test_format_prefix_and_content_detection(tmp_path: Path, write) -> None:  # type: ignore[no-untyped-def]
    path = write("rows.txt", "case_id,arm,score\nc1,a,1\nc1,b,0\n")
    assert parse_source(f"csv:{path}") == Source(path, format="csv")
    assert parse_source(str(path)) == Source(path)
    assert detect(path) == "tidy"
    result = compare([f"csv:{path}"])
    assert result.arms_present == ("a", "b")


def test_an_unknown_format_prefix_is_one_line(run_cli) -> None:  # type: ignore[no-untyped-def]
    one_line_error(run_cli("compare", "nosuch:rows.csv"), "unknown format 'nosuch'", "inspect")


def test_import_keeps_pins_and_reports_in_parquet(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    logs = sorted((LOGS / "inspect" / "v0.3.285" / "eval").glob("*.eval"))
    out = tmp_path / "rows.parquet"
    res = run_cli("import", "inspect", *logs, "-o", out)
    assert res.code == 0, res.err
    assert "errored samples" in res.out and "wrote 72 rows" in res.out
    direct = compare(logs)
    again = compare([out])
    assert again.pins == direct.pins and again.pins
    assert [r.to_jsonable() for r in again.imports] == [r.to_jsonable() for r in direct.imports]
    d, a = (
        direct.slicing().pairs[0].overall,
        again.slicing().pairs[0].overall,
    )
    assert d.paired is not None and a.paired is not None
    assert a.paired.estimate == d.paired.estimate and a.n_pairs == d.n_pairs
    columns = pq.read_schema(out).names
    assert columns[:3] == ["case_id", "arm", "repeat"] and "_where" not in columns


def test_import_auto_to_csv_and_json_report(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    import json

    out = tmp_path / "rows.csv"
    res = run_cli("import", "auto", LOGS / "promptfoo" / "v0.121.20" / "results.json", "-o", out,
                  "--format", "json")  # fmt: skip
    assert res.code == 0, res.err
    doc = json.loads(res.out)
    assert doc["rows"] == 64 and doc["imports"][0]["format"] == "promptfoo"
    assert out.read_text().startswith("case_id,arm,repeat,")


def test_import_refuses_overlapping_logs_of_one_arm(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    (log, _) = sorted((LOGS / "inspect" / "v0.3.285" / "eval").glob("*.eval"))
    res = run_cli("import", "inspect", log, log, "-o", tmp_path / "o.parquet")
    one_line_error(res, "two logs of the same arm overlap", "--arm NAME=PATH")


def test_import_needs_an_output_and_a_known_format(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    one_line_error(run_cli("import", "nosuch", "x", "-o", tmp_path / "o.parquet"), "unknown format")
    one_line_error(run_cli("import", "auto", "x"), "-o OUT")


def test_score_reads_an_imported_log(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    checks = tmp_path / "checks.yaml"
    checks.write_text(
        "checks:\n  - id: has_answer\n    spec: The reply ends with an ANSWER line.\n"
        "    kind: regex_required\n    pattern: 'ANSWER: \\d+'\n"
    )
    (log, _) = sorted((LOGS / "inspect" / "v0.3.285" / "eval").glob("*.eval"))
    out = tmp_path / "scored.parquet"
    res = run_cli("score", f"inspect:{log}", "--checks", checks, "-o", out)
    assert res.code == 0, res.err
    rows = pq.read_table(out).to_pylist()
    assert len(rows) == 36
    for row in rows:
        output = row["output"] or ""
        expected = 1 if re.search(r"ANSWER: \d+", output, re.I) else 0
        if row["check.has_answer"] is not None:
            assert row["check.has_answer"] == expected


def test_rows_skip_stripping_only_once_validation_finds_nothing_to_strip(write) -> None:  # type: ignore[no-untyped-def]
    """The unstripped projection is the same rows when no case id or arm is padded."""
    import ibis

    from evaldelta.engine import validate
    from evaldelta.sources._canonical import read_sources

    text = "case_id,arm,score\nc1,a,1\nc2,a,0\nc1,b,1\nc2,b,1\n"
    clean = read_sources([parse_source(str(write("c.csv", text)))])
    assert validate(clean).trimmed == 0
    plain = clean.unpadded()
    assert 'TRIM("T0"."CASE_ID"' in ibis.to_sql(clean.rows).upper()
    assert 'TRIM("T0"."CASE_ID"' not in ibis.to_sql(plain.rows).upper()
    order = ["case_id", "arm", "m_score"]
    assert plain.rows.order_by(order).to_pyarrow().equals(clean.rows.order_by(order).to_pyarrow())
    # a padded name is stripped in every pass: the two arms' rows of case c1 pair up
    padded = write("p.csv", text.replace("c1,a", " c1,a").replace("c2,b", "c2,b\t"))
    result = compare([padded])
    assert result.slicing().pairs[0].overall.n_pairs == 2
    assert any("2 rows had spaces around" in n for n in result.notes)


SLICED = "case_id,arm,score,slice,vars.topic\nc1,a,1,x,t\nc1,b,0,x,t\n"


@pytest.mark.parametrize(
    ("command", "args", "typed"),
    [
        # issue 24.8: the suggestion is the flag the user typed, not --columns
        ("compare", ("--by", "slce"), "did you mean 'slice'? (--by slice)"),
        ("compare", ("--by", "topic"), "did you mean 'vars.topic'? (--by vars.topic)"),
        ("compare", ("--metric", "scor"), "did you mean 'score'? (--metric score)"),
        ("plan", ("--by", "slce"), "(--by slice)"),
        ("gate", ("--by", "slce", "--policy", "{policy}"), "(--by slice)"),
        ("sample", ("--by", "slce", "-o", "{out}"), "did you mean 'slice'? (--by slice)"),
        ("sample", ("--by", "slice", "--id", "case", "-o", "{out}"), "(--id case_id)"),
        ("sample", ("--band", "scor=0,0.5", "-o", "{out}"), "(--band score=0,0.5)"),
    ],
)
def test_did_you_mean_names_the_flag_that_was_typed(  # type: ignore[no-untyped-def]
    run_cli, write, tmp_path, command, args, typed
) -> None:
    path = write("rows.csv", SLICED)
    policy = write("p.toml", "max_regression = 0.5\n")
    filled = [a.format(policy=policy, out=tmp_path / "s.csv") for a in args]
    if command == "plan":
        filled = ["--from", str(path), *filled]
    result = run_cli(command, *([] if command == "plan" else [path]), *filled)
    one_line_error(result, typed)
    assert "--columns" not in result.err


def test_a_missing_required_column_still_suggests_columns(run_cli, write) -> None:  # type: ignore[no-untyped-def]
    # the default score column, missing, is mapped from the file's own name with --columns
    path = write("rows.csv", "case_id,arm,correct\nc1,a,1\nc1,b,0\n")
    one_line_error(run_cli("compare", path), "did you mean 'correct'? (--columns score=correct)")
