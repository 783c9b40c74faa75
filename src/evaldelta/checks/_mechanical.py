"""Mechanical checks: each turns (reply, case fields) into a :class:`CheckResult`.

A check is built from a :class:`~evaldelta.checks._spec.CheckSpec` by :func:`build_check`,
which validates every option first (a bad regex, a schema that is not a schema, a python
function that will not import) and names the checks file, line, field and value.

User patterns are compiled and matched by :mod:`evaldelta.checks._patterns` (the ``regex``
package, with size limits and a per-reply timeout). A pattern that times out on a reply
leaves that reply's check unscored (``passed`` None) with the reason "not scored: the
regular expression '...' timed out after 1 s on this text (...)", never a pass or a fail,
and so does every reply after the check's patterns have spent their time budget for the
file; :func:`timed_out` tells those results apart.
"""

from __future__ import annotations

import importlib
import json
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]

from evaldelta._util import _limits
from evaldelta._util._json_bounds import check_json, nests_too_deep
from evaldelta._util._limits import too_deep
from evaldelta.checks._dates import commitment_dates, is_negated, normalize_text
from evaldelta.checks._patterns import PatternTimeout, TimeBudget, UserPattern, compile_pattern
from evaldelta.checks._spec import CheckSpec
from evaldelta.errors import BadValueError, ChecksFileError, Location

__all__ = ["Check", "CheckResult", "build_check", "split_values", "timed_out"]

Case = Mapping[str, Any]
_WORD = re.compile(r"\w", re.UNICODE)


@dataclass(frozen=True)
class CheckResult:
    """One check on one attempt.

    ``passed`` is None when the check could not be scored; ``score`` is a graded score (judge
    only); ``stated`` lists the values the reply stated (``allowed_values``, dates).
    """

    check_id: str
    passed: bool | None
    score: float | None = None
    reason: str = ""
    stated: tuple[str, ...] = ()


@dataclass(frozen=True)
class Check:
    """A compiled mechanical check. ``fields`` are the case columns it reads."""

    spec: CheckSpec
    run: Callable[[str, Case], CheckResult]
    fields: tuple[str, ...] = field(default_factory=tuple)

    @property
    def id(self) -> str:
        """The check's id (its column is ``check.<id>``)."""
        return self.spec.id

    @property
    def kind(self) -> str:
        """The check kind."""
        return self.spec.kind

    def evaluate(self, output: str, case: Case) -> CheckResult:
        """Run the check on one reply and its case's fields."""
        return self.run(output, case)


def split_values(value: Any) -> list[str]:
    """A case field holding permitted values: a list, or text split on ``|`` or ``;``."""
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return [str(v).strip() for v in value if str(v).strip()]
    text = str(value).strip()
    if text.startswith("[") and not nests_too_deep(text):
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if isinstance(parsed, list):
            return [str(v).strip() for v in parsed]
    return [part.strip() for part in re.split(r"[|;]", text) if part.strip()]


def _canon(text: str) -> str:
    return " ".join(normalize_text(text).casefold().split())


def _bool(spec: CheckSpec, key: str, default: bool) -> bool:
    value = spec.options.get(key, default)
    if not isinstance(value, bool):
        raise spec.error(key, "must be true or false")
    return value


def _str(spec: CheckSpec, key: str) -> str:
    value = spec.options.get(key)
    if not isinstance(value, str) or not value.strip():
        raise spec.error(key, "must be non-empty text")
    return value


def _regex(
    spec: CheckSpec, key: str, value: object, ignore_case: bool, budget: TimeBudget | None = None
) -> UserPattern:
    if not isinstance(value, str) or not value:
        raise spec.error(key, "must be a regular expression (text)", value)
    try:
        return compile_pattern(value, ignore_case=ignore_case, budget=budget)
    except ValueError as exc:
        raise spec.error(key, str(exc), value) from None


_NOT_SCORED = "not scored: "


def _timeout(spec: CheckSpec, exc: PatternTimeout) -> CheckResult:
    """The unscored result of a pattern that gave up on a reply (see :func:`timed_out`)."""
    return CheckResult(spec.id, None, None, _NOT_SCORED + str(exc))


def timed_out(result: CheckResult) -> bool:
    """Whether ``result`` is unscored because one of its patterns timed out on the reply."""
    return (
        result.passed is None
        and result.reason.startswith(_NOT_SCORED + "the regular expression ")
        and " timed out after " in result.reason
    )


def _result(spec: CheckSpec, ok: bool, why: str, stated: tuple[str, ...] = ()) -> CheckResult:
    return CheckResult(spec.id, ok, None, "" if ok else why, stated)


def _contains_field(spec: CheckSpec) -> Check:
    name = _str(spec, "field")
    flags = re.IGNORECASE if _bool(spec, "ignore_case", True) else 0

    def run(output: str, case: Case) -> CheckResult:
        value = str(case.get(name) or "").strip()
        if not value:
            return CheckResult(spec.id, None, None, f"the case has no value in {name!r}")
        found = re.search(rf"(?<![0-9A-Za-z]){re.escape(value)}(?![0-9A-Za-z])", output, flags)
        return _result(spec, found is not None, f"the reply does not name {name} {value!r}")

    return Check(spec, run, (name,))


def _regex_check(spec: CheckSpec, budget: TimeBudget, forbidden: bool) -> Check:
    ignore_case = _bool(spec, "ignore_case", True)
    pattern = _regex(spec, "pattern", spec.options.get("pattern"), ignore_case, budget)
    skip_negated = forbidden and _bool(spec, "ignore_negated", False)

    def run(output: str, case: Case) -> CheckResult:
        text = normalize_text(output)
        try:
            found = list(pattern.finditer(text))
        except PatternTimeout as exc:
            return _timeout(spec, exc)
        hits = [m for m in found if not (skip_negated and is_negated(text, m.start()))]
        if forbidden:
            return _result(spec, not hits, f"forbidden text {hits[0].group(0)!r}" if hits else "")
        return _result(spec, bool(hits), f"required pattern {pattern.source!r} not found")

    return Check(spec, run)


def _no_commitment_date(spec: CheckSpec, budget: TimeBudget) -> Check:
    raw = spec.options.get("extra_patterns", [])
    if not isinstance(raw, list):
        raise spec.error("extra_patterns", "must be a list of regular expressions")
    extra = [_regex(spec, "extra_patterns", p, True, budget) for p in raw]
    skip_negated = _bool(spec, "ignore_negated", True)

    def run(output: str, case: Case) -> CheckResult:
        try:
            found = commitment_dates(output, ignore_negated=skip_negated, extra=extra)
        except PatternTimeout as exc:
            return _timeout(spec, exc)
        why = "; ".join(f"{m.kind} {m.text!r}" for m in found)
        return _result(spec, not found, f"commits to a date: {why}", tuple(m.text for m in found))

    return Check(spec, run)


def _word_count(spec: CheckSpec) -> Check:
    lo, hi = spec.options.get("min"), spec.options.get("max")
    for key, value in (("min", lo), ("max", hi)):
        if value is not None and (
            not isinstance(value, int) or isinstance(value, bool) or value < 0
        ):
            raise spec.error(key, "must be a whole number >= 0")
    if lo is None and hi is None:
        raise spec.error("kind", "a word_count check needs 'min', 'max' or both", "word_count")
    if lo is not None and hi is not None and lo > hi:
        raise spec.error("min", f"min must not exceed max ({hi})")

    def run(output: str, case: Case) -> CheckResult:
        n = sum(1 for token in output.split() if _WORD.search(token))
        ok = (lo is None or n >= lo) and (hi is None or n <= hi)
        bounds = f"{lo if lo is not None else 0}..{hi if hi is not None else 'inf'}"
        return CheckResult(spec.id, ok, None, "" if ok else f"{n} words, outside {bounds}")

    return Check(spec, run)


def _vocabulary(spec: CheckSpec) -> list[tuple[str, re.Pattern[str]]]:
    raw = spec.options["values"]
    items: list[tuple[str, list[str]]]
    if isinstance(raw, list) and all(isinstance(v, str) for v in raw):
        items = [(v, [v]) for v in raw]
    elif isinstance(raw, dict) and all(
        isinstance(v, list) and all(isinstance(s, str) for s in v) for v in raw.values()
    ):
        items = [(str(k), [str(k), *v]) for k, v in raw.items()]
    else:
        raise spec.error("values", "must be a list of terms, or a mapping of value to synonyms")
    out = []
    for canonical, synonyms in items:
        alts = "|".join(re.escape(s) for s in sorted(synonyms, key=len, reverse=True))
        out.append((canonical, re.compile(rf"(?<!\w)(?:{alts})(?:e?s)?(?!\w)", re.IGNORECASE)))
    return out


def _allowed_values(spec: CheckSpec, budget: TimeBudget) -> Check:
    name = _str(spec, "field")
    has_pattern, has_values = "pattern" in spec.options, "values" in spec.options
    if has_pattern == has_values:
        raise spec.error(
            "field", "an allowed_values check needs exactly one of 'pattern' or 'values'"
        )
    skip_negated = _bool(spec, "ignore_negated", True)
    pattern = (
        _regex(spec, "pattern", spec.options["pattern"], True, budget) if has_pattern else None
    )
    vocab = _vocabulary(spec) if has_values else []

    def stated(text: str) -> list[str]:
        found: list[tuple[int, str]] = []
        if pattern is not None:
            for m in pattern.finditer(text):
                value = m.group("value") if "value" in pattern.groupindex else m.group(0)
                found.append((m.start(), _canon(value)))
        for canonical, rx in vocab:
            found += [(m.start(), _canon(canonical)) for m in rx.finditer(text)]
        kept = [(i, v) for i, v in found if not (skip_negated and is_negated(text, i))]
        return list(dict.fromkeys(v for _, v in sorted(kept)))

    def run(output: str, case: Case) -> CheckResult:
        if case.get(name) is None:
            return CheckResult(spec.id, None, None, f"the case has no value in {name!r}")
        permitted = {_canon(v) for v in split_values(case.get(name))}
        try:
            values = stated(normalize_text(output))
        except PatternTimeout as exc:
            return _timeout(spec, exc)
        bad = [v for v in values if v not in permitted]
        why = f"states {', '.join(map(repr, bad))}; {name} permits {sorted(permitted)}"
        return _result(spec, not bad, why, tuple(values))

    return Check(spec, run, (name,))


def parse_json_reply(output: str) -> Any:
    """The reply as JSON (a surrounding ```json fence is allowed); raises ValueError.

    A reply nested past :data:`~evaldelta._util._limits.MAX_DEPTH` is not read (ValueError).
    """
    text = output.strip()
    if len(text) >= 6 and text.startswith("```") and text.endswith("```"):
        text = text[3:-3]
        if text[:4].lower() == "json":
            text = text[4:]
        text = text.strip()
    if nests_too_deep(text):
        raise ValueError(too_deep("JSON"))
    return json.loads(text)


def _json_schema(spec: CheckSpec) -> Check:
    if ("schema" in spec.options) == ("schema_file" in spec.options):
        raise spec.error(
            "kind",
            "a json_schema check needs exactly one of 'schema' or 'schema_file'",
            "json_schema",
        )
    schema = _schema(spec)
    key = "schema_file" if "schema_file" in spec.options else "schema"
    if not isinstance(schema, dict):
        raise spec.error(key, "a JSON schema must be a mapping")
    cls = jsonschema.validators.validator_for(schema)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise spec.error(key, f"not a valid JSON schema: {exc.message}") from None
    except RecursionError:  # jsonschema checks by recursion, several frames a level
        raise spec.error(key, "the JSON schema nests too deeply for the validator") from None
    validator = cls(schema)

    def run(output: str, case: Case) -> CheckResult:
        try:
            data = parse_json_reply(output)
        except ValueError as exc:
            return _result(spec, False, f"the reply is not JSON: {exc}")
        try:
            errors = sorted(validator.iter_errors(data), key=lambda e: list(e.path))
        except RecursionError:
            why = "the reply nests too deeply to validate against the schema"
            return CheckResult(spec.id, None, None, _NOT_SCORED + why)
        if not errors:
            return _result(spec, True, "")
        where = "/".join(str(p) for p in errors[0].path) or "(root)"
        return _result(spec, False, f"{where}: {errors[0].message}")

    return Check(spec, run)


def _schema(spec: CheckSpec) -> Any:
    """The check's schema: inline, or read from ``schema_file`` within the JSON limits."""
    if "schema_file" not in spec.options:
        return spec.options["schema"]
    path = Path(spec.path).parent / _str(spec, "schema_file")
    try:
        text = _limits.read_text(path, ChecksFileError, "the schema file")
        check_json(text.encode("utf-8"), str(path), error=ChecksFileError)
        return json.loads(text)
    except (ChecksFileError, ValueError) as exc:
        why = exc.message if isinstance(exc, ChecksFileError) else str(exc)
        raise spec.error("schema_file", f"cannot read a JSON schema from {path}: {why}") from None


def _fields_equal(spec: CheckSpec) -> Check:
    raw = spec.options["fields"]
    if isinstance(raw, list) and raw and all(isinstance(f, str) for f in raw):
        pairs = [(f, f) for f in raw]
    elif isinstance(raw, dict) and raw and all(isinstance(v, str) for v in raw.values()):
        pairs = [(str(k), v) for k, v in raw.items()]
    else:
        raise spec.error("fields", "must be a list of field names or a mapping field: case column")
    mode = spec.options.get("normalize", "strip")
    if mode not in ("none", "strip", "casefold"):
        raise spec.error("normalize", "must be none, strip or casefold")

    def canon(value: Any) -> str:
        text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
        if mode == "none":
            return text
        return " ".join(text.split()).casefold() if mode == "casefold" else text.strip()

    def run(output: str, case: Case) -> CheckResult:
        try:
            data = parse_json_reply(output)
        except ValueError as exc:
            return _result(spec, False, f"the reply is not JSON: {exc}")
        if not isinstance(data, dict):
            return _result(spec, False, "the reply is not a JSON object")
        wrong = []
        for out_field, column in pairs:
            if out_field not in data:
                wrong.append(f"{out_field} missing")
            elif canon(data[out_field]) != canon(case.get(column)):
                wrong.append(f"{out_field} {data[out_field]!r} != {case.get(column)!r}")
        return _result(spec, not wrong, "; ".join(wrong))

    return Check(spec, run, tuple(c for _, c in pairs))


def load_function(spec: CheckSpec) -> Callable[..., Any]:
    """Import ``module:function``; the checks file's folder is searched first."""
    target = _str(spec, "function")
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise spec.error("function", "must be module:function")
    folder = str(Path(spec.path).resolve().parent)
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise spec.error("function", f"cannot import module {module_name!r}: {exc}") from None
    finally:
        if added:
            sys.path.remove(folder)
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise spec.error("function", f"module {module_name!r} has no function {attr!r}")
    return fn  # type: ignore[no-any-return]


def _python(spec: CheckSpec) -> Check:
    fn = load_function(spec)

    def run(output: str, case: Case) -> CheckResult:
        try:
            value = fn(output, case)
        except Exception as exc:
            raise BadValueError(
                f"python check {spec.id!r} raised {type(exc).__name__}: {exc} "
                f"(case {case.get('case_id')!r})",
                Location(spec.path, spec.lines.get("function", spec.line), "function"),
            ) from exc
        return _coerce(spec, value)

    return Check(spec, run)


def _coerce(spec: CheckSpec, value: Any) -> CheckResult:
    """A python check may return a bool, (bool, reason), or a mapping pass/score/reason."""
    if isinstance(value, CheckResult):
        return value
    if isinstance(value, bool):
        return CheckResult(spec.id, value)
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], bool):
        return CheckResult(spec.id, value[0], None, str(value[1]))
    if isinstance(value, Mapping) and isinstance(value.get("pass"), bool):
        score = value.get("score")
        return CheckResult(
            spec.id,
            value["pass"],
            float(score) if score is not None else None,
            str(value.get("reason", "")),
        )
    raise BadValueError(
        f"python check {spec.id!r} returned {value!r}; return a bool, (bool, reason) "
        "or a mapping with 'pass'",
        Location(spec.path, spec.lines.get("function", spec.line), "function"),
    )


# each builder takes the spec and the time budget its patterns share (TimeBudget)
BUILDERS: dict[str, Callable[[CheckSpec, TimeBudget], Check]] = {
    "contains_field": lambda s, _: _contains_field(s),
    "regex_required": lambda s, b: _regex_check(s, b, forbidden=False),
    "regex_forbidden": lambda s, b: _regex_check(s, b, forbidden=True),
    "no_commitment_date": _no_commitment_date,
    "word_count": lambda s, _: _word_count(s),
    "allowed_values": _allowed_values,
    "json_schema": lambda s, _: _json_schema(s),
    "fields_equal": lambda s, _: _fields_equal(s),
    "python": lambda s, _: _python(s),
}


def build_check(spec: CheckSpec, file_budget: TimeBudget | None = None) -> Check:
    """Compile one mechanical check, validating its options.

    Its patterns share one :class:`~evaldelta.checks._patterns.TimeBudget`, drawn from
    ``file_budget`` (the checks file's, shared by all its checks) when given.
    """
    return BUILDERS[spec.kind](spec, TimeBudget(parent=file_budget))


def run_all(checks: Sequence[Check], output: str, case: Case) -> list[CheckResult]:
    """Every check on one reply."""
    return [c.evaluate(output, case) for c in checks]
