"""lm-evaluation-harness --log_samples output written by the real lm-eval (0.4.13, dummy model).

References: lm-eval's own ``results[task]["metric,filter"]`` and ``n-samples`` in the
results_<date>.json written by the same run.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaldelta.comparison import compare
from evaldelta.sources import Source, detect, open_sources

from ..conftest import one_line_error
from .helpers import LOGS, arm_slice

HERE = LOGS / "lmeval" / "v0.4.13"
RUNS = {"evaldelta/dummy-a": HERE / "arm-seed1", "evaldelta/dummy-b": HERE / "arm-seed2"}


def _results(run: Path) -> dict:  # type: ignore[type-arg]
    (path,) = run.glob("*/results_*.json")
    return json.loads(path.read_text())  # type: ignore[no-any-return]


@pytest.mark.parametrize("flt", [None, "strict-match", "flexible-extract"])
def test_per_task_rates_equal_lm_evals_own(flt: str | None, run_cli) -> None:  # type: ignore[no-untyped-def]
    from evaldelta.sources import ReadOptions

    options = ReadOptions(filter=flt)
    result = compare([HERE], metrics=["acc", "acc_norm", "exact_match"], by=["task"],
                     read_options=options)  # fmt: skip
    assert set(result.arms_present) == set(RUNS)
    for arm, run in RUNS.items():
        reported = _results(run)
        for task, metrics in (
            ("evaldelta_mc", ("acc", "acc_norm")),
            ("evaldelta_gen", ("exact_match",)),
        ):
            chosen = "none" if task == "evaldelta_mc" else (flt or "strict-match")
            for metric in metrics:
                ours = arm_slice(result, metric, arm, task)
                theirs = reported["results"][task][f"{metric},{chosen}"]
                assert ours.estimate.estimate == pytest.approx(theirs, abs=1e-12)
                assert ours.cases == reported["n-samples"][task]["effective"]


def test_a_samples_file_and_a_run_folder_are_recognized() -> None:
    run = RUNS["evaldelta/dummy-a"]
    (samples,) = run.glob("*/samples_evaldelta_mc_*.jsonl")
    assert detect(samples) == detect(run) == detect(HERE) == "lmeval"
    _, (opened,) = open_sources([Source(samples)])
    assert set(opened.pins) == {"evaldelta/dummy-a"}
    pins = opened.pins["evaldelta/dummy-a"]
    assert pins["lm_eval_version"] == "0.4.13" and pins["seeds.random_seed"] == 1
    assert pins["task.evaldelta_mc.hash"] == _results(run)["task_hashes"]["evaldelta_mc"]


def test_the_seed_difference_is_reported_as_a_pin_difference() -> None:
    result = compare([HERE])
    keys = {d.key for d in result.pin_differences}
    assert "seeds.random_seed" in keys and "model" not in keys


def test_an_unknown_filter_is_one_line(run_cli) -> None:  # type: ignore[no-untyped-def]
    one_line_error(run_cli("compare", HERE, "--filter", "nope"), "--filter 'nope'", "strict-match")


def test_filter_on_a_tidy_file_is_refused(run_cli, write) -> None:  # type: ignore[no-untyped-def]
    path = write("rows.csv", "case_id,arm,score\n1,a,1\n1,b,0\n")
    one_line_error(run_cli("compare", path, "--filter", "x"), "--filter does not apply")


def test_a_truncated_samples_line_is_one_line(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    run = RUNS["evaldelta/dummy-a"]
    (samples,) = run.glob("*/samples_evaldelta_mc_*.jsonl")
    bad = tmp_path / samples.name
    text = samples.read_text()
    bad.write_text(text[: len(text) // 2])
    one_line_error(run_cli("compare", bad, "--arm", f"other={bad}"), str(bad), "line 8")
