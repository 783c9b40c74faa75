"""Inspect AI logs: ``.eval`` (zip: DEFLATE or zstd, flat or chunked samples) and ``.json``.

One log is one arm (its model, or ``--arm NAME=PATH``); a folder (an eval set) gives one arm
per model. The mapping, learned from Inspect's own log schema (``inspect_ai/log/_log.py``:
``EvalLog``, ``EvalSpec``, ``EvalSample``) and its recorders (``log/_recorders/eval.py``;
the chunked layout of ``log/_recorders/chunked/format.py``):

==================  =============================================================
case_id             the sample ``id`` (``task/id`` when a folder holds several tasks;
                    ``--case-key metadata.FIELD`` takes a metadata field instead)
repeat              ``epoch - 1`` (Inspect counts epochs from 1; ``epoch`` is kept too)
one metric/scorer   ``scores[name].value``: C/P/I/N -> 1/0.5/0/0, numbers and booleans
                    kept, yes/no/true/false and numeric text parsed (Inspect's own
                    ``value_to_float``); a dict value gives ``name.key`` per key
slice columns       ``task``, ``metadata.<field>`` (``--by metadata.category``), ``limit``
output              ``output.completion``
tokens, cost        summed over ``model_usage`` (``total_cost`` where a release records it)
latency_ms          ``total_time`` x 1000
error               ``error.message``: errored and cancelled samples are unscored and
                    counted in the report, never dropped
pins                model, model_args, generate config, task version and file, revision,
                    solver plan, eval config, packages, scorers, dataset
==================  =============================================================

Members are read one at a time (:class:`~evaldelta.sources.importers._zip.SafeZip`), and a
``.json`` log is streamed (ijson), so one sample's messages are in memory at a time.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from evaldelta.errors import Location, UnreadableFileError, UsageError
from evaldelta.sources._registry import Opened, Reader, register
from evaldelta.sources._report import ReportBuilder
from evaldelta.sources._rowfile import RowWriter
from evaldelta.sources._source import ReadOptions, Source
from evaldelta.sources.importers._common import as_mapping, imported
from evaldelta.sources.importers._inspect_samples import _SampleRows, score_value
from evaldelta.sources.importers._json import events, first_line, iter_items, loads
from evaldelta.sources.importers._zip import SafeZip

__all__ = ["InspectReader", "score_value"]

_JSON_HEAD = re.compile(rb'^\s*\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:')
_FLAT = re.compile(r"^samples/(?P<stem>.+)\.json$")
_CHUNKED = re.compile(r"^samples/(?P<stem>[^/]+)/sample\.json$")
_HEADER_KEYS = ("version", "status", "eval", "plan", "results", "stats", "error")


def _is_eval_zip(head: bytes) -> bool:
    return head[:4] == b"PK\x03\x04" and any(
        m in head[:512] for m in (b"_journal/start.json", b"header.json", b"samples/")
    )


def _is_json_log(head: bytes) -> bool:
    return bool(_JSON_HEAD.match(head)) and b'"eval"' in head and b'"task"' in head


def _logs_in(folder: Path) -> list[Path]:
    out = []
    for path in sorted(folder.iterdir()):
        if path.name in ("logs.json", "eval-set.json") or not path.is_file():
            continue
        if path.suffix == ".eval" or path.suffix == ".json":
            with path.open("rb") as fh:
                head = fh.read(4096)
            if _is_eval_zip(head) or _is_json_log(head):
                out.append(path)
    return out


@register
class InspectReader(Reader):
    """Inspect AI evaluation logs."""

    name = "inspect"
    title = "Inspect AI log (.eval zip or .json), or an eval-set folder of them"
    options = frozenset({"case_key"})

    @classmethod
    def sniff(cls, path: Path, head: bytes) -> bool:
        """A zip whose first member is Inspect's; a JSON log's first keys; a folder of logs."""
        if path.is_dir():
            return bool(_logs_in(path))
        return _is_eval_zip(head) or _is_json_log(head)

    def open(self, source: Source, con: Any, options: ReadOptions) -> Opened:
        """Read every sample of the log (or of every log in the folder) into rows."""
        logs = _logs_in(source.path) if source.path.is_dir() else [source.path]
        if not logs:
            raise UnreadableFileError("holds no Inspect AI logs", Location(str(source.path)))
        builder = ReportBuilder("inspect", str(source.path), "inspect_ai", strict=options.strict)
        writer = RowWriter()
        every = [_Log.open(p) for p in logs]
        opened_logs = _latest_per_task_and_model(every, builder)
        for log in every:
            if log not in opened_logs:
                log.close()  # an eval set's superseded retry
        tasks = {log.task for log in opened_logs}
        if source.arm is not None and len({log.model for log in opened_logs}) > 1:
            raise UsageError(
                f"--arm {source.arm}={source.path}: the folder holds several models "
                f"({', '.join(sorted({log.model for log in opened_logs}))}); give one log "
                "per --arm, or the folder without a name"
            )
        pins: dict[str, dict[str, Any]] = {}
        first_scorer: str | None = None
        versions = set()
        reducers: dict[str, None] = {}
        lazy: dict[str, list[_Lazy]] = {}
        try:
            for log in opened_logs:
                arm = source.arm or log.model
                pins.setdefault(arm, log.pins())
                versions.add(log.version)
                prefix = f"{log.task}/" if len(tasks) > 1 else ""
                reader = _SampleRows(log, arm, prefix, options.case_key, builder, writer)
                if reader.run(options.outputs_on_demand) and log.zip is not None:
                    lazy.setdefault(arm, []).append(
                        _Lazy(log.path, log.zip.members, log.members(), reader.first_epoch)
                    )
                first_scorer = first_scorer or reader.first_metric
                builder.reported.update(log.reported(arm, len(opened_logs) > 1))
                if log.epochs > 1:
                    reducers.setdefault(log.reducers()[0], None)
                    if len(log.reducers()) > 1:
                        builder.issue(
                            "several_reducers",
                            f"logs whose figures use several epochs reducers "
                            f"({', '.join(log.reducers())}): compare reduces by the first "
                            "unless --reduce names another",
                            log.path.name,
                            note=True,
                        )
                    _check_reductions(log, reader, builder)
        finally:
            for log in opened_logs:
                log.close()
        if writer.rows == 0:
            logged = all(as_mapping(log.spec.get("config")).get("log_samples") is False
                         for log in opened_logs)  # fmt: skip
            raise UnreadableFileError(
                "holds Inspect log headers without samples ("
                + ("the run set log_samples=False" if logged else "none were written or kept")
                + "): evaldelta compares sample by sample, so it needs the samples",
                Location(str(source.path)),
            )
        builder.tool_version = ", ".join(sorted(v for v in versions if v)) or None
        builder.reducer = "+".join(reducers) or None
        builder.mapped.extend(_MAPPED)
        defaults = (first_scorer,) if first_scorer else tuple(writer.metrics)[:1]
        opened = imported(
            source, con, writer, builder, pins=pins, default_metrics=defaults or ("score",),
            unscored=(
                "the run was not scored (inspect eval --no-score)"
                if any(log.spec.get("scorers") for log in opened_logs)
                else "its task has no scorer"
            )
            + ": score it with `inspect score LOG` (or `evaldelta score`), then import the "
            "scored log",
        )  # fmt: skip
        if not lazy:
            return opened
        return dataclasses.replace(opened, fetch_outputs=_Fetcher(lazy))


@dataclasses.dataclass(frozen=True)
class _Lazy:
    """What fetching one log's outputs later needs: its zip directory and its cases."""

    path: Path
    members: dict[str, Any]  # member name -> ZipInfo, read once when the log was opened
    samples: dict[tuple[str, int], str]  # (sample id, epoch) -> member name
    first_epoch: dict[str, tuple[str, int]]  # case id -> (sample id, its lowest epoch)


class _Fetcher:
    """Outputs of a few listed cases, read from their sample members when asked."""

    def __init__(self, logs: dict[str, list[_Lazy]]) -> None:
        self.logs = logs

    def __call__(
        self, case_ids: Sequence[str], arms: Sequence[str], max_chars: int
    ) -> dict[tuple[str, str], str]:
        out: dict[tuple[str, str], str] = {}
        for arm in arms:
            for lazy in self.logs.get(arm, []):
                wanted = [(c, lazy.first_epoch[c]) for c in case_ids if c in lazy.first_epoch]
                if not wanted:
                    continue
                with SafeZip(lazy.path, lazy.members) as zf:
                    for case_id, key in wanted:
                        member = lazy.samples.get(key)
                        if member is None:
                            continue
                        sample = loads(zf.read(member), f"{lazy.path} ({member})")
                        output = sample.get("output") if isinstance(sample, dict) else None
                        text = output.get("completion") if isinstance(output, dict) else None
                        if isinstance(text, str):
                            out.setdefault((case_id, arm), text[: max_chars + 1])
        return out


_MAPPED = (
    "case_id <- sample id",
    "repeat <- epoch - 1 (epoch kept as a column)",
    "one metric per scorer <- scores[name].value (C/P/I/N -> 1/0.5/0/0; dict values: name.key)",
    "output <- output.completion; tokens and cost <- model_usage; latency_ms <- total_time",
    "slice columns: task, metadata.<field>, limit",
)


def _latest_per_task_and_model(logs: list[_Log], builder: ReportBuilder) -> list[_Log]:
    """An eval set retries a failed task in a new log: keep the newest log per task and model."""
    best: dict[tuple[str, str], _Log] = {}
    for log in logs:
        key = (log.task, log.model)
        if key not in best or log.created > best[key].created:
            if key in best:
                builder.issue(
                    "superseded_log",
                    "older logs of the same task and model (an eval set's retries), left out",
                    best[key].path.name,
                )
            best[key] = log
        else:
            builder.issue(
                "superseded_log",
                "older logs of the same task and model (an eval set's retries), left out",
                log.path.name,
            )
    return [log for log in logs if best[(log.task, log.model)] is log]


class _Log:
    """One log: its header, and its samples one at a time."""

    def __init__(self, path: Path, header: dict[str, Any], zf: SafeZip | None) -> None:
        self.path = path
        self.header = header
        self.zip = zf
        spec = header.get("eval")
        if not isinstance(spec, dict) or "model" not in spec or "task" not in spec:
            raise UnreadableFileError(
                "has no eval spec (eval.model, eval.task); not an Inspect AI log?",
                Location(str(path)),
            )
        self.spec: dict[str, Any] = spec
        self._members: dict[tuple[str, int], str] | None = None
        self.model = str(spec["model"])
        self.task = str(spec["task"])
        self.created = str(spec.get("created") or "")
        packages = spec.get("packages") or {}
        self.version = str(packages.get("inspect_ai") or "") if isinstance(packages, dict) else ""
        self.status = str(header.get("status") or "unknown")
        config = spec.get("config") if isinstance(spec.get("config"), dict) else {}
        epochs = config.get("epochs") if isinstance(config, dict) else None
        self.epochs = epochs if isinstance(epochs, int) and not isinstance(epochs, bool) else 1

    def reducers(self) -> list[str]:
        """The epochs reducers the log's figures use, first the primary; ["mean"] by default.

        ``eval.config.epochs_reducer`` when the task or the run named some, else the
        ``reducer`` of the results' scores (None there means Inspect's default, the mean).
        """
        config = as_mapping(self.spec.get("config"))
        named = config.get("epochs_reducer") if isinstance(config, dict) else None
        if isinstance(named, str):
            named = [named]
        if isinstance(named, list) and named:
            return [str(n) for n in named]
        found: dict[str, None] = {}
        for score in _list(as_mapping(self.header.get("results")).get("scores")):
            if isinstance(score, dict) and score.get("reducer"):
                found.setdefault(str(score["reducer"]), None)
        return list(found) or ["mean"]

    def reductions(self) -> Iterator[dict[str, Any]]:
        """The log's own per-sample reductions (``reductions.json``, or a JSON log's key)."""
        import io

        if self.zip is not None:
            if "reductions.json" not in self.zip:
                return
            stream: Any = io.BytesIO(self.zip.read("reductions.json"))
            items = iter_items(stream, "item", where=f"{self.path} (reductions.json)")
        else:
            items = iter_items(self.path, "reductions.item")
        for item in items:
            if isinstance(item, dict):
                yield item

    def close(self) -> None:
        """Release the zip's file handles."""
        if self.zip is not None:
            self.zip.close()

    @classmethod
    def open(cls, path: Path) -> _Log:
        with path.open("rb") as fh:
            head = fh.read(4)
        if head == b"PK\x03\x04":
            zf = SafeZip(path)
            name = "header.json" if "header.json" in zf else "_journal/start.json"
            if name not in zf:
                raise UnreadableFileError(
                    "is a zip without header.json or _journal/start.json; not an Inspect log",
                    Location(str(path)),
                )
            try:
                header = loads(zf.read(name), f"{path} ({name})")
                return cls(path, header if isinstance(header, dict) else {}, zf)
            except Exception:
                zf.close()
                raise
        return cls(path, _json_header(path), None)

    def samples(
        self, skip: set[tuple[str, int]] | frozenset[tuple[str, int]] = frozenset()
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        """(where, sample) for every sample not in ``skip``, flat or chunked, in archive order."""
        if self.zip is None:
            for index, sample in enumerate(iter_items(self.path, "samples.item")):
                if isinstance(sample, dict):
                    yield f"samples[{index}]", sample
            return
        for key, member in self.members().items():
            if key in skip:
                continue
            sample = self._member(member)
            stem = member.split("/")[1]
            meta = f"samples/{stem}/metadata.json"
            if member.endswith("/sample.json") and meta in self.zip and not sample.get("metadata"):
                loaded = loads(self.zip.read(meta), f"{self.path} ({meta})")
                sample["metadata"] = loaded if isinstance(loaded, dict) else {}
            yield member, sample

    def summaries(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """(where, summary) for each entry of the log's ``summaries.json``, streamed.

        Inspect writes ``summaries.json`` beside the samples: each sample's id, epoch,
        scores, metadata, usage, time, error and limit, without its messages, events or
        output. Reading it instead of every sample is what makes a large log fast; the
        outputs are then fetched for the few cases a comparison lists.
        """
        import io

        if self.zip is None or "summaries.json" not in self.zip:
            return
        data = io.BytesIO(self.zip.read("summaries.json"))
        for index, summary in enumerate(iter_items(data, "item", where=str(self.path))):
            if isinstance(summary, dict) and "id" in summary and "epoch" in summary:
                yield f"summaries.json[{index}]", summary

    def members(self) -> dict[tuple[str, int], str]:
        """(sample id, epoch) -> the member holding that sample, flat or chunked."""
        if self._members is None:
            out: dict[tuple[str, int], str] = {}
            for member in self.zip.names() if self.zip is not None else []:
                match = _CHUNKED.match(member) or _FLAT.match(member)
                if match is None or "/" in match.group("stem"):
                    continue
                sid, sep, epoch = match.group("stem").rpartition("_epoch_")
                if sep and epoch.isdigit():
                    out.setdefault((sid, int(epoch)), member)
            self._members = out
        return self._members

    def _member(self, member: str) -> dict[str, Any]:
        if self.zip is None:  # pragma: no cover - only zips have members
            raise RuntimeError("not a zip log")
        loaded = loads(self.zip.read(member), f"{self.path} ({member})")
        if not isinstance(loaded, dict):
            raise UnreadableFileError(
                f"member {member!r} is not a sample", Location(str(self.path))
            )
        return loaded

    def expected(self) -> int | None:
        """Sample runs the log should hold: its results' total, else dataset x epochs."""
        total = as_mapping(self.header.get("results")).get("total_samples")
        if isinstance(total, int):
            return total
        dataset = as_mapping(self.spec.get("dataset"))
        config = as_mapping(self.spec.get("config"))
        n, epochs = dataset.get("samples"), config.get("epochs") or 1
        if isinstance(config.get("sample_id"), list):
            n = len(config["sample_id"])
        elif isinstance(config.get("sample_id"), str | int):
            n = 1
        limit = config.get("limit")
        if isinstance(limit, int) and isinstance(n, int):
            n = min(n, limit)
        elif isinstance(limit, list) and len(limit) == 2 and isinstance(n, int):
            n = min(n, int(limit[1]) - int(limit[0]))
        return int(n) * int(epochs) if isinstance(n, int) and isinstance(epochs, int) else None

    def pins(self) -> dict[str, Any]:
        spec = self.spec
        plan = as_mapping(self.header.get("plan"))
        steps = [s.get("solver") for s in _list(plan.get("steps")) if isinstance(s, dict)]
        return {
            "model": self.model,
            "model_args": spec.get("model_args") or {},
            "generate_config": spec.get("model_generate_config") or {},
            "task": self.task,
            "task_version": spec.get("task_version"),
            "task_file": spec.get("task_file"),
            "task_args": spec.get("task_args") or {},
            "revision": spec.get("revision") or {},
            "packages": spec.get("packages") or {},
            "plan.steps": steps,
            "plan.config": plan.get("config") or {},
            "config": spec.get("config") or {},
            "dataset": {
                k: v for k, v in as_mapping(spec.get("dataset")).items() if k != "sample_ids"
            },
            "scorers": [s.get("name") for s in _list(spec.get("scorers")) if isinstance(s, dict)],
        }

    def reported(self, arm: str, prefix_task: bool) -> dict[str, dict[str, float]]:
        """What Inspect reported in the header: per score name, each metric's value.

        A log reduced by several reducers reports each score once per reducer: those of
        a reducer other than the primary (:meth:`reducers`) are keyed ``name@reducer``.
        """
        results = as_mapping(self.header.get("results"))
        out: dict[str, float] = {}
        primary = self.reducers()[0]
        for score in _list(results.get("scores")):
            if not isinstance(score, dict):
                continue
            name = score.get("name")
            scorer = score.get("scorer") or name
            column = name if name == scorer else f"{scorer}.{name}"
            reducer = score.get("reducer")
            if reducer and reducer != primary:
                column = f"{column}@{reducer}"
            for metric, value in as_mapping(score.get("metrics")).items():
                number = value.get("value") if isinstance(value, dict) else None
                if isinstance(number, int | float):
                    out[f"{column}.{metric}"] = float(number)
        for key in ("total_samples", "completed_samples"):
            if isinstance(results.get(key), int):
                out[key] = float(results[key])
        label = f"{arm} ({self.task})" if prefix_task else arm
        return {label: out} if out else {}


def _json_header(path: Path) -> dict[str, Any]:
    """The keys of a ``.json`` log before its samples, streamed (the samples are not built)."""
    import ijson

    header: dict[str, Any] = {}
    key: str | None = None
    builder: Any = None
    try:
        with path.open("rb") as fh:
            for prefix, event, value in events(fh, str(path)):  # bounded (issue 23)
                if prefix == "" and event in ("map_key", "end_map"):
                    if builder is not None and key is not None:
                        header[key] = builder.value
                    builder = None
                    if event == "end_map" or value == "samples":
                        break
                    key, builder = str(value), ijson.ObjectBuilder()
                elif builder is not None:
                    builder.event(event, value)
    except ijson.JSONError as exc:
        raise UnreadableFileError(
            f"is not valid JSON ({first_line(exc)}); truncated?", Location(str(path))
        ) from None
    return {k: v for k, v in header.items() if k in _HEADER_KEYS}


def _check_reductions(log: _Log, reader: _SampleRows, builder: ReportBuilder) -> None:
    """Hold the primary reducer, applied to each case's epochs here, against the log's own.

    Inspect writes each sample's reduced score (``reductions``); compare reduces the epochs
    itself (``--reduce``, the log's reducer by default). Where the two differ for a case
    (a mode whose tie Inspect broke between the letters I and N, both 0 here; a custom
    reducer), the import says how many and which, so no figure differs in silence.
    """
    from evaldelta.stats._reducers import parse_reducer, reduce_values

    name = log.reducers()[0]
    if reader.case_key is not None:
        return
    try:
        reducer = parse_reducer(name)
    except ValueError:
        builder.issue(
            "custom_reducer",
            f"the log reduces epochs with {name!r}, a reducer evaldelta does not apply: "
            "compare reduces by the mean unless --reduce says otherwise",
            log.path.name,
        )
        return
    wanted = None if name == "mean" else name
    for item in log.reductions():
        if (item.get("reducer") or None) not in (wanted, name):
            continue
        scorer = str(item.get("scorer") or "")
        for sample in item.get("samples") or []:
            if not isinstance(sample, dict):
                continue
            case = reader.prefix + str(sample.get("id", sample.get("sample_id")))
            value = sample.get("value")
            parts = (
                {f"{scorer}.{k}": v for k, v in value.items()}
                if isinstance(value, dict)
                else {f"{scorer}.{i}": v for i, v in enumerate(value)}
                if isinstance(value, list)
                else {scorer: value}
            )
            for column, reduced in parts.items():
                epochs = reader.values.get((case, column))
                if epochs is None:
                    continue
                ours = _reduce(sorted(epochs, key=lambda e: e[0]), reducer, reduce_values)
                theirs = score_value(reduced)[0]
                same = (theirs is None and math.isnan(ours)) or (
                    theirs is not None and not math.isnan(ours) and abs(ours - theirs) <= 1e-9
                )
                if not same:
                    builder.issue(
                        "reduced_differently",
                        f"cases whose epochs, reduced by {name} here, differ from the log's "
                        "own reduction (Inspect's figures use the log's)",
                        f"{case} {column}: {ours:g} here, {theirs} in the log",
                    )


def _reduce(epochs: list[tuple[int, float | None, Any]], reducer: Any, reduce_values: Any) -> float:
    """One case's epochs reduced as compare reduces them (a mode counts Inspect's letters)."""
    if reducer.kind != "mode":
        return float(reduce_values([math.nan if v is None else v for _, v, _ in epochs], reducer))
    counts: dict[Any, int] = {}
    number: dict[Any, float] = {}
    for _, value, tie in epochs:
        if value is not None:
            counts[tie] = counts.get(tie, 0) + 1
            number[tie] = value
    if not counts:
        return math.nan
    top = max(counts.values())
    return next(number[t] for t, c in counts.items() if c == top)


def _list(value: Any) -> list[Any]:
    """A log's value when it is a list, else an empty one (logs are not to be trusted)."""
    return value if isinstance(value, list) else []
