"""lm-evaluation-harness ``--log_samples`` output: ``samples_<task>_<date>.jsonl`` + results.

Learned from lm-eval's own writer (``lm_eval/loggers/evaluation_tracker.py``,
``lm_eval/evaluator.py``): a run writes ``<output_path>/<model>/results_<date>.json`` and,
per task, ``samples_<task>_<date>.jsonl`` with one line per (document, filter). A source is
one samples file, a run folder (its newest run), or a folder of run folders (one arm per
model).

==================  =============================================================
case_id             ``doc_id`` (``task/doc_id`` when a run holds several tasks;
                    ``--case-key doc.FIELD`` takes a document field instead)
filter              one per task: ``--filter NAME``, else the task's first filter
                    (``configs[task].filter_list``); the other filters' lines are
                    counted and left aside, so every case is paired on one filter
metrics             every name in the line's ``metrics`` (acc, acc_norm, exact_match,
                    ...); ``score`` is each task's first metric (``metric_list``)
slice columns       ``task``, ``group``, ``filter``, ``doc.<field>``
output              the filtered response, when it is text
pins                model, model args, lm-eval version and git hash, task versions,
                    task hashes, n-shot, seeds, generation kwargs, chat template
==================  =============================================================
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaldelta.errors import BadValueError, Location, UnreadableFileError, UsageError
from evaldelta.sources._registry import Opened, Reader, register
from evaldelta.sources._report import ReportBuilder
from evaldelta.sources._rowfile import RowWriter
from evaldelta.sources._source import ReadOptions, Source
from evaldelta.sources.importers._common import imported, scalar_text, upstream_columns
from evaldelta.sources.importers._json import loads, read_json_lines

__all__ = ["LmEvalReader"]

_DATE = r"(?P<date>\d{4}-\d{2}-\d{2}T[0-9.\-]+)"
_SAMPLES = re.compile(rf"^samples_(?P<task>.+)_{_DATE}\.jsonl$")
_RESULTS = re.compile(rf"^results_{_DATE}\.json$")
_METRIC_KEY = re.compile(rb'"[A-Za-z0-9_]+,[A-Za-z0-9_-]+"\s*:')
_MODEL_KEYS = ("peft", "delta", "pretrained", "model", "path", "engine")


def _is_samples_line(head: bytes) -> bool:
    line = head.split(b"\n", 1)[0]
    return line.lstrip()[:1] == b"{" and all(
        k in line for k in (b'"doc_id"', b'"doc"', b'"filter"', b'"resps"')
    )


def _is_results(head: bytes) -> bool:
    return head.lstrip()[:1] == b"{" and b'"results"' in head and bool(_METRIC_KEY.search(head))


def _results_files(folder: Path) -> list[Path]:
    found = [p for p in folder.iterdir() if p.is_file() and _RESULTS.match(p.name)]
    for sub in sorted(p for p in folder.iterdir() if p.is_dir()):
        found += [p for p in sub.iterdir() if p.is_file() and _RESULTS.match(p.name)]
        for subsub in sorted(p for p in sub.iterdir() if p.is_dir()):
            found += [p for p in subsub.iterdir() if p.is_file() and _RESULTS.match(p.name)]
    return sorted(found)


@dataclass
class _Run:
    """One lm-eval run: its results file (if any) and its samples files per task."""

    folder: Path
    date: str
    results: dict[str, Any]
    samples: dict[str, Path] = field(default_factory=dict)

    @property
    def model(self) -> str:
        name = self.results.get("model_name")
        if name:
            return str(name)
        config = self.results.get("config") or {}
        args = config.get("model_args") if isinstance(config, dict) else None
        if isinstance(args, dict):
            for key in _MODEL_KEYS:
                if args.get(key):
                    return str(args[key])
        return self.folder.name

    def config(self, task: str) -> Mapping[str, Any]:
        configs = self.results.get("configs") or {}
        found = configs.get(task) if isinstance(configs, dict) else None
        return found if isinstance(found, dict) else {}

    def filters(self, task: str) -> list[str]:
        listed = self.config(task).get("filter_list")
        names = [str(f["name"]) for f in listed or [] if isinstance(f, dict) and f.get("name")]
        return names or ["none"]

    def primary_metric(self, task: str) -> str | None:
        listed = self.config(task).get("metric_list") or []
        for item in listed:
            if isinstance(item, dict) and item.get("metric"):
                return str(item["metric"])
        return None

    def group_of(self, task: str) -> str | None:
        groups = self.results.get("group_subtasks") or {}
        if isinstance(groups, dict):
            for group, tasks in groups.items():
                if isinstance(tasks, list) and task in tasks:
                    return str(group)
        return None

    def pins(self, filters: Mapping[str, str]) -> dict[str, Any]:
        r = self.results
        found = r.get("config")
        config: dict[str, Any] = found if isinstance(found, dict) else {}
        args = config.get("model_args")
        args = dict(args) if isinstance(args, dict) else {"text": args} if args else {}
        for key in _MODEL_KEYS:
            args.pop(key, None)  # the key that names the model is the model itself
        tasks = sorted(self.samples)
        return {
            "model": self.model,
            "model_type": config.get("model"),
            "model_args": args,
            "lm_eval_version": r.get("lm_eval_version"),
            "git_hash": r.get("git_hash"),
            "seeds": {
                k: config.get(k)
                for k in ("random_seed", "numpy_seed", "torch_seed", "fewshot_seed")
            },
            "gen_kwargs": config.get("gen_kwargs") or {},
            "batch_size": config.get("batch_size"),
            "limit": config.get("limit"),
            "task": {
                t: {
                    "version": (r.get("versions") or {}).get(t),
                    "hash": (r.get("task_hashes") or {}).get(t),
                    "n_shot": (r.get("n-shot") or {}).get(t),
                    "filter": filters.get(t),
                }
                for t in tasks
            },
            "system_instruction_sha": r.get("system_instruction_sha"),
            "chat_template_sha": r.get("chat_template_sha"),
            "fewshot_as_multiturn": r.get("fewshot_as_multiturn"),
        }


def _runs_in(path: Path, builder: ReportBuilder) -> list[_Run]:
    """The runs a source names: a samples file, a run folder, or a folder of run folders."""
    if path.is_file() and _SAMPLES.match(path.name):
        m = _SAMPLES.match(path.name)
        assert_match = m  # narrows for mypy without an assert statement
        if assert_match is None:  # pragma: no cover
            raise UnreadableFileError("not an lm-eval samples file", Location(str(path)))
        date = assert_match.group("date")
        results_path = path.with_name(f"results_{date}.json")
        results = _load_results(results_path) if results_path.is_file() else {}
        if not results:
            builder.issue(
                "no_results_file",
                "samples files without their results_<date>.json beside them: no pins, and "
                "each task's filter is the first one in the file",
                path.name,
            )
        run = _Run(path.parent, date, results)
        run.samples[assert_match.group("task")] = path
        return [run]
    if path.is_file() and _RESULTS.match(path.name):
        files = [path]
    elif path.is_dir():
        files = _results_files(path)
    else:
        raise UnreadableFileError(
            "is not an lm-eval samples_<task>_<date>.jsonl, results_<date>.json or run folder",
            Location(str(path)),
        )
    runs: dict[tuple[Path, str], _Run] = {}
    for results_path in files:
        m = _RESULTS.match(results_path.name)
        if m is None:  # pragma: no cover - filtered above
            continue
        run = _Run(results_path.parent, m.group("date"), _load_results(results_path))
        for sample in results_path.parent.glob(f"samples_*_{m.group('date')}.jsonl"):
            sm = _SAMPLES.match(sample.name)
            if sm and sm.group("date") == run.date:
                run.samples[sm.group("task")] = sample
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
                "runs without samples files (run lm-eval with --log_samples)",
                str(run.folder / f"results_{run.date}.json"),
            )
    if not found:
        raise UnreadableFileError(
            "holds no lm-eval samples files (samples_<task>_<date>.jsonl; run lm-eval with "
            "--log_samples)",
            Location(str(path)),
        )
    return found


def _load_results(path: Path) -> dict[str, Any]:
    loaded = loads(path.read_bytes(), str(path))
    if not isinstance(loaded, dict) or "results" not in loaded:
        raise UnreadableFileError("is not an lm-eval results file", Location(str(path)))
    return loaded


@register
class LmEvalReader(Reader):
    """lm-evaluation-harness samples (``--log_samples``) with their results files."""

    name = "lmeval"
    title = "lm-evaluation-harness --log_samples output (samples_*.jsonl, run folders)"
    aliases = ("lm-eval", "lm_eval")
    options = frozenset({"case_key", "filter"})

    @classmethod
    def sniff(cls, path: Path, head: bytes) -> bool:
        """A samples line, a results file, or a folder holding results files."""
        if path.is_dir():
            return bool(_results_files(path))
        return _is_samples_line(head) or (
            _RESULTS.match(path.name) is not None and _is_results(head)
        )

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
            pins[arm] = run.pins(chosen)
            versions.add(str(run.results.get("lm_eval_version") or ""))
            builder.reported[arm] = _reported(run, chosen)
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


def _reported(run: _Run, chosen: Mapping[str, str]) -> dict[str, float]:
    """What lm-eval reported per task for the chosen filter: ``task.metric -> value``."""
    out: dict[str, float] = {}
    results = run.results.get("results") or {}
    for task, flt in chosen.items():
        block = results.get(task) if isinstance(results, dict) else None
        if not isinstance(block, dict):
            continue
        for key, value in block.items():
            metric, _, name = str(key).partition(",")
            if name == flt and not metric.endswith("_stderr") and isinstance(value, int | float):
                out[f"{task}.{metric}"] = float(value)
    return out


class _RunRows:
    """The lines of one run's samples files, for the chosen filter of each task."""

    def __init__(
        self,
        run: _Run,
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
        for task, path in sorted(self.run.samples.items()):
            filters = self.run.filters(task) if self.run.results else []
            flt = self.filter if self.filter in filters else (filters[0] if filters else None)
            if self.filter is not None and self.filter not in filters and filters:
                self.builder.issue(
                    "filter_not_in_task",
                    f"tasks without filter {self.filter!r}: their first filter is read",
                    f"{task}: {flt}",
                )
            flt = self._lines(task, path, flt, several)
            chosen[task] = flt
        return chosen

    def _lines(self, task: str, path: Path, flt: str | None, several: bool) -> str:
        primary = self.run.primary_metric(task)
        group = self.run.group_of(task)
        seen: set[str] = set()
        left_aside = 0
        for number, line in read_json_lines(path):
            if not isinstance(line, dict):
                raise UnreadableFileError("line is not a JSON object", Location(str(path), number))
            name = str(line.get("filter", "none"))
            flt = flt or name
            if name != flt:
                left_aside += 1
                continue
            case_id = self._case_id(line, path, number)
            case_id = f"{task}/{case_id}" if several else case_id
            if case_id in seen:
                raise BadValueError(
                    f"document {case_id!r} appears twice for filter {flt!r}",
                    Location(str(path), number, "doc_id", line.get("doc_id")),
                )
            seen.add(case_id)
            self.writer.add(self._row(line, case_id, task, group, primary, path, number))
        if left_aside:
            self.builder.mapped.append(
                f"{self.arm} {task}: filter {flt!r}; {left_aside} lines of other filters left aside"
            )
        return flt or "none"

    def _case_id(self, line: Mapping[str, Any], path: Path, number: int) -> str:
        if self.case_key is None:
            value = line.get("doc_id")
        else:
            value = line.get("doc")
            for part in self.case_key.split(".")[1:]:
                value = value.get(part) if isinstance(value, dict) else None
        if value is None or str(value).strip() == "":
            what = self.case_key or "doc_id"
            raise BadValueError(f"line has no {what}", Location(str(path), number, what))
        return str(value)

    def _row(
        self,
        line: Mapping[str, Any],
        case_id: str,
        task: str,
        group: str | None,
        primary: str | None,
        path: Path,
        number: int,
    ) -> dict[str, Any]:
        row: dict[str, Any] = {
            "case_id": case_id,
            "arm": self.arm,
            "task": task,
            "group": group,
            "filter": str(line.get("filter", "none")),
            "_where": f"{path.name} line {number}",
            "_line": number,
        }
        doc = line.get("doc")
        if isinstance(doc, dict):
            for key, value in doc.items():
                if isinstance(value, str | int | float | bool) or value is None:
                    row[f"doc.{key}"] = scalar_text(value)
        names = [str(m) for m in line.get("metrics") or [] if isinstance(m, str)]
        for name in names:
            value = line.get(name)
            self.writer.metric(name)
            if isinstance(value, bool | int | float):
                row[name] = float(value)
            else:
                row[name] = None
                self.builder.issue(
                    "metric_not_a_number",
                    "per-line metric values that are not numbers (corpus-level metrics such as "
                    "bleu keep items, not scores; left unscored)",
                    f"{task} {case_id} {name}",
                )
        main = primary if primary in names else (names[0] if names else None)
        row["score"] = row.get(main) if main else None
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
