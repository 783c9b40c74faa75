"""Inspect AI samples -> attempt rows (the sample half of :mod:`.inspect`).

The mapping of a sample's fields is tabled in :mod:`evaldelta.sources.importers.inspect`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from evaldelta.errors import BadValueError, Location, UsageError
from evaldelta.sources._report import ReportBuilder
from evaldelta.sources._rowfile import RowWriter
from evaldelta.sources.importers._common import scalar_text, upstream_columns

if TYPE_CHECKING:
    from evaldelta.sources.importers.inspect import _Log

__all__ = ["score_value"]

_LETTERS = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}
_VALUE_ISSUES = {
    "none": "score values that are None (a dict score's missing member): counted as 0, as "
    "Inspect's value_to_float counts them",
    "unmapped": "score values that are not C/P/I/N, a number or yes/no/true/false: counted "
    "as 0, as Inspect's value_to_float counts them (it warns)",
    "unscored": "score values that are NaN, Inspect's unscored sentinel: left unscored, as "
    "Inspect leaves them out of its metrics",
    "not_finite": "score values that are infinite: left unscored (no rate or mean can hold them)",
}
_WORDS = {"yes": 1.0, "true": 1.0, "no": 0.0, "false": 0.0}


ScoreKind = Literal["ok", "unscored", "none", "unmapped", "not_finite"]


def score_value(value: Any) -> tuple[float | None, ScoreKind]:
    """An Inspect score value as a float, and how it was mapped.

    Inspect's ``value_to_float`` (``inspect_ai/scorer/_metric.py``, the same rules from
    0.3.160 to 0.3.285): numbers and booleans are themselves; the letters C, P, I, N are 1,
    0.5, 0 and 0; ``yes``/``true`` are 1 and ``no``/``false`` 0 (any case); text holding
    a finite number is that number; anything else, ``None`` (a dict score's missing member)
    among it, Inspect counts as 0 with a warning: so does this (``"none"`` or
    ``"unmapped"``, which the importer reports with a count and examples). NaN is Inspect's
    unscored sentinel (``Score.unscored()``), left out of its metrics and reducers: it is
    unscored here too (``"unscored"``); an infinity is refused by the comparison, so it is
    unscored and reported (``"not_finite"``).
    """
    if isinstance(value, bool):
        return float(value), "ok"
    if isinstance(value, int | float):
        number = float(value)
        if math.isnan(number):
            return None, "unscored"
        return (number, "ok") if math.isfinite(number) else (None, "not_finite")
    if value is None:
        return 0.0, "none"
    if isinstance(value, str):
        if value in _LETTERS:
            return _LETTERS[value], "ok"
        text = value.lower()
        if text in _WORDS:
            return _WORDS[text], "ok"
        try:
            number = float(text)
        except ValueError:
            return 0.0, "unmapped"
        return (number, "ok") if math.isfinite(number) else (0.0, "unmapped")
    return 0.0, "unmapped"


class _SampleRows:
    """Turns one log's samples into attempt rows."""

    def __init__(
        self,
        log: _Log,
        arm: str,
        prefix: str,
        case_key: str | None,
        builder: ReportBuilder,
        writer: RowWriter,
    ) -> None:
        self.log, self.arm, self.prefix = log, arm, prefix
        self.case_key = case_key
        self.builder, self.writer = builder, writer
        self.first_metric: str | None = None
        self.seen: set[tuple[str, int]] = set()
        self.first_epoch: dict[str, tuple[str, int]] = {}
        self.order = [
            str(s["name"])
            for s in log.spec.get("scorers") or []
            if isinstance(s, dict) and s.get("name")
        ]
        self.ordered = set(self.order)
        self.columns: set[str] = set()
        # each (case, column)'s (epoch, value)s, kept to check a reducer against the log's
        # own reductions (only when the log has several epochs)
        self.keep_values = log.epochs > 1
        self.values: dict[tuple[str, str], list[tuple[int, float | None, Any]]] = {}
        if case_key is not None and case_key != "id" and not case_key.startswith("metadata."):
            raise UsageError(
                f"--case-key for Inspect logs is id or metadata.FIELD, not {case_key!r}"
            )

    def run(self, on_demand: bool) -> bool:
        """Write the log's rows; True when some came from the summaries (without outputs).

        With ``on_demand``, the summaries give every sample they cover; any sample member
        they do not cover (a log whose summaries lag behind) is read in full.
        """
        seen = 0
        covered: set[tuple[str, int]] = set()
        if on_demand:
            for where, summary in self.log.summaries():
                self.writer.add(self._row(where, summary))
                covered.add((str(summary["id"]), summary["epoch"]))
                seen += 1
        for where, sample in self.log.samples(skip=covered):
            self.writer.add(self._row(where, sample))
            seen += 1
        expected = self.log.expected()
        if self.log.status != "success":
            self.builder.issue(
                "log_status",
                f"logs whose run did not finish (status {self.log.status!r}); their samples "
                "are read as they stand",
                self.log.path.name,
            )
        if expected is not None and seen < expected:
            self.builder.issue(
                "missing_samples",
                "samples the log's dataset and epochs promise but the log does not hold",
                f"{self.log.path.name}: {seen} of {expected}",
                count=expected - seen,
            )
        return bool(covered)

    def _case_id(self, sample: dict[str, Any], where: str) -> str:
        if self.case_key and self.case_key.startswith("metadata."):
            value: Any = sample.get("metadata") or {}
            for part in self.case_key.split(".")[1:]:
                value = value.get(part) if isinstance(value, dict) else None
            if value is None or str(value).strip() == "":
                raise BadValueError(
                    f"sample has no {self.case_key} (--case-key)",
                    Location(f"{self.log.path} ({where})", None, self.case_key),
                )
            return self.prefix + str(value)
        sid = sample.get("id")
        if sid is None or str(sid).strip() == "":
            raise BadValueError(
                "sample has no id", Location(f"{self.log.path} ({where})", None, "id")
            )
        return self.prefix + str(sid)

    def _row(self, where: str, sample: dict[str, Any]) -> dict[str, Any]:
        epoch = sample.get("epoch")
        if not isinstance(epoch, int) or isinstance(epoch, bool) or epoch < 1:
            raise BadValueError(
                "epoch is not a positive integer",
                Location(f"{self.log.path} ({where})", None, "epoch", epoch),
            )
        case_id = self._case_id(sample, where)
        if (case_id, epoch) in self.seen:
            raise BadValueError(
                f"two samples have case id {case_id!r} in epoch {epoch}"
                + (f" (--case-key {self.case_key} must name a field unique per sample)"
                   if self.case_key else ""),
                Location(f"{self.log.path} ({where})", None, self.case_key or "id", case_id),
            )  # fmt: skip
        self.seen.add((case_id, epoch))
        first = self.first_epoch.get(case_id)
        if first is None or epoch < first[1]:
            self.first_epoch[case_id] = (str(sample.get("id")), epoch)
        row: dict[str, Any] = {
            "case_id": case_id,
            "arm": self.arm,
            "repeat": epoch - 1,
            "epoch": epoch,
            "task": self.log.task,
            "_where": f"sample {sample.get('id')!r} epoch {epoch}, {where}",
        }
        scores = sample.get("scores")
        if scores:
            self._scores(scores, row, case_id, epoch)
        label = f"{case_id} epoch {epoch}"
        _metadata(sample.get("metadata"), row)
        output = sample.get("output") or {}
        if isinstance(output, dict) and isinstance(output.get("completion"), str):
            row["output"] = output["completion"]
        _usage(sample.get("model_usage"), row)
        row.update(upstream_columns(_prompt(sample)))
        if isinstance(sample.get("total_time"), int | float):
            row["latency_ms"] = float(sample["total_time"]) * 1000.0
        limit = sample.get("limit")
        kind = limit.get("type") if isinstance(limit, dict) else limit  # a summary: the type
        if isinstance(kind, str) and kind:
            limit = {"type": kind}
            row["limit"] = kind
            self.builder.issue(
                f"limit_{limit['type']}",
                f"samples that hit a limit ({limit['type']}): kept, scored as Inspect scored them",
                label,
                note=True,
            )
        error = sample.get("error")
        message = error.get("message") if isinstance(error, dict) else error  # summary: text
        if isinstance(message, str) and message:
            row["error"] = (message.splitlines() or [message])[0][:500]
            cancelled = message.startswith("CancelledError")
            self.builder.issue(
                "cancelled_sample" if cancelled else "errored_sample",
                ("cancelled samples" if cancelled else "errored samples")
                + " (no score: left out of the rates, as Inspect leaves them out)",
                label,
            )
        return row

    def _scores(
        self, scores: Mapping[str, Any], row: dict[str, Any], case: str, epoch: int
    ) -> None:
        """One column per scorer (in the header's order), one per key of a dict value."""
        for name in self.order:
            if name in scores:
                self._score(name, scores[name], row, case, epoch)
        for name in scores:
            if name not in self.ordered:
                self._score(str(name), scores[name], row, case, epoch)

    def _score(self, name: str, score: Any, row: dict[str, Any], case: str, epoch: int) -> None:
        value = score.get("value") if isinstance(score, dict) else score
        if isinstance(value, dict):
            for key, item in value.items():
                self._metric(f"{name}.{key}", item, row, case, epoch)
        elif isinstance(value, list):  # one column per position, as Inspect's metrics take them
            for index, item in enumerate(value):
                self._metric(f"{name}.{index}", item, row, case, epoch)
        else:
            self._metric(name, value, row, case, epoch)

    def _metric(self, column: str, value: Any, row: dict[str, Any], case: str, epoch: int) -> None:
        if column not in self.columns:
            self.columns.add(column)
            self.writer.metric(column)
            self.first_metric = self.first_metric or column
        number, kind = score_value(value)
        if kind != "ok":
            message = _VALUE_ISSUES[kind]
            self.builder.issue(
                f"score_{kind}", message, f"{case} epoch {epoch} {column}={str(value)[:40]!r}"
            )
        row[column] = number
        if isinstance(value, str):  # as Inspect wrote it: its mode reducer counts I and N apart
            row[f"raw.{column}"] = value
        if self.keep_values:
            tie = value if isinstance(value, str) else number
            self.values.setdefault((case, column), []).append((epoch, number, tie))


def _metadata(metadata: Any, row: dict[str, Any], prefix: str = "metadata.") -> None:
    if not isinstance(metadata, dict):
        return
    for key, value in metadata.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            _metadata(value, row, f"{name}.")
        else:
            row[name] = scalar_text(value)


def _usage(usage: Any, row: dict[str, Any]) -> None:
    if not isinstance(usage, dict) or not usage:
        return
    totals = {"input_tokens": 0, "output_tokens": 0}
    cost = 0.0
    has_cost = False
    for item in usage.values():
        if not isinstance(item, dict):
            continue
        for key in totals:
            if isinstance(item.get(key), int):
                totals[key] += int(item[key])
        if isinstance(item.get("total_cost"), int | float):
            cost += float(item["total_cost"])
            has_cost = True
    row.update(totals)
    if has_cost:
        row["cost_usd"] = cost


def _prompt(sample: Mapping[str, Any]) -> Any:
    """What the model was first asked: the messages before its first reply, else the input.

    A sample summary (read on demand from a ``.eval`` log) holds no messages and a thinned
    input, so it gives none: its hash would not be the prompt's.
    """
    messages = sample.get("messages")
    if not isinstance(messages, list):
        return None
    asked = []
    for message in messages:
        if not isinstance(message, Mapping) or message.get("role") == "assistant":
            break
        asked.append(message)
    if asked:
        return asked
    given = sample.get("input")
    return given if isinstance(given, str | list) else None
