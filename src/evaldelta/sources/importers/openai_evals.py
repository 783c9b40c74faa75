"""OpenAI Evals: ``oaieval --record_path`` JSONL event logs, and Evals API output items.

Learned from the ``evals`` package's recorder (``evals/record.py``: the ``spec`` line, the
``final_report`` line, one line per event) and ``evals/elsuite/basic/match.py``; and from
the openai SDK's ``openai/types/evals/runs/output_item_list_response.py`` for the API.

**Event log** (one run of one completion function on one eval):

==================  =============================================================
arm                 ``spec.completion_fns`` (joined with ``+``)
case_id             the event's ``sample_id`` (``<eval>.<split>.<index>``)
repeat              the n-th ``match`` / ``metrics`` event of a sample
metrics             ``match``: each ``match`` event's ``correct`` (1/0); every key of a
                    ``metrics`` event (``accuracy``, ``f1_score``, ...)
output, tokens      the sample's ``sampling`` events: ``sampled[0]``, ``usage``
slice columns       ``eval``, ``split``
pins                eval name and class, its args, seed, max_samples
==================  =============================================================

**API output items** (``client.evals.runs.output_items.list``, saved as JSON: a list, a page
``{"data": [...]}`` or JSON Lines): arm = ``run_id``, case = ``datasource_item_id``, one
metric per grader result (``passed`` as 1/0, and ``<name>.score``), output =
``sample.output[0].content``, errors from ``sample.error``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from evaldelta.errors import Location, UnreadableFileError, UsageError
from evaldelta.sources._registry import Opened, Reader, register
from evaldelta.sources._report import ReportBuilder
from evaldelta.sources._rowfile import RowWriter
from evaldelta.sources._source import ReadOptions, Source
from evaldelta.sources.importers._common import as_mapping, imported, scalar_text
from evaldelta.sources.importers._json import iter_items, loads, read_json_lines

__all__ = ["OpenAIEvalsReader"]


def _first_line(head: bytes) -> bytes:
    return head.split(b"\n", 1)[0]


def _is_record(head: bytes) -> bool:
    line = _first_line(head)
    return line.lstrip().startswith(b'{"spec"') and b'"completion_fns"' in line


def _is_output_items(head: bytes) -> bool:
    return b'"eval.run.output_item"' in head[:4096]


@register
class OpenAIEvalsReader(Reader):
    """OpenAI Evals event logs and Evals API output items."""

    name = "openai-evals"
    title = "OpenAI Evals: oaieval --record_path JSONL, or Evals API output items (JSON)"
    aliases = ("openai_evals", "oaieval")

    @classmethod
    def sniff(cls, path: Path, head: bytes) -> bool:
        """A record log's spec line, or output items' object type."""
        return path.is_file() and (_is_record(head) or _is_output_items(head))

    def open(self, source: Source, con: Any, options: ReadOptions) -> Opened:
        """Read the events (or output items) into rows."""
        with source.path.open("rb") as fh:
            head = fh.read(65536)
        builder = ReportBuilder(
            "openai-evals", str(source.path), "openai/evals", strict=options.strict
        )
        writer = RowWriter()
        if _is_record(head):
            pins, defaults = _record(source, builder, writer)
        else:
            pins, defaults = _output_items(source, head, builder, writer)
        return imported(source, con, writer, builder, pins=pins, default_metrics=defaults)


def _record(
    source: Source, builder: ReportBuilder, writer: RowWriter
) -> tuple[dict[str, dict[str, Any]], tuple[str, ...]]:
    spec: dict[str, Any] = {}
    report: dict[str, Any] = {}
    samples: dict[str, dict[str, list[Any]]] = {}
    lines: dict[str, int] = {}
    for number, line in read_json_lines(source.path):
        if not isinstance(line, dict):
            raise UnreadableFileError(
                "line is not a JSON object", Location(str(source.path), number)
            )
        if "spec" in line and isinstance(line["spec"], dict):
            spec = line["spec"]
            continue
        if "final_report" in line and isinstance(line["final_report"], dict):
            report = line["final_report"]
            continue
        kind, sample = line.get("type"), line.get("sample_id")
        if sample is None:
            builder.issue("event_without_sample", "events without a sample_id (not mapped)",
                          f"line {number}")  # fmt: skip
            continue
        events = samples.setdefault(str(sample), {"sampling": [], "match": [], "metrics": []})
        lines.setdefault(str(sample), number)
        if kind in events:
            events[str(kind)].append(line.get("data") or {})
        else:
            builder.issue("unmapped_event", "events of types evaldelta does not map",
                          f"{kind} (line {number})")  # fmt: skip
    if not spec:
        raise UnreadableFileError(
            "has no spec line; not an oaieval record", Location(str(source.path))
        )
    if not samples:
        held = "its spec and final_report" if report else "only its spec"
        raise UnreadableFileError(
            f"is an oaieval record holding {held}, no event per sample: nothing to compare "
            "case by case (the events were not recorded, or the run was cut before any)",
            Location(str(source.path)),
        )
    if not report:
        builder.issue(
            "no_final_report",
            "the record has no final_report line (the run did not finish, or was cut): "
            "evals' own figures are not there to check against",
            source.path.name,
        )
    fns = spec.get("completion_fns") or []
    arm = source.arm or "+".join(str(f) for f in fns) or "completion_fn"
    run_config = as_mapping(spec.get("run_config"))
    eval_spec = as_mapping(run_config.get("eval_spec"))
    for sample_id, events in samples.items():
        _sample_rows(sample_id, events, arm, spec, lines[sample_id], builder, writer)
    builder.reported[arm] = {
        k: float(v)
        for k, v in report.items()
        if isinstance(v, int | float) and not isinstance(v, bool)
    }
    builder.mapped.extend((
        "arm <- spec.completion_fns; case_id <- sample_id",
        "match <- each match event's correct (1/0); metrics events <- one metric per key",
        "repeat <- the n-th match or metrics event of a sample",
        "output and tokens <- the sample's sampling events",
    ))  # fmt: skip
    pins = {
        arm: {
            "model": "+".join(str(f) for f in fns),
            "eval_name": spec.get("eval_name"),
            "eval.cls": eval_spec.get("cls"),
            "eval.args": eval_spec.get("args") or {},
            "seed": run_config.get("seed"),
            "max_samples": run_config.get("max_samples"),
        }
    }
    preferred = [m for m in ("match", "score") if m in writer.metrics]
    defaults = tuple(preferred[:1]) or tuple(writer.metrics)[:1]
    return pins, defaults or ("match",)


def _sample_rows(
    sample_id: str,
    events: Mapping[str, list[Any]],
    arm: str,
    spec: Mapping[str, Any],
    line: int,
    builder: ReportBuilder,
    writer: RowWriter,
) -> None:
    attempts = max(len(events["match"]), len(events["metrics"]), 1)
    for index in range(attempts):
        row: dict[str, Any] = {
            "case_id": sample_id,
            "arm": arm,
            "repeat": index,
            "eval": spec.get("base_eval"),
            "split": spec.get("split"),
            "_where": f"sample {sample_id!r} (first event on line {line})",
            "_line": line,
        }
        if index < len(events["match"]):
            correct = as_mapping(events["match"][index]).get("correct")
            writer.metric("match")
            row["match"] = 1.0 if correct is True else 0.0 if correct is False else None
            if not isinstance(correct, bool):
                builder.issue(
                    "match_not_boolean",
                    "match events whose correct is not true or false (unscored)",
                    f"{sample_id}: {str(correct)[:40]!r}",
                )
        if index < len(events["metrics"]):
            for key, value in as_mapping(events["metrics"][index]).items():
                if isinstance(value, str):  # a label (a model-graded choice), not a score
                    row[str(key)] = value
                    continue
                writer.metric(str(key))
                row[str(key)] = _metric_value(value, f"{sample_id} {key}", builder)
        if index < len(events["sampling"]):
            data = events["sampling"][index]
            sampled = data.get("sampled")
            if isinstance(sampled, list) and sampled:
                row["output"] = scalar_text(sampled[0])
            usage = as_mapping(data.get("usage"))
            row["input_tokens"] = usage.get("prompt_tokens")
            row["output_tokens"] = usage.get("completion_tokens")
        if not events["match"] and not events["metrics"]:
            builder.issue("unscored_sample", "samples with no match or metrics event (unscored)",
                          sample_id)  # fmt: skip
        writer.add(row)


def _metric_value(value: Any, label: str, builder: ReportBuilder) -> float | None:
    """A metrics event's value as a score; what is no finite number is unscored, and said.

    A model-graded eval records ``score: null`` when the grader's reply named no choice it
    knows (``evals/elsuite/modelgraded``): that attempt has no score, and the import counts
    it rather than leaving a silent gap.
    """
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    kind = "null" if value is None else "not a finite number"
    builder.issue(
        "metric_not_a_number",
        "metrics values that are null or not a finite number (the grader's reply could not "
        "be parsed?): unscored",
        f"{label}={kind if value is None else str(value)[:40]!r}",
    )
    return None


def _items(source: Source, head: bytes) -> Iterator[tuple[str, Any]]:
    text = head.lstrip()
    if text[:1] == b"[":
        for i, item in enumerate(iter_items(source.path, "item")):
            yield f"item {i}", item
    elif text[:1] == b"{" and b'"data"' in head and not head.rstrip().endswith(b"}\n{"):
        try:
            doc = loads(source.path.read_bytes(), str(source.path))
        except UnreadableFileError:
            doc = None
        if isinstance(doc, dict) and isinstance(doc.get("data"), list):
            for i, item in enumerate(doc["data"]):
                yield f"data[{i}]", item
            return
        for number, item in read_json_lines(source.path):
            yield f"line {number}", item
    else:
        for number, item in read_json_lines(source.path):
            yield f"line {number}", item


def _output_items(
    source: Source, head: bytes, builder: ReportBuilder, writer: RowWriter
) -> tuple[dict[str, dict[str, Any]], tuple[str, ...]]:
    pins: dict[str, dict[str, Any]] = {}
    first: str | None = None
    runs: set[str] = set()
    for where, item in _items(source, head):
        if not isinstance(item, dict) or item.get("object") != "eval.run.output_item":
            builder.issue("not_an_output_item", "entries that are not eval.run.output_item", where)
            continue
        run = str(item.get("run_id") or "run")
        runs.add(run)
        arm = source.arm or run
        sample = as_mapping(item.get("sample"))
        row: dict[str, Any] = {
            "case_id": str(item.get("datasource_item_id")),
            "arm": arm,
            "status": item.get("status"),
            "_where": f"{where} (output item {item.get('id')!r})",
        }
        for result in item.get("results") or []:
            if not isinstance(result, dict) or not result.get("name"):
                continue
            name = str(result["name"])
            writer.metric(name)
            first = first or name
            passed = result.get("passed")
            row[name] = 1.0 if passed is True else 0.0 if passed is False else None
            score = result.get("score")
            if isinstance(score, int | float) and not isinstance(score, bool):
                writer.metric(f"{name}.score")
                row[f"{name}.score"] = float(score)
        outputs = sample.get("output") or []
        if outputs and isinstance(outputs[0], dict) and outputs[0].get("content") is not None:
            row["output"] = scalar_text(outputs[0]["content"])
        usage = as_mapping(sample.get("usage"))
        row["input_tokens"] = usage.get("prompt_tokens")
        row["output_tokens"] = usage.get("completion_tokens")
        error = sample.get("error")
        if isinstance(error, dict) and (error.get("message") or error.get("code")):
            row["error"] = str(error.get("message") or error.get("code"))
            builder.issue("errored_item", "output items whose sample errored (kept, as graded)",
                          row["case_id"])  # fmt: skip
        datasource = item.get("datasource_item")
        if isinstance(datasource, dict):
            for key, value in datasource.items():
                if isinstance(value, str | int | float | bool):
                    row[f"item.{key}"] = scalar_text(value)
        writer.add(row)
        pins.setdefault(arm, {
            "model": sample.get("model"),
            "eval_id": item.get("eval_id"),
            "params": {k: sample.get(k) for k in
                       ("temperature", "top_p", "seed", "max_completion_tokens")},
        })  # fmt: skip
    if source.arm is not None and len(runs) > 1:
        raise UsageError(
            f"--arm {source.arm}={source.path}: the file holds {len(runs)} runs; give one run "
            "per --arm, or the file without a name (one arm per run)"
        )
    builder.mapped.extend((
        "arm <- run_id; case_id <- datasource_item_id",
        "one metric per grader result <- passed (1/0), and <name>.score",
        "output <- sample.output[0].content",
    ))  # fmt: skip
    return pins, (first or "passed",)
