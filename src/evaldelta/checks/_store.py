"""Score the stored attempts of a run and write the scores back into the run store.

``evaldelta score --checks checks.yaml --store PATH [--run ID]`` reads the run's attempts with
their case fields, scores them like any file (:func:`~evaldelta.checks._score.score_rows`),
and writes one ``scores`` row per (attempt, metric) plus one ``scorings`` row (checks file,
sha256, metric names, judges' pins, shuffle seed). The store's ``eval_rows`` view then has
the columns ``pass``, ``check.<id>``, ``reason.<id>``, ``judge_score[.<id>]`` and
``pairwise.<id>``. A run is scored by one checks file at a time: scoring it again replaces
every earlier score of that run (the caller says so). The attempts' own ``score`` stays the
runner's scorer, except for a run made with ``run --checks``, whose ``score`` is the overall
pass and so follows the new ``pass``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaldelta.checks._score import (
    CheckSet,
    ScoreResult,
    join_cases,
    metric_names,
    metric_values,
    missing_field,
    score_rows,
)
from evaldelta.errors import Location, MissingColumnError
from evaldelta.provider import Provider
from evaldelta.store import Store, resolve_run

__all__ = ["StoreScoring", "score_store"]


@dataclass(frozen=True)
class StoreScoring:
    """What ``score --store`` did: the run, the scored rows, and the scoring it replaced."""

    run_id: str
    result: ScoreResult
    metrics: tuple[str, ...]
    previous: Mapping[str, Any] | None


def score_store(
    path: str | Path,
    run: str | None,
    checks: CheckSet,
    *,
    provider: Provider | None = None,
    skip_judge: bool = False,
    seed: int = 0,
    cases: Sequence[Mapping[str, Any]] | None = None,
    cases_where: str = "--cases",
    close_provider: bool = False,
) -> StoreScoring:
    """Score run ``run`` (id, prefix, or None = newest) of the store at ``path`` in place."""
    run_id = resolve_run(path, run)
    with Store(path, read_only=True) as store:
        rows = store.rows(run_id)
        columns = next((r["case_columns"] for r in store.runs() if r["run_id"] == run_id), "[]")
    if cases is not None:
        rows = join_cases(rows, [dict(c) for c in cases], cases_where)
    have = [*json.loads(columns or "[]"), *(k for r in rows[:1] for k in r)]
    problem = missing_field(checks, list(dict.fromkeys(have)), not skip_judge)
    if problem is not None:
        raise MissingColumnError(
            f"{problem}, which the cases of run {run_id} lack (columns: "
            f"{', '.join(json.loads(columns or '[]'))}); add it to the cases or pass --cases FILE",
            Location(str(path)),
        )
    for r in rows:  # an attempt that ended in an error has no output to score
        if r.get("error") is not None:
            r["output"] = None
    result = score_rows(
        rows,
        checks,
        provider=provider,
        skip_judge=skip_judge,
        seed=seed,
        where=f"{path} (run {run_id})",
        close_provider=close_provider,
    )
    names = metric_names(checks, skip_judge=skip_judge)
    with Store(path) as store:
        previous = store.scoring(run_id)
        score_is_pass = bool(previous and previous.get("score_is_pass"))
        store.begin_scoring(
            run_id,
            source="score --store",
            checks_path=checks.path,
            checks_sha256=checks.sha256,
            metrics=names,
            meta=result.meta(),
            score_is_pass=score_is_pass,
            replace=True,
        )
        store.put_scores(
            run_id,
            [
                (str(r["arm"]), str(r["case_id"]), int(r["repeat"]), metric_values(r, names))
                for r in result.rows
            ],
        )
    return StoreScoring(run_id, result, names, previous)
