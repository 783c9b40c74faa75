"""JSON documents of other tools' logs: fast parsing, streaming for large files, clear errors.

Every document is read within the limits of :mod:`evaldelta._util._limits`: its nesting and the
length of its strings are checked on the bytes before a parser builds anything
(:mod:`evaldelta._util._json_bounds`), so a hostile log is refused in one line naming the file and
the limit, never after building a multi-GB object.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from evaldelta._util._json_bounds import BoundedReader, check_json
from evaldelta._util._limits import (
    MAX_DOCUMENT_BYTES,
    MAX_PARSED_BYTES,
    document_limit_text,
    parsed_size,
)
from evaldelta.errors import Location, UnreadableFileError

__all__ = ["events", "first_line", "iter_items", "loads", "read_json_lines"]


def first_line(exc: BaseException) -> str:
    """An exception's first line (the rest of a parser's message is rarely useful)."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def loads(data: bytes | str, where: str, what: str = "JSON") -> Any:
    """Parse one JSON document (orjson; the stdlib when it holds NaN, which orjson refuses).

    A document past :data:`~evaldelta._util._limits.MAX_DOCUMENT_BYTES` or nested past
    :data:`~evaldelta._util._limits.MAX_DEPTH` is refused before it is parsed.
    """
    import orjson

    raw = data.encode("utf-8") if isinstance(data, str) else data
    if len(raw) > MAX_DOCUMENT_BYTES:
        raise UnreadableFileError(
            f"is a {what} document larger than {document_limit_text()}", Location(where)
        )
    check_json(raw, where)
    need = parsed_size(raw)
    if need > MAX_PARSED_BYTES:
        raise UnreadableFileError(
            f"is a {what} document that would take about {need / 1024**3:.1f} GB once parsed, "
            f"more than the {MAX_PARSED_BYTES / 1024**3:.1f} GB a document read whole may take",
            Location(where),
        )
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as fast:
        try:
            return json.loads(raw)
        except (ValueError, RecursionError):
            raise UnreadableFileError(
                f"is not valid {what} ({first_line(fast)}); truncated?", Location(where)
            ) from None


def iter_items(source: Path | IO[bytes], prefix: str, *, where: str | None = None) -> Iterator[Any]:
    """The items at ``prefix`` of a large JSON document, one at a time (ijson's C parser).

    ``source`` is a file path or an open binary stream (then ``where`` names it). The bytes
    reach the parser through a :class:`~evaldelta._util._json_bounds.BoundedReader`, which
    refuses a document nested too deep or holding too long a string as it streams by.
    """
    import ijson

    label = where or str(source)
    given = 0
    try:
        if isinstance(source, Path):
            with source.open("rb") as fh:
                for item in ijson.items(BoundedReader(fh, label), prefix, use_float=True):
                    given += 1
                    yield item
        else:
            for item in ijson.items(BoundedReader(source, label), prefix, use_float=True):
                given += 1
                yield item
    except ijson.JSONError as exc:
        if not _nan_or_infinity(exc):
            raise UnreadableFileError(
                f"is not valid JSON near {prefix!r} ({first_line(exc)}); truncated?",
                Location(label),
            ) from None
        # ijson has no NaN or Infinity, which Python's json (Inspect's logs, lm-eval's
        # files) writes: read the document whole with the parser that has them, and go on
        # after the items already given
        yield from itertools.islice(_walk(_whole(source, label), prefix.split(".")), given, None)


def _nan_or_infinity(exc: BaseException) -> bool:
    """Whether ijson stopped at a bare NaN or Infinity (its only words for them)."""
    text = str(exc).lower()
    return "invalid char" in text or "unexpected symbol" in text or "invalid json character" in text


def _whole(source: Path | IO[bytes], label: str) -> Any:
    if isinstance(source, Path):
        data = source.read_bytes()
    else:
        source.seek(0)
        data = source.read()
    return loads(data, label)


def _walk(node: Any, parts: list[str]) -> Iterator[Any]:
    """The values at an ijson prefix (``samples.item``: each element of ``samples``)."""
    if not parts or parts == [""]:
        yield node
        return
    head, rest = parts[0], parts[1:]
    if head == "item":
        for element in node if isinstance(node, list) else []:
            yield from _walk(element, rest)
    elif isinstance(node, dict) and head in node:
        yield from _walk(node[head], rest)


def events(fh: IO[bytes], where: str) -> Iterator[tuple[str, str, Any]]:
    """``ijson.parse`` (prefix, event, value) over ``fh``, within the limits of the logs.

    For readers that walk a document's first keys themselves: the same bounded stream as
    :func:`iter_items`. ijson's own errors pass through (the caller names the place).
    """
    import ijson

    yield from ijson.parse(BoundedReader(fh, where), use_float=True)


def read_json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, object) for each non-blank line of a JSON Lines file.

    Each line is a document of its own, within the same limits as :func:`loads`.
    """
    with path.open("rb") as fh:
        number = 0
        while line := fh.readline(MAX_DOCUMENT_BYTES + 1):
            number += 1
            if len(line) > MAX_DOCUMENT_BYTES:
                raise UnreadableFileError(
                    f"holds a line longer than {document_limit_text()}", Location(str(path), number)
                )
            if not line.strip():
                continue
            yield number, _line(line, path, number)


def _line(line: bytes, path: Path, number: int) -> Any:
    import orjson

    check_json(line, str(path), line=number)
    need = parsed_size(line)
    if need > MAX_PARSED_BYTES:
        raise UnreadableFileError(
            f"holds a line that would take about {need / 1024**3:.1f} GB once parsed, more "
            f"than the {MAX_PARSED_BYTES / 1024**3:.1f} GB a JSON document read whole may take",
            Location(str(path), number),
        )
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        try:  # NaN and Infinity, as Python's json.dumps writes them (orjson refuses)
            return json.loads(line)
        except (ValueError, RecursionError):
            raise UnreadableFileError(
                f"is not valid JSON ({first_line(exc)}); truncated?",
                Location(str(path), number),
            ) from None
