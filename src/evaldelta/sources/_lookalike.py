"""What a file that is neither our rows nor a log we read looks like, in the reader's words.

A tidy file that lacks ``case_id`` (or that DuckDB cannot read at all) is often something
else a harness keeps beside its logs: an Inspect AI dataset, a HELM ``run_spec.json``, an
lm-eval aggregate results file, a Git LFS pointer standing in for the real file. The tidy
reader is the fallback of detection, so these reach it; :func:`describe` recognizes them from
their first bytes and name, and the error says what the file is and what to point at
instead, rather than only which column is missing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

__all__ = ["describe", "lfs_pointer"]

_HEAD = 65536
_KEY = re.compile(rb'"([A-Za-z_][\w.-]{0,40})"\s*:')
_LFS = re.compile(rb"^version https://git-lfs\.github\.com/spec/v\d+\s*\n")
_HELM_RUN_FILES = {
    "run_spec.json": "HELM run_spec.json",
    "stats.json": "HELM stats.json (HELM's aggregate figures)",
    "scenario.json": "HELM scenario.json",
    "scenario_state.json": "HELM scenario_state.json",
    "instances.json": "HELM instances.json",
    "display_predictions.json": "HELM display_predictions.json",
    "display_requests.json": "HELM display_requests.json",
    "costs.json": "HELM costs.json",
    "summary.json": "HELM summary.json",
    "run_specs.json": "HELM run_specs.json",
    "runs_to_run_suites.json": "HELM runs_to_run_suites.json",
    "groups.json": "HELM groups.json",
    "schema.json": "HELM schema.json",
    "runs.json": "HELM runs.json",
}


def _keys(head: bytes) -> set[str]:
    """The object keys quoted in the first bytes (cheap: no parse, good enough to recognize)."""
    return {m.decode("utf-8", "replace") for m in _KEY.findall(head)}


def lfs_pointer(head: bytes) -> bool:
    """True when a file's first bytes are a Git LFS pointer's (``version https://git-lfs...``)."""
    return bool(_LFS.match(head))


def _helm(path: Path, head: bytes, keys: set[str]) -> str | None:
    what = _HELM_RUN_FILES.get(path.name)
    if what is None or not keys:
        return None
    if (path.parent / "per_instance_stats.json").is_file():
        return f"is {what}, not a per-case log: point at its run folder ({path.parent})"
    return (
        f"is {what}, not a per-case log: evaldelta reads a HELM run folder holding "
        "per_instance_stats.json (with run_spec.json beside it)"
    )


def _lmeval_aggregate(path: Path, head: bytes, keys: set[str]) -> str | None:
    if "results" in keys and ({"versions", "config", "n-shot", "configs"} & keys):
        return (
            "is an lm-eval results file (aggregate figures, no per-case rows): run lm-eval "
            "with --log_samples and point at the samples_<task>_<date>.jsonl files or their "
            "run folder"
        )
    return None


def _inspect_dataset(path: Path, head: bytes, keys: set[str]) -> str | None:
    if "input" in keys and ({"target", "choices"} & keys) and "scores" not in keys:
        return (
            "looks like an Inspect AI dataset (samples with input and target), not an eval "
            "log: run the task (inspect eval) and point at the log it writes"
        )
    return None


def _inspect_events(path: Path, head: bytes, keys: set[str]) -> str | None:
    if "event" in keys and ({"timestamp", "working_start", "span_id"} & keys):
        return "looks like Inspect AI events (a transcript), not an eval log with samples"
    return None


def _promptfoo_config(path: Path, head: bytes, keys: set[str]) -> str | None:
    if {"prompts", "providers"} <= keys or ({"tests", "providers"} <= keys):
        return (
            "looks like a promptfoo config or its test data, not results: run promptfoo "
            "eval -o results.json and point at that file"
        )
    return None


def _oai_evals_samples(path: Path, head: bytes, keys: set[str]) -> str | None:
    if "ideal" in keys and "input" in keys:
        return (
            "looks like an OpenAI Evals samples file (input and ideal), not a record log: "
            "run oaieval with --record_path and point at the record it writes"
        )
    return None


_RECOGNIZERS: tuple[Callable[[Path, bytes, set[str]], str | None], ...] = (
    _helm,
    _lmeval_aggregate,
    _inspect_events,
    _inspect_dataset,
    _promptfoo_config,
    _oai_evals_samples,
)


def describe(path: Path) -> str | None:
    """What ``path`` looks like when it is a harness's non-log file, in one clause; else None."""
    try:
        with path.open("rb") as fh:
            head = fh.read(_HEAD)
    except OSError:
        return None
    keys = _keys(head)
    for recognize in _RECOGNIZERS:
        found = recognize(path, head, keys)
        if found is not None:
            return found
    return None
