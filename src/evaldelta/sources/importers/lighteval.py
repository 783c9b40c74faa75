"""lighteval ``--save-details`` output: ``details_<task>|<fewshot>_<date>.parquet`` + results.

Learned from lighteval's own writer (``lighteval/logging/evaluation_tracker.py``:
``save_details``, ``save_results``; ``lighteval/logging/info_loggers.py``): each details
file has three struct columns, ``doc``, ``metric`` and ``model_response``, one row per
document; ``results/<model>/results_<date>.json`` holds lighteval's own figures. A source is
one details file, a details folder, or an output folder (``results/`` and ``details/``), one
arm per model.

==================  =============================================================
arm                 the model name (the details path ``details/<model>/<date>/``)
case_id             ``doc.id`` (``task/doc.id`` when a run holds several tasks)
metrics             every numeric field of ``metric`` (acc, em, f1, ...); corpus-level
                    metrics stored as their inputs (``loglikelihood_f1``'s golds and
                    preds) are counted and left out
slice columns       ``task``, ``doc.specific.<field>``
output              ``model_response.text_post_processed[0]`` (else ``text[0]``)
pins                model config (generation parameters), lighteval sha, few-shot seeds,
                    max samples, each task's example and prompt hashes
==================  =============================================================
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evaldelta.errors import Location, UnreadableFileError, UsageError
from evaldelta.sources._registry import Opened, Reader, register
from evaldelta.sources._report import ReportBuilder
from evaldelta.sources._rowfile import RowWriter
from evaldelta.sources._source import ReadOptions, Source
from evaldelta.sources.importers._common import as_mapping, imported, scalar_text
from evaldelta.sources.importers._json import loads

__all__ = ["LightevalReader"]

_DETAILS = re.compile(r"^details_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[0-9.\-]+)\.parquet$")
_COLUMNS = {"doc", "metric", "model_response"}


def _is_details(path: Path) -> bool:
    import pyarrow.parquet as pq

    try:
        return set(pq.read_schema(str(path)).names) >= _COLUMNS
    except Exception:  # not Parquet, or unreadable: not ours
        return False


def _details_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path] if _DETAILS.match(path.name) or _is_details(path) else []
    found = []
    for depth in ("", "*/", "*/*/", "*/*/*/", "*/*/*/*/", "*/*/*/*/*/"):
        found += [p for p in path.glob(f"{depth}details_*.parquet") if p.is_file()]
    return sorted(set(found))


def _model_and_date(path: Path) -> tuple[str, str]:
    """``.../details/<model parts>/<date>/details_...parquet`` -> (model, date).

    Outside that layout (details files copied into a folder of their own), the model is
    the folder's name and the date the one in the file's name.
    """
    parts = path.parts
    date_dir = path.parent.name
    if "details" in parts:
        i = len(parts) - 1 - parts[::-1].index("details")
        model = "/".join(parts[i + 1 : -2])
        if model:
            return model, date_dir
    named = _DETAILS.match(path.name)
    if named is not None and named.group("date") not in date_dir:
        return path.parent.name or "model", named.group("date")
    return path.parent.parent.name or "model", date_dir


@register
class LightevalReader(Reader):
    """lighteval details files."""

    name = "lighteval"
    title = "lighteval --save-details output (details_*.parquet, with results_*.json)"

    @classmethod
    def sniff(cls, path: Path, head: bytes) -> bool:
        """A Parquet file with lighteval's doc/metric/model_response columns, or a folder."""
        if path.is_dir():
            return bool(_details_files(path))
        return head[:4] == b"PAR1" and _is_details(path)

    def open(self, source: Source, con: Any, options: ReadOptions) -> Opened:
        """Read every details file of the newest run of each model."""
        files = _details_files(source.path)
        if not files:
            raise UnreadableFileError(
                "holds no lighteval details files", Location(str(source.path))
            )
        builder = ReportBuilder("lighteval", str(source.path), "lighteval", strict=options.strict)
        runs: dict[str, dict[str, list[Path]]] = {}
        for path in files:
            model, date = _model_and_date(path)
            runs.setdefault(model, {}).setdefault(date, []).append(path)
        if source.arm is not None and len(runs) > 1:
            raise UsageError(
                f"--arm {source.arm}={source.path}: the folder holds several models "
                f"({', '.join(sorted(runs))}); give one per --arm"
            )
        writer = RowWriter()
        pins: dict[str, dict[str, Any]] = {}
        for model, dates in sorted(runs.items()):
            newest = max(dates)
            for older in sorted(d for d in dates if d != newest):
                builder.issue(
                    "older_run", "older runs of the same model, left out", f"{model} {older}"
                )
            arm = source.arm or model
            tasks = sorted(dates[newest])
            results = _results(tasks[0], model, newest)
            for path in tasks:
                task = _task(path)
                prefix = f"{task}/" if len(tasks) > 1 else ""
                _read_details(path, arm, task, prefix, builder, writer)
            pins[arm] = _pins(results, [_task(p) for p in tasks])
            builder.reported[arm] = _reported(results)
        builder.mapped.extend((
            "arm <- model (details/<model>/<date>/); case_id <- doc.id",
            "metrics <- every numeric field of metric (corpus-level inputs left out)",
            "slice columns: task, doc.specific.<field>",
        ))  # fmt: skip
        metrics = list(writer.metrics)
        return imported(
            source,
            con,
            writer,
            builder,
            pins=pins,
            default_metrics=(metrics[0] if metrics else "acc",),
        )


def _task(path: Path) -> str:
    match = _DETAILS.match(path.name)
    return match.group("task").split("|")[0] if match else path.stem


def _results(details: Path, model: str, date: str) -> dict[str, Any]:
    """``results/<model>/results_<date>.json`` of the same output folder, when it is there."""
    parts = details.parts
    if "details" not in parts:
        return {}
    i = len(parts) - 1 - parts[::-1].index("details")
    path = Path(*parts[:i], "results", *model.split("/"), f"results_{date}.json")
    if not path.is_file():
        return {}
    loaded = loads(path.read_bytes(), str(path))
    return loaded if isinstance(loaded, dict) else {}


def _pins(results: Mapping[str, Any], tasks: list[str]) -> dict[str, Any]:
    general = as_mapping(results.get("config_general"))
    config = as_mapping(general.get("model_config"))
    config = {k: v for k, v in config.items() if k != "model_name"}
    summary = as_mapping(results.get("summary_tasks"))
    hashes = {
        str(k).split("|")[0]: (v.get("hashes") if isinstance(v, dict) else None)
        for k, v in summary.items()
    }
    return {
        "model": general.get("model_name"),
        "model_config": config,
        "lighteval_sha": general.get("lighteval_sha"),
        "num_fewshot_seeds": general.get("num_fewshot_seeds"),
        "max_samples": general.get("max_samples"),
        "task": {t: {"hashes": {k: v for k, v in (hashes.get(t) or {}).items()
                                if k in ("hash_examples", "hash_full_prompts")}}
                 for t in tasks},
    }  # fmt: skip


def _reported(results: Mapping[str, Any]) -> dict[str, float]:
    out: dict[str, float] = {}
    for task, metrics in (results.get("results") or {}).items():
        if task == "all" or not isinstance(metrics, dict):
            continue
        for name, value in metrics.items():
            if not str(name).endswith("_stderr") and isinstance(value, int | float):
                out[f"{str(task).split('|')[0]}.{name}"] = float(value)
    return out


def _read_details(
    path: Path, arm: str, task: str, prefix: str, builder: ReportBuilder, writer: RowWriter
) -> None:
    import pyarrow.parquet as pq

    try:
        table = pq.ParquetFile(str(path))
    except Exception as exc:
        from evaldelta.sources._lookalike import lfs_pointer

        with path.open("rb") as fh:
            pointer = lfs_pointer(fh.read(200))
        what = (
            "is a Git LFS pointer, not the file it stands for (run `git lfs pull`)"
            if pointer
            else f"is not a readable Parquet file ({exc})"
        )
        raise UnreadableFileError(what, Location(str(path))) from exc
    index = 0
    seen: set[str] = set()
    for batch in table.iter_batches(batch_size=2048, columns=["doc", "metric", "model_response"]):
        for record in batch.to_pylist():
            index += 1
            doc = record.get("doc") or {}
            raw = doc.get("id")
            if raw is None or str(raw) == "":
                raise UnreadableFileError(f"row {index} has no doc.id", Location(str(path), index))
            case_id = prefix + str(raw)
            if case_id in seen:
                raise UnreadableFileError(
                    f"doc.id {raw!r} appears twice", Location(str(path), index, "doc.id", raw)
                )
            seen.add(case_id)
            row: dict[str, Any] = {
                "case_id": case_id,
                "arm": arm,
                "task": task,
                "_where": f"{path.name} row {index}",
            }
            specific = doc.get("specific")
            if isinstance(specific, dict):
                for key, value in specific.items():
                    row[f"doc.specific.{key}"] = scalar_text(value)
            for name, value in (record.get("metric") or {}).items():
                if isinstance(value, bool | int | float):
                    writer.metric(str(name))
                    row[str(name)] = float(value)
                elif value is not None:
                    builder.issue(
                        "corpus_metric",
                        "corpus-level metrics stored as their inputs, not per-row scores "
                        "(left out; lighteval computes them over the whole task)",
                        f"{task} {name}",
                    )
            response = record.get("model_response") or {}
            for key in ("text_post_processed", "text"):
                texts = response.get(key)
                if isinstance(texts, list) and texts and isinstance(texts[0], str):
                    row["output"] = texts[0]
                    break
            writer.add(row)
