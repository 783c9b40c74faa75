"""The regression set file: TOML, one ``[[cases]]`` table per case, append-only.

Why TOML: the set is reviewed in pull requests, so it must read well and diff well. A case
is a block of ``key = value`` lines (the failing output a multi-line string, the case's
input fields a ``[cases.fields]`` table), so a diff shows one line per field and an
appended case as one new block; JSON Lines would put a whole case, output included, on
one unreadable line. TOML also allows the comments a reviewer adds, and the gate policy
is TOML already (``[critical] regression_set = "regression.toml"``).

Layout::

    version = 1                  # the file format
    revision = 2                 # the set's revision: +1 on every `evaldelta cases add`

    [[cases]]
    id = "R-0001"                # append-only ids, in file order, never reused
    case_id = "T2301"
    slice = "delivery_delay"
    reason = "promised delivery by Friday"
    source = "INC-4471"          # the incident, ticket or review that found it
    source_kind = "incident"
    found_by = "support-qa"
    added_at = "2026-11-30"
    revision = 1                 # the set revision that added it
    failed_release = "candidate" # the arm that failed it
    metric = "pass"
    score = 0.0
    output = \"\"\"
    ...the failing output...\"\"\"

    [cases.fields]               # the case's input fields, so `evaldelta run` can replay it
    order_number = "2301"

Appending (:func:`append_text`) changes one existing line, ``revision``, and adds blocks at
the end: every existing entry stays byte for byte as it was. Validation names the file,
line and field of the first problem (:class:`~evaldelta.errors.RegressionSetError`).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import difflib
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from evaldelta._util import _toml
from evaldelta.errors import Location, RegressionSetError

__all__ = [
    "FORMAT_VERSION",
    "SOURCE_KINDS",
    "FieldValue",
    "Provenance",
    "RegressionCase",
    "RegressionSet",
    "SourceKind",
    "append_text",
    "case_block",
    "load_set",
    "parse_set",
]

FORMAT_VERSION = 1
SourceKind = Literal["incident", "ticket", "review", "audit", "other"]
SOURCE_KINDS: tuple[str, ...] = ("incident", "ticket", "review", "audit", "other")
FieldValue = str | int | float | bool

TOP_KEYS = ("version", "revision", "cases")
REQUIRED = (
    "id",
    "case_id",
    "slice",
    "reason",
    "source",
    "found_by",
    "added_at",
    "revision",
    "failed_release",
)
OPTIONAL = ("source_kind", "metric", "score", "output", "fields")
CASE_KEYS = (*REQUIRED, *OPTIONAL)
_ID = re.compile(r"R-(\d{4,})")

HEADER = """\
# evaldelta regression set: failures production found that the checks had let through.
# One [[cases]] table per case, in id order. `evaldelta cases add` appends cases and bumps
# `revision`; it never rewrites an entry. The gate treats every case here as critical
# (evaldelta gate --regression-set FILE, or [critical] regression_set in the policy).
version = 1
revision = 0
"""


@dataclass(frozen=True)
class Provenance:
    """Who or what found a regression case, when, in which release: what a verdict names."""

    id: str
    case_id: str
    slice: str
    reason: str
    source: str
    source_kind: str
    found_by: str
    added_at: str
    revision: int
    failed_release: str


@dataclass(frozen=True)
class RegressionCase:
    """One case of the set: its provenance, the failing attempt, and the case's fields."""

    id: str
    case_id: str
    slice: str
    reason: str
    source: str
    found_by: str
    added_at: str
    revision: int
    failed_release: str
    source_kind: str = "incident"
    metric: str | None = None
    score: float | None = None
    output: str | None = None
    fields: Mapping[str, FieldValue] = field(default_factory=dict)

    def provenance(self) -> Provenance:
        """The provenance alone (no output, no fields)."""
        names = [f.name for f in dataclasses.fields(Provenance)]
        return Provenance(**{n: getattr(self, n) for n in names})

    @property
    def number(self) -> int:
        """The number in ``R-0012``."""
        return int(self.id[2:])


@dataclass(frozen=True)
class RegressionSet:
    """A parsed, validated regression set."""

    path: str
    version: int
    revision: int
    cases: tuple[RegressionCase, ...]

    def find(self, case_id: str, source: str) -> RegressionCase | None:
        """The entry for ``case_id`` from ``source``, if the set has one."""
        for case in self.cases:
            if case.case_id == case_id and case.source == source:
                return case
        return None

    def next_number(self) -> int:
        """The number of the next id (ids are never reused)."""
        return max((c.number for c in self.cases), default=0) + 1


# -- locating keys ------------------------------------------------------------------------
def _path(index: int, key: str) -> list[str]:
    """The key path of (case index, key) for :func:`evaldelta._util._toml.line_of`; -1 is the top.

    ``(i, "")`` is case i's ``[[cases]]`` header and ``(i, "fields.NAME")`` a field.
    """
    keys = key.split(".", 1) if key else []
    return keys if index < 0 else ["cases", str(index), *keys]


# -- parsing and validation ---------------------------------------------------------------
def load_set(path: str | Path) -> RegressionSet:
    """Read and validate a regression set file."""
    text = _toml.read_text(path, RegressionSetError, "the regression set")
    return parse_set(text, str(Path(path)))


def parse_set(text: str, path: str = "<regression set>") -> RegressionSet:
    """Parse and validate regression set text; ``path`` names it in errors."""
    data = _toml.loads(text, path, RegressionSetError)
    return _Validator(path, _toml.locate_keys(text)).set(data)


@dataclass
class _Validator:
    path: str
    lines: dict[str, int]

    def fail(self, index: int, key: str, value: object, message: str) -> RegressionSetError:
        line = _toml.line_of(self.lines, _path(index, key))
        return RegressionSetError(message, Location(self.path, line, key or None, value))

    def known(self, table: Mapping[str, Any], allowed: tuple[str, ...], index: int) -> None:
        for key in table:
            if key not in allowed:
                close = difflib.get_close_matches(key, allowed, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                where = "at the top level" if index < 0 else f"in case {index + 1}"
                raise self.fail(
                    index,
                    key,
                    None,
                    f"unknown key {key!r} {where}{hint} (known: {', '.join(allowed)})",
                )

    def whole(self, index: int, key: str, value: object, low: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise self.fail(index, key, value, f"must be a whole number >= {low}")
        return value

    def text(self, index: int, key: str, value: object) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(index, key, value, "must be a non-empty string")
        return value

    def set(self, data: Mapping[str, Any]) -> RegressionSet:
        self.known(data, TOP_KEYS, -1)
        for key in ("version", "revision"):
            if key not in data:
                raise RegressionSetError(
                    f"the regression set needs a top-level {key!r}", Location(self.path, 1, key)
                )
        version = self.whole(-1, "version", data["version"], 1)
        if version != FORMAT_VERSION:
            raise self.fail(
                -1,
                "version",
                version,
                f"this evaldelta reads regression set version {FORMAT_VERSION} only",
            )
        revision = self.whole(-1, "revision", data["revision"], 0)
        raw = data.get("cases", [])
        if not isinstance(raw, list):
            raise self.fail(-1, "cases", None, "cases must be an array of tables ([[cases]])")
        cases = tuple(self.case(i, item) for i, item in enumerate(raw))
        self.order(cases, revision)
        return RegressionSet(self.path, version, revision, cases)

    def case(self, index: int, item: object) -> RegressionCase:
        if not isinstance(item, dict):
            raise self.fail(index, "", None, "each case must be a table ([[cases]])")
        self.known(item, CASE_KEYS, index)
        for key in REQUIRED:
            if key not in item:
                raise self.fail(index, "", None, f"case {index + 1} has no {key!r}")
        values = {
            k: self.text(index, k, item[k]) for k in REQUIRED if k not in ("revision", "added_at")
        }
        if _ID.fullmatch(values["id"]) is None:
            raise self.fail(index, "id", values["id"], "an id looks like R-0001")
        values["added_at"] = self.date(index, item["added_at"])
        kind = item.get("source_kind", "incident")
        if kind not in SOURCE_KINDS:
            raise self.fail(
                index, "source_kind", kind, f"must be one of {', '.join(map(repr, SOURCE_KINDS))}"
            )
        score = item.get("score")
        if score is not None and (
            isinstance(score, bool) or not isinstance(score, int | float) or math.isnan(score)
        ):
            raise self.fail(index, "score", score, "must be a number")
        return RegressionCase(
            **values,
            revision=self.whole(index, "revision", item["revision"], 1),
            source_kind=kind,
            metric=self.text(index, "metric", item["metric"]) if "metric" in item else None,
            score=None if score is None else float(score),
            output=self.output(index, item.get("output")),
            fields=self.fields(index, item.get("fields", {})),
        )

    def date(self, index: int, value: object) -> str:
        if isinstance(value, _dt.date) and not isinstance(value, _dt.datetime):
            return value.isoformat()
        if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            try:
                return _dt.date.fromisoformat(value).isoformat()
            except ValueError:
                pass
        raise self.fail(index, "added_at", value, "must be an ISO date like 2026-11-30")

    def output(self, index: int, value: object) -> str | None:
        if value is not None and not isinstance(value, str):
            raise self.fail(index, "output", value, "must be a string")
        return value

    def fields(self, index: int, value: object) -> dict[str, FieldValue]:
        if not isinstance(value, dict):
            raise self.fail(index, "fields", None, "fields must be a table ([cases.fields])")
        for name, v in value.items():
            if not isinstance(v, str | int | float | bool):
                raise self.fail(
                    index, f"fields.{name}", v, "a field is a string, number or true/false"
                )
        return dict(value)

    def order(self, cases: tuple[RegressionCase, ...], revision: int) -> None:
        seen: dict[tuple[str, str], str] = {}
        last = 0
        for i, case in enumerate(cases):
            if case.number <= last:
                raise self.fail(
                    i,
                    "id",
                    case.id,
                    f"ids must increase in file order (after R-{last:04d}); ids are "
                    "append-only and never reused",
                )
            last = case.number
            if case.revision > revision:
                raise self.fail(
                    i, "revision", case.revision, f"is past the set's revision {revision}"
                )
            key = (case.case_id, case.source)
            if key in seen:
                raise self.fail(
                    i,
                    "case_id",
                    case.case_id,
                    f"case {case.case_id} from {case.source} is already {seen[key]}",
                )
            seen[key] = case.id


# -- writing ------------------------------------------------------------------------------
_BARE = re.compile(r"[A-Za-z0-9_-]+")
_ESCAPES = {"\\": "\\\\", '"': '\\"', "\b": "\\b", "\t": "\\t", "\f": "\\f", "\r": "\\r"}


def _escape(text: str, multiline: bool) -> str:
    """Escape for a TOML basic string; a multi-line one keeps line breaks, tabs and quotes.

    In a multi-line string a quote is escaped only when another quote or the end follows,
    so the text never holds the closing delimiter and a reply's quotes stay readable.
    """
    out = []
    for i, ch in enumerate(text):
        if multiline and ch == '"':  # escaped only where it could end the string
            out.append('\\"' if text[i + 1 : i + 2] in ('"', "") else ch)
        elif multiline and ch in "\n\t":
            out.append(ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return "".join(out)


def toml_value(value: FieldValue) -> str:
    """A TOML value; a string with a line break becomes a multi-line string."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if "\n" in value:
        return '"""\n' + _escape(value, multiline=True) + '"""'
    return '"' + _escape(value, multiline=False) + '"'


def _key(name: str) -> str:
    return name if _BARE.fullmatch(name) else '"' + _escape(name, multiline=False) + '"'


def case_block(case: RegressionCase) -> str:
    """One case as its ``[[cases]]`` block (keys in a fixed order, fields sorted by name)."""
    lines = ["[[cases]]"]
    for name in (*REQUIRED[:7], "revision", "failed_release", "source_kind"):
        lines.append(f"{name} = {toml_value(getattr(case, name))}")
    for name in ("metric", "score", "output"):
        value = getattr(case, name)
        if value is not None:
            lines.append(f"{name} = {toml_value(value)}")
    if case.fields:
        lines += ["", "[cases.fields]"]
        lines += [f"{_key(k)} = {toml_value(case.fields[k])}" for k in sorted(case.fields)]
    return "\n".join(lines) + "\n"


_REVISION = re.compile(r"^(?P<head>\s*revision\s*=\s*)(?P<value>\d+)", re.MULTILINE)


def append_text(text: str | None, cases: list[RegressionCase], path: str) -> str:
    """The set's text with ``cases`` appended and the revision bumped by one.

    ``text`` None starts a new set. Only the top-level ``revision`` line changes; the new
    text is parsed back before it is returned, so a write can never leave a broken set.
    """
    current = HEADER if text is None else text
    old = parse_set(current, path)
    line = _toml.locate_keys(current).get("revision")
    if line is None:  # validation requires the key, so the scanner always finds it
        raise RegressionSetError("no top-level revision line found", Location(path))
    rows = current.splitlines(keepends=True)
    rows[line - 1] = _REVISION.sub(
        lambda m: f"{m.group('head')}{old.revision + 1}", rows[line - 1], count=1
    )
    out = "".join(rows)
    if not out.endswith("\n"):
        out += "\n"
    for case in cases:
        out += "\n" + case_block(case)
    parse_set(out, path)
    return out
