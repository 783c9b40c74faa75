"""The registry of readers: each declares its format, file signatures and options.

A reader is one module (``tidy``, ``runstore``, ``importers/inspect``, ...) defining a
:class:`Reader` subclass decorated with :func:`register`. :func:`detect` asks each reader,
most specific first, whether a path is its format: by the bytes at the start of a file (a
zip's members, a JSON document's first keys, a DuckDB file's magic) or by a folder's files,
never by the file name alone, except for the tidy reader, which is the fallback.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from evaldelta.errors import Location, UnreadableFileError, UsageError

if TYPE_CHECKING:
    import ibis.expr.types as ir

    from evaldelta.sources._report import ImportReport
    from evaldelta.sources._source import ReadOptions, Source

__all__ = [
    "INTERNAL_COLUMNS",
    "Opened",
    "OutputFetcher",
    "Reader",
    "detect",
    "format_names",
    "reader_for",
    "readers",
    "register",
]

# Modules that define readers, in detection order (most specific signature first).
_MODULES = (
    "evaldelta.sources.runstore",
    "evaldelta.sources.importers.inspect",
    "evaldelta.sources.importers.promptfoo",
    "evaldelta.sources.importers.lmeval",
    "evaldelta.sources.importers.helm",
    "evaldelta.sources.importers.openai_evals",
    "evaldelta.sources.importers.lighteval",
    "evaldelta.sources.table",  # never sniffed: only named (--table NAME)
    "evaldelta.sources.tidy",
)
# (case ids, arms, max chars) -> {(case_id, arm): the output of its lowest repeat}
OutputFetcher = Callable[[Sequence[str], Sequence[str], int], dict[tuple[str, str], str]]
# Columns an importer adds for locating a row in its log; never data, never shown to a user.
INTERNAL_COLUMNS = ("_where", "_line")
_READERS: dict[str, type[Reader]] = {}
_ALIASES: dict[str, str] = {}
HEAD_BYTES = 65536


@dataclass(frozen=True)
class Opened:
    """A source opened on the shared connection: a table in our column names, and its facts.

    ``table`` uses the long row format's names (``case_id``, ``arm`` unless the source names
    its arm, ``repeat``, score columns, ...). ``locate`` turns a row's identifying values
    into a :class:`~evaldelta.errors.Location` (file, line or sample, field, value); it runs
    only after a check failed. ``pins`` maps each arm to its recorded configuration,
    ``reports`` say what an importer mapped and what it could not, ``default_metrics`` are
    the score columns a comparison uses when none is named. ``fetch_outputs``, when the
    table has no ``output`` column, fetches the outputs of a few (case, arm) pairs.
    ``arm_order`` is the order the source itself gives its arms (a run's configured arms,
    an importer's first-seen order); empty for a tidy file, whose first row decides.
    """

    source: Source
    table: ir.Table
    locate: Callable[[Mapping[str, object], str], Location]
    unit: str = "line"
    pins: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    reports: tuple[ImportReport, ...] = ()
    default_metrics: tuple[str, ...] = ("score",)
    fetch_outputs: OutputFetcher | None = None
    arm_order: tuple[str, ...] = ()


class Reader:
    """A format: how to recognize it and how to open it as rows in our column names."""

    name: ClassVar[str]
    title: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]] = ()
    options: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def sniff(cls, path: Path, head: bytes) -> bool:
        """True when ``path`` is this format (``head``: its first bytes; b"" for a folder)."""
        return False

    def open(self, source: Source, con: Any, options: ReadOptions) -> Opened:
        """Open ``source`` on ``con``; raise a one-line :class:`InputError` when it cannot."""
        raise NotImplementedError


def register(cls: type[Reader]) -> type[Reader]:
    """Class decorator: add a reader to the registry under its name and aliases."""
    _READERS[cls.name] = cls
    for alias in cls.aliases:
        _ALIASES[alias] = cls.name
    return cls


def _load() -> None:
    if len(_READERS) < len(_MODULES):
        for module in _MODULES:
            importlib.import_module(module)


def readers() -> list[type[Reader]]:
    """Every registered reader, in detection order."""
    _load()
    return list(_READERS.values())


def format_names() -> set[str]:
    """Every name a ``FORMAT:PATH`` prefix or ``evaldelta import FORMAT`` may use."""
    _load()
    return set(_READERS) | set(_ALIASES)


def reader_for(source: Source) -> Reader:
    """The reader of a source: the one it names, else the one that recognizes its content."""
    _load()
    _refuse_pointer(source.path)
    name = source.format or detect(source.path)
    name = _ALIASES.get(name, name)
    if name not in _READERS:
        known = ", ".join(sorted(format_names()))
        raise UsageError(f"unknown format {name!r}; formats: {known}")
    return _READERS[name]()


def _refuse_pointer(path: Path) -> None:
    """A Git LFS pointer stands in for a file of any format: say so before any reader tries."""
    from evaldelta.sources._lookalike import lfs_pointer

    if path.is_file():
        with contextlib.suppress(OSError), path.open("rb") as fh:
            if lfs_pointer(fh.read(200)):
                raise UnreadableFileError(
                    "is a Git LFS pointer, not the file it stands for (run `git lfs pull`, "
                    "or download the file itself)",
                    Location(str(path)),
                )


def _head(path: Path) -> bytes:
    if not path.exists():
        raise UnreadableFileError("file does not exist", Location(str(path)))
    if path.is_dir():
        return b""
    if not path.is_file():
        raise UnreadableFileError("is not a regular file", Location(str(path)))
    try:
        with path.open("rb") as fh:
            return fh.read(HEAD_BYTES)
    except OSError as exc:
        raise UnreadableFileError(
            f"cannot be read: {exc.strerror or exc}", Location(str(path))
        ) from exc


def detect(path: Path) -> str:
    """The name of the format of ``path``, recognized from its content."""
    _load()
    head = _head(path)
    if path.is_file() and not head:
        raise UnreadableFileError("file is empty", Location(str(path)))
    for cls in _READERS.values():
        if cls.sniff(path, head):
            return cls.name
    if path.is_dir():
        raise UnreadableFileError(
            "is a folder holding no log this tool reads (Inspect AI logs, lm-eval or HELM "
            "run folders, promptfoo or tidy row files)",
            Location(str(path)),
        )
    return "tidy"
