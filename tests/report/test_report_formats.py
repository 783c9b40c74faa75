"""Markdown snapshots, the JSON against its schema, and the rich terminal report."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import jsonschema
import pytest
from rich.console import Console

from evaldelta.demo.scenarios import SCENARIOS, run_scenario
from evaldelta.report import render_json, render_markdown, render_text
from evaldelta.report.terminal import print_terminal
from tests.rows import paired, write_rows

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOTS = ROOT / "tests" / "snapshots"
SCHEMA = json.loads((ROOT / "schema" / "comparison.schema.json").read_text())


@pytest.mark.parametrize("key", ["000", "002", "004"])
def test_markdown_snapshot(key):
    """Regenerate with EVALDELTA_UPDATE_SNAPSHOTS=1 after a deliberate change."""
    scenario = next(s for s in SCENARIOS if s.key == key)
    text = render_markdown(run_scenario(scenario))
    path = SNAPSHOTS / f"markdown-{key}.md"
    if os.environ.get("EVALDELTA_UPDATE_SNAPSHOTS") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"{path} is missing: run with EVALDELTA_UPDATE_SNAPSHOTS=1 once"
    assert text == path.read_text()


@pytest.mark.parametrize("key", [s.key for s in SCENARIOS])
def test_json_validates_against_the_schema(key):
    scenario = next(s for s in SCENARIOS if s.key == key)
    jsonschema.validate(json.loads(render_json(run_scenario(scenario))), SCHEMA)


def _terminal(result, *, no_color: bool) -> str:
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, no_color=no_color, width=160)
    print_terminal(result, console)
    return buf.getvalue()


def test_terminal_colours_and_no_color():
    result = run_scenario(next(s for s in SCENARIOS if s.key == "004"))
    coloured = _terminal(result, no_color=False)
    plain = _terminal(result, no_color=True)
    assert "\x1b[31m" in coloured  # the regressing slices in red
    assert "\x1b[3" not in plain and "\x1b[9" not in plain  # no colour codes with NO_COLOR
    for needle in ("extraction", "-0.850", "[-0.924, -0.776]", "Traffic mix", "Cases that moved"):
        assert needle in plain


def test_terminal_never_parses_data_as_markup(tmp_path):
    from evaldelta.comparison import compare

    rows = paired([(i % 2, 1) for i in range(6)], arms=("a", "b"), slice="[bold]x[/bold]")
    runs = write_rows(tmp_path / "r.csv", rows, "case_id,slice,arm,score")
    out = _terminal(compare([runs], baseline="a"), no_color=True)
    assert "[bold]x[/bold]" in out


def test_piped_compare_stays_plain_text(run_cli):
    data = ROOT / "src" / "evaldelta" / "data" / "seed002.csv"
    res = run_cli("compare", data, "--baseline", "incumbent")
    assert res.code == 0
    assert "\x1b[" not in res.out
    assert res.out == render_text(
        run_scenario(next(s for s in SCENARIOS if s.key == "002"))
    ).replace(str(data), str(data))
