"""What a command was asked to read: a path, the reader that reads it, and reading options.

A source is named on the command line as a bare path (its format is recognized from its
content: :func:`evaldelta.sources.detect`), as ``FORMAT:PATH`` (``inspect:logs/a.eval``),
or as ``--arm NAME=[FORMAT:]PATH`` to name the arm a file holds.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from evaldelta.errors import UsageError

__all__ = ["ReadOptions", "Source", "parse_columns", "parse_source"]

_FORMAT_PREFIX = re.compile(r"^([a-z][a-z0-9_-]*):(.+)$")


@dataclass(frozen=True)
class ReadOptions:
    """Options that shape how rows are read; each reader declares which ones it takes.

    ``columns`` maps our column names to a tidy file's own (``case_id -> id``); ``case_key``
    names the field a case id comes from in an imported log (``doc.id``, ``vars.question``);
    ``filter`` picks lm-evaluation-harness's filter; ``strict`` turns everything an importer
    could not map (or had to decide) into an error. ``outputs_on_demand`` lets an importer
    leave the ``output`` column out and fetch the few outputs a comparison lists when asked
    (:attr:`Opened.fetch_outputs`): ``compare`` needs a handful, ``import`` and ``score``
    need every one. ``wanted`` are columns the caller reads beyond the long row format (a
    sequential comparison's order column, or the names it looks for one by): a reader that
    keeps some of its columns apart (a run store's attempts beside its ``eval_rows`` view)
    adds those it has.
    """

    columns: Mapping[str, str] = field(default_factory=dict)
    case_key: str | None = None
    filter: str | None = None
    strict: bool = False
    outputs_on_demand: bool = False
    wanted: tuple[str, ...] = ()

    def given(self) -> set[str]:
        """The names of the options that were set."""
        out = set()
        if self.columns:
            out.add("columns")
        if self.case_key is not None:
            out.add("case_key")
        if self.filter is not None:
            out.add("filter")
        return out


@dataclass(frozen=True)
class Source:
    """One input: a file or folder, the arm it holds (when it has no ``arm`` column), a run.

    ``format`` is a registered reader's name (``tidy``, ``csv``, ``store``, ``inspect``,
    ...) or ``None`` to recognize the format from the content. ``run`` selects one run of a
    run store (``None``: the newest).
    """

    path: Path
    arm: str | None = None
    run: str | None = None
    format: str | None = None

    def __post_init__(self) -> None:
        if self.run is not None and self.format is None:
            object.__setattr__(self, "format", "store")


def parse_source(text: str, *, arm: str | None = None) -> Source:
    """``PATH`` or ``FORMAT:PATH`` (a registered format name) as a :class:`Source`.

    A prefix that is not a registered format is part of the path (``./a:b.csv`` stays a
    path), so a file whose name contains a colon can still be named.
    """
    from evaldelta.sources._registry import format_names

    match = _FORMAT_PREFIX.match(text)
    if match and match.group(1) in format_names():
        return Source(Path(match.group(2)), arm=arm, format=match.group(1))
    if match and not Path(text).exists() and "/" not in match.group(1):
        known = ", ".join(sorted(format_names()))
        raise UsageError(f"unknown format {match.group(1)!r} in {text!r}; formats: {known}")
    return Source(Path(text), arm=arm)


def parse_columns(values: list[str] | None) -> dict[str, str]:
    """``--columns case_id=id,arm=model`` (repeatable, comma-separated) as ours -> theirs."""
    out: dict[str, str] = {}
    for value in values or []:
        for part in value.split(","):
            ours, sep, theirs = part.partition("=")
            if not sep or not ours.strip() or not theirs.strip():
                raise UsageError(
                    f"--columns takes OURS=THEIRS pairs (case_id=id,score=correct), not {part!r}"
                )
            if ours.strip() in out:
                raise UsageError(f"--columns maps {ours.strip()!r} twice")
            out[ours.strip()] = theirs.strip()
    return out
