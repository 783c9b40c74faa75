"""Read members of a zip archive safely: DEFLATE, stored and zstd (method 93), bounded.

Python 3.11's :mod:`zipfile` lists zstd members (current Inspect AI logs) but cannot read
them, so for method 93 the member's raw bytes are read after its local header (PKWARE
APPNOTE 4.3.7: a 30-byte fixed header, then the name and the extra field) and decompressed
with the ``zstandard`` library. Every member is checked before and while it is read:

- its name may not be absolute or climb out with ``..`` (nothing is extracted to disk, but
  a log that holds such a name is not one a tool wrote);
- its size may not pass :data:`MAX_MEMBER` bytes, declared or actual, and a large member
  may not expand more than :data:`MAX_RATIO` times (zip bombs);
- its CRC-32 must match, so a truncated or damaged archive is an error, never short data.

Errors are one line naming the archive and the member.
"""

from __future__ import annotations

import os
import struct
import zipfile
import zlib
from pathlib import Path
from typing import IO, Any

from evaldelta.errors import Location, UnreadableFileError

__all__ = ["MAX_MEMBER", "MAX_RATIO", "SafeZip"]

MAX_MEMBER = int(os.environ.get("EVALDELTA_MAX_ZIP_MEMBER", str(512 * 1024 * 1024)))
MAX_RATIO = 1000  # DEFLATE tops out near 1032:1; a larger ratio on a big member is a bomb
_RATIO_FROM = 1024 * 1024  # small members may compress as well as they like
_ZSTD = 93
_LOCAL = struct.Struct("<4s5H3L2H")


class SafeZip:
    """A zip archive opened for bounded reads of its members."""

    def __init__(self, path: Path, members: dict[str, zipfile.ZipInfo] | None = None) -> None:
        """Open ``path``; ``members`` from an earlier open skip reading the directory again."""
        self.path = path
        self._fh: IO[bytes] | None = None
        self._dctx: Any = None
        self.members: dict[str, zipfile.ZipInfo] = {}
        if members is not None:
            self.members = members
            return
        try:
            directory = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
            raise UnreadableFileError(
                "is not a readable zip archive: truncated, or still being written "
                f"(its central directory is missing or damaged: {exc})",
                Location(str(path)),
            ) from exc
        with directory:  # only the central directory is read through zipfile
            for info in directory.infolist():  # a repeated name: the last entry wins
                self._check_name(info.filename)
                self.members[info.filename] = info

    def _fail(self, message: str, member: str) -> UnreadableFileError:
        return UnreadableFileError(f"member {member!r}: {message}", Location(str(self.path)))

    def _check_name(self, name: str) -> None:
        text = name.replace("\\", "/")
        if (
            text.startswith("/")
            or (len(text) > 1 and text[1] == ":")
            or (".." in text and ".." in text.split("/"))
        ):
            raise self._fail("an absolute or climbing path; not a log a tool wrote", name)

    def names(self) -> list[str]:
        """Member names in archive order."""
        return list(self.members)

    def __contains__(self, name: str) -> bool:
        return name in self.members

    def close(self) -> None:
        """Release the file handles."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def __enter__(self) -> SafeZip:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def read(self, name: str) -> bytes:
        """The member's bytes, decompressed, size- and CRC-checked."""
        info = self.members.get(name)
        if info is None:
            raise self._fail("is not in the archive", name)
        if info.flag_bits & 0x1:
            raise self._fail("is encrypted", name)
        if info.file_size > MAX_MEMBER:
            raise self._fail(
                f"declares {info.file_size:,} bytes, more than the limit of {MAX_MEMBER:,} "
                "(EVALDELTA_MAX_ZIP_MEMBER)",
                name,
            )
        if info.file_size > _RATIO_FROM and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            raise self._fail(
                f"expands {info.file_size / max(info.compress_size, 1):,.0f} times; "
                "refused as a zip bomb",
                name,
            )
        if info.compress_type == _ZSTD:
            data = self._read_zstd(info)
        elif info.compress_type == zipfile.ZIP_DEFLATED:
            data = self._read_deflate(info)
        elif info.compress_type == zipfile.ZIP_STORED:
            data = self._raw(info)
        else:
            raise self._fail(f"uses compression method {info.compress_type}, not supported", name)
        if len(data) != info.file_size or zlib.crc32(data) != info.CRC:
            raise self._fail("is damaged (size or CRC-32 does not match); truncated?", name)
        return data

    def _read_deflate(self, info: zipfile.ZipInfo) -> bytes:
        raw = self._raw(info)
        try:
            inflater = zlib.decompressobj(-zlib.MAX_WBITS)  # raw DEFLATE, as zip stores it
            data = inflater.decompress(raw, MAX_MEMBER + 1)
        except zlib.error as exc:
            raise self._fail(
                f"is not valid DEFLATE data ({exc}); truncated?", info.filename
            ) from exc
        if len(data) > MAX_MEMBER:
            raise self._fail(f"expands past the limit of {MAX_MEMBER:,} bytes", info.filename)
        return data

    def _raw(self, info: zipfile.ZipInfo) -> bytes:
        if self._fh is None:
            self._fh = self.path.open("rb")
        fh = self._fh
        fh.seek(info.header_offset)
        header = fh.read(_LOCAL.size)
        if len(header) < _LOCAL.size or header[:4] != b"PK\x03\x04":
            raise self._fail("has no local file header where the directory says", info.filename)
        fields = _LOCAL.unpack(header)
        name_len, extra_len = fields[9], fields[10]
        fh.seek(info.header_offset + _LOCAL.size + name_len + extra_len)
        raw = fh.read(info.compress_size)
        if len(raw) < info.compress_size:
            raise self._fail("is cut short; the archive is truncated", info.filename)
        return raw

    def _read_zstd(self, info: zipfile.ZipInfo) -> bytes:
        import zstandard

        raw = self._raw(info)
        if self._dctx is None:
            self._dctx = zstandard.ZstdDecompressor()
        try:
            size = zstandard.frame_content_size(raw)
            if 0 <= size <= MAX_MEMBER:  # the frame says how large it is: one call
                return bytes(self._dctx.decompress(raw))
            out = bytearray()
            with self._dctx.stream_reader(raw) as reader:
                while len(out) <= MAX_MEMBER:
                    more = reader.read(min(1 << 20, MAX_MEMBER + 1 - len(out)))
                    if not more:
                        break
                    out += more
            data = bytes(out)
        except zstandard.ZstdError as exc:
            raise self._fail(f"is not valid zstd data ({exc})", info.filename) from exc
        if len(data) > MAX_MEMBER:
            raise self._fail(f"expands past the limit of {MAX_MEMBER:,} bytes", info.filename)
        return data
