"""lm-evaluation-harness output across its 0.4.x releases, written by the real lm-eval.

* v0.4.3, v0.4.5: samples lines without ``filter`` or ``metrics`` keys (``"acc": 1.0`` at
  top level; a two-filter task writes each document twice); v0.4.5 also a corpus-level
  ``bleu`` (a line keeps a pair) and a per-line ``Infinity`` (``evaldelta_inf``).
* v0.4.13-named: ``--output_path X.json``, so results files named
  ``results_<model>:<date>_<date>.json``, and a run through lm-eval's Python API dumped with
  ``json.dump``: samples embedded in the results file, ``Infinity`` and ``NaN`` in it.

References: lm-eval's own ``results[task]["metric,filter"]`` and ``n-samples`` of each run,
as the fixture script copied them into MANIFEST.json.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from evaldelta.comparison import compare
from evaldelta.sources import ReadOptions, Source, detect, open_sources
from evaldelta.sources._fetch import rows

from ..conftest import ROOT, one_line_error
from .helpers import LOGS, arm_slice, manifest

VERSIONS = ("v0.4.3", "v0.4.5", "v0.4.13-named")
FILTERS = {"evaldelta_gen": ("strict-match", "flexible-extract")}


def _arm(entry: dict[str, Any]) -> str:
    """The arm an import names: lm-eval's model name, else its pretrained= model arg."""
    if entry["model_name"]:
        return str(entry["model_name"])
    args = entry["reported"]["config"]["model_args"]
    return str(args.split("pretrained=", 1)[1].split(",", 1)[0])


def _figures(version: str, flt: str | None) -> list[tuple[str, str, str, float, int]]:
    """(arm, task, metric, lm-eval's figure, its n) for every finite per-task figure."""
    out = []
    for entry in manifest("lmeval", version)["arms"]:
        results = entry["reported"]["results"]
        for task, block in results.items():
            chosen = (flt or FILTERS[task][0]) if task in FILTERS else "none"
            n = entry["reported"]["n-samples"][task]["effective"]
            for key, value in block.items():
                metric, _, name = key.partition(",")
                if name != chosen or metric.endswith("_stderr") or metric == "bleu":
                    continue  # bleu: corpus-level, no per-line score (tested on its own)
                if isinstance(value, float) and math.isfinite(value):
                    out.append((_arm(entry), task, metric, value, n))
    return out


@pytest.mark.parametrize(
    ("version", "flt"),
    [(v, None) for v in VERSIONS] + [(v, "flexible-extract") for v in VERSIONS[1:]],
)
def test_per_task_figures_equal_lm_evals_own(version: str, flt: str | None) -> None:
    folder = LOGS / "lmeval" / version
    assert detect(folder) == "lmeval"
    figures = _figures(version, flt)
    metrics = sorted({f[2] for f in figures})
    result = compare([folder], metrics=metrics, by=["task"], read_options=ReadOptions(filter=flt))
    assert len(figures) >= 4
    for arm, task, metric, theirs, n in figures:
        ours = arm_slice(result, metric, arm, task)
        assert ours.estimate.estimate == pytest.approx(theirs, abs=1e-12), (arm, task, metric)
        assert ours.cases == n


@pytest.mark.parametrize("version", ["v0.4.3", "v0.4.5"])
def test_lines_without_filter_or_metrics_keys_are_scored(version: str) -> None:
    folder = LOGS / "lmeval" / version
    for path in folder.rglob("samples_*.jsonl"):
        first = json.loads(path.read_text().splitlines()[0])
        assert "filter" not in first and "metrics" not in first
    _, (opened,) = open_sources([Source(folder)])
    (report,) = opened.reports
    assert {"acc", "acc_norm"} <= set(report.metrics)
    assert not [i for i in report.issues if i.kind == "no_scores"]
    table = opened.table
    assert not rows(table.filter(table.task == "evaldelta_mc").filter(table.acc.isnull()).limit(1))


def test_a_two_filter_task_without_filter_keys_is_read_by_position() -> None:
    (path,) = (LOGS / "lmeval" / "v0.4.5" / "arm-seed1").glob("*/samples_evaldelta_gen_*.jsonl")
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert len(lines) == 2 * len({x["doc_id"] for x in lines})  # each document once per filter
    reported = manifest("lmeval", "v0.4.5")["arms"][0]["reported"]["results"]["evaldelta_gen"]
    for flt in ("strict-match", "flexible-extract"):
        _, (opened,) = open_sources([Source(path)], ReadOptions(filter=flt))
        table = opened.table
        got = rows(table.aggregate(m=table.exact_match.mean(), n=table.count()))[0]
        assert got["m"] == pytest.approx(reported[f"exact_match,{flt}"], abs=1e-12)
        assert got["n"] == 15


def test_infinity_and_nan_are_read_and_reported_with_counts() -> None:
    folder = LOGS / "lmeval" / "v0.4.5"
    written = 0
    for path in folder.rglob("samples_evaldelta_inf_*.jsonl"):
        written += path.read_text().count('"surprisal": Infinity')
    _, (opened,) = open_sources([Source(folder)])
    (report,) = opened.reports
    (issue,) = [i for i in report.issues if i.kind == "metric_not_finite"]
    assert issue.count == written > 0
    assert "surprisal=inf" in issue.examples[0] and "evaldelta_inf" in issue.examples[0]
    (noted,) = [i for i in report.issues if i.kind == "reported_not_finite"]
    assert noted.count == 2  # surprisal,none = Infinity in each arm's results
    table = opened.table
    inf = table.filter(table.task == "evaldelta_inf")
    assert len(rows(inf.filter(inf.surprisal.isnull()).select("case_id"))) == written
    # every reported figure is finite (lm-eval's Infinity is not carried as a figure)
    assert all(math.isfinite(v) for arm in report.reported.values() for v in arm.values())


def test_a_corpus_level_metric_is_an_issue_not_a_silent_nan() -> None:
    folder = LOGS / "lmeval" / "v0.4.5"
    _, (opened,) = open_sources([Source(folder)])
    (issue,) = [i for i in opened.reports[0].issues if i.kind == "metric_not_a_number"]
    assert issue.count == 30 and issue.examples[0].endswith(" bleu")  # 15 lines x 2 arms


def test_results_named_after_the_model_and_its_folder_are_recognized(
    run_cli, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    folder = LOGS / "lmeval" / "v0.4.13-named"
    for entry in manifest("lmeval", "v0.4.13-named")["arms"][:2]:
        path = folder / entry["results_file"]
        assert ":" in path.name and path.name.startswith("results_evaldelta__")
        assert detect(path) == detect(path.parent) == "lmeval"
        out = tmp_path / f"{entry['arm']}.parquet"
        result = run_cli("import", "lmeval", path, "-o", out)
        assert result.code == 0, result.err
        assert out.is_file()


def test_samples_embedded_in_a_results_file() -> None:
    (entry,) = [e for e in manifest("lmeval", "v0.4.13-named")["arms"] if e["arm"] == "arm-api"]
    path = LOGS / "lmeval" / "v0.4.13-named" / entry["results_file"]
    assert b"Infinity" in path.read_bytes()
    assert detect(path) == "lmeval"
    _, (opened,) = open_sources([Source(path)])
    (report,) = opened.reports
    assert report.arms == ("evaldelta/dummy-c",)
    assert report.cases == sum(v["effective"] for v in entry["reported"]["n-samples"].values())
    wheres = {r["_where"] for r in rows(opened.table.select("_where").limit(3))}
    assert all("samples['evaldelta_" in w for w in wheres)


def test_an_aggregate_results_file_is_one_line(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    (results,) = (LOGS / "lmeval" / "v0.4.5" / "arm-seed1").glob("*/results_*.json")
    alone = tmp_path / results.name
    shutil.copy(results, alone)
    assert detect(alone) == "lmeval"
    one_line_error(run_cli("compare", alone, "--arm", f"b={alone}"), results.name, "aggregate")
    one_line_error(
        run_cli("import", "lmeval", alone, "-o", tmp_path / "o.parquet"), "--log_samples"
    )


def test_a_log_without_scores_says_so(tmp_path: Path) -> None:
    (samples,) = (LOGS / "lmeval" / "v0.4.3" / "arm-seed1").glob("*/samples_*.jsonl")
    lines = [json.loads(x) for x in samples.read_text().splitlines()]
    for line in lines:
        line.pop("acc"), line.pop("acc_norm")
    bare = tmp_path / samples.name
    bare.write_text("".join(json.dumps(x) + "\n" for x in lines))
    _, (opened,) = open_sources([Source(bare)])
    assert [i.kind for i in opened.reports[0].issues if i.kind == "no_scores"] == ["no_scores"]


def _legacy_layout(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """A 0.4.0-0.4.2 run folder, laid out as their ``__main__.py`` writes one.

    Those releases load a metric from the Hugging Face hub at import (``evaluate.load``), so
    they cannot run offline; this folder is built from the 0.4.3 fixture's own files the
    way 0.4.0-0.4.2 write them: ``results.json`` (model_args as the command-line string) and
    ``<model_args, / and = as __>_<task>.jsonl`` holding one indented JSON array.
    """
    run = LOGS / "lmeval" / "v0.4.3" / "arm-seed1"
    (results_path,) = run.glob("*/results_*.json")
    (samples_path,) = run.glob("*/samples_evaldelta_mc_*.jsonl")
    results = json.loads(results_path.read_text())
    results.pop("model_name", None)
    results["config"]["model_args"] = "pretrained=evaldelta/dummy-a"
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "results.json").write_text(json.dumps(results, indent=2))
    items = [json.loads(x) for x in samples_path.read_text().splitlines()]
    for item in items:
        for key in ("doc_hash", "prompt_hash", "target_hash"):
            item.pop(key)
    samples = folder / "pretrained__evaldelta__dummy-a_evaldelta_mc.jsonl"
    samples.write_text(json.dumps(items, indent=2))
    return folder, results


def test_the_0_4_0_to_0_4_2_layout(tmp_path: Path) -> None:
    folder, results = _legacy_layout(tmp_path)
    samples = folder / "pretrained__evaldelta__dummy-a_evaldelta_mc.jsonl"
    for path in (folder, folder / "results.json", samples):
        assert detect(path) == "lmeval"
        _, (opened,) = open_sources([Source(path)])
        table = opened.table
        got = rows(table.aggregate(m=table.acc.mean(), n=table.count()))[0]
        assert got["m"] == pytest.approx(results["results"]["evaldelta_mc"]["acc,none"])
        assert got["n"] == 15
        assert opened.reports[0].arms == ("evaldelta/dummy-a",)


def test_a_legacy_samples_file_alone_is_one_line(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    folder, _ = _legacy_layout(tmp_path)
    (folder / "results.json").unlink()
    path = folder / "pretrained__evaldelta__dummy-a_evaldelta_mc.jsonl"
    one_line_error(run_cli("compare", path, "--arm", f"b={path}"), path.name, "results file")


@pytest.mark.parametrize(
    "damage",
    [
        {"configs": ["not", "a", "mapping"]},
        {"config": "x", "configs": {"evaldelta_mc": {"filter_list": "none", "metric_list": 3}}},
        {"results": {"evaldelta_mc": ["acc,none", 1]}, "group_subtasks": [1]},
        {"samples": {"evaldelta_mc": [1, 2]}},
        {"samples": {"evaldelta_mc": [{"doc_id": None}]}},
    ],
)
def test_damaged_results_are_never_an_internal_error(
    damage: dict[str, Any], tmp_path: Path, run_cli
) -> None:  # type: ignore[no-untyped-def]
    run = LOGS / "lmeval" / "v0.4.3" / "arm-seed1"
    (results_path,) = run.glob("*/results_*.json")
    folder = tmp_path / "run"
    shutil.copytree(results_path.parent, folder)
    path = folder / results_path.name
    results = json.loads(path.read_text())
    results.update(damage)
    path.write_text(json.dumps(results))
    out = run_cli("import", "lmeval", path, "-o", tmp_path / "o.parquet")
    assert out.code in (0, 2), out.err
    if out.code == 2:
        one_line_error(out, str(path.name))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("env", "set_name"), [("EVALDELTA_LM_EVAL_LEGACY", "legacy"), ("EVALDELTA_LM_EVAL", "named")]
)
def test_regenerated(env: str, set_name: str, tmp_path: Path) -> None:
    """make_fixtures.sh with LMEVAL_SET=legacy (an lm-eval 0.4.3-0.4.6) or named (0.4.9-)."""
    exe = os.environ.get(env)
    if exe is None:
        pytest.skip(f"set {env} to an lm_eval executable")
    out = tmp_path / set_name
    script = ROOT / "tools" / "fixtures" / "lmeval" / "make_fixtures.sh"
    env = {**os.environ, "LM_EVAL": exe, "LMEVAL_SET": set_name}
    subprocess.run(["bash", str(script), "--out", str(out)], check=True, capture_output=True,
                   timeout=900, env=env)  # fmt: skip
    fresh = json.loads((out / "MANIFEST.json").read_text())
    result = compare([out], metrics=["acc"], by=["task"])
    for entry in fresh["arms"]:
        ours = arm_slice(result, "acc", _arm(entry), "evaldelta_mc").estimate.estimate
        assert ours == pytest.approx(entry["reported"]["results"]["evaldelta_mc"]["acc,none"])
