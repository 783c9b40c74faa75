"""``evaldelta cases add``: attempts from rows or a run store become regression cases.

Selection: the attempts of one release (``release``, the arm that failed); by default its
failing attempts (``score < pass_threshold`` on ``metric``), or the cases named (a case the
checks passed but a person found wrong is the point: the checks let it through). One entry
per case: its first failing attempt, else its first attempt. The case's input fields are
every column that is not part of the row format (arm, scores, output, cost, ...), so
``evaldelta run`` can replay the case (``evaldelta cases list --format jsonl``).
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaldelta.errors import BadValueError, Location, RegressionSetError, UsageError
from evaldelta.regression._file import (
    HEADER,
    SOURCE_KINDS,
    FieldValue,
    RegressionCase,
    RegressionSet,
    append_text,
    parse_set,
)

__all__ = ["AddResult", "Attempt", "add_cases", "add_from", "failing_attempts"]

# columns of the row format (DESIGN.md) and of a run store's eval_rows: not case inputs
ROW_COLUMNS = frozenset(
    {"case_id", "arm", "repeat", "score", "slice", "cluster", "critical", "tags", "cost_usd",
     "latency_ms", "input_tokens", "output_tokens", "model_used", "model_version", "model",
     "escalated", "output", "reference", "sample_weight", "run_id", "error", "calls_json",
     "finished_at", "verifier_json", "pass", "judge_score",
     # what the upstream change detector records per attempt (retrieved_ids is an input)
     "prompt_hash", "payload_hash", "retrieval_hash", "rendered_prompt", "request_payload"}
)  # fmt: skip
METRIC_PREFIXES = ("check.", "reason.", "judge_score.", "pairwise.")


@dataclass(frozen=True)
class Attempt:
    """One attempt picked to become a regression case (before it has an id)."""

    case_id: str
    slice: str
    release: str
    metric: str
    score: float | None
    output: str | None
    fields: Mapping[str, FieldValue]


@dataclass(frozen=True)
class AddResult:
    """What an add wrote: the set as it is now, and the new entries."""

    set: RegressionSet
    added: tuple[RegressionCase, ...]


def _score(value: Any, where: Location) -> float | None:
    """A score as the row seam reads one: blank is unlabeled; pass/fail, true/false, 0/1."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        out = float(value)
    else:
        word = str(value).strip().lower()
        named = {"true": 1.0, "pass": 1.0, "yes": 1.0, "false": 0.0, "fail": 0.0, "no": 0.0}
        if word in named:
            return named[word]
        try:
            out = float(word)
        except ValueError:
            raise BadValueError(
                "a score must be a number, pass/fail or true/false", where
            ) from None
    if not math.isfinite(out):
        raise BadValueError("a score must be a finite number", where)
    return out


def _field(value: Any) -> FieldValue | None:
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    return json.dumps(value, ensure_ascii=False, default=str)  # lists, structs: JSON text


def _fields(row: Mapping[str, Any], by: str) -> dict[str, FieldValue]:
    out = {}
    for name, value in row.items():
        if name in ROW_COLUMNS or name == by or name.startswith(METRIC_PREFIXES):
            continue
        kept = _field(value)
        if kept is not None:
            out[name] = kept
    return out


def _release(rows: Sequence[Mapping[str, Any]], release: str | None, where: str) -> str:
    arms = list(dict.fromkeys(str(r.get("arm") or "") for r in rows))
    if release is not None:
        if release not in arms:
            raise UsageError(f"arm {release!r} is not in {where} (arms: {', '.join(arms)})")
        return release
    if len(arms) == 1:
        return arms[0]
    raise UsageError(
        f"{where} holds arms {', '.join(arms)}: name the release that failed with --release ARM"
    )


def failing_attempts(
    rows: Sequence[Mapping[str, Any]],
    where: str,
    *,
    release: str | None = None,
    case_ids: Sequence[str] = (),
    metric: str = "score",
    pass_threshold: float = 1.0,
    by: str = "slice",
) -> list[Attempt]:
    """The attempts to add: ``case_ids``' attempts, else every failing one, of ``release``.

    A case contributes once: its first failing attempt (by repeat), else its first. Raises
    :class:`UsageError` for an unknown arm or case, no metric column, or nothing to add.
    """
    if not rows:
        raise UsageError(f"{where} has no rows")
    arm = _release(rows, release, where)
    mine = [r for r in rows if str(r.get("arm") or "") == arm]
    if not any(metric in r for r in mine):
        raise UsageError(f"{where} has no {metric!r} column (give --metric NAME)")
    per_case: dict[str, list[tuple[int, float | None, Mapping[str, Any]]]] = {}
    for index, row in enumerate(mine):
        case_id = str(row.get("case_id"))
        spot = Location(where, None, metric, row.get(metric))
        score = _score(row.get(metric), spot)
        repeat = int(row.get("repeat") or 0)
        per_case.setdefault(case_id, []).append((repeat * 10**9 + index, score, row))
    wanted = list(dict.fromkeys(case_ids))
    for case_id in wanted:
        if case_id not in per_case:
            raise UsageError(f"case {case_id!r} has no attempt of arm {arm!r} in {where}")
    if not wanted:
        wanted = [
            c
            for c, tries in per_case.items()
            if any(_fails(s, pass_threshold) for _, s, _ in tries)
        ]
        if not wanted:
            raise UsageError(
                f"no attempt of arm {arm!r} in {where} fails ({metric} < {pass_threshold:g}); "
                "name the cases a person found wrong with --case ID"
            )
    out = []
    for case_id in wanted:
        tries = sorted(per_case[case_id], key=lambda t: t[0])
        failing = [t for t in tries if _fails(t[1], pass_threshold)]
        _, score, row = (failing or tries)[0]
        output = row.get("output")
        out.append(
            Attempt(
                case_id=case_id,
                slice=str(row.get(by) or "all"),
                release=arm,
                metric=metric,
                score=score,
                output=None if output is None else str(output),
                fields=_fields(row, by),
            )
        )
    return out


def _fails(score: float | None, threshold: float) -> bool:
    return score is not None and score < threshold


@dataclass(frozen=True)
class _Entry:
    reason: str
    source: str
    source_kind: str
    found_by: str
    added_at: str


def add_cases(
    set_path: str | Path,
    attempts: Sequence[Attempt],
    *,
    reason: str,
    source: str,
    found_by: str,
    source_kind: str = "incident",
    added_at: _dt.date | None = None,
) -> AddResult:
    """Append ``attempts`` to the set at ``set_path`` (created when absent) as one revision.

    Refuses, adding nothing, when a case is already in the set from the same source. The
    file is replaced atomically (a temporary file renamed over it).
    """
    entry = _entry(reason, source, found_by, source_kind, added_at)
    path = Path(set_path)
    text = path.read_text(encoding="utf-8") if path.exists() else None
    current = parse_set(HEADER if text is None else text, str(path))
    for attempt in attempts:
        known = current.find(attempt.case_id, entry.source)
        if known is not None:
            raise RegressionSetError(
                f"case {attempt.case_id} from {entry.source} is already {known.id} (added "
                f"{known.added_at} by {known.found_by}); nothing was added",
                Location(str(path)),
            )
    if len({a.case_id for a in attempts}) != len(attempts):
        raise UsageError("a case is named twice; each case is added once")
    revision, number = current.revision + 1, current.next_number()
    new = [
        RegressionCase(
            id=f"R-{number + i:04d}",
            case_id=a.case_id,
            slice=a.slice,
            reason=entry.reason,
            source=entry.source,
            found_by=entry.found_by,
            added_at=entry.added_at,
            revision=revision,
            failed_release=a.release,
            source_kind=entry.source_kind,
            metric=a.metric,
            score=a.score,
            output=a.output,
            fields=dict(a.fields),
        )
        for i, a in enumerate(attempts)
    ]
    out = append_text(text, new, str(path))
    _write_atomic(path, out)
    return AddResult(parse_set(out, str(path)), tuple(new))


def _entry(reason: str, source: str, found_by: str, kind: str, added_at: _dt.date | None) -> _Entry:
    for name, value in (("--reason", reason), ("--source", source), ("--found-by", found_by)):
        if not value or not value.strip():
            raise UsageError(f"{name} must not be empty")
    if kind not in SOURCE_KINDS:
        raise UsageError(f"--source-kind must be one of {', '.join(SOURCE_KINDS)}, not {kind!r}")
    day = added_at or _dt.date.today()
    return _Entry(reason.strip(), source.strip(), kind, found_by.strip(), day.isoformat())


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def add_from(
    source: Any,
    set_path: str | Path,
    *,
    reason: str,
    source_ref: str,
    found_by: str,
    source_kind: str = "incident",
    release: str | None = None,
    case_ids: Sequence[str] = (),
    metric: str = "score",
    pass_threshold: float = 1.0,
    by: str = "slice",
    added_at: _dt.date | None = None,
) -> AddResult:
    """Read a rows file or run store (a :class:`~evaldelta.sources.Source`) and add cases."""
    from evaldelta.sources import read_records

    rows = read_records(source)
    where = str(source.path)
    attempts = failing_attempts(
        rows,
        where,
        release=release,
        case_ids=case_ids,
        metric=metric,
        pass_threshold=pass_threshold,
        by=by,
    )
    return add_cases(
        set_path,
        attempts,
        reason=reason,
        source=source_ref,
        found_by=found_by,
        source_kind=source_kind,
        added_at=added_at,
    )
