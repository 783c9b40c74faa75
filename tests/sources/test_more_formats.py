"""HELM, OpenAI Evals and lighteval output written by the real tools (API items by the SDK).

References: each tool's own figures from the same run: HELM's stats.json, oaieval's
final_report, lighteval's results_<date>.json; for the Evals API, the pass counts of the
items the openai SDK's own model serialized (tools/fixtures/openai_evals/make_api_items.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaldelta.comparison import compare
from evaldelta.sources import Source, detect, open_sources

from ..conftest import one_line_error
from .helpers import LOGS, arm_slice, manifest

HELM = LOGS / "helm" / "v0.5.16" / "benchmark_output" / "runs" / "evaldelta"
EVALS = LOGS / "openai_evals" / "v3.0.1.post1"
API = LOGS / "openai_evals" / "api"
LIGHTEVAL = LOGS / "lighteval" / "v0.13.0"


def test_helm_rates_equal_helms_own_stats() -> None:
    assert detect(HELM) == "helm"
    result = compare([HELM], metrics=["exact_match"], by=["perturbation"])
    for run in manifest("helm", "v0.5.16")["runs"].values():
        reported = run["stats_json_reported"]
        original = arm_slice(result, "exact_match", run["model"], "original")
        assert original.estimate.estimate == pytest.approx(reported["exact_match"]["mean"])
        perturbed = arm_slice(result, "exact_match", run["model"], "lowercase")
        expected = reported["exact_match [lowercase/perturbed]"]["mean"]
        assert perturbed.estimate.estimate == pytest.approx(expected)
        # every instance in every train trial is one attempt
        overall = arm_slice(result, "exact_match", run["model"])
        assert overall.attempts == run["per_instance_entries"]


def test_one_helm_run_folder_is_one_arm() -> None:
    (run,) = [p for p in HELM.iterdir() if p.is_dir() and "parity-a" in p.name]
    _, (opened,) = open_sources([Source(run)])
    assert set(opened.pins) == {"evaldelta/parity-a"}
    spec = json.loads((run / "run_spec.json").read_text())
    pins = opened.pins["evaldelta/parity-a"]
    assert pins["adapter.num_train_trials"] == spec["adapter_spec"]["num_train_trials"]
    assert pins["provider"] == spec["adapter_spec"]["model_deployment"]


def test_openai_evals_match_accuracy_equals_final_report() -> None:
    runs = manifest("openai_evals", "v3.0.1.post1")["runs"]
    logs = [
        EVALS / "evaldelta-arith__evaldelta_fn-a.jsonl",
        EVALS / "evaldelta-arith__evaldelta_fn-b.jsonl",
    ]
    assert all(detect(p) == "openai-evals" for p in logs)
    result = compare(logs)
    for log in logs:
        run = runs[log.name]
        ours = arm_slice(result, "match", "+".join(run["completion_fns"]))
        assert ours.estimate.estimate == pytest.approx(run["final_report"]["accuracy"])
        assert ours.cases == run["samples"]


def test_openai_evals_metrics_events_equal_final_report() -> None:
    runs = manifest("openai_evals", "v3.0.1.post1")["runs"]
    logs = sorted(EVALS.glob("evaldelta-arith-fuzzy__*.jsonl"))
    result = compare(logs, metrics=["accuracy", "f1_score"])
    for log in logs:
        run = runs[log.name]
        arm = "+".join(run["completion_fns"])
        for metric in ("accuracy", "f1_score"):
            ours = arm_slice(result, metric, arm).estimate.estimate
            assert ours == pytest.approx(run["final_report"][metric])


def test_evals_api_output_items() -> None:
    runs = json.loads((API / "MANIFEST.json").read_text())["runs"]
    pages = sorted(API.glob("output_items_*.json"))
    assert all(detect(p) == "openai-evals" for p in pages)
    result = compare(pages)
    for run, figures in runs.items():
        ours = arm_slice(result, "exact", run)
        assert ours.estimate.estimate == pytest.approx(figures["passed"] / figures["items"])
    (report,) = [r for r in result.imports if "run_b" in r.path]
    assert {i.kind for i in report.issues} == {"errored_item"}


def test_lighteval_rates_equal_lightevals_own_results() -> None:
    assert detect(LIGHTEVAL) == "lighteval"
    metrics = ["acc", "em", "f1"]
    result = compare([LIGHTEVAL], metrics=metrics, by=["task"])
    for arm in manifest("lighteval", "v0.13.0")["arms"]:
        results = json.loads((LIGHTEVAL / arm["results_file"]).read_text())["results"]
        for task, metric in (
            ("evaldelta_mc", "acc"),
            ("evaldelta_gen", "em"),
            ("evaldelta_gen", "f1"),
        ):
            ours = arm_slice(result, metric, arm["model_name"], task)
            assert ours.estimate.estimate == pytest.approx(results[f"{task}|0"][metric])
    (report,) = result.imports
    assert {i.kind for i in report.issues} == {"corpus_metric"}


def test_a_lighteval_details_file_alone(tmp_path: Path) -> None:
    (details,) = sorted(LIGHTEVAL.glob("arm-b/details/*/*/*/details_evaldelta_mc*.parquet"))
    assert detect(details) == "lighteval"
    _, (opened,) = open_sources([Source(details)])
    assert set(opened.pins) == {"evaldelta/dummy-b"}
    assert opened.table.count().to_pyarrow().as_py() == 15


def test_a_truncated_openai_evals_log_is_one_line(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    log = EVALS / "evaldelta-arith__evaldelta_fn-a.jsonl"
    bad = tmp_path / log.name
    text = log.read_text()
    bad.write_text(text[: len(text) // 2])
    one_line_error(run_cli("compare", bad, "--arm", f"b={bad}"), str(bad), "truncated")
