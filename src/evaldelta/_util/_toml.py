"""Reading a TOML file the house way: every problem one error naming the file and line.

Every TOML reader (the policy file in gating/policy.py, the regression set in
regression/_file.py, the run config in run/config.py, the price table in run/prices.py)
reads this way; each passes its own error class (an :class:`~evaldelta.errors.InputError`).
They also share one key locator (:func:`locate_keys`, :func:`line_of`): ``tomllib`` reports
line numbers only for syntax errors, so a semantic error finds its key's line by a small
scanner over the text. The file is held to the limits of :mod:`evaldelta._util._limits`: at most
:data:`~evaldelta._util._limits.MAX_TEXT_BYTES`, nested (arrays, inline tables, dotted keys and
table headers alike) at most :data:`~evaldelta._util._limits.MAX_DEPTH` levels.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evaldelta._util import _limits
from evaldelta.errors import InputError, Location

__all__ = ["line_of", "loads", "locate_keys", "read_text"]

# tomllib's messages end "(at line L, column C)": the line goes into the Location
_AT = re.compile(r"^(?P<msg>.*?)\s*\(at line (?P<line>\d+), column (?P<col>\d+)\)\s*$")


def read_text(path: str | Path, error: type[InputError], what: str) -> str:
    """The UTF-8 text of ``path``; ``what`` names it in errors ("the policy file")."""
    return _limits.read_text(path, error, what)


def loads(text: str, path: str, error: type[InputError]) -> dict[str, Any]:
    """``tomllib.loads`` within the limits, its syntax errors as ``error`` with their line.

    tomllib parses arrays and inline tables by recursion: a deeply nested value stops at
    Python's recursion limit (a few hundred levels), before the stack could run out, and is
    refused like any value nested past :data:`~evaldelta._util._limits.MAX_DEPTH`.
    """
    if len(text) > _limits.MAX_TEXT_BYTES:
        raise error(_limits.too_large("the TOML file"), Location(path))
    try:
        data = tomllib.loads(text)
    except RecursionError:
        raise error(_limits.too_deep("TOML"), Location(path)) from None
    except tomllib.TOMLDecodeError as exc:
        found = _AT.match(str(exc))
        if found is None:
            raise error(f"not valid TOML: {exc}", Location(path)) from None
        raise error(
            f"not valid TOML: {found.group('msg')} (column {found.group('col')})",
            Location(path, int(found.group("line"))),
        ) from None
    if _limits.depth_of(data) > _limits.MAX_DEPTH:
        raise error(_limits.too_deep("TOML"), Location(path))
    return data


# -- locating keys in the text ------------------------------------------------------------
_BARE = r"[A-Za-z0-9_-]+"
_BASIC = r'"(?:[^"\\]|\\.)*"'
_LITERAL = r"'[^']*'"
_SIMPLE = rf"(?:{_BARE}|{_BASIC}|{_LITERAL})"
_DOTTED = rf"{_SIMPLE}(?:\s*\.\s*{_SIMPLE})*"
_HEADER = re.compile(rf"^\s*(?P<open>\[\[?)\s*(?P<name>{_DOTTED})\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(rf"^\s*(?P<key>{_DOTTED})\s*=(?P<rest>.*)$")
_INLINE_KEY = re.compile(rf"(?:^|[{{,])\s*(?P<key>{_BARE}|{_BASIC})\s*=")
_PART = re.compile(_SIMPLE)


def _parts(dotted: str) -> list[str]:
    return [p[1:-1] if p[:1] in "\"'" else p for p in _PART.findall(dotted)]


class _Value:
    """Where a value left off at the end of a line: an open multi-line string, open arrays."""

    def __init__(self) -> None:
        self.inside = ""  # the delimiter of an open multi-line string
        self.depth = 0  # open brackets of a multi-line array

    @property
    def open(self) -> bool:
        return bool(self.inside) or self.depth > 0

    def scan(self, text: str) -> str:
        """Follow strings, comments and brackets through ``text``; returns it without comment."""
        i = 0
        while i < len(text):
            if self.inside:
                end = text.find(self.inside, i)
                if end < 0:
                    return text
                while text.startswith(self.inside[0], end + 3):  # up to two quotes close it
                    end += 1
                i, self.inside = end + 3, ""
                continue
            char = text[i]
            if char == "#":
                return text[:i]
            if text.startswith(('"""', "'''"), i):
                self.inside, i = text[i : i + 3], i + 3
            elif char in "\"'":
                found = re.compile(_BASIC if char == '"' else _LITERAL).match(text, i)
                i = found.end() if found else len(text)
            else:
                self.depth += (char == "[") - (char == "]")
                i += 1
        return text


def _table(names: list[str], array: bool, arrays: dict[str, int]) -> list[str]:
    """A header's path, with the index of the current element of every array of tables."""
    path: list[str] = []
    for i, name in enumerate(names):
        path.append(name)
        if array and i == len(names) - 1:
            dotted = ".".join(path)
            arrays[dotted] = arrays.get(dotted, -1) + 1
            for key in [k for k in arrays if k.startswith(dotted + ".")]:
                del arrays[key]  # a new element starts its own nested arrays
            path.append(str(arrays[dotted]))
        elif ".".join(path) in arrays:
            path.append(str(arrays[".".join(path)]))
    return path


def locate_keys(text: str) -> dict[str, int]:
    """Map every table header and key (as a dotted path) to its first 1-based line.

    A small scanner, not a TOML parser: it only runs on text ``tomllib`` already accepted.
    It covers headers, dotted keys, one level of inline tables and arrays of tables (the
    i-th ``[[cases]]`` is ``cases.i``, its keys ``cases.i.KEY``), and skips the lines inside
    a multi-line string or array.
    """
    out: dict[str, int] = {}
    table: list[str] = []
    arrays: dict[str, int] = {}
    value = _Value()
    for number, line in enumerate(text.splitlines(), start=1):
        if value.open:
            value.scan(line)
            continue
        header = _HEADER.match(line)
        if header is not None:
            table = _table(_parts(header.group("name")), header.group("open") == "[[", arrays)
            out.setdefault(".".join(table), number)
            continue
        key = _KEY.match(line)
        if key is None:
            continue
        path = [*table, *_parts(key.group("key"))]
        out.setdefault(".".join(path), number)
        rest = value.scan(key.group("rest")).strip()
        if rest.startswith("{"):
            for inner in _INLINE_KEY.finditer(rest):
                out.setdefault(".".join([*path, *_parts(inner.group("key"))]), number)
    return out


def line_of(lines: Mapping[str, int], keys: Sequence[str]) -> int | None:
    """The line of a key path, else of its nearest enclosing table (None: not found)."""
    parts = list(keys)
    while parts:
        hit = lines.get(".".join(parts))
        if hit is not None:
            return hit
        parts.pop()
    return None
