"""Named mixes side by side, fitted to the data: each mix file's weights on its slices.

The mixes are read in the row seam before any query (:func:`evaldelta.sources._mix.read_mixes`:
``--mix today=traffic.csv --mix equal``); here, once the data's slices are known, each
file's weights are checked against them (every slice weighted, none unknown) and scaled.
Nothing here reads a file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from evaldelta.sources._mix import MixArg, MixInput, fit_mix

__all__ = ["MixArg", "NamedMix", "named_mixes"]


@dataclass(frozen=True)
class NamedMix:
    """One mix: its name, its kind (``actual``, ``equal`` or ``file``) and a file's weights."""

    name: str
    kind: Literal["actual", "equal", "file"]
    weights: Mapping[str, float] | None = None  # a file's weights; None for actual and equal


def named_mixes(mixes: Sequence[MixInput], slices: Sequence[str]) -> tuple[NamedMix, ...]:
    """The mixes as read, each file's weights checked against the data's ``slices``.

    A file that names a slice the data lacks, or leaves one of its slices out, is one
    :class:`~evaldelta.errors.MixError` sentence naming the file and line.
    """
    known = set(slices)
    return tuple(
        NamedMix(m.name, m.kind, fit_mix(m.file, known, complete=True))
        if m.file is not None
        else NamedMix(m.name, m.kind)
        for m in mixes
    )
