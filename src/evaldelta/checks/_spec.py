"""Read a checks file (YAML) into :class:`CheckSpec` objects, naming file and line on error.

``yaml.safe_load`` forgets where a value came from, so the file is composed into nodes
(within the nesting and alias limits of :mod:`evaldelta._util._yaml`) and each check's keys are
read with their line numbers. Every problem is one line:
``checks.yaml, line 12, field 'kind', value 'regx': unknown check kind (did you mean
'regex_required'?)``. The schema is documented in ``examples/checks.yaml``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from evaldelta._util import _limits, _yaml
from evaldelta.errors import ChecksFileError, Location

__all__ = ["KINDS", "CheckSpec", "parse_checks", "read_checks"]

COMMON = ("id", "spec", "kind")
# kind -> (required keys, optional keys)
KINDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "contains_field": (("field",), ("ignore_case",)),
    "regex_required": (("pattern",), ("ignore_case",)),
    "regex_forbidden": (("pattern",), ("ignore_case", "ignore_negated")),
    "no_commitment_date": ((), ("ignore_negated", "extra_patterns")),
    "word_count": ((), ("min", "max")),
    "allowed_values": (("field",), ("pattern", "values", "ignore_negated")),
    "json_schema": ((), ("schema", "schema_file")),
    "fields_equal": (("fields",), ("normalize",)),
    "python": (("function",), ()),
    "judge": (
        ("rubric",),
        ("model", "provider", "params", "inputs", "graded", "pass_threshold", "repeats", "mode"),
    ),
}
TOP_LEVEL = ("version", "checks", "judge")
JUDGE_DEFAULTS = ("model", "provider", "params")
_ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]*$")


@dataclass(frozen=True)
class CheckSpec:
    """One declared check: its id, spec sentence, kind, options, and where it was declared.

    ``lines`` maps each option key (and ``id``, ``kind``) to its line in ``path`` so that
    later validation (a bad regex, a python function that will not import) can name it.
    """

    id: str
    spec: str
    kind: str
    options: Mapping[str, Any]
    path: str
    line: int
    lines: Mapping[str, int] = field(default_factory=dict)

    def where(self, key: str | None = None, value: object = None) -> Location:
        """The location of this check (or one of its keys) for an error message."""
        line = self.lines.get(key, self.line) if key else self.line
        return Location(self.path, line, key, value)

    def error(self, key: str, message: str, value: object = None) -> ChecksFileError:
        """A one-line error about ``key`` of this check."""
        shown = value if value is not None else self.options.get(key)
        return ChecksFileError(message, self.where(key, _short(shown)))


def _short(value: object) -> object:
    if isinstance(value, str) and len(value) > 60:
        return value[:57] + "..."
    if isinstance(value, dict | list):
        text = repr(value)
        return text if len(text) <= 60 else text[:57] + "..."
    return value


def _value(node: Node) -> Any:
    return SafeConstructor().construct_object(node, deep=True)


def _pairs(node: MappingNode, path: str, what: str) -> dict[str, tuple[Node, Node]]:
    out: dict[str, tuple[Node, Node]] = {}
    for key_node, value_node in node.value:
        key = _value(key_node)
        line = key_node.start_mark.line + 1
        if not isinstance(key, str):
            raise ChecksFileError(f"{what} keys must be strings", Location(path, line, None, key))
        if key in out:
            raise ChecksFileError(f"duplicate key in {what}", Location(path, line, key))
        out[key] = (key_node, value_node)
    return out


def _suggest(word: str, choices: tuple[str, ...] | list[str]) -> str:
    def score(choice: str) -> float:
        head = choice[: len(word) + 1]  # "regx" is close to the start of "regex_required"
        whole = difflib.SequenceMatcher(None, word, choice).ratio()
        return max(whole, difflib.SequenceMatcher(None, word, head).ratio())

    best = max(choices, key=score) if choices else None
    if best is not None and score(best) >= 0.6:
        return f" (did you mean {best!r}?)"
    return f" (known: {', '.join(choices)})"


def read_checks(path: str | Path) -> list[CheckSpec]:
    """Read and validate the structure of a checks file; see :func:`parse_checks`."""
    p = Path(path)
    if not p.exists():
        raise ChecksFileError("checks file does not exist", Location(str(path)))
    text = _limits.read_text(p, ChecksFileError, "the checks file", _limits.MAX_YAML_BYTES)
    return parse_checks(text, str(path))


def parse_checks(text: str, path: str = "<checks>") -> list[CheckSpec]:
    """Parse checks YAML: a list of checks, or a mapping with ``checks`` (and ``judge``).

    Composed within the limits of :mod:`evaldelta._util._yaml` (nesting, alias expansion).
    """
    root = _yaml.compose(text, path, ChecksFileError)
    if root is None:
        raise ChecksFileError("the checks file is empty", Location(path))
    defaults: dict[str, Any] = {}
    if isinstance(root, MappingNode):
        top = _pairs(root, path, "the checks file")
        for key, (key_node, _) in top.items():
            if key not in TOP_LEVEL:
                raise ChecksFileError(
                    "unknown top-level key" + _suggest(key, TOP_LEVEL),
                    Location(path, key_node.start_mark.line + 1, key),
                )
        if "checks" not in top:
            raise ChecksFileError("the checks file needs a 'checks' list", Location(path, 1))
        if "judge" in top:
            defaults = _judge_defaults(top["judge"][1], path)
        seq = top["checks"][1]
    else:
        seq = root
    if not isinstance(seq, SequenceNode):
        raise ChecksFileError(
            "'checks' must be a list of checks", Location(path, seq.start_mark.line + 1)
        )
    if not seq.value:
        raise ChecksFileError("the checks list is empty", Location(path, seq.start_mark.line + 1))
    specs = [_one_check(node, path, defaults) for node in seq.value]
    seen: dict[str, int] = {}
    for spec in specs:
        if spec.id in seen:
            raise ChecksFileError(
                f"duplicate check id (first declared on line {seen[spec.id]})",
                spec.where("id", spec.id),
            )
        seen[spec.id] = spec.line
    return specs


def _judge_defaults(node: Node, path: str) -> dict[str, Any]:
    if not isinstance(node, MappingNode):
        raise ChecksFileError(
            "'judge' must be a mapping of defaults", Location(path, node.start_mark.line + 1)
        )
    out: dict[str, Any] = {}
    for key, (key_node, value_node) in _pairs(node, path, "judge").items():
        if key not in JUDGE_DEFAULTS:
            raise ChecksFileError(
                "unknown judge default" + _suggest(key, JUDGE_DEFAULTS),
                Location(path, key_node.start_mark.line + 1, f"judge.{key}"),
            )
        out[key] = _value(value_node)
    return out


def _one_check(node: Node, path: str, defaults: Mapping[str, Any]) -> CheckSpec:
    line = node.start_mark.line + 1
    if not isinstance(node, MappingNode):
        shown = _short(_value(node)) if isinstance(node, ScalarNode) else None
        raise ChecksFileError(
            "each check must be a mapping with id, spec and kind", Location(path, line, None, shown)
        )
    pairs = _pairs(node, path, "a check")
    lines = {k: kn.start_mark.line + 1 for k, (kn, _) in pairs.items()}
    values = {k: _value(vn) for k, (_, vn) in pairs.items()}
    for key in COMMON:
        if key not in values:
            raise ChecksFileError(f"a check needs {key!r}", Location(path, line, key))
    ident, spec, kind = values["id"], values["spec"], values["kind"]
    if not isinstance(ident, str) or not _ID.match(ident):
        raise ChecksFileError(
            "a check id is letters, digits, '_' and '-' (it becomes the column check.<id>)",
            Location(path, lines["id"], "id", ident),
        )
    if not isinstance(spec, str) or not spec.strip():
        raise ChecksFileError(
            "'spec' is the requirement sentence the check comes from (non-empty text)",
            Location(path, lines["spec"], "spec", spec),
        )
    if kind not in KINDS:
        raise ChecksFileError(
            "unknown check kind" + _suggest(str(kind), tuple(KINDS)),
            Location(path, lines["kind"], "kind", kind),
        )
    required, optional = KINDS[kind]
    options = {k: v for k, v in values.items() if k not in COMMON}
    for key in options:
        if key not in required and key not in optional:
            raise ChecksFileError(
                f"unknown key for a {kind} check" + _suggest(key, [*required, *optional]),
                Location(path, lines[key], key),
            )
    if kind == "judge":
        for key, value in defaults.items():
            options.setdefault(key, value)
    for key in required:
        if key not in options:
            raise ChecksFileError(f"a {kind} check needs {key!r}", Location(path, line, key))
    return CheckSpec(ident, spec.strip(), kind, options, path, line, lines)
