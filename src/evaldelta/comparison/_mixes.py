"""Named mixes side by side: ``--mix today=traffic.csv --mix projected=next.csv --mix equal``.

Seed 000's open question: production weighting assumes a stationary mix, and shipping can
move the mix itself. So a comparison can carry several mixes, each standardized on its own
and reported side by side. A mix is ``actual`` (the eval set's own counts), ``equal`` or a
mix file (CSV ``slice,weight`` or JSON); ``NAME=SPEC`` names it, a bare spec is named after
itself (``actual``, ``equal``, ``file:PATH``), so one bare ``--mix`` is exactly what it was.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from evaldelta.errors import UsageError
from evaldelta.sources import display_path
from evaldelta.sources._mix import read_mix

__all__ = ["RESERVED", "MixArg", "NamedMix", "named_mixes"]

MixSpec = str | Path
MixArg = MixSpec | Sequence[MixSpec] | Mapping[str, MixSpec]

# "traffic" is the --traffic mix (or the sample_weight column's); "chosen" is the gate
# policy's word for the --mix mixes. A mix of either name would be ambiguous.
RESERVED = {
    "traffic": "the --traffic mix (production shares, or a sample_weight column's)",
    "chosen": "what a gate policy's mix = 'chosen' calls the --mix mixes",
}
MIX_SUFFIXES = (".csv", ".json", ".tsv", ".txt")


@dataclass(frozen=True)
class NamedMix:
    """One mix: its name, its kind (``actual``, ``equal`` or ``file``) and a file's weights."""

    name: str
    kind: str
    weights: Mapping[str, float] | None = None  # a file's weights; None for actual and equal


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


def _resolve(name: str | None, spec: str, given: str, slices: set[str]) -> NamedMix:
    if spec in ("actual", "equal"):
        return NamedMix(name or spec, spec)
    path = Path(spec)
    if not path.exists() and path.suffix.lower() not in MIX_SUFFIXES:
        raise UsageError(
            f"--mix {given!r}: {spec!r} is not a mix: give actual, equal, or a CSV/JSON mix "
            "file (NAME=SPEC names it)"
        )
    weights = read_mix(path, slices, complete=True)  # a missing file: MixError, located
    return NamedMix(name or f"file:{display_path(path)}", "file", weights)


def named_mixes(mix: MixArg, slices: Sequence[str]) -> tuple[NamedMix, ...]:
    """Parse and check ``mix``: a spec, a sequence of (optionally named) specs, or a mapping.

    Every failure is one :class:`~evaldelta.errors.UsageError` or
    :class:`~evaldelta.errors.MixError` sentence: a name given twice, a reserved name, an
    empty name or spec, a spec that is no mix, a file that is bad or weights too few slices.
    """
    known = set(slices)
    out: list[NamedMix] = []
    given_as: dict[str, str] = {}
    for name, spec, given in _items(mix):
        if name is not None and name in RESERVED:
            raise UsageError(
                f"--mix {given!r}: the name {name!r} is kept for {RESERVED[name]}; "
                "give this mix another name"
            )
        resolved = _resolve(name, spec, given, known)
        if resolved.name in given_as:
            raise UsageError(
                f"--mix: two mixes are named {resolved.name!r} ({given_as[resolved.name]!r} "
                f"and {given!r}); name each one (NAME=SPEC)"
            )
        given_as[resolved.name] = given
        out.append(resolved)
    return tuple(out)
