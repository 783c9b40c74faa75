"""Read a mix or traffic file: CSV ``slice,weight`` or a JSON object ``{slice: weight}``."""

from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path

from evaldelta._util import _limits
from evaldelta._util._json_bounds import check_json
from evaldelta.errors import Location, MixError

__all__ = ["read_mix"]

_KEY = re.compile(r'("(?:[^"\\]|\\.)*")\s*:')  # a JSON object key on one line


def read_mix(
    path: Path,
    known_slices: set[str] | None = None,
    *,
    complete: bool = False,
    label: str = "the mix",
) -> dict[str, float]:
    """Return ``{slice: weight}`` on the file's own scale, after checking every entry.

    Weights must be finite and non-negative, not all zero, and (when ``known_slices`` is
    given) name only slices the data has. Each failure names the file and line. With
    ``complete``, the file must also weight every known slice: a slice it leaves out would
    otherwise weigh nothing without a word (a weight of 0 leaves one out on purpose).
    ``--mix`` and ``--traffic`` files are both read with ``complete`` (issue 24: a file that
    left out a slice was an error as a mix and a silent n/a as traffic); ``label`` names
    which one it is in that error.
    """
    where = str(path)
    if not path.exists():
        raise MixError("mix file does not exist", Location(where))
    text = _limits.read_text(path, MixError, "the mix file").removeprefix("\ufeff")
    if not text.strip():
        raise MixError("mix file is empty", Location(where))
    weights = _weights(path, _entries(path, text), known_slices)
    top = max(weights.values())
    if top <= 0:
        raise MixError("all weights are zero", Location(where))
    if complete and known_slices:
        _check_complete(weights, known_slices, where, label)
    return {k: w / top for k, w in weights.items()}  # the same shares, sums that stay finite


def _entries(path: Path, text: str) -> list[tuple[str, object, int | None]]:
    """``(slice, weight as written, line)`` of each entry of a JSON or CSV mix."""
    where = str(path)
    entries: list[tuple[str, object, int | None]] = []
    if path.suffix.lower() == ".json":
        entries = _json_entries(text, where)
    else:
        reader = csv.reader(text.splitlines())
        header = [h.strip().lower() for h in next(reader, [])]
        if "slice" not in header or "weight" not in header:
            raise MixError(
                f"a CSV mix needs the columns slice,weight (found: {','.join(header)})",
                Location(where, 1),
            )
        si, wi = header.index("slice"), header.index("weight")
        for lineno, row in enumerate(reader, start=2):
            if not row or all(not c.strip() for c in row):
                continue
            if len(row) <= max(si, wi):
                raise MixError("row has too few fields", Location(where, lineno))
            entries.append((row[si].strip(), row[wi].strip(), lineno))
    if not entries:
        raise MixError("mix file names no slices", Location(where))
    return entries


def _weights(
    path: Path, entries: list[tuple[str, object, int | None]], known_slices: set[str] | None
) -> dict[str, float]:
    """Each entry's weight, checked: a number >= 0, a slice named once and in the data."""
    where = str(path)
    weights: dict[str, float] = {}
    for name, raw, line in entries:
        if isinstance(raw, bool) or (
            path.suffix.lower() == ".json" and not isinstance(raw, int | float)
        ):
            raise MixError(
                "weight must be a JSON number (not true/false, text or null)",
                Location(where, line, "weight", raw),
            )
        try:
            weight = float(raw)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise MixError("weight is not a number", Location(where, line, "weight", raw)) from None
        if not math.isfinite(weight) or weight < 0:
            raise MixError(
                "weight must be a finite number >= 0", Location(where, line, "weight", raw)
            )
        if name in weights:
            raise MixError("slice is listed twice", Location(where, line, "slice", name))
        if known_slices is not None and name not in known_slices:
            raise MixError(
                f"slice is not in the data (slices: {', '.join(sorted(known_slices))})",
                Location(where, line, "slice", name),
            )
        weights[name] = weight
    return weights


def _json_entries(text: str, where: str) -> list[tuple[str, object, int | None]]:
    """(slice, weight, line) of a JSON mix, nested no deeper than the limit allows."""
    check_json(text.encode("utf-8"), where, error=MixError)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MixError(f"not valid JSON: {exc.msg}", Location(where, exc.lineno)) from exc
    if not isinstance(data, dict):
        raise MixError("a JSON mix must be an object mapping slice to weight", Location(where))
    lines: dict[str, int] = {}  # each key's first line, from one pass over the text
    for number, line in enumerate(text.splitlines(), start=1):
        for found in _KEY.finditer(line):
            try:
                lines.setdefault(str(json.loads(found.group(1))), number)
            except ValueError:
                continue
    return [(str(key), value, lines.get(str(key))) for key, value in data.items()]


def _check_complete(
    weights: dict[str, float], known: set[str], where: str, label: str = "the mix"
) -> None:
    """Every known slice has a weight: one left out would weigh nothing without a word."""
    missing = sorted(known - set(weights))
    if missing:
        raise MixError(
            f"{label} gives no weight to the data's slice(s) {', '.join(missing)}; list every "
            "slice (weight 0 leaves one out on purpose)",
            Location(where),
        )
