"""A word-level diff of two outputs, as plain-text spans (the HTML marks them up)."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

__all__ = ["DiffSpan", "word_diff"]


@dataclass(frozen=True)
class DiffSpan:
    """A run of words in a word-level diff: ``same``, ``del`` (baseline) or ``ins``."""

    op: str
    text: str


_WORDS = re.compile(r"\s+|[^\s]+")


def word_diff(before: str, after: str) -> tuple[DiffSpan, ...]:
    """A word-level diff (difflib on words and whitespace runs) as plain-text spans."""
    a, b = _WORDS.findall(before), _WORDS.findall(after)
    spans: list[DiffSpan] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            spans.append(DiffSpan("same", "".join(a[i1:i2])))
            continue
        if op in ("delete", "replace"):
            spans.append(DiffSpan("del", "".join(a[i1:i2])))
        if op in ("insert", "replace"):
            spans.append(DiffSpan("ins", "".join(b[j1:j2])))
    return tuple(spans)
