"""Every file of the upstream corpus: what the harness projects keep in their own repositories.

tests/fixtures/logs/upstream/ holds log fixtures and example outputs copied from Inspect AI,
lm-evaluation-harness, promptfoo, HELM, OpenAI Evals and lighteval at recorded commits
(SOURCES.md), and EXPECTED.json the figures each file itself reports (read with plain json by
tools/fixtures/upstream/make_expected.py, never by evaldelta). Each file, and each folder
that is a tool's unit, is imported as ``evaldelta import auto`` would: it either imports,
with every figure the tool reports reproduced from our rows the way the tool aggregates
(``tools/fixtures/upstream/survey.py``'s comparers, loaded here so the two never drift), or
is refused in one line (an input error, exit 2). Nothing ends in an internal error. The few
figures no per-case row can reproduce are listed in :data:`NO_PER_CASE_VALUE` with the
import issue that says so.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pyarrow.parquet as pq
import pytest

from evaldelta.errors import EvaldeltaError
from evaldelta.sources import Source, import_rows

from ..conftest import ROOT

CORPUS = ROOT / "tests" / "fixtures" / "logs" / "upstream"
EXPECTED: dict[str, Any] = json.loads((CORPUS / "EXPECTED.json").read_text(encoding="utf-8"))


def _survey() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "upstream_survey", ROOT / "tools" / "fixtures" / "upstream" / "survey.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SURVEY = _survey()
UNITS = [(k, False) for k in sorted(EXPECTED)] + [(f, True) for f in SURVEY.FOLDERS]

# unit prefix -> (metrics the tool reports that no per-case row holds, the issue saying so)
NO_PER_CASE_VALUE = {
    # the header reports 4 samples' accuracy; the file keeps 1 sample, with no scores
    "inspect/tests/log/test_eval_log/log_tool_call_error.json": ({"includes.accuracy"},
                                                                 "no_scores"),
    # corpus-level metrics: each line holds a [gold, prediction] pair, not a score
    "lmeval/african_nlp_benchmarks/google__gemma-2b": (
        {"masakhaner_luo_prompt_1 f1,flexible-extract"}, "metric_not_a_number"),
    "lmeval/outputs/qwen3-8b/negotiationtom": (
        {"negotiationtom_intention micro_f1,none", "negotiationtom_intention macro_f1,none"},
        "metric_not_a_number"),
    # lm-eval's bypass metric: null on every line, a placeholder 999 in the results
    "lmeval/lm_eval/tasks/scheming_evals": ({"scheming_evals_mc_prompt_task bypass,none"},
                                            "no_scores"),
}  # fmt: skip


def _allowed(unit: str, metric: str) -> str | None:
    for prefix, (metrics, issue) in NO_PER_CASE_VALUE.items():
        if unit.startswith(prefix) and metric in metrics:
            return issue
    return None


@pytest.mark.parametrize(("rel", "is_dir"), UNITS, ids=[u for u, _ in UNITS])
def test_upstream_unit(tmp_path: Path, rel: str, is_dir: bool) -> None:
    out = tmp_path / "rows.parquet"
    try:
        result = import_rows([Source(CORPUS / rel)], out)
    except EvaldeltaError as exc:  # refused: one line, naming what it is
        assert "\n" not in str(exc), str(exc)
        assert EXPECTED.get(rel, {}).get("kind") != "per-case log" or _refusal_ok(rel, str(exc))
        return
    kind = "folder" if is_dir else EXPECTED.get(rel, {}).get("kind")
    stands_for_run = Path(rel).name in ("run_spec.json", "stats.json")  # HELM: its run folder
    assert kind != "not a log" or stands_for_run, f"{rel} is not a log, yet it imported"
    rows = pq.read_table(out).to_pylist()
    issues = {i.kind for r in result.reports for i in r.issues}
    for key, expected in SURVEY.expected_for(rel, is_dir, EXPECTED):
        compare = SURVEY.COMPARERS.get(str(expected.get("tool")))
        if compare is None:
            continue
        for figure in compare(key, expected, rows):
            if figure["state"] != "different":
                continue
            issue = _allowed(rel, figure["metric"])
            assert issue is not None, figure
            assert issue in issues, (figure, issues)


# per-case logs that hold nothing per case to compare: refused, saying why
REFUSED_LOGS = {
    "inspect/tests/analysis/test_logs/2025-05-12T20-28-13-04-00_no-samples.json": "without samples",
    "inspect/tests/test_eval_set/": "without samples",
    "openai_evals/evals/registry/data/self_prompting/oriprompt.log": "no event per sample",
}


def _refusal_ok(rel: str, message: str) -> bool:
    for prefix, needle in REFUSED_LOGS.items():
        if rel.startswith(prefix):
            return needle in message
    return False
