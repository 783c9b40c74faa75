"""compare on the real public per-case results in ../shared/data/real.

Reference values are the figures each dataset's SOURCE.md computed independently with plain
Python from the same CSV (quoted beside each assertion).
"""

from __future__ import annotations

import json

import jsonschema
import pytest

from evaldelta.comparison import compare
from evaldelta.report import render_json, render_text
from tests.conftest import REAL, ROOT

pytestmark = pytest.mark.skipif(
    not REAL.exists(), reason="../shared/data/real is not beside the repo"
)

SCHEMA = json.loads((ROOT / "schema" / "comparison.schema.json").read_text())


def data(name: str):  # type: ignore[no-untyped-def]
    return REAL / name / f"{name}.csv"


def only_pair(result):  # type: ignore[no-untyped-def]
    (pair,) = result.slicing().pairs
    return pair


def test_swebench_verified_sonnet_release_pair():
    result = compare(
        [data("swebench_verified_bash_only")],
        baseline="Claude 4 Sonnet (20250514)",
        candidates=["Claude 4.5 Sonnet (20250929)"],
    )
    pair = only_pair(result)
    o = pair.overall
    # SOURCE.md: "pooled ... A 0.6480, B 0.7060, B-A +0.0580"; "B better on 54, A better on 25"
    assert o.paired is not None and o.table is not None
    assert o.paired.estimate == pytest.approx(0.058)
    assert (o.table.only_candidate, o.table.only_baseline) == (54, 25)
    # SOURCE.md: "exact two-sided sign test ... p = 0.00147"
    assert round(o.paired.pvalue, 5) == 0.00147
    django = next(d for d in pair.slices if d.slice == "django/django")
    assert django.table is not None
    assert (django.table.only_candidate, django.table.only_baseline) == (27, 13)
    assert pair.cost is not None and pair.cost.baseline_usd == pytest.approx(185.73, abs=0.01)
    jsonschema.validate(json.loads(render_json(result)), SCHEMA)


def test_livecodebench_gpt4o_regression_graded():
    result = compare(
        [data("livecodebench_codegen")],
        baseline="GPT-4O-2024-05-13",
        candidates=["GPT-4O-2024-08-06"],
    )
    assert result.metrics[0].kind == "graded"
    pair = only_pair(result)
    # SOURCE.md: "B-A -0.0324"; "B better on 91, A better on 142; equal on 647"
    assert pair.overall.paired is not None
    assert round(pair.overall.paired.estimate, 4) == -0.0324
    assert pair.overall.informative == 91 + 142
    easy = next(d for d in pair.slices if d.slice == "easy")
    assert easy.paired is not None and round(easy.paired.estimate, 3) == -0.052
    jsonschema.validate(json.loads(render_json(result)), SCHEMA)


def test_livecodebench_mixed_binary_and_graded_arms():
    # o1 arms are 0/1 (N=1), GPT-4o graded: mixed, so the metric is graded for this pair
    result = compare(
        [data("livecodebench_codegen")],
        baseline="GPT-4O-2024-05-13",
        candidates=["O1-2024-12-17 (N=1) (Low)"],
    )
    assert result.metrics[0].kind == "graded"


def test_metr_case_level_versus_run_level():
    result = compare([data("metr_time_horizon")], baseline="o1-preview", candidates=["o1"])
    pair = only_pair(result)
    assert result.metrics[0].repeated
    # SOURCE.md: own cases A 0.5176, B 0.5299; shared +0.0653; run-level 0.536 vs 0.358
    assert round(pair.pooled.baseline, 4) == 0.5176
    assert round(pair.pooled.candidate, 4) == 0.5299
    assert pair.overall.paired is not None
    assert round(pair.overall.paired.estimate, 4) == 0.0653
    assert round(pair.pooled.baseline_attempt_mean, 3) == 0.536
    assert round(pair.pooled.candidate_attempt_mean, 3) == 0.358
    # o1-preview lacks 8 of o1's tasks: counted and listed, not dropped
    assert len(pair.only_in_candidate) == 8 and not pair.only_in_baseline
    text = render_text(result)
    assert "per attempt (every run counts once)" in text
    assert "only o1 8" in text


def test_swebench_pro_unequal_coverage():
    result = compare(
        [data("swebench_pro_scale")],
        baseline="Claude 4 Sonnet - 10132025",
        candidates=["Claude 4.5 Sonnet - 10132025"],
    )
    pair = only_pair(result)
    # SOURCE.md: cases A 562, B 730, shared 562; own-cases B-A +0.0099; shared +0.0214;
    # "B better on 59, A better on 47"; "p = 0.285"
    assert pair.shared_cases == 562
    assert pair.overall.only_in_candidate == 168  # all counted
    assert len(pair.only_in_candidate) == 50  # listed up to the default --list-limit
    assert round(pair.pooled.delta, 4) == 0.0099
    assert pair.overall.paired is not None
    assert round(pair.overall.paired.estimate, 4) == 0.0214
    assert pair.overall.table is not None
    assert (pair.overall.table.only_candidate, pair.overall.table.only_baseline) == (59, 47)
    assert round(pair.overall.paired.pvalue, 3) == 0.285


@pytest.mark.parametrize(
    "name",
    [
        "swebench_verified_bash_only",
        "swebench_pro_scale",
        "livecodebench_codegen",
        "metr_time_horizon",
    ],
)
def test_every_real_dataset_compares_all_arms(name: str):
    result = compare([data(name)])
    slicing = result.slicing()
    assert len(slicing.pairs) == len(result.arms_present) - 1
    jsonschema.validate(json.loads(render_json(result)), SCHEMA)
