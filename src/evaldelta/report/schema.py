"""Derive the JSON Schema of the Comparison from its dataclasses.

The committed ``schema/comparison.schema.json`` is this function's output; a test checks
that the two agree and validates real output against it, so the schema cannot drift from
the code silently.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any

from evaldelta.comparison.model import SCHEMA_VERSION, Comparison, json_left_out
from evaldelta.stats import AnytimeEstimate, AnytimeResult, Estimate, PairedResult

__all__ = ["comparison_schema", "verdict_schema"]

# a field of the base type holds either it or its anytime-valid form (a sequential
# comparison's confidence sequences: ``"anytime": true``, no per-case ``values``)
_ANYTIME = {PairedResult: AnytimeResult, Estimate: AnytimeEstimate}


def _dataclass_def(tp: type, defs: dict[str, Any]) -> None:
    """Put ``tp``'s object schema in ``defs`` under its name (once)."""
    name = tp.__name__
    if name in defs:
        return
    defs[name] = {}  # placeholder against recursion
    hints = typing.get_type_hints(tp)
    left_out = json_left_out(tp)
    props = {
        f.name: _schema_for(hints[f.name], defs)
        for f in dataclasses.fields(tp)
        if f.name not in left_out
    }
    if name == "SimpsonResult":
        props["kind"] = {"enum": ["reversal", "mix_shift", "none"]}
    if tp in _ANYTIME.values():
        props["anytime"] = {"const": True}
    defs[name] = {
        "type": "object",
        "properties": props,
        "required": sorted(props),
        "additionalProperties": False,
    }


def _schema_for(tp: Any, defs: dict[str, Any]) -> dict[str, Any]:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(tp) if a is not type(None)]
        inner = (
            _schema_for(options[0], defs)
            if len(options) == 1
            else {"anyOf": [_schema_for(a, defs) for a in options]}
        )
        return {"anyOf": [inner, {"type": "null"}]}
    if origin is typing.Literal:
        return {"enum": list(typing.get_args(tp))}
    if tp is float:
        return {"type": ["number", "null"]}  # NaN and infinities serialize as null
    if tp is int:
        return {"type": "integer"}
    if tp is bool:
        return {"type": "boolean"}
    if tp is str:
        return {"type": "string"}
    if origin is tuple:
        args = typing.get_args(tp)
        return {"type": "array", "items": _schema_for(args[0], defs)}
    if origin in (Mapping, dict) or (origin is not None and issubclass(origin, Mapping)):
        value = typing.get_args(tp)[1]
        return {"type": "object", "additionalProperties": _schema_for(value, defs)}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        _dataclass_def(tp, defs)
        anytime = _ANYTIME.get(tp)
        if anytime is None:
            return {"$ref": f"#/$defs/{tp.__name__}"}
        _dataclass_def(anytime, defs)
        return {"anyOf": [{"$ref": f"#/$defs/{t.__name__}"} for t in (tp, anytime)]}
    raise TypeError(f"no JSON Schema rule for {tp!r}")


def comparison_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``render_json(compare(...))``."""
    defs: dict[str, Any] = {}
    _schema_for(Comparison, defs)
    body = dict(defs.pop("Comparison"))
    body["properties"] = dict(body["properties"])
    body["properties"]["schema_version"] = {"const": SCHEMA_VERSION}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://evaldelta.dev/schema/comparison.schema.json",
        "title": "evaldelta Comparison",
        **body,
        "$defs": defs,
    }


def verdict_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``evaldelta gate --format json`` (a Verdict).

    A regression case's rule carries its provenance (``rules[].regression``).
    """
    from evaldelta.gating import Verdict  # here: the gate loads the engine

    defs: dict[str, Any] = {}
    _schema_for(Verdict, defs)
    body = dict(defs.pop("Verdict"))
    props = dict(body["properties"])
    counts = {"type": "object", "additionalProperties": {"type": "integer"}}
    props["counts"] = counts
    body["properties"], body["required"] = props, sorted(props)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://evaldelta.dev/schema/verdict.schema.json",
        "title": "evaldelta Verdict",
        **body,
        "$defs": defs,
    }
