"""lm-evaluation-harness ``--log_samples`` output, from every 0.4.x release.

Learned from lm-eval's own writers (``lm_eval/evaluator.py``, ``lm_eval/__main__.py``,
``lm_eval/loggers/evaluation_tracker.py``; what each release writes where is in
:mod:`~evaldelta.sources.importers._lmeval_runs`). A source is one samples file, a
results file (its samples beside it or embedded in it), a run folder (its newest run), or
a folder of run folders (one arm per model).

==================  =============================================================
case_id             ``doc_id`` (``task/doc_id`` when a run holds several tasks;
                    ``--case-key doc.FIELD`` takes a document field instead)
filter              one per task: ``--filter NAME``, else the task's first filter
                    (``configs[task].filter_list``); the other filters' lines are
                    counted and left aside, so every case is paired on one filter.
                    Lines without a ``filter`` key (up to 0.4.6): a document's k-th
                    line is the task's k-th filter, the order lm-eval writes them in
metrics             every name in the line's ``metrics`` (acc, acc_norm, exact_match,
                    ...); without that key (up to 0.4.6), every top-level key that is
                    not one of the sample's own fields; ``score`` is each task's first
                    metric (``metric_list``). A value that is not a finite number
                    (corpus-level metrics keep items; NaN, Infinity) is unscored and
                    counted as an issue
slice columns       ``task``, ``group``, ``filter``, ``doc.<field>``
output              the filtered response, when it is text
pins                model, model args, lm-eval version and git hash, task versions,
                    task hashes, n-shot, seeds, generation kwargs, chat template
==================  =============================================================
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evaldelta.errors import BadValueError, Location, UnreadableFileError, UsageError
from evaldelta.sources._registry import HEAD_BYTES, Opened, Reader, register
from evaldelta.sources._report import ReportBuilder
from evaldelta.sources._rowfile import RowWriter
from evaldelta.sources._source import ReadOptions, Source
from evaldelta.sources.importers._common import imported, scalar_text, upstream_columns
from evaldelta.sources.importers._lmeval_runs import (
    MODEL_KEYS,
    SAMPLES,
    LmEvalRun,
    TaskSamples,
    is_legacy_samples,
    is_results,
    is_samples_line,
    legacy_results_beside,
    load_results,
    results_beside,
    results_files,
    run_of_results,
)

__all__ = ["LmEvalReader"]

# A sample's own fields; up to 0.4.6 every other top-level key of a line is a metric.
_FIXED = frozenset({
    "doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "doc_hash",
    "prompt_hash", "target_hash", "filter", "metrics",
})  # fmt: skip
_LEGACY = (
    "lines naming no filter or metrics (lm-eval up to 0.4.6): metrics <- the line's other "
    "top-level keys; a document's k-th line <- the task's k-th filter"
)
_NO_SAMPLES = (
    "run lm-eval with --log_samples and point at its output folder, a samples_<task>_<date>"
    ".jsonl file, or a results file holding its samples"
)


def _head(path: Path) -> bytes:
    with path.open("rb") as fh:
        return fh.read(HEAD_BYTES)


def _run_of_file(path: Path, builder: ReportBuilder) -> LmEvalRun:
    """The run one file names: a samples file of any release, or a results file."""
    head = _head(path)
    m = SAMPLES.match(path.name)
    if m is not None or is_samples_line(head):
        date = m.group("date") if m is not None else ""
        task = m.group("task") if m is not None else path.stem
        results_path = results_beside(path, date) if date else None
        if results_path is None:
            builder.issue(
                "no_results_file",
                "samples files without their results file beside them: no pins, and each "
                "task's filter is the first one in the file",
                path.name,
            )
        results = load_results(results_path) if results_path is not None else {}
        run = LmEvalRun(path.parent, date, results, results_path)
        run.samples[task] = TaskSamples(task, path, "lines")
        return run
    if is_results(head):
        run = run_of_results(path)
        if not run.samples:
            raise UnreadableFileError(
                "is an lm-eval results file with aggregate figures only (no samples in it or "
                f"beside it): {_NO_SAMPLES}",
                Location(str(path)),
            )
        return run
    if is_legacy_samples(head):
        results_path = legacy_results_beside(path)
        if results_path is None:
            raise UnreadableFileError(
                "is an lm-eval 0.4.0-0.4.2 samples file without its results file beside it "
                "(only that names the task and its filters): point at the folder holding both",
                Location(str(path)),
            )
        run = run_of_results(results_path)
        run.samples = {t: s for t, s in run.samples.items() if s.path == path}
        return run
    raise UnreadableFileError(
        "is not an lm-eval samples file, results file or run folder", Location(str(path))
    )


def _runs_in(path: Path, builder: ReportBuilder) -> list[LmEvalRun]:
    """The runs a source names: a file, a run folder, or a folder of run folders."""
    if path.is_file():
        return [_run_of_file(path, builder)]
    if not path.is_dir():
        raise UnreadableFileError("is not a file or a folder", Location(str(path)))
    runs: dict[tuple[Path, str], LmEvalRun] = {}
    for results_path in results_files(path):
        run = run_of_results(results_path)
        key = (run.folder, run.model)
        if key in runs and runs[key].date > run.date:
            builder.issue("older_run", "older runs in the same folder, left out", run.date)
            continue
        if key in runs:
            builder.issue("older_run", "older runs in the same folder, left out", runs[key].date)
        runs[key] = run
    found = [r for r in runs.values() if r.samples]
    for run in runs.values():
        if not run.samples:
            builder.issue(
                "no_samples",
                "runs without samples (run lm-eval with --log_samples)",
                str(run.results_path or run.folder),
            )
    if not found:
        raise UnreadableFileError(f"holds no lm-eval samples ({_NO_SAMPLES})", Location(str(path)))
    return found


@register
class LmEvalReader(Reader):
    """lm-evaluation-harness samples (``--log_samples``) with their results files."""

    name = "lmeval"
    title = "lm-evaluation-harness --log_samples output (samples files, results, run folders)"
    aliases = ("lm-eval", "lm_eval")
    options = frozenset({"case_key", "filter"})

    @classmethod
    def sniff(cls, path: Path, head: bytes) -> bool:
        """A samples file of any release, a results file, or a folder holding results."""
        if path.is_dir():
            return bool(results_files(path))
        return is_samples_line(head) or is_legacy_samples(head) or is_results(head)

    def open(self, source: Source, con: Any, options: ReadOptions) -> Opened:
        """Read the chosen filter's lines of every task of every run into rows."""
        builder = ReportBuilder("lmeval", str(source.path), "lm-eval", strict=options.strict)
        runs = _runs_in(source.path, builder)
        models = {r.model for r in runs}
        if len(models) < len(runs) and source.arm is None:
            dup = sorted(m for m in models if sum(r.model == m for r in runs) > 1)
            raise UsageError(
                f"{source.path}: several runs of model {dup[0]!r}; name each run folder with "
                "--arm NAME=PATH"
            )
        if source.arm is not None and len(runs) > 1:
            raise UsageError(
                f"--arm {source.arm}={source.path}: the folder holds {len(runs)} runs; give one "
                "run folder per --arm"
            )
        writer = RowWriter(["score"])
        pins: dict[str, dict[str, Any]] = {}
        if options.filter is not None and not any(
            options.filter in r.filters(t) for r in runs for t in r.samples
        ):
            known = sorted({f for r in runs for t in r.samples for f in r.filters(t)})
            raise UsageError(
                f"--filter {options.filter!r}: no task has it (filters: {', '.join(known)})"
            )
        versions = set()
        for run in runs:
            arm = source.arm or run.model
            chosen = _RunRows(run, arm, options, builder, writer).read()
            pins[arm] = _pins(run, chosen)
            versions.add(str(run.results.get("lm_eval_version") or ""))
            builder.reported[arm] = _reported(run, chosen, builder)
        builder.tool_version = ", ".join(sorted(v for v in versions if v)) or None
        builder.mapped.extend(_MAPPED)
        return imported(
            source, con, writer, builder, pins=pins, default_metrics=("score",), unit="line"
        )


_MAPPED = (
    "case_id <- doc_id (task/doc_id across tasks; or --case-key doc.FIELD)",
    "one filter per task (--filter, else the task's first); other filters' lines left aside",
    "metrics <- the line's metrics (acc, exact_match, ...); score <- each task's first metric",
    "slice columns: task, group, filter, doc.<field>",
)


def _pins(run: LmEvalRun, filters: Mapping[str, str]) -> dict[str, Any]:
    r = run.results
    found = r.get("config")
    config: dict[str, Any] = found if isinstance(found, dict) else {}
    args = run.model_args
    for key in MODEL_KEYS:
        args.pop(key, None)  # the key that names the model is the model itself

    def per_task(key: str, task: str) -> Any:
        block = r.get(key)
        return block.get(task) if isinstance(block, dict) else None

    return {
        "model": run.model,
        "model_type": config.get("model"),
        "model_args": args,
        "lm_eval_version": r.get("lm_eval_version"),
        "git_hash": r.get("git_hash"),
        "seeds": {
            k: config.get(k) for k in ("random_seed", "numpy_seed", "torch_seed", "fewshot_seed")
        },
        "gen_kwargs": config.get("gen_kwargs") or {},
        "batch_size": config.get("batch_size"),
        "limit": config.get("limit"),
        "task": {
            t: {
                "version": per_task("versions", t),
                "hash": per_task("task_hashes", t),
                "n_shot": per_task("n-shot", t),
                "filter": filters.get(t),
            }
            for t in sorted(run.samples)
        },
        "system_instruction_sha": r.get("system_instruction_sha"),
        "chat_template_sha": r.get("chat_template_sha"),
        "fewshot_as_multiturn": r.get("fewshot_as_multiturn"),
    }


def _reported(
    run: LmEvalRun, chosen: Mapping[str, str], builder: ReportBuilder
) -> dict[str, float]:
    """What lm-eval reported per task for the chosen filter: ``task.metric -> value``."""
    out: dict[str, float] = {}
    for task, flt in chosen.items():
        for key, value in run.task_results(task).items():
            metric, _, name = str(key).partition(",")
            if name != flt or metric.endswith("_stderr") or isinstance(value, bool):
                continue
            if isinstance(value, int | float) and math.isfinite(value):
                out[f"{task}.{metric}"] = float(value)
            elif isinstance(value, float):
                builder.issue(
                    "reported_not_finite",
                    "figures lm-eval itself reported as NaN or Infinity (kept out of the "
                    "reported figures)",
                    f"{task} {key}={value}",
                    note=True,
                )
    return out


class _RunRows:
    """The lines of one run's samples, for the chosen filter of each task."""

    def __init__(
        self,
        run: LmEvalRun,
        arm: str,
        options: ReadOptions,
        builder: ReportBuilder,
        writer: RowWriter,
    ) -> None:
        self.run, self.arm, self.builder, self.writer = run, arm, builder, writer
        self.filter = options.filter
        self.case_key = options.case_key
        if self.case_key is not None and not self.case_key.startswith("doc."):
            raise UsageError(f"--case-key for lm-eval is doc.FIELD, not {self.case_key!r}")

    def read(self) -> dict[str, str]:
        """Write the rows; return the filter chosen per task."""
        chosen: dict[str, str] = {}
        several = len(self.run.samples) > 1
        for task, samples in sorted(self.run.samples.items()):
            filters = self.run.filters(task) if self.run.results else []
            flt = self.filter if self.filter in filters else (filters[0] if filters else None)
            if self.filter is not None and self.filter not in filters and filters:
                self.builder.issue(
                    "filter_not_in_task",
                    f"tasks without filter {self.filter!r}: their first filter is read",
                    f"{task}: {flt}",
                )
            chosen[task] = _TaskLines(self, samples, filters, several).read(flt)
        return chosen


def _where(samples: TaskSamples, number: int | None, where: str) -> str:
    return str(samples.path) if number is not None else f"{samples.path} ({where})"


class _TaskLines:
    """One task's samples: which filter each line is, and its row."""

    def __init__(
        self, rows: _RunRows, samples: TaskSamples, filters: list[str], several: bool
    ) -> None:
        self.rows, self.samples, self.filters, self.several = rows, samples, filters, several
        self.task = samples.task
        self.primary = rows.run.primary_metric(self.task)
        self.group = rows.run.group_of(self.task)
        self.occurrences: dict[str, int] = {}

    def _filter_of(self, line: Mapping[str, Any], number: int | None, where: str) -> str:
        if "filter" in line:
            return str(line["filter"])
        # Up to 0.4.6 a line does not name its filter: lm-eval writes every document once
        # per filter, all documents of the first filter first, so the k-th line of a
        # document is the task's k-th filter.
        doc = str(line.get("doc_id"))
        k = self.occurrences.get(doc, 0)
        self.occurrences[doc] = k + 1
        if self.filters and k < len(self.filters):
            return self.filters[k]
        if self.filters:
            raise BadValueError(
                f"document {line.get('doc_id')!r} of task {self.task!r} has {k + 1} lines but "
                f"the task has {len(self.filters)} filter(s) ({', '.join(self.filters)})",
                Location(_where(self.samples, number, where), number, "doc_id", line.get("doc_id")),
            )
        if k:
            self.rows.builder.issue(
                "filter_by_position",
                "lines that name no filter, without a results file to name the task's "
                "filters: a document's k-th line is read as filter #k",
                f"{self.task} {doc}",
            )
        return "none" if k == 0 else f"#{k + 1}"

    def read(self, flt: str | None) -> str:
        seen: set[str] = set()
        left_aside = scored = lines = 0
        for number, line, where in self.samples:
            if not isinstance(line, dict):
                raise UnreadableFileError(
                    "sample is not a JSON object",
                    Location(_where(self.samples, number, where), number),
                )
            name = self._filter_of(line, number, where)
            flt = flt or name
            if name != flt:
                left_aside += 1
                continue
            case_id = self._case_id(line, number, where)
            case_id = f"{self.task}/{case_id}" if self.several else case_id
            if case_id in seen:
                raise BadValueError(
                    f"document {case_id!r} appears twice for filter {flt!r}",
                    Location(_where(self.samples, number, where), number, "doc_id",
                             line.get("doc_id")),
                )  # fmt: skip
            seen.add(case_id)
            row = self._row(line, case_id, name, number, where)
            lines += 1
            scored += any(row.get(m) is not None for m in row["_metrics"])
            del row["_metrics"]
            self.rows.writer.add(row)
        arm = self.rows.arm
        if left_aside:
            self.rows.builder.mapped.append(
                f"{arm} {self.task}: filter {flt!r}; {left_aside} lines of other filters left aside"
            )
        if lines and not scored:
            self.rows.builder.issue(
                "no_scores",
                "tasks whose samples hold no per-line score (every attempt is unlabeled: "
                "score them, or compare lm-eval's own figures instead)",
                f"{arm} {self.task}",
            )
        return flt or "none"

    def _case_id(self, line: Mapping[str, Any], number: int | None, where: str) -> str:
        key = self.rows.case_key
        if key is None:
            value = line.get("doc_id")
        else:
            value = line.get("doc")
            for part in key.split(".")[1:]:
                value = value.get(part) if isinstance(value, dict) else None
        if value is None or str(value).strip() == "":
            what = key or "doc_id"
            raise BadValueError(
                f"line has no {what}", Location(_where(self.samples, number, where), number, what)
            )
        return str(value)

    def _metric_names(self, line: Mapping[str, Any]) -> list[str]:
        listed = line.get("metrics")
        if isinstance(listed, list):
            return [m for m in listed if isinstance(m, str)]
        if _LEGACY not in self.rows.builder.mapped:
            self.rows.builder.mapped.append(_LEGACY)
        return [str(k) for k in line if k not in _FIXED]

    def _row(
        self, line: Mapping[str, Any], case_id: str, flt: str, number: int | None, where: str
    ) -> dict[str, Any]:
        row: dict[str, Any] = {
            "case_id": case_id,
            "arm": self.rows.arm,
            "task": self.task,
            "group": self.group,
            "filter": flt,
            "_where": where,
        }
        if number is not None:
            row["_line"] = number
        doc = line.get("doc")
        if isinstance(doc, dict):
            for key, value in doc.items():
                if isinstance(value, str | int | float | bool) or value is None:
                    row[f"doc.{key}"] = scalar_text(value)
        names = self._metric_names(line)
        builder = self.rows.builder
        label = f"{self.rows.arm}: {case_id if self.several else f'{self.task}/{case_id}'}"
        for name in names:
            value = line.get(name)
            self.rows.writer.metric(name)
            row[name] = None
            if isinstance(value, bool | int) or (isinstance(value, float) and math.isfinite(value)):
                row[name] = float(value)
            elif isinstance(value, float):
                builder.issue(
                    "metric_not_finite",
                    "per-line metric values that are NaN or Infinity, as lm-eval wrote them "
                    "(left unscored: one would make its metric's mean and interval undefined)",
                    f"{label} {name}={value}",
                )
            else:
                builder.issue(
                    "metric_not_a_number",
                    "per-line metric values that are not numbers (corpus-level metrics such as "
                    "bleu keep items, not scores; left unscored)",
                    f"{label} {name}",
                )
        main = self.primary if self.primary in names else (names[0] if names else None)
        row["score"] = row.get(main) if main else None
        row["_metrics"] = names
        row.update(_upstream(line.get("arguments")))
        resp = line.get("filtered_resps")
        if isinstance(resp, list) and resp and isinstance(resp[0], str):
            row["output"] = resp[0]
        elif isinstance(resp, str):
            row["output"] = resp
        return row


def _upstream(arguments: Any) -> dict[str, str]:
    """The prompt (the first request's context) and, for generation, its generation kwargs.

    lm-eval logs each request's arguments as ``gen_args_<i>: {arg_0: context, arg_1: ...}``
    (older versions: a list of lists); ``arg_1`` is the generation kwargs of a generate
    request and the continuation (a string, the case's content) of a loglikelihood one.
    """
    first: Any = None
    if isinstance(arguments, dict) and arguments:
        first = arguments.get("gen_args_0")
        first = [first.get("arg_0"), first.get("arg_1")] if isinstance(first, dict) else None
    elif isinstance(arguments, list) and arguments and isinstance(arguments[0], list):
        first = arguments[0]
    if not first:
        return {}
    payload = first[1] if len(first) > 1 and isinstance(first[1], dict) else None
    return upstream_columns(first[0] if isinstance(first[0], str) else None, payload)
