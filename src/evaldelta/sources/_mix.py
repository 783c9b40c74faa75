"""Read the mixes and the traffic file: CSV ``slice,weight`` or a JSON object ``{slice: weight}``.

``--mix today=traffic.csv --mix projected=next.csv --mix equal``: a comparison can carry
several mixes (seed 000: shipping can move the mix itself), each ``actual`` (the eval set's
own counts), ``equal`` or a mix file; ``NAME=SPEC`` names it, a bare spec is named after
itself (``actual``, ``equal``, ``file:PATH``). The files are read here, in the row seam,
before any query runs (:func:`read_mixes`, :func:`load_mix`); phase two checks their slices
against the data's (:func:`fit_mix`, through :mod:`evaldelta.comparison._mixes`), reading
nothing.
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from evaldelta._util import _limits
from evaldelta._util._json_bounds import check_json
from evaldelta.errors import Location, MixError, UsageError
from evaldelta.sources._pins import display_path

__all__ = [
    "RESERVED",
    "MixArg",
    "MixFile",
    "MixInput",
    "fit_mix",
    "load_mix",
    "read_mix",
    "read_mixes",
]

MixSpec = str | Path
MixArg = MixSpec | Sequence[MixSpec] | Mapping[str, MixSpec]

# "traffic" is the --traffic mix (or the sample_weight column's); "chosen" is the gate
# policy's word for the --mix mixes. A mix of either name would be ambiguous.
RESERVED = {
    "traffic": "the --traffic mix (production shares, or a sample_weight column's)",
    "chosen": "what a gate policy's mix = 'chosen' calls the --mix mixes",
}
MIX_SUFFIXES = (".csv", ".json", ".tsv", ".txt")

_KEY = re.compile(r'("(?:[^"\\]|\\.)*")\s*:')  # a JSON object key on one line


@dataclass(frozen=True)
class MixFile:
    """A mix file as read: each entry ``(slice, weight as written, line)``, not yet checked.

    The weights are checked in :func:`fit_mix`, in the file's order, against the data's
    slices: so an error names the first bad line whatever is wrong with it.
    """

    where: str
    entries: tuple[tuple[str, object, int | None], ...]
    json: bool  # the weights are JSON values (a number must be a JSON number)


@dataclass(frozen=True)
class MixInput:
    """One ``--mix`` as given: its name, its kind and, for a file, the file as read."""

    name: str
    kind: Literal["actual", "equal", "file"]
    file: MixFile | None = None


def load_mix(path: Path) -> MixFile:
    """Read a mix file: it exists, is not empty, and its entries parse (CSV or JSON)."""
    where = str(path)
    if not path.exists():
        raise MixError("mix file does not exist", Location(where))
    text = _limits.read_text(path, MixError, "the mix file").removeprefix("\ufeff")
    if not text.strip():
        raise MixError("mix file is empty", Location(where))
    return MixFile(where, tuple(_entries(path, text)), path.suffix.lower() == ".json")


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
    return fit_mix(load_mix(path), known_slices, complete=complete, label=label)


def fit_mix(
    mix: MixFile,
    known_slices: set[str] | None = None,
    *,
    complete: bool = False,
    label: str = "the mix",
) -> dict[str, float]:
    """The weights of a read mix file, checked as :func:`read_mix` says; reads nothing."""
    where = mix.where
    weights = _weights(mix, known_slices)
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


def _weights(mix: MixFile, known_slices: set[str] | None) -> dict[str, float]:
    """Each entry's weight, checked: a number >= 0, a slice named once and in the data."""
    where = mix.where
    weights: dict[str, float] = {}
    for name, raw, line in mix.entries:
        if isinstance(raw, bool) or (mix.json and not isinstance(raw, int | float)):
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


def _split(item: MixSpec) -> tuple[str | None, str]:
    """``NAME=SPEC`` -> (NAME, SPEC); a bare spec (or a file whose name holds '=') -> (None, it)."""
    if isinstance(item, Path):
        return None, str(item)
    if not isinstance(item, str):
        raise UsageError(f"a mix is a name or a path (NAME=SPEC), not {item!r}")
    text = item.strip()
    if "=" not in text or Path(text).exists():
        return None, text
    name, _, spec = text.partition("=")
    name, spec = name.strip(), spec.strip()
    if not name:
        raise UsageError(f"--mix {item!r}: the name before '=' is empty (write NAME=SPEC)")
    if not spec:
        raise UsageError(
            f"--mix {item!r}: no mix after '=' (write NAME=SPEC: actual, equal or a file)"
        )
    return name, spec


def _items(mix: MixArg) -> list[tuple[str | None, str, str]]:
    """Each mix as ``(name or None, spec, as given)``."""
    if isinstance(mix, Mapping):
        pairs = [(str(k).strip(), str(v)) for k, v in mix.items()]
        for name, spec in pairs:
            if not name:
                raise UsageError(f"a mix needs a name; the mix {spec!r} has an empty one")
        return [(name, spec.strip(), f"{name}={spec}") for name, spec in pairs]
    if isinstance(mix, str | Path):
        mix = [mix]
    items = list(mix)
    if not items:
        raise UsageError("--mix needs at least one mix: actual, equal or a mix file")
    return [(*_split(m), str(m)) for m in items]


def _resolve(name: str | None, spec: str, given: str) -> MixInput:
    if spec == "actual":
        return MixInput(name or spec, "actual")
    if spec == "equal":
        return MixInput(name or spec, "equal")
    path = Path(spec)
    if not path.exists() and path.suffix.lower() not in MIX_SUFFIXES:
        raise UsageError(
            f"--mix {given!r}: {spec!r} is not a mix: give actual, equal, or a CSV/JSON mix "
            "file (NAME=SPEC names it)"
        )
    found = load_mix(path)  # a missing file: MixError, located
    return MixInput(name or f"file:{display_path(path)}", "file", found)


def read_mixes(mix: MixArg) -> tuple[MixInput, ...]:
    """Parse ``mix`` (a spec, a sequence of optionally named specs, or a mapping), read its files.

    Every failure is one :class:`~evaldelta.errors.UsageError` or
    :class:`~evaldelta.errors.MixError` sentence: a name given twice, a reserved name, an
    empty name or spec, a spec that is no mix, a file that cannot be read. Whether a file
    weights the data's slices is :func:`fit_mix`'s, once the data is read.
    """
    out: list[MixInput] = []
    given_as: dict[str, str] = {}
    for name, spec, given in _items(mix):
        if name is not None and name in RESERVED:
            raise UsageError(
                f"--mix {given!r}: the name {name!r} is kept for {RESERVED[name]}; "
                "give this mix another name"
            )
        resolved = _resolve(name, spec, given)
        if resolved.name in given_as:
            raise UsageError(
                f"--mix: two mixes are named {resolved.name!r} ({given_as[resolved.name]!r} "
                f"and {given!r}); name each one (NAME=SPEC)"
            )
        given_as[resolved.name] = given
        out.append(resolved)
    return tuple(out)
