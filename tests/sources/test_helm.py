"""HELM run output with several metric classes per instance, written by the real crfm-helm.

The jury fixture (tests/fixtures/logs/helm/v0.5.16-jury) is HELM's own
``medhelm_configurable_benchmark`` run spec scored by LLMJuryMetric and
BasicGenerationMetric, so per_instance_stats.json holds two entries per (instance, trial,
perturbation), as HELM's safety run specs do. References: HELM's own stats.json means, as
the fixture script copied them into MANIFEST.json.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from evaldelta.comparison import compare
from evaldelta.sources import Source, detect, open_sources
from evaldelta.sources._fetch import rows

from ..conftest import ROOT, one_line_error
from .helpers import LOGS, arm_slice, manifest

JURY = LOGS / "helm" / "v0.5.16-jury" / "benchmark_output" / "runs" / "jury"
RUNS = manifest("helm", "v0.5.16-jury")["runs"]


def _run(model: str) -> Path:
    (name,) = [n for n, r in RUNS.items() if r["model"] == model]
    return JURY / name


def test_the_fixture_has_one_entry_per_metric_class() -> None:
    for run in RUNS.values():
        assert run["entries_per_key"] == [2]
        assert run["per_instance_entries"] == 2 * run["per_instance_keys"]


@pytest.mark.parametrize("metric", ["jury_score", "exact_match"])
def test_rates_equal_helms_own_stats_with_several_metric_classes(metric: str) -> None:
    assert detect(JURY) == "helm"
    result = compare([JURY], metrics=[metric], by=["perturbation"])
    for run in RUNS.values():
        reported = run["stats_json_reported"]
        original = arm_slice(result, metric, run["model"], "original")
        assert original.estimate.estimate == pytest.approx(reported[metric]["mean"], abs=1e-12)
        perturbed = arm_slice(result, metric, run["model"], "lowercase")
        expected = reported[f"{metric} [lowercase/perturbed]"]["mean"]
        assert perturbed.estimate.estimate == pytest.approx(expected, abs=1e-12)
        # the entries of both metric classes are one attempt
        assert arm_slice(result, metric, run["model"]).attempts == run["per_instance_keys"]


def test_merged_attempt_names_both_entries_and_has_no_issue() -> None:
    _, (opened,) = open_sources([Source(_run("evaldelta/parity-a"))])
    (report,) = opened.reports
    assert report.issues == ()
    assert {"jury_score", "exact_match"} <= set(report.metrics)
    wheres = [r["_where"] for r in rows(opened.table.select("_where"))]
    assert all(w.startswith("entries ") for w in wheres)


@pytest.mark.parametrize("name", ["run_spec.json", "stats.json", "per_instance_stats.json"])
def test_a_run_file_stands_for_its_run_folder(name: str, run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run = _run("evaldelta/parity-a")
    assert detect(run / name) == "helm"
    _, (opened,) = open_sources([Source(run / name)])
    assert set(opened.pins) == {"evaldelta/parity-a"}
    out = tmp_path / "o.parquet"
    result = run_cli("import", "helm", run / name, "-o", out)
    assert result.code == 0, result.err
    assert out.is_file()


@pytest.mark.parametrize("name", ["scenario.json", "instances.json", "display_predictions.json"])
def test_helms_other_files_are_refused_in_one_line(name: str, run_cli) -> None:  # type: ignore[no-untyped-def]
    path = _run("evaldelta/parity-a") / name
    assert detect(path) == "helm"
    one_line_error(run_cli("compare", path, "--arm", f"b={path}"), name, "point at the run folder")
    one_line_error(run_cli("import", "helm", path, "-o", "x.parquet"), name, "no scores")


def test_run_spec_without_stats_beside_it_is_one_line(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    shutil.copy(_run("evaldelta/parity-a") / "run_spec.json", tmp_path / "run_spec.json")
    one_line_error(
        run_cli("import", "helm", tmp_path / "run_spec.json", "-o", tmp_path / "o.parquet"),
        "run_spec.json",
        "per_instance_stats.json",
    )


def _copy_run(tmp_path: Path) -> tuple[Path, list]:  # type: ignore[type-arg]
    run = tmp_path / "run"
    shutil.copytree(_run("evaldelta/parity-a"), run)
    entries = json.loads((run / "per_instance_stats.json").read_text())
    return run, entries


def _second_entry(entries: list) -> int:  # type: ignore[type-arg]
    first = entries[0]
    key = (first["instance_id"], first["train_trial_index"], first.get("perturbation"))
    return next(
        i
        for i, e in enumerate(entries)
        if i and (e["instance_id"], e["train_trial_index"], e.get("perturbation")) == key
    )


def test_a_conflicting_duplicate_stat_is_one_line_naming_both_entries(
    tmp_path: Path, run_cli
) -> None:  # type: ignore[no-untyped-def]
    run, entries = _copy_run(tmp_path)
    second = _second_entry(entries)
    stat = dict(entries[second]["stats"][0])
    stat["mean"] = stat["sum"] = (stat.get("mean") or 0) + 1
    entries[0]["stats"].append(stat)  # the same stat, another value, in the other entry
    (run / "per_instance_stats.json").write_text(json.dumps(entries))
    one_line_error(
        run_cli("compare", run, "--arm", f"b={run}"),
        "per_instance_stats.json",
        f"entry {second}",
        "entry 0",
        stat["name"]["name"],
    )


def test_an_agreeing_duplicate_stat_is_merged(tmp_path: Path) -> None:
    run, entries = _copy_run(tmp_path)
    second = _second_entry(entries)
    entries[0]["stats"].append(dict(entries[second]["stats"][0]))
    (run / "per_instance_stats.json").write_text(json.dumps(entries))
    _, (opened,) = open_sources([Source(run)])
    assert opened.reports[0].issues == ()


def test_an_infinite_stat_is_unscored_and_counted(tmp_path: Path) -> None:
    run, entries = _copy_run(tmp_path)
    hit = next(s for s in entries[0]["stats"] if s["name"]["name"] == "jury_score")
    hit["mean"] = hit["sum"] = float("inf")
    (run / "per_instance_stats.json").write_text(json.dumps(entries))  # Infinity, as HELM would
    _, (opened,) = open_sources([Source(run)])
    (issue,) = [i for i in opened.reports[0].issues if i.kind == "stat_not_finite"]
    assert issue.count == 1 and "jury_score=inf" in issue.examples[0]
    table = opened.table
    assert len(rows(table.filter(table.jury_score.isnull()).select("case_id"))) == 1


@pytest.mark.slow
def test_jury_fixture_regenerated(tmp_path: Path) -> None:
    """tools/fixtures/helm/make_fixtures.sh with HELM_SUITE=jury, when crfm-helm is here."""
    exe = os.environ.get("EVALDELTA_HELM_RUN") or shutil.which("helm-run")
    if exe is None:
        pytest.skip("crfm-helm is not installed (set EVALDELTA_HELM_RUN)")
    out = tmp_path / "jury"
    script = ROOT / "tools" / "fixtures" / "helm" / "make_fixtures.sh"
    env = {**os.environ, "HELM_RUN": exe, "HELM_SUITE": "jury"}
    subprocess.run(["bash", str(script), "--out", str(out)], check=True, capture_output=True,
                   timeout=900, env=env)  # fmt: skip
    fresh = json.loads((out / "MANIFEST.json").read_text())["runs"]
    result = compare([out / "benchmark_output" / "runs" / "jury"], metrics=["jury_score"],
                     by=["perturbation"])  # fmt: skip
    for run in fresh.values():
        assert run["entries_per_key"] == [2]
        ours = arm_slice(result, "jury_score", run["model"], "original").estimate.estimate
        assert ours == pytest.approx(run["stats_json_reported"]["jury_score"]["mean"])


@pytest.mark.parametrize(
    ("name", "damage"),
    [
        ("run_spec.json", {"adapter_spec": ["not", "a", "mapping"], "metric_specs": [1, "x"]}),
        ("run_spec.json", {"groups": {"a": 1}, "scenario_spec": 3}),
        ("per_instance_stats.json", [{"instance_id": "id0", "stats": {"a": 1}}]),
        ("per_instance_stats.json", [{"instance_id": "id0", "train_trial_index": "1"}]),
        ("per_instance_stats.json", [{"instance_id": "id0", "stats": [{"name": "x"}, 3]}]),
        (
            "per_instance_stats.json",
            [
                {
                    "instance_id": "id0",
                    "perturbation": [1],
                    "stats": [{"name": {"name": "m"}, "count": 1, "mean": "high"}],
                }
            ],
        ),
        (
            "display_predictions.json",
            [{"instance_id": "id0", "train_trial_index": "x", "predicted_text": "A"}, 5],
        ),
        ("stats.json", {"not": "a list"}),
    ],
)
def test_damaged_helm_files_are_never_an_internal_error(
    name: str, damage: object, tmp_path: Path, run_cli
) -> None:  # type: ignore[no-untyped-def]
    run, _ = _copy_run(tmp_path)
    path = run / name
    if isinstance(damage, dict) and name == "run_spec.json":
        spec = json.loads(path.read_text())
        spec.update(damage)
        damage = spec
    path.write_text(json.dumps(damage))
    out = run_cli("import", "helm", run, "-o", tmp_path / "o.parquet")
    assert out.code in (0, 2), out.err
    if out.code == 2:
        one_line_error(out, "run")
