"""OpenAI Evals model-graded records: the score evals reports, and what it cannot give.

Expected figures are evals' own ``final_report`` as the real oaieval run wrote it (copied
into tests/fixtures/logs/openai_evals/v3.0.1.post1-modelgraded/MANIFEST.json by
tools/fixtures/openai_evals/make_modelgraded.sh).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from evaldelta.comparison import compare

from ..conftest import CliResult, one_line_error
from .helpers import LOGS, arm_slice

FOLDER = LOGS / "openai_evals" / "v3.0.1.post1-modelgraded"
RUNS = json.loads((FOLDER / "MANIFEST.json").read_text())["runs"]
YN = ["evaldelta-arith-judge__evaldelta_fn-a.jsonl", "evaldelta-arith-judge__evaldelta_fn-b.jsonl"]


def test_score_equals_evals_final_report() -> None:
    result = compare([FOLDER / name for name in YN])
    assert result.metrics[0].metric == "score"  # the choice is a label, not the default
    for name in YN:
        run = RUNS[name]
        arm = "+".join(run["completion_fns"])
        ours = arm_slice(result, "score", arm).estimate.estimate
        assert abs(ours - run["final_report"]["score"]) < 1e-12


def test_choice_is_a_label_column(run_cli: Callable[..., CliResult], tmp_path: Path) -> None:
    out = tmp_path / "rows.csv"
    assert run_cli("import", "auto", str(FOLDER / YN[0]), "-o", str(out)).code == 0
    header = out.read_text().splitlines()[0].split(",")
    assert "choice" in header
    result = compare([FOLDER / n for n in YN])
    assert "choice" not in {r for report in result.imports for r in report.metrics}


def test_interrupted_record_says_it_has_no_final_report(
    run_cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    path = FOLDER / "evaldelta-arith-judge__evaldelta_fn-a__interrupted.jsonl"
    result = run_cli("import", "auto", str(path), "-o", str(tmp_path / "o.csv"))
    assert result.code == 0
    assert "no final_report line" in result.out
    assert "samples with no match or metrics event" in result.out


def test_null_scores_are_counted(run_cli: Callable[..., CliResult], tmp_path: Path) -> None:
    path = FOLDER / "evaldelta-arith-judge-abc__evaldelta_fn-a.jsonl"
    result = run_cli("import", "auto", str(path), "-o", str(tmp_path / "o.csv"))
    assert result.code == 0
    assert "metrics values that are null" in result.out
    assert "every score in the log is empty (score)" in result.out


def test_spec_and_final_report_only(run_cli: Callable[..., CliResult]) -> None:
    path = LOGS / "upstream/openai_evals/evals/registry/data/self_prompting/oriprompt.log"
    one_line_error(run_cli("compare", str(path)), "spec and final_report", "no event per sample")
