"""Reading a TOML file the house way: every problem one error naming the file and line.

The policy file (gating/policy.py) and the regression set (regression/_file.py) both read
this way; each passes its own error class (an :class:`~evaldelta.errors.InputError`).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from evaldelta.errors import InputError, Location

__all__ = ["loads", "read_text"]

# tomllib's messages end "(at line L, column C)": the line goes into the Location
_AT = re.compile(r"^(?P<msg>.*?)\s*\(at line (?P<line>\d+), column (?P<col>\d+)\)\s*$")


def read_text(path: str | Path, error: type[InputError], what: str) -> str:
    """The UTF-8 text of ``path``; ``what`` names it in errors ("the policy file")."""
    p = Path(path)
    if not p.exists():
        raise error(f"{what} does not exist", Location(str(p)))
    if p.is_dir():
        raise error(f"{what} names a directory, not a file", Location(str(p)))
    try:
        return p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{what} is not UTF-8 text ({exc.reason})", Location(str(p))) from None


def loads(text: str, path: str, error: type[InputError]) -> dict[str, Any]:
    """``tomllib.loads``, its syntax errors as ``error`` with the line they name."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = _AT.match(str(exc))
        if found is None:
            raise error(f"not valid TOML: {exc}", Location(path)) from None
        raise error(
            f"not valid TOML: {found.group('msg')} (column {found.group('col')})",
            Location(path, int(found.group("line"))),
        ) from None
