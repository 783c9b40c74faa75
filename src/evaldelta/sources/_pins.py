"""Pins (each arm's recorded configuration) as readers hand them over, and how inputs are named.

A run store's pins are read through :func:`evaldelta.store.iter_pins` (each arm's recorded
configuration with the model versions the API reported) and the run's own free-form pins
(``[pins]`` of the run config); importers take theirs from the log's header. All are
flattened to ``dotted.key -> value``:
nested tables become dotted keys, lists become compact JSON text, so every value is a JSON
scalar. The store never holds an API key (the runner records only the name of the
environment variable); a pin whose key names a secret is still shown as ``[redacted]``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["PinValue", "display_path", "flatten_pins", "run_store_pins"]

# A flattened pin's value (lists are kept as JSON text): the one pin type; the Comparison
# (evaldelta.comparison.model) carries pins of this type, and model.py imports it from here,
# below it.
PinValue = str | int | float | bool | None

_SECRET = re.compile(r"(^|[._-])(api_?key|secret|password|authorization|bearer|token)$", re.I)
_DATA_DIR = (Path(__file__).resolve().parents[1] / "data").resolve()


def flatten_pins(pins: Mapping[str, Any], prefix: str = "") -> dict[str, PinValue]:
    """Nested mappings to dotted keys; lists to JSON text; anything else to its string."""
    out: dict[str, PinValue] = {}
    for key, value in pins.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(flatten_pins(value, prefix=f"{name}."))
        elif _SECRET.search(str(key)) and value not in (None, ""):
            out[name] = "[redacted]"
        elif value is None or isinstance(value, str | bool | int | float):
            out[name] = value
        elif isinstance(value, list | tuple):
            out[name] = json.dumps(list(value), sort_keys=True, default=str, separators=(",", ":"))
        else:
            out[name] = str(value)
    return out


def _run_pins(path: Path, run_id: str) -> dict[str, Any]:
    from evaldelta.store import Store

    with Store(path, read_only=True) as store:
        for row in store.runs():
            if str(row["run_id"]) == run_id:
                loaded = json.loads(row.get("pins_json") or "{}")
                return loaded if isinstance(loaded, dict) else {}
    return {}


def run_store_pins(path: Path, run_id: str) -> dict[str, dict[str, PinValue]]:
    """Each arm's flattened pins in one run of a store; the run's own pins under ``run.``."""
    from evaldelta.store import iter_pins

    shared = flatten_pins(_run_pins(path, run_id), prefix="run.")
    return {
        arm: dict(sorted({**flatten_pins(pins), **shared}.items()))
        for arm, pins in iter_pins(path, run_id)
    }


def display_path(path: Path, cwd: Path | None = None) -> str:
    """A bundled data file by its name; a path under ``cwd`` relative to it; else as given."""
    try:
        resolved = path.resolve()
    except OSError:
        return str(path)
    if resolved.is_relative_to(_DATA_DIR):
        return resolved.name
    here = (cwd or Path.cwd()).resolve()
    if path.is_absolute() and resolved.is_relative_to(here):
        return str(resolved.relative_to(here))
    return str(path)
