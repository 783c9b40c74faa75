"""The GitHub Action (``action.yml`` + ``action/gate.py``), offline, against a fake GitHub API.

The gate step runs as Actions runs it: its ``run:`` line from ``action.yml`` under bash, with
the step's ``env:`` filled from the inputs the way ``${{ inputs.X }}`` is (defaults from
``action.yml``), and the ``GITHUB_*`` variables a pull-request job has. The REST calls go
to ``tests/servers/fake_github.py`` on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest
import yaml

from tests.conftest import ROOT
from tests.rows import paired, write_rows
from tests.servers.fake_github import MAX_BODY, FakeGitHub

ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
SCHEMA = ROOT / "tests" / "fixtures" / "github" / "github-action.composite.schema.json"
TOKEN = "ghs_test"
PASSING = 'max_regression = 0.9\non_inconclusive = "pass"\n'


def _step(name: str) -> dict:  # type: ignore[type-arg]
    return next(s for s in ACTION["runs"]["steps"] if s.get("name") == name)


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    server = FakeGitHub(TOKEN).start()
    yield server
    server.stop()


def _runs(path: Path, slices: dict[str, tuple[int, int]], n: int = 40) -> Path:
    """Per slice (baseline passes, candidate passes) out of n cases."""
    rows = []
    for name, (b, c) in slices.items():
        pairs = [(int(i < b), int(i < c)) for i in range(n)]
        rows += paired(pairs, arms=("prod", "next"), slice=name, case="{slice}-{i}")
    return write_rows(path, rows)


def _event(tmp: Path, number: int = 7, fork: bool = False) -> Path:
    head = "someone/evals" if fork else "o/r"
    event = {
        "number": number,
        "pull_request": {
            "number": number,
            "head": {"repo": {"full_name": head, "fork": fork}},
            "base": {"repo": {"full_name": "o/r"}},
        },
    }
    path = tmp / "event.json"
    path.write_text(json.dumps(event))
    return path


def run_action(
    repo: Path, github: FakeGitHub, event: str = "pull_request", fork: bool = False, **inputs: str
) -> tuple[int, str, dict[str, str], str]:
    """Run the gate step; returns exit code, stdout, outputs and the job summary."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    values = {name: spec.get("default", "") for name, spec in ACTION["inputs"].items()}
    values.update({k.replace("_", "-"): v for k, v in inputs.items()})
    for key, template in _step("Gate")["env"].items():
        match = re.fullmatch(r"\$\{\{ inputs\.([\w-]+) \}\}", template)
        if match:
            value = values[match.group(1)]
            env[key] = TOKEN if value == "${{ github.token }}" else value
        elif template == "${{ github.action_path }}":
            env[key] = str(ROOT)
    (repo / "summary.md").touch()
    (repo / "output.txt").write_text("")
    env.update(
        {
            "GITHUB_ACTIONS": "true",
            "GITHUB_API_URL": github.url,
            "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_REPOSITORY": "o/r",
            "GITHUB_EVENT_NAME": event,
            "GITHUB_EVENT_PATH": str(_event(repo, fork=fork)),
            "GITHUB_RUN_ID": "4242",
            "GITHUB_WORKFLOW": "evals",
            "GITHUB_JOB": "gate",
            "GITHUB_STEP_SUMMARY": str(repo / "summary.md"),
            "GITHUB_OUTPUT": str(repo / "output.txt"),
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        }
    )
    proc = subprocess.run(
        ["bash", "-e", "-c", _step("Gate")["run"]],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    outputs = dict(
        line.split("=", 1) for line in (repo / "output.txt").read_text().splitlines() if line
    )
    return proc.returncode, proc.stdout + proc.stderr, outputs, (repo / "summary.md").read_text()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    _runs(tmp_path / "runs.csv", {"a": (30, 30), "b": (36, 10), "c": (20, 21)})
    (tmp_path / "gate.toml").write_text("max_regression = 0.1\n")
    return tmp_path


def test_one_living_comment_created_then_edited_in_place(repo, github):
    other = github.add(7, "LGTM")
    code, log, outputs, summary = run_action(repo, github, rows="runs.csv", policy="gate.toml")
    assert code == 1, log  # slice b fails; fail-on defaults to fail
    assert "decision" in outputs, log
    assert outputs["decision"] == "fail" and outputs["exit-code"] == "1"
    assert Path(repo / outputs["report-html"]).is_file()
    assert Path(repo / outputs["report-junit"]).is_file()
    assert "evaldelta gate: ❌ FAIL" in summary
    mine = [c for c in github.comments[7] if c["id"] != other]
    assert len(mine) == 1
    assert mine[0]["body"].startswith("<!-- evaldelta-gate: evals/gate -->")
    assert "❌ FAIL" in mine[0]["body"]
    assert "https://github.com/o/r/actions/runs/4242" in mine[0]["body"]
    # the next push: the same comment, edited; no new one
    (repo / "gate.toml").write_text(PASSING)
    code, log, outputs, _ = run_action(repo, github, rows="runs.csv", policy="gate.toml")
    assert code == 0, log
    mine = [c for c in github.comments[7] if c["id"] != other]
    assert len(mine) == 1 and "✅ PASS" in mine[0]["body"]
    assert [m for m, _ in github.requests if m in ("POST", "PATCH")] == ["POST", "PATCH"]
    assert github.comments[7][0]["body"] == "LGTM"


def test_the_marked_comment_is_found_on_a_later_page(repo, github):
    for i in range(130):
        github.add(7, f"comment {i}")
    marked = github.add(7, "<!-- evaldelta-gate: evals/gate -->\nold verdict")
    code, log, _, _ = run_action(repo, github, rows="runs.csv", policy="gate.toml")
    assert code == 1, log
    assert ("PATCH", f"/repos/o/r/issues/comments/{marked}") in github.requests
    assert not [r for r in github.requests if r[0] == "POST"]
    assert any("page=2" in path for _, path in github.requests)


def test_fail_on_inconclusive(tmp_path, github):
    _runs(tmp_path / "runs.csv", {"a": (20, 18)})
    (tmp_path / "gate.toml").write_text("max_regression = 0.05\n")
    code, _, outputs, _ = run_action(tmp_path, github, rows="runs.csv", policy="gate.toml")
    assert outputs["decision"] == "inconclusive" and outputs["exit-code"] == "3"
    assert code == 0  # not in the default fail-on
    code, _, _, _ = run_action(
        tmp_path, github, rows="runs.csv", policy="gate.toml", fail_on="fail,inconclusive"
    )
    assert code == 1


def test_a_fork_gets_the_summary_only_and_says_why(repo, github):
    github.read_only = True  # what a fork's token would meet
    code, log, _outputs, summary = run_action(
        repo, github, fork=True, rows="runs.csv", policy="gate.toml"
    )
    assert code == 1  # the verdict still sets the result
    assert not github.requests  # it did not even try
    assert "fork" in summary and "read-only token" in summary
    assert "::notice" in log and "evaldelta gate: ❌ FAIL" in summary


def test_a_403_is_reported_not_failed(repo, github):
    github.read_only = True  # a same-repository pull request whose job lacks the permission
    (repo / "gate.toml").write_text(PASSING)
    code, log, _outputs, summary = run_action(repo, github, rows="runs.csv", policy="gate.toml")
    assert code == 0, log
    assert ("POST", "/repos/o/r/issues/7/comments") in github.requests
    assert "403: Resource not accessible by integration" in summary
    assert "pull-requests: write" in summary


def test_a_long_report_is_cut_under_the_comment_limit(tmp_path, github):
    slices = {f"s{i:04d}": (6, 6) for i in range(700)}
    _runs(tmp_path / "runs.csv", slices, n=8)
    (tmp_path / "gate.toml").write_text("max_regression = 0.5\nmin_cases = 5\n")
    _code, _log, outputs, summary = run_action(
        tmp_path, github, rows="runs.csv", policy="gate.toml"
    )
    full = (tmp_path / outputs["report-markdown"]).read_text()
    assert len(full) > MAX_BODY  # the report itself is longer than a comment may be
    (comment,) = github.comments[7]
    assert len(comment["body"]) <= MAX_BODY
    note = re.search(r"_(\d+) more rows left out to fit GitHub's comment limit", comment["body"])
    assert note, comment["body"][-2000:]
    assert "[job summary](https://github.com/o/r/actions/runs/4242)" in comment["body"]
    kept = comment["body"].count("\n| ")
    assert kept + int(note.group(1)) >= 700  # every rule row is kept or counted
    assert "s0699" in summary  # the job summary has them all


def test_bad_input_is_one_error_and_exit_2(repo, github):
    code, log, outputs, _summary = run_action(repo, github, rows="nope/*.csv", policy="gate.toml")
    assert code == 2
    assert outputs["decision"] == "error"
    errors = [line for line in log.splitlines() if line.startswith("::error")]
    assert len(errors) == 1 and "matches no file" in errors[0]
    assert "Traceback" not in log
    code, log, _, _ = run_action(repo, github, rows="runs.csv", policy="missing.toml")
    assert code == 2 and "missing.toml" in log and "Traceback" not in log


def test_no_policy_posts_the_comparison(repo, github):
    code, _log, outputs, _ = run_action(repo, github, rows="runs.csv", comment="off")
    assert code == 0 and outputs["decision"] == "none"
    assert not github.requests
    assert "report-junit" not in outputs


def test_action_yml_is_a_valid_composite_action():
    jsonschema.validate(ACTION, json.loads(SCHEMA.read_text()))
    declared = set(ACTION["inputs"])
    env = _step("Gate")["env"]
    passed = {
        m.group(1) for v in env.values() if (m := re.fullmatch(r"\$\{\{ inputs\.([\w-]+) \}\}", v))
    }
    assert passed | {"install"} == declared
    for name in passed - {"github-token"}:
        assert f"INPUT_{name.upper().replace('-', '_')}" in env
    script = (ROOT / "action" / "gate.py").read_text()
    for name in passed - {"github-token"}:
        assert f'get("{name}")' in script, name
    for name, spec in ACTION["outputs"].items():
        assert spec["value"] == f"${{{{ steps.gate.outputs.{name} }}}}"
    assert set(ACTION["outputs"]) == {
        "decision",
        "exit-code",
        "report-markdown",
        "report-html",
        "report-junit",
    }


def test_the_readme_workflow_uses_the_action():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("### Gate your releases in CI", 1)[1]
    block = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert block
    workflow = yaml.safe_load(block.group(1))
    steps = workflow["jobs"]["gate"]["steps"]
    (step,) = [s for s in steps if "evaldelta" in s.get("uses", "")]
    assert set(step["with"]) <= set(ACTION["inputs"])
    assert workflow["permissions"]["pull-requests"] == "write"


def test_fit_comment_keeps_short_bodies_and_cuts_tables():
    sys.path.insert(0, str(ROOT / "action"))
    try:
        from gate import fit_comment  # type: ignore[import-not-found]
    finally:
        sys.path.pop(0)
    assert fit_comment("short", "u") == "short"
    table = ["| a | b |", "|---|---|", *[f"| row {i} | {'x' * 80} |" for i in range(2000)]]
    body = "\n".join(["# head", "", *table, "", "tail line"])
    cut = fit_comment(body, "https://example/run", limit=10_000)
    assert len(cut) <= 10_000
    assert cut.startswith("# head") and cut.rstrip().endswith("tail line")
    left = int(re.search(r"_(\d+) more rows left out", cut).group(1))  # type: ignore[union-attr]
    assert left + cut.count("| row ") == 2000
