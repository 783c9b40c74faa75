"""Where an lm-evaluation-harness run keeps its files, across the 0.4.x releases.

Learned from each release's writer (``lm_eval/__main__.py`` up to 0.4.2,
``lm_eval/loggers/evaluation_tracker.py`` from 0.4.3):

=============  ===================================================================
0.4.0-0.4.2    ``--output_path DIR``: ``DIR/results.json``; ``--output_path F.json``:
               ``F.json``. Samples beside it, one file per task named
               ``<model_args with / and = as __>_<task>.jsonl`` that holds one JSON
               array (indented), not JSON Lines.
0.4.3-0.4.8    ``<output_path>/<model>/results_<date>.json`` and
               ``samples_<task>_<date>.jsonl`` (JSON Lines). Up to 0.4.6 a line has no
               ``filter`` or ``metrics`` key: its metrics are top-level keys
               (``"acc": 1.0``) and a task with several filters writes each document
               once per filter, all documents of the first filter first.
0.4.9-         as 0.4.3, but ``--output_path F.json`` writes ``<F's stem>_<date>.json``
               (``results_MODEL:DATE_<date>.json``) with the samples files beside it.
Python API     ``simple_evaluate(..., log_samples=True)`` returns the results with
               ``samples[task]`` in them; scripts dump that dict as it is.
=============  ===================================================================

Every release writes with Python's ``json.dumps``, so a file may hold ``NaN`` and
``Infinity``; :func:`~evaldelta.sources.importers._json.loads` reads them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from evaldelta.errors import Location, UnreadableFileError
from evaldelta.sources._registry import HEAD_BYTES
from evaldelta.sources.importers._json import loads, read_json_lines

__all__ = [
    "MODEL_KEYS",
    "RESULTS",
    "SAMPLES",
    "LmEvalRun",
    "TaskSamples",
    "is_legacy_samples",
    "is_results",
    "is_samples_line",
    "results_files",
]

_DATE = r"(?P<date>\d{4}-\d{2}-\d{2}T[0-9.\-]+)"
SAMPLES = re.compile(rf"^samples_(?P<task>.+)_{_DATE}\.jsonl$")
RESULTS = re.compile(rf"^(?P<stem>.+)_{_DATE}\.json$")
_METRIC_KEY = re.compile(rb'"[A-Za-z0-9_]+,[A-Za-z0-9_-]+"\s*:')
_RESULTS_FIRST = re.compile(rb'\s*\{\s*"results"\s*:')
MODEL_KEYS = ("peft", "delta", "pretrained", "model", "path", "engine")


def is_samples_line(head: bytes) -> bool:
    """A samples line: ``doc_id``, ``doc`` and the responses (``filter`` only from 0.4.7)."""
    line = head.split(b"\n", 1)[0]
    if line.lstrip()[:1] != b"{" or not all(k in line for k in (b'"doc_id"', b'"doc"')):
        return False
    # a first line longer than the head (a long document) may hold its responses further on
    return b'"resps"' in line or b"\n" not in head


def is_legacy_samples(head: bytes) -> bool:
    """A 0.4.0-0.4.2 samples file: one indented JSON array of samples."""
    start = head.lstrip()
    return start[:1] == b"[" and all(k in head for k in (b'"doc_id"', b'"doc"'))


def is_results(head: bytes) -> bool:
    """An lm-eval results file: a ``results`` object with ``"metric,filter"`` keys.

    lm-eval writes ``results`` first; a script that dumped the dict with sorted keys puts
    it later, so then its ``configs`` and ``versions`` must be there too.
    """
    if not _METRIC_KEY.search(head):
        return False
    if _RESULTS_FIRST.match(head):
        return True
    return head.lstrip()[:1] == b"{" and all(
        k in head for k in (b'"results"', b'"configs"', b'"versions"')
    )


def _head(path: Path) -> bytes:
    try:
        with path.open("rb") as fh:
            return fh.read(HEAD_BYTES)
    except OSError:
        return b""


def results_files(folder: Path) -> list[Path]:
    """The lm-eval results files in a folder and two levels below it, by their content."""
    levels = [folder]
    for sub in sorted(p for p in folder.iterdir() if p.is_dir()):
        levels.append(sub)
        levels.extend(sorted(p for p in sub.iterdir() if p.is_dir()))
    found = []
    for level in levels:
        for path in sorted(level.glob("*.json")):
            if path.is_file() and is_results(_head(path)):
                found.append(path)
    return found


def _holds_lines(path: Path) -> bool:
    """A ``<model_args>_<task>.jsonl`` holding one object per line, not one array.

    The 2023 pre-releases wrote lines; 0.4.0 to 0.4.2 wrote one indented array.
    """
    return _head(path).lstrip()[:1] == b"{"


@dataclass
class TaskSamples:
    """One task's logged samples, wherever the release put them."""

    task: str
    path: Path
    kind: Literal["lines", "array", "embedded"]
    items: list[Any] | None = None

    def __iter__(self) -> Iterator[tuple[int | None, Any, str]]:
        """(line number or None, sample, where a person finds it) for each sample."""
        if self.kind == "lines" or (self.kind == "array" and _holds_lines(self.path)):
            for number, line in read_json_lines(self.path):
                yield number, line, f"{self.path.name} line {number}"
            return
        items = self.items
        if items is None:
            items = loads(self.path.read_bytes(), str(self.path))
            if not isinstance(items, list):
                raise UnreadableFileError(
                    "is not a list of lm-eval samples (0.4.0-0.4.2 write one JSON array)",
                    Location(str(self.path)),
                )
        label = (
            f"{self.path.name} samples[{self.task!r}]"
            if self.kind == "embedded"
            else self.path.name
        )
        for index, item in enumerate(items):
            yield None, item, f"{label} item {index}"


@dataclass
class LmEvalRun:
    """One lm-eval run: its results file (if any) and its samples per task."""

    folder: Path
    date: str
    results: dict[str, Any]
    results_path: Path | None = None
    samples: dict[str, TaskSamples] = field(default_factory=dict)

    @property
    def model_args(self) -> dict[str, Any]:
        """The run's model args as a mapping (0.4.0-0.4.2 record the command-line string)."""
        config = self.results.get("config")
        args = config.get("model_args") if isinstance(config, dict) else None
        if isinstance(args, dict):
            return dict(args)
        if isinstance(args, str) and args:
            pairs = (p.partition("=") for p in args.split(","))
            return {k.strip(): v.strip() for k, sep, v in pairs if sep and k.strip()}
        return {}

    @property
    def model(self) -> str:
        """The model's name as lm-eval recorded it, else its model args', else the folder's."""
        name = self.results.get("model_name")
        if name:
            return str(name)
        args = self.model_args
        for key in MODEL_KEYS:
            if args.get(key):
                return str(args[key])
        return self.folder.name

    def config(self, task: str) -> Mapping[str, Any]:
        """The task's configuration as the results file records it."""
        configs = self.results.get("configs")
        found = configs.get(task) if isinstance(configs, dict) else None
        return found if isinstance(found, dict) else {}

    def filters(self, task: str) -> list[str]:
        """The task's filters in lm-eval's order (``none`` when it declares none)."""
        listed = self.config(task).get("filter_list")
        listed = listed if isinstance(listed, list) else []
        names = [str(f["name"]) for f in listed if isinstance(f, dict) and f.get("name")]
        return names or ["none"]

    def primary_metric(self, task: str) -> str | None:
        """The task's first declared metric (``metric_list``)."""
        listed = self.config(task).get("metric_list")
        for item in listed if isinstance(listed, list) else []:
            if isinstance(item, dict) and isinstance(item.get("metric"), str):
                return str(item["metric"])
        return None

    def group_of(self, task: str) -> str | None:
        """The group the task was run in, when the results say."""
        groups = self.results.get("group_subtasks")
        if isinstance(groups, dict):
            for group, tasks in groups.items():
                if isinstance(tasks, list) and task in tasks:
                    return str(group)
        return None

    def task_results(self, task: str) -> Mapping[str, Any]:
        """``results[task]``: lm-eval's own figures, ``"metric,filter" -> value``."""
        results = self.results.get("results")
        block = results.get(task) if isinstance(results, dict) else None
        return block if isinstance(block, dict) else {}

    def find_samples(self) -> None:
        """Fill :attr:`samples`: embedded in the results, else the files beside them."""
        embedded = self.results.get("samples")
        if isinstance(embedded, dict) and embedded and self.results_path is not None:
            for task, items in embedded.items():
                if isinstance(items, list):
                    self.samples[str(task)] = TaskSamples(
                        str(task), self.results_path, "embedded", items
                    )
            return
        if self.date:
            for path in self.folder.glob(f"samples_*_{self.date}.jsonl"):
                m = SAMPLES.match(path.name)
                if m and m.group("date") == self.date:
                    self.samples[m.group("task")] = TaskSamples(m.group("task"), path, "lines")
            return
        self._legacy_samples()

    def _legacy_samples(self) -> None:
        config = self.results.get("config")
        args = config.get("model_args") if isinstance(config, dict) else None
        prefix = re.sub("/|=", "__", args) if isinstance(args, str) else None
        configs = self.results.get("configs")
        for task in configs if isinstance(configs, dict) else {}:
            exact = self.folder / f"{prefix}_{task}.jsonl" if prefix is not None else None
            if exact is not None and exact.is_file():
                self.samples[str(task)] = TaskSamples(str(task), exact, "array")
                continue
            hits = [p for p in self.folder.glob(f"*_{task}.jsonl") if not SAMPLES.match(p.name)]
            if len(hits) == 1:
                self.samples[str(task)] = TaskSamples(str(task), hits[0], "array")


def load_results(path: Path) -> dict[str, Any]:
    """A results file's content (an error naming it when it is not one)."""
    loaded = loads(path.read_bytes(), str(path))
    if not isinstance(loaded, dict) or not isinstance(loaded.get("results"), dict):
        raise UnreadableFileError(
            "is not an lm-eval results file (no 'results' object)", Location(str(path))
        )
    return loaded


def run_of_results(path: Path) -> LmEvalRun:
    """The run a results file belongs to, with its samples found."""
    m = RESULTS.match(path.name)
    run = LmEvalRun(path.parent, m.group("date") if m else "", load_results(path), path)
    run.find_samples()
    return run


def results_beside(path: Path, date: str) -> Path | None:
    """The results file written with a samples file (same folder, same date)."""
    for candidate in sorted(path.parent.glob(f"*_{date}.json")):
        m = RESULTS.match(candidate.name)
        if m and m.group("date") == date and is_results(_head(candidate)):
            return candidate
    return None


def legacy_results_beside(path: Path) -> Path | None:
    """The 0.4.0-0.4.2 results file whose samples file ``path`` is, if one is beside it."""
    for candidate in sorted(path.parent.glob("*.json")):
        if not is_results(_head(candidate)):
            continue
        run = run_of_results(candidate)
        if any(s.path == path for s in run.samples.values()):
            return candidate
    return None
