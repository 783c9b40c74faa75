"""The JSON schema stays in step with the code; every CLI command has help; outputs parse."""

from __future__ import annotations

import json

import jsonschema

from evaldelta.demo.scenarios import SCENARIOS, run_scenario
from evaldelta.report import render_json
from evaldelta.report.schema import comparison_schema
from tests.conftest import ROOT

SCHEMA_FILE = ROOT / "schema" / "comparison.schema.json"


def test_committed_schema_is_what_the_code_derives():
    committed = json.loads(SCHEMA_FILE.read_text())
    assert committed == comparison_schema(), (
        "schema/comparison.schema.json is stale: regenerate it with "
        "python -c 'import json; from evaldelta.report.schema import comparison_schema; "
        "print(json.dumps(comparison_schema(), indent=2, sort_keys=True))'"
    )
    jsonschema.Draft202012Validator.check_schema(committed)


def test_demo_json_validates_and_carries_the_version():
    schema = json.loads(SCHEMA_FILE.read_text())
    for scenario in SCENARIOS:
        doc = json.loads(render_json(run_scenario(scenario)))
        jsonschema.validate(doc, schema)
        assert doc["schema_version"] == schema["properties"]["schema_version"]["const"]


def test_schema_rejects_a_broken_document():
    schema = json.loads(SCHEMA_FILE.read_text())
    doc = json.loads(render_json(run_scenario(SCENARIOS[2])))
    del doc["metrics"][0]["slicings"][0]["pairs"][0]["overall"]
    validator = jsonschema.Draft202012Validator(schema)
    assert list(validator.iter_errors(doc))


def test_every_command_has_help(run_cli):
    top = run_cli("--help")
    assert top.code == 0
    for command in ("compare", "demo"):
        assert command in top.out
        res = run_cli(command, "--help")
        assert res.code == 0 and "Usage" in res.out
        assert len(res.out.splitlines()) > 3


def test_compare_writes_each_format(run_cli, tmp_path):
    runs = tmp_path / "runs.csv"
    runs.write_text("case_id,arm,score\nc1,a,1\nc2,a,0\nc1,b,1\nc2,b,1\n")
    for fmt in ("text", "json", "markdown"):
        out = tmp_path / f"out.{fmt}"
        res = run_cli("compare", runs, "--format", fmt, "-o", out)
        assert res.code == 0, res.err
        assert out.read_text().strip()
    assert json.loads((tmp_path / "out.json").read_text())["baseline"] == "a"


def test_demo_command_runs(run_cli, tmp_path):
    res = run_cli("demo", "--out", tmp_path)
    assert res.code == 0, res.err
    assert "Seed 004" in res.out
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "demo-000.json",
        "demo-001.json",
        "demo-002.json",
        "demo-004.json",
        "demo-report-000.html",
        "demo-report-001.html",
        "demo-report-002.html",
        "demo-report-004.html",
    ]


def _walk(command, path=()):  # type: ignore[no-untyped-def]
    """Every command of the command tree typer builds, as its words (groups included)."""
    yield path, command
    subcommands = getattr(command, "commands", None)  # a group (typer vendors click now)
    if subcommands:
        for name, sub in sorted(subcommands.items()):
            yield from _walk(sub, (*path, name))


def test_every_command_and_subcommand_has_help_and_a_readme_entry(run_cli):
    """Groups too (``evaldelta cases add``): help text, and the README names the command."""
    import typer

    from evaldelta.cli import app

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    walked = [p for p, _ in _walk(typer.main.get_command(app)) if p]
    assert ("cases", "add") in walked and ("cases", "list") in walked
    for words in walked:
        res = run_cli(*words, "--help")
        assert res.code == 0 and "Usage" in res.out, words
        assert f"evaldelta {' '.join(words)}" in readme, (
            f"README lacks `evaldelta {' '.join(words)}`"
        )
