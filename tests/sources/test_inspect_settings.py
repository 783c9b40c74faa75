"""Inspect logs with non-default settings: evaldelta's figures equal Inspect's own.

The expected figures are what Inspect itself wrote in each log's ``results.scores`` (copied
into the fixture's MANIFEST.json by tools/fixtures/inspect/make_settings.py when the real
inspect-ai 0.3.285 ran), never numbers computed here. Reducers: every epochs reducer Inspect
has (mean, max, mode, median, at_least_2, pass_at_2) and a list of them; odd values: dict
scores with None members, NaN (unscored) values, mappable and unmappable text.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from evaldelta.comparison import compare

from ..conftest import CliResult, one_line_error
from .helpers import LOGS, arm_slice

INSPECT = LOGS / "inspect"
REDUCERS = INSPECT / "v0.3.285-reducers"
ODD = INSPECT / "v0.3.285-odd-scores"
NO_SCORER = INSPECT / "v0.3.285-no-scorer"
METRICS = ("match", "closeness", "graded")


def _manifest(folder: Any) -> dict[str, Any]:
    return json.loads((folder / "MANIFEST.json").read_text())  # type: ignore[no-any-return]


def _reported(entry: dict[str, Any], name: str, reducer: str | None) -> float:
    """Inspect's own figure for one score of one log: accuracy or mean."""
    (score,) = [
        s
        for s in entry["results"]["scores"]
        if s["name"] == name and (s.get("reducer") or None) == reducer
    ]
    metrics = score["metrics"]
    stat = metrics.get("accuracy", metrics.get("mean"))
    return float(stat["value"] if isinstance(stat, dict) else stat)


@pytest.mark.parametrize("folder", ["default", "max", "mode", "median", "at_least_2", "pass_at_2"])
def test_each_reducer_gives_inspects_figures(folder: str) -> None:
    result = compare([REDUCERS / folder], metrics=METRICS)
    entries = [e for e in _manifest(REDUCERS)["files"] if e["path"].startswith(f"{folder}/")]
    assert len(entries) == 2
    for entry in entries:
        reducer = None if folder == "default" else folder
        for name in METRICS:
            ours = arm_slice(result, name, entry["model"]).estimate.estimate
            assert ours == pytest.approx(_reported(entry, name, reducer), abs=1e-12), (
                folder,
                entry["model"],
                name,
            )
    if folder == "default":
        assert result.repeats is None
    else:
        assert result.repeats is not None
        assert (result.repeats.reducer, result.repeats.chosen_by) == (folder, "the logs' own")
    # nothing reduced differently from the log's own reductions
    issues = {i.kind for r in result.imports for i in r.issues}
    assert "reduced_differently" not in issues


@pytest.mark.parametrize("reducer", ["mean", "max", "mode", "median", "at_least_2", "pass_at_2"])
def test_a_list_of_reducers_gives_each_on_request(reducer: str) -> None:
    """The log reports every reducer; --reduce picks one; the default is the first (mean)."""
    result = compare([REDUCERS / "list"], metrics=METRICS, reduce=reducer)
    for entry in [e for e in _manifest(REDUCERS)["files"] if e["path"].startswith("list/")]:
        for name in METRICS:
            ours = arm_slice(result, name, entry["model"]).estimate.estimate
            assert ours == pytest.approx(_reported(entry, name, reducer), abs=1e-12)
    default = compare([REDUCERS / "list"], metrics=("match",))
    (report,) = default.imports
    assert report.reducer == "mean"
    assert "several_reducers" in {i.kind for i in report.issues}


def test_reducing_otherwise_than_the_log_is_said(run_cli: Callable[..., CliResult]) -> None:
    text = run_cli("compare", str(REDUCERS / "max"), "--reduce", "mean")
    assert text.code == 0, text.err
    assert "Repeats: each case's attempts averaged (the case mean), as --reduce asks." in text.out
    assert "The log reduces them by max, so the tool's own figures differ" in text.out
    markdown = run_cli("compare", str(REDUCERS / "max"), "--format", "markdown")
    assert "the log's own reducer, as its tool reports" in markdown.out
    html = run_cli("compare", str(REDUCERS / "max"), "--format", "html")
    assert 'id="repeats"' in html.out


def test_logs_that_reduce_differently_need_a_choice(run_cli: Callable[..., CliResult]) -> None:
    mixed = [
        next((REDUCERS / "max").glob("*model-a*")),
        next((REDUCERS / "mode").glob("*model-b*")),
    ]
    result = run_cli("compare", *map(str, mixed))
    one_line_error(result, "reduce repeats differently", "max", "mode", "--reduce")
    assert run_cli("compare", *map(str, mixed), "--reduce", "max").code == 0


def test_odd_score_values_follow_value_to_float() -> None:
    """None and unmappable text count 0, NaN is unscored: Inspect's figures, each reported."""
    entries = _manifest(ODD)["files"]
    names = {
        f"{s['scorer']}.{s['name']}" if s["name"] != s["scorer"] else s["name"]: s["name"]
        for s in entries[0]["results"]["scores"]
    }
    result = compare([ODD], metrics=tuple(names))
    for entry in entries:
        for column, name in names.items():
            ours = arm_slice(result, column, entry["model"]).estimate.estimate
            assert ours == pytest.approx(_reported(entry, name, None), abs=1e-12), column
    (report,) = result.imports
    counted = {i.kind: i.count for i in report.issues}
    assert counted["score_none"] > 0 and counted["score_unmapped"] > 0
    assert counted["score_unscored"] > 0


@pytest.mark.parametrize(
    ("folder", "why"),
    [("task-none", "its task has no scorer"), ("no-score", "the run was not scored")],
)
def test_a_log_without_scores_says_why(
    run_cli: Callable[..., CliResult], folder: str, why: str, tmp_path: Any
) -> None:
    imported = run_cli("import", "auto", str(NO_SCORER / folder), "-o", str(tmp_path / "o.csv"))
    assert imported.code == 0 and why in imported.out
    one_line_error(run_cli("compare", str(NO_SCORER / folder)), why, "inspect score")
