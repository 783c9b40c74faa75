"""promptfoo results written by the real promptfoo CLI (0.121.20, --repeat 2).

References: promptfoo's own per-(provider, prompt) counts in ``results.prompts[].metrics``
(recorded in MANIFEST.json by tools/fixtures/promptfoo/make_fixtures.sh), and per slice the
statuses promptfoo itself wrote to results.csv from the same run.
"""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from evaldelta.comparison import compare
from evaldelta.sources import ReadOptions, Source, detect, import_rows, open_sources

from ..conftest import one_line_error
from .helpers import LOGS, arm_slice, manifest

HERE = LOGS / "promptfoo" / "v0.121.20"
RESULTS, LINES, CSV = HERE / "results.json", HERE / "results.jsonl", HERE / "results.csv"


def _reported() -> dict[str, dict]:  # type: ignore[type-arg]
    prompts = manifest("promptfoo", "v0.121.20")["files"]["results.json"]["prompts"]
    return {f"{p['provider']} / {p['label']}": p["metrics"] for p in prompts}


def _rows(path: Path, tmp_path: Path) -> list[dict]:  # type: ignore[type-arg]
    out = tmp_path / f"{path.name}.parquet"
    import_rows([Source(path)], out)
    return pq.read_table(out).to_pylist()


def test_both_outputs_are_recognized_and_agree(tmp_path: Path) -> None:
    assert detect(RESULTS) == detect(LINES) == "promptfoo"
    key = ("arm", "case_id", "repeat", "pass", "score", "accuracy", "check.icontains")
    a = sorted(tuple(r.get(k) for k in key) for r in _rows(RESULTS, tmp_path))
    b = sorted(tuple(r.get(k) for k in key) for r in _rows(LINES, tmp_path))
    assert a == b and len(a) == 64


def test_counts_per_arm_equal_promptfoos_own(tmp_path: Path) -> None:
    rows = _rows(RESULTS, tmp_path)
    for arm, metrics in _reported().items():
        mine = [r for r in rows if r["arm"] == arm]
        assert sum(r["pass"] == 1.0 for r in mine) == metrics["testPassCount"]
        assert sum(r["pass"] == 0.0 for r in mine) == metrics["testFailCount"]
        assert sum(r["error"] is not None for r in mine) == metrics["testErrorCount"]
        scored = [r["score"] for r in mine if r["score"] is not None]
        assert sum(scored) == pytest.approx(metrics["score"])  # promptfoo sums row scores
        assert sum(r["cost_usd"] for r in mine) == pytest.approx(metrics["cost"])
        # named scores: promptfoo sums them over rows; verbosity (weight 0 only) it reports
        # as 0, where evaldelta keeps what the assertion measured
        for name, total in metrics["namedScores"].items():
            if name != "verbosity":
                assert sum(r[name] for r in mine if r[name] is not None) == pytest.approx(total)
        assert metrics["namedScores"]["verbosity"] == 0
        assert any(r["verbosity"] for r in mine if r["verbosity"] is not None)


def test_pass_rates_per_arm_and_per_topic_equal_promptfoos(tmp_path: Path) -> None:
    result = compare([RESULTS], metrics=["pass"], by=["vars.topic"])
    assert result.baseline == "model-a / terse"  # the config's first provider and prompt
    for arm, metrics in _reported().items():
        ours = arm_slice(result, "pass", arm)
        judged = metrics["testPassCount"] + metrics["testFailCount"]
        assert ours.attempt_mean == pytest.approx(metrics["testPassCount"] / judged)
        assert ours.attempts == judged + metrics["testErrorCount"]
    # per slice, from promptfoo's own CSV: one row per (test, repeat), a status per arm
    table = list(csv.reader(io.StringIO(CSV.read_text(), newline="")))
    header = table[0]
    status: dict[tuple[str, str], list[float]] = defaultdict(list)
    topic_of: dict[str, str] = {}
    for row in table[1:]:
        topic_of[row[0]] = row[header.index("topic")]
        for i, name in enumerate(header):
            if name.startswith("["):
                arm = name.replace("[", "").replace("] ", " / ")
                if row[i + 1] != "ERROR":
                    status[(arm, row[0])].append(1.0 if row[i + 1] == "PASS" else 0.0)
    for arm in _reported():
        per_topic: dict[str, list[float]] = defaultdict(list)
        for (a, case), values in status.items():
            if a == arm:
                per_topic[topic_of[case]].append(sum(values) / len(values))
        for topic, means in per_topic.items():
            ours = arm_slice(result, "pass", arm, topic)
            assert ours.estimate.estimate == pytest.approx(sum(means) / len(means))


def test_repeats_are_numbered_and_reported() -> None:
    _, (opened,) = open_sources([Source(RESULTS)])
    (report,) = opened.reports
    issues = {i.kind: i for i in report.issues}
    assert issues["numbered_repeats"].count == 32  # 64 rows, two repeats each
    assert issues["errored_result"].count == 4
    assert issues["zero_weight_metric"].count == 1
    assert report.default_metrics == ("pass",)
    pins = opened.pins["model-b / verbose"]
    assert pins["model"] == "file://provider.js" and pins["template.label"] == "verbose"


def test_a_case_key_from_vars(tmp_path: Path) -> None:
    out = tmp_path / "o.parquet"
    import_rows([Source(RESULTS)], out, ReadOptions(case_key="vars.case"))
    assert {r["case_id"] for r in pq.read_table(out).to_pylist()} == {f"c0{i}" for i in range(1, 9)}


def test_tests_sharing_a_description_are_refused(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    lines = LINES.read_text().splitlines()
    first = json.loads(lines[0])
    other = next(json.loads(x) for x in lines if json.loads(x)["vars"] != first["vars"])
    other["testCase"]["description"] = first["testCase"]["description"]
    bad = tmp_path / "clash.jsonl"
    bad.write_text(lines[0] + "\n" + json.dumps(other) + "\n")
    one_line_error(run_cli("compare", bad), "share the description", "--case-key")


def test_a_truncated_results_file_is_one_line(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "results.json"
    bad.write_bytes(RESULTS.read_bytes()[:40_000])
    one_line_error(run_cli("compare", bad), str(bad), "truncated")
