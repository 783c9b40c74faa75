"""Regenerate the importer fixtures with the installed tools, and read what they wrote.

Each test runs the fixture script under tools/fixtures/ with the real tool when it is
present (importable, on PATH, or named by an environment variable), into a temporary
folder, then checks that evaldelta's per-arm rates equal what that fresh run of the tool
reported. Without the tool the test is skipped: CI does not install these harnesses.

    EVALDELTA_INSPECT_PYTHON  a python that can import inspect_ai
    EVALDELTA_PROMPTFOO       the promptfoo executable
    EVALDELTA_LM_EVAL         the lm_eval executable
    EVALDELTA_HELM_RUN        crfm-helm's helm-run
    EVALDELTA_OAIEVAL         openai/evals' oaieval
    EVALDELTA_LIGHTEVAL       the lighteval executable
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest

from evaldelta.comparison import compare

from ..conftest import ROOT
from .helpers import arm_slice

pytestmark = pytest.mark.slow
TOOLS = ROOT / "tools" / "fixtures"


def _tool(env: str, fallback: str | None) -> str | None:
    return os.environ.get(env) or fallback


def test_inspect_regenerated(tmp_path: Path) -> None:
    python = _tool("EVALDELTA_INSPECT_PYTHON", sys.executable if find_spec("inspect_ai") else None)
    if python is None:
        pytest.skip("inspect-ai is not installed (set EVALDELTA_INSPECT_PYTHON)")
    out = tmp_path / "inspect"
    subprocess.run([python, str(TOOLS / "inspect" / "make_fixtures.py"), "--out", str(out)],
                   check=True, capture_output=True, timeout=600)  # fmt: skip
    manifest = json.loads((out / "MANIFEST.json").read_text())
    entries = [f for f in manifest["files"] if f["path"].startswith("eval/")]
    result = compare(sorted((out / "eval").glob("*.eval")), metrics=["match", "closeness"])
    for entry in entries:
        for score in entry["scores"][:2]:
            stat = "accuracy" if "accuracy" in score["metrics"] else "mean"
            ours = arm_slice(result, score["name"], entry["model"]).estimate.estimate
            assert ours == pytest.approx(score["metrics"][stat], abs=1e-9)


def test_promptfoo_regenerated(tmp_path: Path) -> None:
    exe = _tool("EVALDELTA_PROMPTFOO", shutil.which("promptfoo"))
    if exe is None:
        pytest.skip("promptfoo is not installed (set EVALDELTA_PROMPTFOO)")
    out = tmp_path / "promptfoo"
    subprocess.run(["bash", str(TOOLS / "promptfoo" / "make_fixtures.sh"), "--out", str(out)],
                   check=True, capture_output=True, timeout=600,
                   env={**os.environ, "PROMPTFOO": exe})  # fmt: skip
    manifest = json.loads((out / "MANIFEST.json").read_text())
    prompts = manifest["files"]["results.json"]["prompts"]
    result = compare([out / "results.json"], metrics=["pass"])
    for p in prompts:
        m = p["metrics"]
        ours = arm_slice(result, "pass", f"{p['provider']} / {p['label']}")
        assert ours.attempt_mean == pytest.approx(
            m["testPassCount"] / (m["testPassCount"] + m["testFailCount"])
        )


def test_lm_eval_regenerated(tmp_path: Path) -> None:
    exe = _tool("EVALDELTA_LM_EVAL", shutil.which("lm_eval"))
    if exe is None:
        pytest.skip("lm-eval is not installed (set EVALDELTA_LM_EVAL)")
    out = tmp_path / "lmeval"
    subprocess.run(["bash", str(TOOLS / "lmeval" / "make_fixtures.sh"), "--out", str(out)],
                   check=True, capture_output=True, timeout=900,
                   env={**os.environ, "LM_EVAL": exe})  # fmt: skip
    result = compare([out], metrics=["acc"], by=["task"])
    for results_file in out.glob("*/*/results_*.json"):
        reported = json.loads(results_file.read_text())
        ours = arm_slice(result, "acc", reported["model_name"], "evaldelta_mc")
        assert ours.estimate.estimate == pytest.approx(
            reported["results"]["evaldelta_mc"]["acc,none"]
        )


def _regenerate(script: str, env_name: str, exe: str, out: Path) -> None:
    subprocess.run(["bash", str(TOOLS / script), "--out", str(out)], check=True,
                   capture_output=True, timeout=900, env={**os.environ, env_name: exe})  # fmt: skip


def test_helm_regenerated(tmp_path: Path) -> None:
    exe = _tool("EVALDELTA_HELM_RUN", shutil.which("helm-run"))
    if exe is None:
        pytest.skip("crfm-helm is not installed (set EVALDELTA_HELM_RUN)")
    _regenerate("helm/make_fixtures.sh", "HELM_RUN", exe, tmp_path / "helm")
    manifest = json.loads((tmp_path / "helm" / "MANIFEST.json").read_text())
    result = compare([tmp_path / "helm" / "benchmark_output" / "runs" / "evaldelta"],
                     metrics=["exact_match"], by=["perturbation"])  # fmt: skip
    for run in manifest["runs"].values():
        ours = arm_slice(result, "exact_match", run["model"], "original").estimate.estimate
        assert ours == pytest.approx(run["stats_json_reported"]["exact_match"]["mean"])


def test_openai_evals_regenerated(tmp_path: Path) -> None:
    exe = _tool("EVALDELTA_OAIEVAL", shutil.which("oaieval"))
    if exe is None:
        pytest.skip("evals is not installed (set EVALDELTA_OAIEVAL)")
    _regenerate("openai_evals/make_fixtures.sh", "OAIEVAL", exe, tmp_path / "oai")
    runs = json.loads((tmp_path / "oai" / "MANIFEST.json").read_text())["runs"]
    logs = sorted((tmp_path / "oai").glob("evaldelta-arith__*.jsonl"))
    result = compare(logs)
    for log in logs:
        arm = "+".join(runs[log.name]["completion_fns"])
        ours = arm_slice(result, "match", arm).estimate.estimate
        assert ours == pytest.approx(runs[log.name]["final_report"]["accuracy"])


def test_lighteval_regenerated(tmp_path: Path) -> None:
    exe = _tool("EVALDELTA_LIGHTEVAL", shutil.which("lighteval"))
    if exe is None:
        pytest.skip("lighteval is not installed (set EVALDELTA_LIGHTEVAL)")
    out = tmp_path / "lighteval"
    _regenerate("lighteval/make_fixtures.sh", "LIGHTEVAL", exe, out)
    result = compare([out], metrics=["acc"], by=["task"])
    for path in out.glob("*/results/*/*/results_*.json"):
        reported = json.loads(path.read_text())
        model = reported["config_general"]["model_name"]
        ours = arm_slice(result, "acc", model, "evaldelta_mc").estimate.estimate
        assert ours == pytest.approx(reported["results"]["evaldelta_mc|0"]["acc"])
