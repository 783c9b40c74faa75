"""promptfoo results: ``promptfoo eval -o results.json`` (results version 3) or ``-o *.jsonl``.

Learned from promptfoo's own output code (``createOutputData`` and ``toEvaluateResult`` in
its ``dist/src``): a results file holds ``results.results[]``, one row per (provider,
prompt, test, repeat), and ``results.prompts[]`` with promptfoo's own per-(provider,
prompt) counts; a JSONL file holds the same rows, one per line.

==================  =============================================================
arm                 provider label (else id) x prompt label: ``model-a / terse``; only
                    the part that varies when there is one provider or one prompt
case_id             the test's ``description`` (``--case-key vars.NAME``,
                    ``metadata.NAME``, ``vars`` for a hash of all vars); never
                    ``testIdx``, which counts repeats too
repeat              numbered 0, 1, ... per (arm, case) in ``testIdx`` order: promptfoo
                    records no repeat index (the report says so)
pass                ``success`` (1/0); an errored row (``failureReason`` 2) is unscored
score               the row's graded ``score`` (weighted mean of its assertions)
check.<type>        each assertion of ``gradingResult.componentResults``: its pass
                    (1/0), or its score for a weight-0 (metric-only) assertion, which
                    never counts toward ``pass``
<named score>       each ``namedScores`` entry, as the weighted mean of its assertions'
                    scores (a metric fed only by weight-0 assertions: their plain mean;
                    promptfoo itself reports such a metric as 0)
cost, tokens        ``response.cost``, ``tokenUsage.prompt``/``completion``, ``latencyMs``
slice columns       ``vars.<name>``, ``metadata.<name>``, ``provider``, ``prompt``
==================  =============================================================
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from evaldelta.errors import BadValueError, Location, UsageError
from evaldelta.sources._registry import Opened, Reader, register
from evaldelta.sources._report import ReportBuilder
from evaldelta.sources._rowfile import RowWriter
from evaldelta.sources._source import ReadOptions, Source
from evaldelta.sources.importers._common import imported, scalar_text, upstream_columns
from evaldelta.sources.importers._json import iter_items, read_json_lines

__all__ = ["PromptfooReader"]

_RESERVED = frozenset({"case_id", "arm", "repeat", "pass", "score", "output", "error",
                       "cost_usd", "latency_ms", "input_tokens", "output_tokens"})  # fmt: skip
_HEAD = re.compile(rb'^\s*\{\s*"evalId"\s*:')


def _is_results_json(head: bytes) -> bool:
    return bool(_HEAD.match(head)) and b'"results"' in head


def _is_results_line(head: bytes) -> bool:
    line = head.split(b"\n", 1)[0]
    return line.lstrip()[:1] == b"{" and all(
        k in line for k in (b'"promptIdx"', b'"testIdx"', b'"provider"', b'"success"')
    )


def _label(obj: Any, *keys: str) -> str | None:
    if isinstance(obj, str):
        return obj
    if isinstance(obj, Mapping):
        for key in keys:
            if obj.get(key):
                return str(obj[key])
    return None


@register
class PromptfooReader(Reader):
    """promptfoo evaluation results."""

    name = "promptfoo"
    title = "promptfoo results (promptfoo eval -o results.json, or -o results.jsonl)"
    options = frozenset({"case_key"})

    @classmethod
    def sniff(cls, path: Path, head: bytes) -> bool:
        """A JSON document that opens with ``evalId``, or JSONL rows with promptfoo's keys."""
        return path.is_file() and (_is_results_json(head) or _is_results_line(head))

    def open(self, source: Source, con: Any, options: ReadOptions) -> Opened:
        """Read every result row; number repeats per (arm, case)."""
        with source.path.open("rb") as fh:
            head = fh.read(4096)
        builder = ReportBuilder("promptfoo", str(source.path), "promptfoo", strict=options.strict)
        if _is_results_json(head):
            meta = _header(source.path)
            version = meta.get("results_version")
            if version not in (None, 3):
                builder.issue(
                    "results_version",
                    f"results version {version} (this reader was written for version 3)",
                )
            builder.tool_version = meta.get("promptfoo_version")
            rows: Iterator[tuple[str, int | None, Any]] = (
                (f"results.results[{i}]", None, r)
                for i, r in enumerate(iter_items(source.path, "results.results.item"))
            )
            prompts = meta.get("prompts") or []
        else:
            rows = ((f"line {n}", n, r) for n, r in read_json_lines(source.path))
            prompts = []
        mapper = _Rows(source, options.case_key, builder)
        for where, line, row in rows:
            if isinstance(row, Mapping):
                mapper.add(where, line, row)
        writer = mapper.finish()
        builder.reported.update(_reported(prompts, mapper))
        builder.mapped.extend(_MAPPED)
        return imported(
            source, con, writer, builder, pins=mapper.pins, default_metrics=("pass",), unit="row"
        )


_MAPPED = (
    "arm <- provider label x prompt label",
    "case_id <- test description (or --case-key)",
    "repeat <- order of testIdx per (arm, case): promptfoo records no repeat index",
    "pass <- success (errored rows unscored); score <- score; check.<type> <- each assertion",
    "named scores <- weighted mean of their assertions' scores",
)


def _header(path: Path) -> dict[str, Any]:
    """Version, promptfoo version and ``results.prompts`` without loading the result rows."""
    out: dict[str, Any] = {}
    for version in iter_items(path, "results.version"):
        out["results_version"] = version
    for meta in iter_items(path, "metadata"):
        if isinstance(meta, Mapping):
            out["promptfoo_version"] = meta.get("promptfooVersion")
    for prompts in iter_items(path, "results.prompts"):
        out["prompts"] = prompts if isinstance(prompts, list) else []
    return out


class _Rows:
    """Maps result rows to attempt rows; keeps what the arms and cases are made of."""

    def __init__(self, source: Source, case_key: str | None, builder: ReportBuilder) -> None:
        if case_key is not None and not (
            case_key in ("description", "vars") or case_key.startswith(("vars.", "metadata."))
        ):
            raise UsageError(
                "--case-key for promptfoo is description, vars, vars.NAME or metadata.NAME, "
                f"not {case_key!r}"
            )
        self.source = source
        self.case_key = case_key
        self.builder = builder
        self.pending: list[dict[str, Any]] = []
        self.providers: dict[str, None] = {}
        self.prompts: dict[str, None] = {}
        self.vars_of: dict[str, str] = {}
        self.pins: dict[str, dict[str, Any]] = {}
        self.metrics: dict[str, None] = {"pass": None, "score": None}
        self.zero_weight_metrics: set[str] = set()
        self._pinned: dict[tuple[str, str], dict[str, Any]] = {}

    def add(self, where: str, line: int | None, row: Mapping[str, Any]) -> None:
        """One result row."""
        provider = _label(row.get("provider"), "label", "id") or "provider"
        prompt = _label(row.get("prompt"), "label", "id", "raw") or "prompt"
        self.providers.setdefault(provider, None)
        self.prompts.setdefault(prompt, None)
        test = _mapping(row.get("testCase"))
        variables = _mapping(row.get("vars"))
        case_id = self._case_id(test, variables, where)
        out: dict[str, Any] = {
            "case_id": case_id,
            "_provider": provider,
            "_prompt": prompt,
            "_order": (_int(row.get("promptIdx")), _int(row.get("testIdx")), len(self.pending)),
            "_where": where,
            "_line": line,
            "provider": provider,
            "prompt": prompt,
        }
        for key, value in variables.items():
            out[f"vars.{key}"] = scalar_text(value)
        for key, value in _mapping(test.get("metadata")).items():
            out[f"metadata.{key}"] = scalar_text(value)
        self._outcome(row, out, f"{case_id} ({provider}, {prompt})")
        spec = _mapping(row.get("prompt"))  # the rendered prompt and the prompt's config
        out.update(upstream_columns(spec.get("raw"), spec.get("config")))
        output = _mapping(row.get("response")).get("output")
        if output is not None:
            out["output"] = output if isinstance(output, str) else json.dumps(output)
        _usage(row, out)
        self.pending.append(out)
        self._pin(provider, prompt, row)

    def _case_id(self, test: Mapping[str, Any], variables: Mapping[str, Any], where: str) -> str:
        vars_json = json.dumps(variables, sort_keys=True, default=str)
        key = self.case_key or "description"
        value = test.get("description") if key == "description" else None
        if key == "description" and not value:
            self.builder.issue(
                "no_description",
                "tests without a description: their case id is a hash of their vars",
                where,
            )
            key = "vars"
        if key == "vars":
            value = "vars-" + hashlib.sha256(vars_json.encode()).hexdigest()[:12]
        elif key.startswith(("vars.", "metadata.")):
            holder = variables if key.startswith("vars.") else _mapping(test.get("metadata"))
            value = holder.get(key.split(".", 1)[1])
            if value is None or str(value).strip() == "":
                raise BadValueError(
                    f"result has no {key} (--case-key)",
                    Location(f"{self.source.path} ({where})", None, key),
                )
        case_id = str(value)
        if key == "description" and self.vars_of.setdefault(case_id, vars_json) != vars_json:
            raise BadValueError(
                f"two tests share the description {case_id!r} but not their vars; name the "
                "case with --case-key vars.NAME, metadata.NAME or vars",
                Location(f"{self.source.path} ({where})", None, "description", case_id),
            )
        return case_id

    def _outcome(self, row: Mapping[str, Any], out: dict[str, Any], label: str) -> None:
        if row.get("failureReason") == 2:
            out["error"] = str(row.get("error") or "error")[:500]
            out["pass"] = out["score"] = None
            self.builder.issue(
                "errored_result",
                "errored results (the provider failed: unscored, left out of the rates; "
                "promptfoo counts them as errors, not failures)",
                label,
            )
            return
        success = row.get("success")
        out["pass"] = 1.0 if success is True else 0.0 if success is False else None
        score = row.get("score")
        out["score"] = float(score) if isinstance(score, int | float) else None
        grading = _mapping(row.get("gradingResult"))
        if "namedScores" not in grading and isinstance(row.get("namedScores"), Mapping):
            grading = {**grading, "namedScores": row["namedScores"]}
        self._components(grading, out)

    def _components(self, grading: Mapping[str, Any], out: dict[str, Any]) -> None:
        """``check.<type>`` per assertion, and each named score as promptfoo scores the row.

        An ``assert-set`` is one entry of ``componentResults`` without an ``assertion`` (its
        metric, weight and threshold in ``metadata.assertionSet``), followed by copies of
        its children, which it also nests: the set gives ``check.assert-set`` and each
        child its own check, once. A named score is the row's own ``namedScores`` value
        (what promptfoo reports, set weights and set metrics included); only a metric every
        one of whose assertions has weight 0, which promptfoo reports as 0, takes the mean
        of those assertions' scores instead (the import says so).
        """
        components = grading.get("componentResults")
        counts: dict[str, int] = {}
        zero: dict[str, list[float]] = {}
        positive: set[str] = set()
        for comp in components if isinstance(components, list) else []:
            if not isinstance(comp, Mapping):
                continue
            assertion = _mapping(comp.get("assertion"))
            if not assertion:
                meta = _mapping(_mapping(comp.get("metadata")).get("assertionSet"))
                assertion = {"type": meta.get("type") or "assert-set", **meta}
            kind = str(assertion.get("type") or "assertion")
            counts[kind] = counts.get(kind, 0) + 1
            column = f"check.{kind}" + (f".{counts[kind]}" if counts[kind] > 1 else "")
            weight = float(assertion["weight"]) if _number(assertion.get("weight")) else 1.0
            score = float(comp["score"]) if _number(comp.get("score")) else None
            single = "assertion" in comp  # a single weight-0 assertion is forced to pass
            # ... so its score is what it measured; a set's pass is its own
            out[column] = (
                score if weight == 0 and single else (1.0 if comp.get("pass") is True else 0.0)
            )
            self.metrics.setdefault(column, None)
            metric = assertion.get("metric")
            if metric and score is not None:
                if weight == 0:
                    zero.setdefault(str(metric), []).append(score)
                else:
                    positive.add(str(metric))
        named = _mapping(grading.get("namedScores"))
        weights = _mapping(grading.get("namedScoreWeights"))
        for metric, value in named.items():
            name = str(metric)
            only_zero = (
                weights.get(name) == 0 if name in weights else name in zero and name not in positive
            )
            if only_zero and zero.get(name):
                self.zero_weight_metrics.add(name)
                number: float | None = sum(zero[name]) / len(zero[name])
            else:
                number = float(value) if _number(value) else None
            column = name if name not in _RESERVED else f"named.{name}"
            out[column] = number
            self.metrics.setdefault(column, None)

    def _pin(self, provider: str, prompt: str, row: Mapping[str, Any]) -> None:
        if (provider, prompt) in self._pinned:
            return
        prov, prom = _mapping(row.get("provider")), _mapping(row.get("prompt"))
        self._pinned[(provider, prompt)] = {
            "model": prov.get("id"),
            "provider": provider,
            "params": prov.get("config") or {},
            "template.label": prom.get("label"),
            "template.id": row.get("promptId"),
        }

    def arm(self, provider: str, prompt: str) -> str:
        """The arm's name: the parts that vary across the file."""
        if len(self.prompts) == 1:
            return provider
        if len(self.providers) == 1:
            return prompt
        return f"{provider} / {prompt}"

    def finish(self) -> RowWriter:
        """Name the arms, number the repeats and write the rows in promptfoo's column order.

        promptfoo records no repeat index; ``testIdx`` counts a test's repeats in order
        (test position x repeats + repeat), so the rank of ``testIdx`` within an (arm, case)
        is its repeat. Rows are written in (``promptIdx``, ``testIdx``) order, so the first
        provider and prompt of the config is the first arm (the default baseline).
        """
        self.pending.sort(key=lambda r: r["_order"])
        seen: dict[tuple[str, str], int] = {}
        numbered = 0
        writer = RowWriter(self.metrics)
        for row in self.pending:
            row["arm"] = self.arm(row.pop("_provider"), row.pop("_prompt"))
            del row["_order"]
            key = (row["arm"], row["case_id"])
            row["repeat"] = seen.get(key, -1) + 1
            seen[key] = row["repeat"]
            numbered += row["repeat"] > 0
            writer.add(row)
        if numbered:
            self.builder.issue(
                "numbered_repeats",
                "attempts whose repeat index evaldelta numbered (promptfoo records none), in "
                "testIdx order per arm and case",
                count=numbered,
            )
        if self.zero_weight_metrics:
            names = ", ".join(sorted(self.zero_weight_metrics))
            self.builder.issue(
                "zero_weight_metric",
                f"named scores fed only by weight-0 assertions ({names}): promptfoo reports "
                "them as 0; evaldelta takes the mean of their assertions' scores",
            )
        self.pins = {self.arm(*key): pins for key, pins in self._pinned.items()}
        self.pending = []
        return writer


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else -1


def _usage(row: Mapping[str, Any], out: dict[str, Any]) -> None:
    response = _mapping(row.get("response"))
    cost = row.get("cost", response.get("cost"))
    if _number(cost):
        out["cost_usd"] = float(cost)
    usage = _mapping(row.get("tokenUsage") or response.get("tokenUsage"))
    if isinstance(usage.get("prompt"), int):
        out["input_tokens"] = usage["prompt"]
    if isinstance(usage.get("completion"), int):
        out["output_tokens"] = usage["completion"]
    if _number(row.get("latencyMs")):
        out["latency_ms"] = float(row["latencyMs"])


def _reported(prompts: list[Any], mapper: _Rows) -> dict[str, dict[str, float]]:
    """The counts promptfoo reports per (provider, prompt), under our arm names."""
    out: dict[str, dict[str, float]] = {}
    for prompt in prompts:
        if not isinstance(prompt, Mapping) or not isinstance(prompt.get("metrics"), Mapping):
            continue
        provider = str(prompt.get("provider") or "provider")
        label = _label(prompt, "label", "id", "raw") or "prompt"
        metrics = prompt["metrics"]
        figures = {
            k: float(metrics[k])
            for k in ("testPassCount", "testFailCount", "testErrorCount", "score", "cost")
            if _number(metrics.get(k))
        }
        weights = _mapping(metrics.get("namedScoreWeights"))
        for name, value in _mapping(metrics.get("namedScores")).items():
            if _number(value):
                figures[f"namedScores.{name}"] = float(value)
                # promptfoo sums each row's score times its weight: the mean divides back
                if _number(weights.get(name)) and weights[name] > 0:
                    figures[f"namedScores.{name}.mean"] = float(value) / float(weights[name])
        out[mapper.arm(provider, label)] = figures
    return out
