"""The README's "Gate your releases in CI" workflow: its action step runs as written.

The YAML is read from README.md itself, so the snippet cannot drift from what is tested:
the `with:` inputs of its evaldelta step are given to the action's gate step
(`tests/action/test_action.py` runs it as Actions would, against a fake GitHub API) on the
demo's seed 004 data laid out as the snippet expects (evals/runs.parquet with a `prod`
baseline, evals/traffic.csv, evals/gate.toml).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
import yaml

from evaldelta.demo import data_path
from tests.action.test_action import run_action
from tests.conftest import ROOT
from tests.servers.fake_github import FakeGitHub

POLICY_FAIL = 'max_regression = 0.15\nmin_score = 4.0\non_inconclusive = "fail"\n'
POLICY_PASS = 'max_regression = 2.0\nmin_score = 1.0\non_inconclusive = "fail"\n'


def _workflow() -> dict:  # type: ignore[type-arg]
    readme = (ROOT / "README.md").read_text()
    section = readme.split("### Gate your releases in CI", 1)[1]
    block = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert block, "the CI section has no yaml block"
    return yaml.safe_load(block.group(1))  # type: ignore[no-any-return]


def _inputs() -> dict[str, str]:
    steps = _workflow()["jobs"]["gate"]["steps"]
    step = next(s for s in steps if "evaldelta" in s.get("uses", ""))
    return {k.replace("-", "_"): str(v) for k, v in step["with"].items()}


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    server = FakeGitHub("ghs_test").start()
    yield server
    server.stop()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    evals = tmp_path / "evals"
    evals.mkdir()
    with data_path("seed004.csv") as path:
        rows = pd.read_csv(path)
    rows = rows[rows.arm.isin(["always_strong", "cascade"])].replace(
        {"arm": {"always_strong": "prod"}}
    )
    rows.to_parquet(evals / "runs.parquet")
    with data_path("traffic004.csv") as path:
        (evals / "traffic.csv").write_text(path.read_text())
    return tmp_path


def test_the_workflow_is_three_lines_of_the_action():
    workflow = _workflow()
    assert workflow["permissions"]["pull-requests"] == "write"
    steps = workflow["jobs"]["gate"]["steps"]
    assert steps[-1]["uses"].endswith("/evaldelta@main")
    assert set(_inputs()) == {"rows", "policy", "baseline", "traffic"}


def test_a_failing_gate_fails_the_step_and_comments(repo: Path, github: FakeGitHub):
    (repo / "evals" / "gate.toml").write_text(POLICY_FAIL)
    code, log, outputs, summary = run_action(repo, github, **_inputs())
    assert code == 1, log
    assert outputs["decision"] == "fail"
    assert "FAIL" in summary and "extraction" in summary
    (comment,) = github.comments[7]
    assert "extraction" in comment["body"]


def test_a_passing_gate_passes(repo: Path, github: FakeGitHub):
    (repo / "evals" / "gate.toml").write_text(POLICY_PASS)
    code, log, outputs, _ = run_action(repo, github, **_inputs())
    assert code == 0, log
    assert outputs["decision"] == "pass" and outputs["exit-code"] == "0"


def test_bad_input_stops_the_job_with_exit_2(repo: Path, github: FakeGitHub):
    (repo / "evals" / "gate.toml").write_text("max_regression = -1\n")
    code, log, outputs, _ = run_action(repo, github, **_inputs())
    assert code == 2
    assert outputs["decision"] == "error"
    assert "gate.toml" in log and "line 1" in log
