"""DuckDB's complaints about an input, as our one-line errors naming the file and line.

Most defects are found by our own validation queries, but some only surface when DuckDB
parses a row in the middle of a query (a JSON line with a duplicate key, a value that does
not convert). DuckDB names the file and line in its message; :func:`reading_errors` turns
those exceptions into an :class:`~evaldelta.errors.UnreadableFileError` where the library
enters (``compare``, ``import_rows``, ``read_records``, ``sample``). Binder and internal
errors are not the input's fault and pass through (the CLI reports them as bugs).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any, TypeVar

from evaldelta.errors import Location, UnreadableFileError

__all__ = ["input_error", "reading_errors"]

F = TypeVar("F", bound=Callable[..., Any])
_FILE = re.compile(r'in file "(?P<path>[^"]+)"')
_LINE = re.compile(r"(?:in line|[Ll]ine:?) (?P<line>\d+)")


def _input_classes() -> tuple[type[BaseException], ...]:
    import duckdb

    return (duckdb.InvalidInputException, duckdb.ConversionException, duckdb.IOException)


def input_error(exc: BaseException) -> UnreadableFileError:
    """The one-line error for a DuckDB input exception: its file, line and first sentence."""
    text = str(exc).strip()
    first = text.splitlines()[0] if text else type(exc).__name__
    file_match = _FILE.search(text)
    line_match = _LINE.search(first)
    path = file_match.group("path") if file_match else "input"
    line = int(line_match.group("line")) if line_match else None
    reason = first.split(":", 2)[-1].strip() if first.count(":") >= 2 else first
    reason = re.sub(r'^.*?in file "[^"]+",?\s*(in line \d+:?)?\s*', "", reason) or reason
    if len(reason) > 240:
        reason = reason[:240] + " [...]"
    return UnreadableFileError(f"cannot be read: {reason}", Location(path, line))


def reading_errors(func: F) -> F:
    """Decorate a library entry point: DuckDB input exceptions become one-line errors."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except _input_classes() as exc:
            raise input_error(exc) from exc

    return wrapper  # type: ignore[return-value]
