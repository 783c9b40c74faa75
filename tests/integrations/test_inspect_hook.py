"""The Inspect AI extension, end to end with the real inspect-ai and its ``mockllm`` provider.

Each test runs a real ``inspect_ai.eval_set()`` (or ``eval()``) of two mock models in a child
process, offline, on the fixture task of ``tools/fixtures/inspect/fixture_task.py``. Inspect
finds the hook the way it finds any extension: through the ``inspect_ai`` entry point of the
installed evaldelta (``pip install -e '.[inspect]'``, as ``.ci/run`` does). The report the hook
writes must equal ``evaldelta compare LOGDIR --by task`` on the same folder.
"""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytest.importorskip("inspect_ai")
pytestmark = pytest.mark.slow

TASKS = ROOT / "tools" / "fixtures" / "inspect"
MODELS = ["mockllm/model-a", "mockllm/model-b"]
SCRIPT = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {tasks!r})
    from fixture_task import evaldelta_fixture
    from inspect_ai import eval, eval_set

    if {kind!r} == "eval_set":
        ok, logs = eval_set(
            evaldelta_fixture(), log_dir={log_dir!r}, model={models!r}, epochs=2,
            display="none",
        )
    else:
        logs = eval(evaldelta_fixture(), log_dir={log_dir!r}, model={models!r}, epochs=1,
                    sample_id=["q01", "q02", "q03", "q04"], display="none")
        ok = all(log.status == "success" for log in logs)
    print("EVAL-OK" if ok else "EVAL-FAILED")
    """
)


def _entry_point_installed() -> bool:
    eps = importlib.metadata.entry_points(group="inspect_ai")
    return any(ep.value == "evaldelta.integrations.inspect_hook" for ep in eps)


needs_entry_point = pytest.mark.skipif(
    not _entry_point_installed(),
    reason="evaldelta is not installed with its inspect_ai entry point (pip install -e .)",
)


def _run_inspect(
    tmp_path: Path, kind: str = "eval_set", **env: str
) -> tuple[subprocess.CompletedProcess[str], Path]:
    log_dir = tmp_path / "logs"
    script = SCRIPT.format(tasks=str(TASKS), kind=kind, log_dir=str(log_dir), models=MODELS)
    clean = {k: v for k, v in os.environ.items() if not k.startswith("EVALDELTA_")}
    child_env = {
        **clean,
        "INSPECT_DISPLAY": "none",
        "INSPECT_EVAL_LOG_FILE_PATTERN": "{task}_{model}_{id}",
        "PYTHONWARNINGS": "ignore",
        **env,
    }
    proc = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env=child_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "EVAL-OK" in proc.stdout, (proc.stdout, proc.stderr)
    return proc, log_dir


def _answer(stderr: str) -> str:
    lines = [
        line
        for line in stderr.splitlines()
        if line.startswith("evaldelta: ") and not line.startswith("evaldelta: warning:")
    ]
    assert len(lines) == 1, stderr
    return lines[0]


@needs_entry_point
def test_eval_set_of_two_mock_models_writes_the_report_compare_writes(
    tmp_path, run_cli, monkeypatch
):
    policy = tmp_path / "gate.toml"
    policy.write_text("max_regression = 0.1\n")
    proc, log_dir = _run_inspect(
        tmp_path, EVALDELTA_POLICY=str(policy), EVALDELTA_FORMATS="html,markdown,junit"
    )
    line = _answer(proc.stderr)
    assert "mockllm/model-b vs mockllm/model-a on match:" in line
    assert "gate " in line and "report: " in line
    written = sorted(p.name for p in log_dir.iterdir() if p.name.startswith("evaldelta-"))
    assert written == [
        "evaldelta-report.html",
        "evaldelta-report.junit.xml",
        "evaldelta-report.md",
        "evaldelta-report.verdict.md",
    ]
    # the same folder through the command line, from the same working folder
    monkeypatch.chdir(tmp_path)
    md = run_cli("compare", log_dir, "--by", "task", "--format", "markdown")
    assert md.code == 0, md.err
    assert (log_dir / "evaldelta-report.md").read_text() == md.out
    html = run_cli("compare", log_dir, "--by", "task", "--policy", policy, "--format", "html")
    assert html.code in (0, 1, 3), html.err
    assert (log_dir / "evaldelta-report.html").read_text() == html.out
    gate = run_cli("gate", log_dir, "--by", "task", "--policy", policy, "--format", "markdown")
    assert (log_dir / "evaldelta-report.verdict.md").read_text() == gate.out
    assert f"(exit {gate.code})" in line
    # the numbers of the one-line answer are compare's
    js = run_cli("compare", log_dir, "--by", "task", "--format", "json")
    import json

    doc = json.loads(js.out)
    overall = doc["metrics"][0]["slicings"][0]["pairs"][0]["overall"]
    assert f"({overall['paired']['n']} paired cases)" in line
    assert doc["metrics"][0]["metric"] == "match"
    # the side-by-side of every sample is in the hook's HTML report
    assert "Sample by sample" in (log_dir / "evaldelta-report.html").read_text()


@needs_entry_point
def test_a_bad_setting_is_a_warning_and_the_eval_still_succeeds(tmp_path):
    proc, log_dir = _run_inspect(tmp_path, EVALDELTA_FORMATS="html,pdf")
    assert "could not compare" in proc.stderr and "unknown format 'pdf'" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not [p for p in log_dir.iterdir() if p.name.startswith("evaldelta-")]


@needs_entry_point
def test_off_switch(tmp_path):
    proc, log_dir = _run_inspect(tmp_path, EVALDELTA_INSPECT="off")
    assert "evaldelta:" not in proc.stderr
    assert not [p for p in log_dir.iterdir() if p.name.startswith("evaldelta-")]


@needs_entry_point
def test_a_plain_eval_of_two_models_is_compared_at_run_end(tmp_path, run_cli, monkeypatch):
    proc, log_dir = _run_inspect(tmp_path, kind="eval", EVALDELTA_BASELINE="mockllm/model-b")
    line = _answer(proc.stderr)
    assert "mockllm/model-a vs mockllm/model-b on match:" in line
    logs = sorted(log_dir.glob("*.eval"))
    assert len(logs) == 2
    monkeypatch.chdir(tmp_path)
    md = run_cli(
        "compare", *logs, "--by", "task", "--baseline", "mockllm/model-b", "--format", "markdown"
    )
    assert (log_dir / "evaldelta-report.md").read_text() == md.out


def test_settings_errors_are_one_line():
    from evaldelta.errors import UsageError
    from evaldelta.integrations._inspect_report import settings_from_env

    assert settings_from_env({}).by == ("task",)
    s = settings_from_env({"EVALDELTA_BY": "task, metadata.category", "EVALDELTA_INSPECT": "0"})
    assert s.by == ("task", "metadata.category") and not s.enabled
    with pytest.raises(UsageError, match="EVALDELTA_FORMATS: unknown format 'pdf'"):
        settings_from_env({"EVALDELTA_FORMATS": "pdf"})
    with pytest.raises(UsageError, match=r"EVALDELTA_POLICY=nope\.toml: no such policy file"):
        settings_from_env({"EVALDELTA_POLICY": "nope.toml"})
    with pytest.raises(UsageError, match="junit writes a gate verdict"):
        settings_from_env({"EVALDELTA_FORMATS": "junit"})
    with pytest.raises(UsageError, match="EVALDELTA_BY"):
        settings_from_env({"EVALDELTA_BY": " , "})


def test_config_file(tmp_path):
    from evaldelta.errors import UsageError
    from evaldelta.integrations._inspect_report import settings_from_env

    config = tmp_path / "evaldelta.toml"
    config.write_text('baseline = "mockllm/model-a"\nby = ["task", "metadata.category"]\n')
    s = settings_from_env({"EVALDELTA_CONFIG": str(config), "EVALDELTA_BASELINE": "other"})
    assert s.baseline == "other"  # a variable wins over the file
    assert s.by == ("task", "metadata.category")
    config.write_text("baseline = 'x'\nbasline = 'y'\n")
    with pytest.raises(UsageError, match="unknown key 'basline'"):
        settings_from_env({"EVALDELTA_CONFIG": str(config)})
