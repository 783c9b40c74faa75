"""promptfoo assert-sets: named scores, set metrics and set weights as promptfoo reports them.

The expected figures are promptfoo's own ``results.prompts[].metrics`` as its run wrote them
(copied into each fixture's MANIFEST.json by tools/fixtures/promptfoo/make_assertsets.sh):
``namedScores`` is a sum of each row's score times its weight, so the figure promptfoo shows
is ``namedScores / namedScoreWeights``. Both releases (0.121.20 and 0.123.1) and both output
forms (results.json, results.jsonl) must give it.
"""

from __future__ import annotations

import json

import pytest

from evaldelta.comparison import compare

from .helpers import LOGS, arm_slice

VERSIONS = ["v0.121.20-assertsets", "v0.123.1-assertsets"]


@pytest.mark.parametrize("output", ["results.json", "results.jsonl"])
@pytest.mark.parametrize("version", VERSIONS)
def test_named_scores_equal_promptfoos(version: str, output: str) -> None:
    folder = LOGS / "promptfoo" / version
    manifest = json.loads((folder / "MANIFEST.json").read_text())
    prompts = manifest["files"]["results.json"]["prompts"]
    names = [n for n, w in prompts[0]["metrics"]["namedScoreWeights"].items() if w > 0]
    assert {"Performance", "accuracy"} <= set(names)  # a set's metric and a weighted child
    result = compare([folder / output], metrics=("pass", *names))
    for prompt in prompts:
        metrics = prompt["metrics"]
        for name in names:
            want = metrics["namedScores"][name] / metrics["namedScoreWeights"][name]
            ours = arm_slice(result, name, prompt["provider"]).estimate.estimate
            assert ours == pytest.approx(want, abs=1e-12), (prompt["provider"], name)
        passed = metrics["testPassCount"] / (metrics["testPassCount"] + metrics["testFailCount"])
        ours = arm_slice(result, "pass", prompt["provider"]).estimate.estimate
        assert ours == pytest.approx(passed, abs=1e-12)


def test_sets_are_checks_once_and_zero_weight_metrics_are_said() -> None:
    result = compare([LOGS / "promptfoo" / "v0.121.20-assertsets" / "results.json"],
                     metrics=("pass",))  # fmt: skip
    (report,) = result.imports
    assert "check.assert-set" in report.metrics
    assert not any(m.startswith("check.assertion") for m in report.metrics)
    issue = {i.kind: i for i in report.issues}["zero_weight_metric"]
    assert "Diagnostics" in issue.message and "verbosity" in issue.message
