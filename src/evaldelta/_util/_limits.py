"""The limits every reader of a user's file holds to (issue 23): one place, one wording.

A file past a limit is refused in one line that names the file and the limit (exit 2),
before or while it is parsed, so that no file, however built, can exhaust the stack, the
memory or the time of the machine that reads it.

======================  ==========  =====================================================
limit                   value       where it holds, and why that value
======================  ==========  =====================================================
``MAX_DEPTH``           200 levels  every JSON, JSON Lines, YAML and TOML document (logs,
                                    mixes, schemas, checks, policies, run configs,
                                    regression sets, price tables, Parquet metadata).
                                    Real files nest a few dozen levels; 200 keeps every
                                    later walk of a value (``json.dumps``, ``repr``,
                                    orjson's 254-level ``dumps``, a YAML or TOML
                                    constructor at 3 frames a level) well inside
                                    Python's recursion limit of 1000.
``max_value_bytes()``   64 MB       one string or number of a streamed JSON log
                                    (``EVALDELTA_MAX_STRING_MB`` changes it). A long value
                                    reaches the parser in reads that double with its
                                    length, so the time stays linear up to the limit.
``MAX_DOCUMENT_BYTES``  512 MB      a JSON document read whole (a HELM or lm-eval file, a
                                    JSON Lines line), as large as a zip member may be
                                    (``EVALDELTA_MAX_ZIP_MEMBER``); larger logs stream.
``MAX_PARSED_BYTES``    1.5 GB      what a JSON document read whole would take once
                                    parsed, estimated from its bytes before parsing
                                    (:func:`parsed_size`): 100 MB of ``[{},{},...]``
                                    become 6 GB of Python objects, far more than its size.
``MAX_TEXT_BYTES``      16 MB       a TOML file, a JSON mix or schema, read whole and
                                    parsed in Python (tomllib: 1.5-3 MB a second).
``MAX_YAML_BYTES``      2 MB        a YAML checks file (PyYAML's pure-Python loader,
                                    needed for line numbers, reads 0.1-0.4 MB a second).
``MAX_YAML_ALIASED``    1,000,000   nodes plus characters of text a YAML file's aliases
                                    may stand for ("billion laughs": a few lines of
                                    anchors stand for gigabytes).
``MAX_COLUMNS``         4,096       columns of a CSV or TSV file: DuckDB's reader holds
                                    about 64 KB per column, and 8,000 columns pass its
                                    default 512 MB buffer.
``MAX_ABS_SCORE``       1e15        the magnitude of a score, and the largest cost in
                                    dollars: whole numbers stay exact in a float, sums of
                                    squares over billions of rows stay finite, and sums
                                    stay within what the report rounds (28 digits).
======================  ==========  =====================================================

The regular expressions of a checks file have their own time limits, per reply and per
check over a file (:mod:`evaldelta.checks._patterns`); a zip member its size limit
(:mod:`evaldelta.sources.importers._zip`).
"""

from __future__ import annotations

import os
from pathlib import Path

from evaldelta.errors import InputError, Location

__all__ = [
    "MAX_ABS_SCORE",
    "MAX_COLUMNS",
    "MAX_DEPTH",
    "MAX_DOCUMENT_BYTES",
    "MAX_PARSED_BYTES",
    "MAX_TEXT_BYTES",
    "MAX_YAML_ALIASED",
    "MAX_YAML_BYTES",
    "depth_of",
    "document_limit_text",
    "max_value_bytes",
    "read_text",
    "too_deep",
    "too_large",
    "value_limit_text",
]

#: Nesting levels any JSON, YAML or TOML document may have.
MAX_DEPTH = 200
#: Bytes of a JSON document read whole (and of one JSON Lines line).
MAX_DOCUMENT_BYTES = 512 * 1024 * 1024
#: Estimated bytes a JSON document read whole may take once parsed (:func:`parsed_size`).
MAX_PARSED_BYTES = 1536 * 1024 * 1024
#: Bytes of a file read whole as text and parsed in Python (TOML, a JSON mix or schema).
MAX_TEXT_BYTES = 16 * 1024 * 1024
#: Bytes of a YAML file (PyYAML's pure-Python loader is slow: 0.1-0.4 MB a second).
MAX_YAML_BYTES = 2 * 1024 * 1024
#: Nodes plus characters a YAML document's aliases may stand for, written out.
MAX_YAML_ALIASED = 1_000_000
#: Columns of a CSV or TSV file.
MAX_COLUMNS = 4096
#: The largest magnitude a score may have.
MAX_ABS_SCORE = 1e15

_VALUE_ENV = "EVALDELTA_MAX_STRING_MB"
_VALUE_MB = 64.0


def _value_mb() -> float:
    raw = os.environ.get(_VALUE_ENV, "").strip()
    try:
        mb = float(raw) if raw else _VALUE_MB
    except ValueError:
        return _VALUE_MB
    return mb if mb > 0 and mb == mb and mb != float("inf") else _VALUE_MB


def max_value_bytes() -> int:
    """Bytes one JSON string or number of a log may have (``EVALDELTA_MAX_STRING_MB``)."""
    return max(1, int(_value_mb() * 1024 * 1024))


def value_limit_text() -> str:
    """The value limit as a user reads it: ``64 MB (EVALDELTA_MAX_STRING_MB=64; ...)``."""
    shown = f"{_value_mb():g}"
    return f"{shown} MB ({_VALUE_ENV}={shown}; raise it to read such a file)"


def parsed_size(raw: bytes) -> int:
    """An upper estimate of the memory a JSON document takes once parsed into Python.

    Counted on the bytes (C-speed ``count``, no parse): an object costs about 200 bytes
    (a small dict), an array 56, and each further member or element (a comma) about 64: its
    slot and a small value (a float is 24 bytes, a short string 50), plus the text itself.
    Commas and brackets inside strings count too, so it errs high, never low.
    """
    return len(raw) + 200 * raw.count(b"{") + 56 * raw.count(b"[") + 64 * raw.count(b",")


def document_limit_text() -> str:
    """:data:`MAX_DOCUMENT_BYTES` as a user reads it."""
    return f"{MAX_DOCUMENT_BYTES // (1024 * 1024)} MB, the limit for a JSON document read whole"


def too_deep(kind: str) -> str:
    """The message for a document nested past :data:`MAX_DEPTH`; ``kind`` is "JSON", ..."""
    return f"{kind} nested deeper than {MAX_DEPTH} levels (the limit for JSON, YAML and TOML)"


def depth_of(value: object, stop: int = MAX_DEPTH) -> int:
    """How deep ``value`` nests (dicts and lists), without recursion; stops past ``stop``.

    A scalar is 0 levels, ``[]`` and ``{}`` 1, ``[[1]]`` 2.
    """
    deepest = 0
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children: list[object] = list(item.values())
        elif isinstance(item, list | tuple):
            children = list(item)
        else:
            continue
        level += 1
        if level > deepest:
            deepest = level
            if deepest > stop:
                return deepest
        stack.extend((child, level) for child in children)
    return deepest


def read_text(
    path: str | Path, error: type[InputError], what: str, limit: int = MAX_TEXT_BYTES
) -> str:
    """The UTF-8 text of ``path``, refused past ``limit`` bytes (:data:`MAX_TEXT_BYTES`).

    ``what`` names the file in errors ("the policy file"); every problem is ``error``.
    """
    p = Path(path)
    if not p.exists():
        raise error(f"{what} does not exist", Location(str(p)))
    if p.is_dir():
        raise error(f"{what} names a directory, not a file", Location(str(p)))
    try:
        with p.open("rb") as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        raise error(f"cannot read {what}: {exc.strerror or exc}", Location(str(p))) from None
    if len(data) > limit:
        raise error(too_large(what, limit), Location(str(p)))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{what} is not UTF-8 text ({exc.reason})", Location(str(p))) from None


def too_large(what: str, limit: int = MAX_TEXT_BYTES) -> str:
    """The message for a text file past ``limit`` bytes."""
    kind = "YAML file" if limit == MAX_YAML_BYTES else "TOML or JSON file read whole"
    return f"{what} is larger than {limit // (1024 * 1024)} MB, the limit for a {kind}"
