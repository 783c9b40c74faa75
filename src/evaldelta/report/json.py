"""The JSON form of a Comparison (validated by ``schema/comparison.schema.json``)."""

from __future__ import annotations

import json as _json

from evaldelta.comparison.model import Comparison, to_jsonable

__all__ = ["render_json"]


def render_json(comparison: Comparison) -> str:
    """Serialize the whole comparison; undefined numbers become null."""
    return _json.dumps(to_jsonable(comparison), indent=2, allow_nan=False) + "\n"
