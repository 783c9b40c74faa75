"""Reading a TOML file the house way: every problem one error naming the file and line.

Every TOML reader (the policy file in gating/policy.py, the regression set in
regression/_file.py, the run config in run/config.py, the price table in run/prices.py)
reads this way; each passes its own error class (an :class:`~evaldelta.errors.InputError`).
The file is held to the limits of :mod:`evaldelta._limits`: at most
:data:`~evaldelta._limits.MAX_TEXT_BYTES`, nested (arrays, inline tables, dotted keys and
table headers alike) at most :data:`~evaldelta._limits.MAX_DEPTH` levels.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from evaldelta._util import _limits
from evaldelta.errors import InputError, Location

__all__ = ["loads", "read_text"]

# tomllib's messages end "(at line L, column C)": the line goes into the Location
_AT = re.compile(r"^(?P<msg>.*?)\s*\(at line (?P<line>\d+), column (?P<col>\d+)\)\s*$")


def read_text(path: str | Path, error: type[InputError], what: str) -> str:
    """The UTF-8 text of ``path``; ``what`` names it in errors ("the policy file")."""
    return _limits.read_text(path, error, what)


def loads(text: str, path: str, error: type[InputError]) -> dict[str, Any]:
    """``tomllib.loads`` within the limits, its syntax errors as ``error`` with their line.

    tomllib parses arrays and inline tables by recursion: a deeply nested value stops at
    Python's recursion limit (a few hundred levels), before the stack could run out, and is
    refused like any value nested past :data:`~evaldelta._limits.MAX_DEPTH`.
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
