"""Files that are not per-case logs: refused in one line that says what they are, never exit 70.

The tidy reader is detection's fallback, so a harness's other files (datasets, aggregate
results, run specs, LFS pointers) reach it; ``import`` used to group their rows by a
``case_id`` they do not have and crash. Each case runs ``import auto``, ``import tidy`` and
``compare`` through the real entry point.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from ..conftest import CliResult, one_line_error
from .helpers import LOGS

INSPECT_JSON = sorted((LOGS / "inspect" / "v0.3.285" / "json").glob("*model-a*.json"))[0]

NOT_LOGS: dict[str, tuple[str, str]] = {
    # file name: (content, what the message must say)
    "dataset.jsonl": (
        '{"input": "What is 2+2?", "target": "4", "id": "q1"}\n'
        '{"input": "Capital of France?", "target": "Paris", "id": "q2"}\n',
        "Inspect AI dataset",
    ),
    "lmeval-res.json": (
        json.dumps({"results": {"arc_easy": {"acc": 0.25}}, "versions": {"arc_easy": 0}}),
        "lm-eval results file",
    ),
    "samples.jsonl": (
        '{"input": [{"role": "user", "content": "2+2"}], "ideal": "4"}\n',
        "OpenAI Evals samples file",
    ),
    "promptfooconfig.json": (
        json.dumps({"prompts": ["{{q}}"], "providers": ["echo"], "tests": [{"vars": {"q": 1}}]}),
        "promptfoo config",
    ),
    "events.json": (
        json.dumps([{"event": "model", "timestamp": "2026-01-01T00:00:00", "span_id": "a"}]),
        "Inspect AI events",
    ),
    "plain.csv": ("a,b\n1,2\n", "required column 'case_id' is missing"),
}


@pytest.mark.parametrize("name", sorted(NOT_LOGS))
@pytest.mark.parametrize("command", ["import auto", "import tidy", "compare"])
def test_not_a_log_is_one_line(
    tmp_path: Path, run_cli: Callable[..., CliResult], name: str, command: str
) -> None:
    content, needle = NOT_LOGS[name]
    path = tmp_path / name
    path.write_text(content)
    args = [*command.split(), str(path)]
    if command.startswith("import"):
        args += ["-o", str(tmp_path / "out.parquet")]
    result = run_cli(*args)
    one_line_error(result, needle, name)
    assert not (tmp_path / "out.parquet").exists()


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".eval", ".jsonl"])
def test_git_lfs_pointer(tmp_path: Path, run_cli: Callable[..., CliResult], suffix: str) -> None:
    path = tmp_path / f"rows{suffix}"
    path.write_text(
        "version https://git-lfs.github.com/spec/v1\n"
        "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
        "size 12345\n"
    )
    one_line_error(run_cli("compare", str(path)), "Git LFS pointer", path.name)


def test_helm_file_outside_a_run_folder(tmp_path: Path, run_cli: Callable[..., CliResult]) -> None:
    path = tmp_path / "run_spec.json"
    path.write_text(json.dumps({"name": "x", "adapter_spec": {"model": "m"}, "metric_specs": []}))
    result = run_cli("import", "tidy", str(path), "-o", str(tmp_path / "o.parquet"))
    one_line_error(result, "HELM run_spec.json", "not a per-case log")


def _unscored_log(tmp_path: Path, scores: object) -> Path:
    log = json.loads(INSPECT_JSON.read_text())
    for sample in log["samples"]:
        sample.pop("error", None)
    for sample in log["samples"]:
        if scores is None:
            sample.pop("scores", None)
        else:
            sample["scores"] = scores
    if scores is None:
        log.pop("results", None)
        log["eval"]["scorers"] = []
    path = tmp_path / "log.json"
    path.write_text(json.dumps(log))
    return path


def test_log_without_scorer_says_so(tmp_path: Path, run_cli: Callable[..., CliResult]) -> None:
    path = _unscored_log(tmp_path, None)
    imported = run_cli("import", "auto", str(path), "-o", str(tmp_path / "o.parquet"))
    assert imported.code == 0
    assert "the log holds no scores: its task has no scorer" in imported.out
    compared = run_cli("compare", str(path))
    one_line_error(compared, "no scorer", "inspect score")
    assert "_where" not in compared.err and "_line" not in compared.err
    strict = run_cli("import", "auto", str(path), "--strict", "-o", str(tmp_path / "s.parquet"))
    one_line_error(strict, "no scores")


def test_log_with_every_score_empty_says_so(
    tmp_path: Path, run_cli: Callable[..., CliResult]
) -> None:
    path = _unscored_log(tmp_path, {"match": {"value": float("nan")}})  # Inspect: unscored
    imported = run_cli("import", "auto", str(path), "-o", str(tmp_path / "o.parquet"))
    assert imported.code == 0
    assert "every score in the log is empty (match)" in imported.out


def test_missing_column_never_names_internal_columns(
    tmp_path: Path, run_cli: Callable[..., CliResult]
) -> None:
    result = run_cli("compare", str(INSPECT_JSON), "--metric", "nosuch")
    one_line_error(result, "nosuch")
    assert "_where" not in result.err


def test_header_fields_of_the_wrong_type(tmp_path: Path, run_cli: Callable[..., CliResult]) -> None:
    """An Inspect header whose results, plan, config or dataset are not objects still reads."""
    log = json.loads(INSPECT_JSON.read_text())
    log["results"], log["plan"] = "oops", [1]
    log["eval"]["config"], log["eval"]["dataset"], log["eval"]["scorers"] = "x", 3, "y"
    path = tmp_path / "log.json"
    path.write_text(json.dumps(log))
    result = run_cli("import", "auto", str(path), "-o", str(tmp_path / "o.csv"))
    assert result.code == 0, result.err


def test_a_flat_document_too_large_to_parse(
    tmp_path: Path, run_cli: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A HELM file of a million empty objects would take far more memory than its bytes."""
    import evaldelta.sources.importers._json as bounded

    monkeypatch.setattr(bounded, "MAX_PARSED_BYTES", 64 * 1024 * 1024)
    run = tmp_path / "run"
    run.mkdir()
    (run / "run_spec.json").write_text(json.dumps({"adapter_spec": {"model": "m"}}))
    (run / "per_instance_stats.json").write_text("[" + ",".join(["{}"] * 1_000_000) + "]")
    one_line_error(run_cli("compare", str(run)), "once parsed", "per_instance_stats.json")


def test_a_long_value_is_cut_in_the_message(
    tmp_path: Path, run_cli: Callable[..., CliResult]
) -> None:
    path = tmp_path / "rows.csv"
    path.write_text("case_id,arm,score\nc1,a," + "x" * 5000 + "\nc1,b,1\n")
    result = run_cli("compare", str(path))
    one_line_error(result, "5,002 characters")
    assert len(result.err) < 600
