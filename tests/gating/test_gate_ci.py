"""The README's "Gate your releases in CI" workflow: its gate step runs as written.

The YAML is read from README.md itself, so the snippet cannot drift from what is tested:
the `run:` script of the "Run the gate" step is executed by bash on the demo's seed 004
data laid out as the snippet expects (evals/runs.parquet with a `prod` baseline,
evals/traffic.csv, evals/gate.toml), with GITHUB_OUTPUT pointing at a file.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from evaldelta.demo import data_path
from tests.conftest import ROOT

POLICY_FAIL = 'max_regression = 0.15\nmin_score = 4.0\non_inconclusive = "fail"\n'
POLICY_PASS = 'max_regression = 2.0\nmin_score = 1.0\non_inconclusive = "fail"\n'


def _workflow() -> dict:  # type: ignore[type-arg]
    readme = (ROOT / "README.md").read_text()
    section = readme.split("### Gate your releases in CI", 1)[1]
    block = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert block, "the CI section has no yaml block"
    return yaml.safe_load(block.group(1))  # type: ignore[no-any-return]


def _gate_script() -> str:
    steps = _workflow()["jobs"]["gate"]["steps"]
    return next(s["run"] for s in steps if s.get("name") == "Run the gate")


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


def _run(repo: Path, policy: str) -> tuple[int, str, str]:
    (repo / "evals" / "gate.toml").write_text(policy)
    out = repo / "github_output"
    out.write_text("")
    env = {
        **os.environ,
        "GITHUB_OUTPUT": str(out),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    proc = subprocess.run(
        ["bash", "-e", "-c", _gate_script()], cwd=repo, env=env, capture_output=True, text=True
    )
    return proc.returncode, out.read_text(), proc.stderr


def test_the_workflow_is_valid_yaml_with_the_expected_steps():
    workflow = _workflow()
    assert workflow["permissions"]["pull-requests"] == "write"
    names = [s.get("name") for s in workflow["jobs"]["gate"]["steps"]]
    assert names[-3:] == [
        "Run the gate",
        "Post the verdict on the pull request",
        "Fail on a failing gate",
    ]


def test_a_failing_gate_records_exit_1_and_writes_the_markdown(repo: Path):
    code, output, err = _run(repo, POLICY_FAIL)
    assert code == 0, err  # the step itself succeeds so the verdict can be posted
    assert output.strip() == "code=1"
    verdict = (repo / "verdict.md").read_text()
    assert "FAIL" in verdict and "extraction" in verdict


def test_a_passing_gate_records_exit_0(repo: Path):
    code, output, err = _run(repo, POLICY_PASS)
    assert code == 0, err
    assert output.strip() == "code=0"


def test_bad_input_stops_the_job_with_exit_2(repo: Path):
    code, output, err = _run(repo, "max_regression = -1\n")
    assert code == 2
    assert output.strip() == "code=2"
    assert "gate.toml" in err and "line 1" in err
