"""JSON read within bounds: nesting and value length checked on the bytes, before parsing.

orjson refuses nesting past 1024 levels and parses in linear time; ijson's C backend (yajl)
neither limits nesting nor stays linear. Its prefixed events keep the path to every open
container, so 100,000 nested ``[`` take memory that grows with the square of the depth (a
265 KB file needs 23 GB), and yajl lexes a token split across two reads again from its
start, so a 100 MB string read 64 KB at a time takes minutes. Both are stopped here, on the
bytes, before the parser sees them:

- :class:`JsonScanner` follows the document's strings and escapes block by block (C-speed
  ``bytes`` operations and numpy on the few structural bytes: about 4 ms per MB) and knows
  its exact depth at every bracket, so a document nested past
  :data:`~evaldelta._util._limits.MAX_DEPTH` is refused at the block that goes too deep, and a
  string or bare value longer than :func:`~evaldelta._util._limits.max_value_bytes` as soon as
  it is;
- :class:`BoundedReader` is the binary stream ijson reads through: it scans each block
  before handing it over, and while a value runs on across blocks it reads as much again as
  the value already holds, so yajl's re-lexing of that value adds up to about twice its
  length (linear), not its square;
- :func:`check_json` scans a whole document (a zip member, a JSON Lines line, a mix file)
  before orjson or ``json`` parses it.
"""

from __future__ import annotations

from typing import IO, Any

from evaldelta._util._limits import MAX_DEPTH, max_value_bytes, too_deep, value_limit_text
from evaldelta.errors import InputError, Location, UnreadableFileError

__all__ = ["BLOCK", "BoundedReader", "JsonScanner", "LimitExceeded", "check_json", "nests_too_deep"]

#: Bytes read (and scanned) at a time while no value runs on.
BLOCK = 1 << 16

_STRUCTURE = b'"[]{}'
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in _STRUCTURE)
_ENDS = tuple(bytes([b]) for b in b'",:[]{} \t\r\n')  # a bare value (number, literal) ends here


class LimitExceeded(Exception):
    """A JSON document past a limit; the message names the limit (the caller adds the file)."""


class JsonScanner:
    """Follows a JSON document's strings, escapes and nesting, one block of bytes at a time.

    Exact on valid JSON (and on the valid start of a damaged one, which is all a parser
    reads before it stops); raises :class:`LimitExceeded` on a block that nests past
    ``max_depth`` or holds a value longer than ``max_value`` bytes.
    """

    def __init__(self, max_depth: int = MAX_DEPTH, max_value: int | None = None) -> None:
        self.max_depth = max_depth
        self.max_value = max_value if max_value is not None else max_value_bytes()
        self.depth = 0  # containers open at the end of the bytes seen so far
        self.in_string = False  # the bytes seen so far end inside a string
        self.escape = False  # ... right after a backslash inside that string
        self.run = 0  # bytes so far of the value open at the end (a string, number, literal)

    def feed(self, block: bytes) -> None:
        """Scan the next ``block`` of the document."""
        if not block:
            return
        plain = self._unescaped(block)
        structure = plain.translate(None, _NOT_STRUCTURE)
        quotes = structure.count(b'"')
        if structure and len(structure) != quotes:
            # two quotes side by side close one string and open the next, or hold an empty
            # one: without them every later quote keeps its parity, so the depth is the same
            self._nesting(structure.replace(b'""', b""))
        start_in_string = self.in_string
        self.in_string = start_in_string != bool(quotes & 1)
        self.escape = self.in_string and _odd_backslashes_at_end(plain)
        self._value_run(plain, quotes, start_in_string)

    def _unescaped(self, block: bytes) -> bytes:
        """``block`` with every escaped quote blanked (the same length, so offsets hold).

        In JSON a backslash escapes the next byte, and backslashes pair from the left: a
        quote after an odd run of backslashes is text, not a delimiter. Most escaped quotes
        follow a single backslash; a block with a longer run before a quote, or ending on a
        backslash, has its pairs blanked first.
        """
        if self.escape:  # the last block ended on a backslash: this block's first byte is text
            block = b"_" + block[1:]
        if b"\\" not in block:
            return block
        import numpy as np

        codes = np.frombuffer(block, dtype=np.uint8)
        at = np.flatnonzero((codes[:-1] == 0x5C) & (codes[1:] == 0x22))  # each \" pair
        before = at[at > 0] - 1
        if block.endswith(b"\\") or (before.size and (codes[before] == 0x5C).any()):
            return block.replace(b"\\\\", b"__").replace(b'\\"', b"__")
        if not at.size:
            return block
        out = bytearray(block)
        np.frombuffer(out, dtype=np.uint8)[at + 1] = 0x5F
        return bytes(out)

    def _nesting(self, structure: bytes) -> None:
        """Depth at every bracket outside strings; raise past ``max_depth``."""
        import numpy as np

        codes = np.frombuffer(structure, dtype=np.uint8)
        quote = codes == 0x22
        inside = np.bitwise_xor.accumulate(quote, dtype=np.uint8)  # odd quotes so far
        if self.in_string:
            inside ^= 1
        steps = _steps(np)[codes]
        steps[inside.view(bool)] = 0
        depth = np.cumsum(steps, dtype=np.int64)
        if self.depth + int(depth.max()) > self.max_depth:
            raise LimitExceeded(too_deep("JSON"))
        self.depth += int(depth[-1])

    def _value_run(self, plain: bytes, quotes: int, start_in_string: bool) -> None:
        """Track the length of the value open at a block's end; raise past ``max_value``.

        A value inside one block is no longer than the block, and :class:`BoundedReader`
        reads no block longer than ``max_value``; a value that ran on from earlier blocks is
        checked where it ends.
        """
        if start_in_string or self.run:  # a value ran on into this block: where does it end?
            if start_in_string:
                end = plain.find(b'"') if quotes else -1
            else:
                ends = [at for at in (plain.find(e) for e in _ENDS) if at >= 0]
                end = min(ends, default=-1)
            self._check_run(self.run + (end if end >= 0 else len(plain)))
        if self.in_string:
            last = plain.rfind(b'"') if quotes else -1
        else:
            last = max(plain.rfind(end) for end in _ENDS)
        self.run = len(plain) - 1 - last if last >= 0 else self.run + len(plain)
        self._check_run(self.run)

    def _check_run(self, length: int) -> None:
        if length > self.max_value:
            raise LimitExceeded(f"holds a JSON string or number longer than {value_limit_text()}")


_STEP_TABLE: Any = None


def _steps(np: Any) -> Any:
    """+1 for ``[`` and ``{``, -1 for ``]`` and ``}``, 0 otherwise, indexed by byte."""
    global _STEP_TABLE
    if _STEP_TABLE is None:
        table = np.zeros(256, dtype=np.int8)
        table[list(b"[{")] = 1
        table[list(b"]}")] = -1
        _STEP_TABLE = table
    return _STEP_TABLE


def _odd_backslashes_at_end(plain: bytes) -> bool:
    """Whether ``plain`` ends on a backslash that escapes the next block's first byte.

    Pairs were blanked in :meth:`JsonScanner._unescaped` whenever the block ended on a
    backslash, so at most one is left there.
    """
    return plain.endswith(b"\\")


class BoundedReader:
    """A binary stream over ``raw`` that ijson reads through: every block is scanned first.

    ``where`` names the file in the one-line error (:class:`UnreadableFileError`, or
    ``error``) raised when the document passes a limit.
    """

    def __init__(
        self,
        raw: IO[bytes],
        where: str,
        *,
        error: type[InputError] = UnreadableFileError,
        scanner: JsonScanner | None = None,
    ) -> None:
        self.raw = raw
        self.where = where
        self.error = error
        self.scanner = scanner or JsonScanner()

    def read(self, size: int = -1) -> bytes:
        """The next block: :data:`BLOCK` bytes, more while a value runs on.

        Never more than the value limit, so a value that starts and ends in one block is
        within it (a lowered limit reads smaller blocks).
        """
        if size == 0:
            return b""
        data = self.raw.read(max(min(BLOCK, self.scanner.max_value), self.scanner.run))
        try:
            self.scanner.feed(data)
        except LimitExceeded as exc:
            raise self.error(str(exc), Location(self.where)) from None
        return data


def check_json(
    data: bytes,
    where: str,
    *,
    error: type[InputError] = UnreadableFileError,
    line: int | None = None,
) -> None:
    """Refuse a whole JSON document nested past :data:`~evaldelta._util._limits.MAX_DEPTH`.

    A document with fewer brackets than the limit cannot pass it, so most small documents
    cost two byte counts. String lengths are not limited here: orjson and ``json`` read a
    whole document in linear time, and its size was bounded when it was read.
    """
    if data.count(b"[") + data.count(b"{") <= MAX_DEPTH:
        return
    scanner = JsonScanner(max_value=len(data) + 1)
    view = memoryview(data)
    try:
        for start in range(0, len(data), 4 * BLOCK):
            scanner.feed(bytes(view[start : start + 4 * BLOCK]))
    except LimitExceeded as exc:
        raise error(str(exc), Location(where, line)) from None


def nests_too_deep(data: bytes | str) -> bool:
    """Whether a JSON text (a reply, a table cell) nests past :data:`MAX_DEPTH`."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        check_json(raw, "")
    except UnreadableFileError:
        return True
    return False
