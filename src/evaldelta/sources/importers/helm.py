"""HELM run output: ``per_instance_stats.json`` with ``run_spec.json`` beside it.

Learned from HELM's own writer (``helm/benchmark/metrics/metric.py``: ``PerInstanceStats``;
``helm/benchmark/metrics/statistic.py``; ``helm/benchmark/runner.py``). A source is one run
folder (``benchmark_output/runs/<suite>/<run name>/``), its ``per_instance_stats.json``, or
a suite folder of run folders (one arm per model); its ``run_spec.json`` or ``stats.json``
stands for its run folder. HELM's other files (``scenario.json``, ``instances.json``, ...)
hold no scores: each is refused in one line that says to point at its run folder.

HELM writes one ``per_instance_stats.json`` entry per (instance, trial, perturbation) per
metric class (``runner.py`` extends the list once per metric: a safety run's
``SafetyScoreMetric`` and ``SafetyBasicGenerationMetric``, a jury run's ``LLMJuryMetric``
and ``BasicGenerationMetric``): those entries are one attempt holding every stat. The same
stat with two different values in them is an error naming both entries.

==================  =============================================================
arm                 ``run_spec.adapter_spec.model``
case_id             ``instance_id``; a perturbed instance is its own case
                    (``id60|lowercase``), so original and perturbed never mix
                    (``scenario/instance_id`` when a suite holds several scenarios)
repeat              ``train_trial_index`` (HELM's trials of in-context examples)
metrics             one per stat name (``exact_match``, ``jury_score``, ...): the
                    instance's ``mean``; a stat with no observation is unscored, and
                    so is an infinite one (counted as an issue)
slice columns       ``perturbation`` (``original`` or its name), ``split``,
                    ``scenario``
tokens, latency     ``num_prompt_tokens``, ``num_completion_tokens``, ``inference_runtime``
output              ``display_predictions.json``'s ``predicted_text`` when present
pins                the adapter spec (model deployment, temperature, max tokens,
                    instructions, trials, ...), scenario and metric specs
==================  =============================================================

HELM's own headline (``stats.json``) is, per trial, the mean over instances, then the mean
over trials: with every instance in every trial it equals the mean of case means here.
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
from evaldelta.sources.importers._common import as_mapping, imported
from evaldelta.sources.importers._json import loads

__all__ = ["HelmReader"]

_STATS = "per_instance_stats.json"
_USAGE = {"num_prompt_tokens": "input_tokens", "num_completion_tokens": "output_tokens"}
_PREFERRED = ("exact_match", "quasi_exact_match", "prefix_exact_match", "f1_score")


# HELM's other files in a run folder: (what each holds, signature, whether it stands for
# its run folder). helm-run writes the first five, helm-summarize the display files.
_FILES: dict[str, tuple[str, tuple[bytes, ...], bool]] = {
    "run_spec.json": ("the run's spec", (b'"scenario_spec"', b'"adapter_spec"'), True),
    "stats.json": ("the run's aggregate stats", (b'"name": {', b'"count"'), True),
    "scenario.json": ("the scenario's description", (b'"name"', b'"description"', b'"tags"'),
                      False),
    "scenario_state.json": ("the run's requests", (b'"adapter_spec"', b'"request_states"'),
                            False),
    "instances.json": ("the run's instances", (b'"input"', b'"references"'), False),
    "display_predictions.json": ("predictions for display", (b'"instance_id"',), False),
    "display_requests.json": ("requests for display", (b'"instance_id"',), False),
}  # fmt: skip


def _helm_file(path: Path, head: bytes) -> bool:
    known = _FILES.get(path.name)
    return known is not None and all(sig in head for sig in known[1])


def _resolve(path: Path) -> Path:
    """A HELM file that stands for its run folder: the folder; any other HELM file: an error."""
    if path.is_dir() or path.name == _STATS or path.name not in _FILES:
        return path
    what, _, stands_for_run = _FILES[path.name]
    if not stands_for_run:
        raise UnreadableFileError(
            f"is HELM's {path.name} ({what}; it holds no scores): point at the run folder it is in",
            Location(str(path)),
        )
    if not (path.parent / _STATS).is_file():
        raise UnreadableFileError(
            f"is HELM's {path.name} ({what}), but its folder holds no {_STATS} (helm-run "
            "writes both into the run folder): point at a run folder",
            Location(str(path)),
        )
    return path.parent


def _run_folders(path: Path) -> list[Path]:
    if path.is_file() and path.name == _STATS:
        return [path.parent]
    if path.is_dir() and (path / _STATS).is_file():
        return [path]
    if path.is_dir():
        return sorted(p for p in path.iterdir() if p.is_dir() and (p / _STATS).is_file())
    return []


def _read(path: Path) -> Any:
    return loads(path.read_bytes(), str(path))


def _perturbation(entry: Mapping[str, Any]) -> str:
    pert = entry.get("perturbation")
    if isinstance(pert, Mapping) and pert.get("name"):
        return str(pert["name"])
    return "original"


@register
class HelmReader(Reader):
    """HELM per-instance stats."""

    name = "helm"
    title = "HELM run folder (per_instance_stats.json + run_spec.json), or a suite of them"

    @classmethod
    def sniff(cls, path: Path, head: bytes) -> bool:
        """A run folder, a suite folder of them, or a per_instance_stats.json file."""
        if path.is_file():
            return (path.name == _STATS and b'"instance_id"' in head) or _helm_file(path, head)
        return bool(_run_folders(path))

    def open(self, source: Source, con: Any, options: ReadOptions) -> Opened:
        """Read every run folder's per-instance stats into rows."""
        if source.path.is_file() and source.path.name in _FILES:
            with source.path.open("rb") as fh:
                if not _helm_file(source.path, fh.read(HEAD_BYTES)):
                    raise UnreadableFileError(
                        f"is not HELM's {source.path.name}", Location(str(source.path))
                    )
        runs = _run_folders(_resolve(source.path))
        if not runs:
            raise UnreadableFileError(
                f"holds no HELM run folder (a folder with {_STATS})", Location(str(source.path))
            )
        builder = ReportBuilder("helm", str(source.path), "crfm-helm", strict=options.strict)
        specs = [(run, _spec(run)) for run in runs]
        models = [
            str(as_mapping(s.get("adapter_spec")).get("model") or run.name) for run, s in specs
        ]
        if source.arm is not None and len(set(models)) > 1:
            raise UsageError(
                f"--arm {source.arm}={source.path}: the suite holds several models "
                f"({', '.join(sorted(set(models)))}); give one run folder per --arm"
            )
        scenarios = {_scenario(run, s) for run, s in specs}
        writer = RowWriter()
        pins: dict[str, dict[str, Any]] = {}
        for (run, spec), model in zip(specs, models, strict=True):
            arm = source.arm or model
            scenario = _scenario(run, spec)
            prefix = f"{scenario}/" if len(scenarios) > 1 else ""
            _RunRows(run, arm, scenario, prefix, builder, writer).read()
            pins.setdefault(arm, _pins(spec))
            builder.reported.setdefault(arm, {}).update(_reported(run, prefix))
        metrics = list(writer.metrics)
        default = next((m for m in _PREFERRED if m in metrics), metrics[0] if metrics else None)
        builder.mapped.extend(_MAPPED)
        return imported(
            source, con, writer, builder, pins=pins, default_metrics=(default or "score",)
        )


_MAPPED = (
    "arm <- run_spec.adapter_spec.model",
    "case_id <- instance_id (a perturbed instance is its own case: id|perturbation)",
    "repeat <- train_trial_index",
    "one metric per stat name <- the instance's mean",
    "slice columns: perturbation, split, scenario",
)


def _spec(run: Path) -> dict[str, Any]:
    path = run / "run_spec.json"
    if not path.is_file():
        return {}
    loaded = _read(path)
    return loaded if isinstance(loaded, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _scenario(run: Path, spec: Mapping[str, Any]) -> str:
    groups = spec.get("groups")
    if isinstance(groups, list) and groups:
        return str(groups[0])
    return str(spec.get("name") or run.name).split(":", 1)[0]


def _pins(spec: Mapping[str, Any]) -> dict[str, Any]:
    adapter = dict(as_mapping(spec.get("adapter_spec")))
    model = adapter.pop("model", None)
    deployment = adapter.pop("model_deployment", None)  # where the model is served: its host
    return {
        "model": model,
        "provider": deployment,
        "adapter": adapter,
        "scenario": spec.get("scenario_spec") or {},
        "metric_specs": [as_mapping(m).get("class_name") for m in _list(spec.get("metric_specs"))],
        "data_augmenter": spec.get("data_augmenter_spec") or {},
    }


def _reported(run: Path, prefix: str) -> dict[str, float]:
    """HELM's own figures from stats.json: each stat's mean on the originals, per split."""
    path = run / "stats.json"
    if not path.is_file():
        return {}
    out: dict[str, float] = {}
    stats = _read(path)
    for stat in stats if isinstance(stats, list) else []:
        name = stat.get("name") if isinstance(stat, dict) else None
        if not isinstance(name, dict) or name.get("perturbation") or name.get("sub_split"):
            continue
        mean = stat.get("mean")
        if isinstance(mean, int | float) and math.isfinite(mean):  # Infinity is not a figure
            out[f"{prefix}{name.get('name')}.{name.get('split')}"] = float(mean)
    return out


class _RunRows:
    def __init__(
        self,
        run: Path,
        arm: str,
        scenario: str,
        prefix: str,
        builder: ReportBuilder,
        writer: RowWriter,
    ) -> None:
        self.run, self.arm, self.scenario, self.prefix = run, arm, scenario, prefix
        self.builder, self.writer = builder, writer

    def _predictions(self) -> dict[tuple[str, int, str], str]:
        path = self.run / "display_predictions.json"
        if not path.is_file():
            return {}
        out = {}
        loaded = _read(path)
        for p in loaded if isinstance(loaded, list) else []:
            if isinstance(p, dict) and isinstance(p.get("predicted_text"), str):
                trial = p.get("train_trial_index") or 0
                if not isinstance(trial, int):
                    continue  # not a prediction this importer can place; outputs are extras
                key = (str(p.get("instance_id")), trial, _perturbation(p))
                out[key] = p["predicted_text"]
        return out

    def read(self) -> None:
        path = self.run / _STATS
        entries = _read(path)
        if not isinstance(entries, list):
            raise UnreadableFileError("is not a list of per-instance stats", Location(str(path)))
        outputs = self._predictions()
        attempts: dict[tuple[str, int], _Attempt] = {}
        for index, entry in enumerate(entries):
            if not isinstance(entry, dict) or entry.get("instance_id") is None:
                raise BadValueError(
                    "entry has no instance_id",
                    Location(f"{path} (entry {index})", None, "instance_id"),
                )
            pert = _perturbation(entry)
            instance = str(entry["instance_id"])
            case_id = self.prefix + (instance if pert == "original" else f"{instance}|{pert}")
            trial = entry.get("train_trial_index") or 0
            if not isinstance(trial, int) or isinstance(trial, bool):
                raise BadValueError(
                    "train_trial_index is not an integer",
                    Location(f"{path} (entry {index})", None, "train_trial_index", trial),
                )
            stats = entry.get("stats") or []
            if not isinstance(stats, list):
                raise BadValueError(
                    "stats is not a list", Location(f"{path} (entry {index})", None, "stats")
                )
            # One entry per metric class for the same (instance, trial, perturbation): the
            # entries of all classes are one attempt.
            attempt = attempts.get((case_id, trial))
            if attempt is None:
                attempt = attempts[(case_id, trial)] = _Attempt(
                    {
                        "case_id": case_id,
                        "arm": self.arm,
                        "repeat": trial,
                        "instance_id": instance,
                        "perturbation": pert,
                        "scenario": self.scenario,
                    },
                    f"instance {instance!r}, trial {trial}, {pert}",
                )
            attempt.entries.append(index)
            self._stats(stats, attempt, path, index)
        scored = False
        for (_, trial), attempt in attempts.items():
            row = attempt.row
            numbers = ", ".join(map(str, attempt.entries))
            label = "entries" if len(attempt.entries) > 1 else "entry"
            row["_where"] = f"{label} {numbers} ({attempt.label})"
            scored = scored or any(row.get(m) is not None for m in attempt.metrics)
            instance, pert = row["instance_id"], row["perturbation"]
            text = outputs.get((instance, trial, pert))
            if text is not None:
                row["output"] = text
            self.writer.add(row)
        if attempts and not scored:
            self.builder.issue(
                "no_scores",
                "runs whose per-instance stats hold no score (every attempt is unlabeled)",
                self.run.name,
            )

    def _stats(self, stats: list[Any], attempt: _Attempt, path: Path, index: int) -> None:
        row = attempt.row
        for stat in stats:
            name = stat.get("name") if isinstance(stat, dict) else None
            if not isinstance(name, dict) or not name.get("name"):
                continue
            metric = str(name["name"])
            if row.get("split") is None and name.get("split") is not None:
                row["split"] = str(name["split"])
            count = stat.get("count") or 0
            mean = stat.get("mean")
            value = float(mean) if count and isinstance(mean, int | float) else None
            if count and value is None:
                self.builder.issue(
                    "stat_not_a_number",
                    "per-instance stats with observations but no numeric mean (left unscored)",
                    f"{self.run.name} entry {index} {metric}={mean!r}",
                )
            if value is not None and not math.isfinite(value):
                self.builder.issue(
                    "stat_not_finite",
                    "per-instance stats whose mean is infinite, as HELM wrote it (left "
                    "unscored: one would make its metric's mean and interval undefined)",
                    f"{self.run.name} entry {index} {metric}={value}",
                )
                value = None
            column = _USAGE.get(metric) or ("latency_ms" if metric == "inference_runtime" else None)
            if column is None:
                self.writer.metric(metric)
                attempt.metrics.add(metric)
                column = metric
            elif value is not None:
                value = int(value) if metric in _USAGE else value * 1000.0
            if column in attempt.sources:
                first, before = attempt.sources[column]
                if before is not None and value is not None and not _same(before, value):
                    where = (
                        "earlier in this entry"
                        if first == index
                        else f"in entry {first} (two metric classes disagree)"
                    )
                    raise BadValueError(
                        f"stat {metric!r} of {attempt.label} is {value!r} here but "
                        f"{before!r} {where}",
                        Location(f"{path} (entry {index})", None, metric, value),
                    )
                if before is not None:
                    continue
            attempt.sources[column] = (index, value)
            row[column] = value


def _same(a: float, b: float) -> bool:
    return a == b or math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15)


class _Attempt:
    """The entries of one (instance, trial, perturbation), merged into one row."""

    def __init__(self, row: dict[str, Any], label: str) -> None:
        self.row = row
        self.label = label
        self.entries: list[int] = []
        self.metrics: set[str] = set()
        self.sources: dict[str, tuple[int, float | None]] = {}  # column -> (entry, value)
