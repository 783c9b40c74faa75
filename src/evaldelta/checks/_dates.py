"""The ``no_commitment_date`` pattern set: concrete delivery dates and weekday promises.

What counts as a commitment: a calendar date ("3 March", "March 3rd", "03/12",
"2025-03-12"), a weekday after a committing word ("by Friday", "on Fri", "no later than
Monday", "arrives Friday"), and relative days ("tomorrow", "by tonight", "this weekend",
"by the end of the week", "next week"). A working-day timeframe ("within 2 working days")
is not a date: policy timeframes are checked by ``allowed_values``.

Two guards keep ordinary sentences from firing:

* negation: a match whose clause (the text since the last ``, . ; : ! ? — ( )`` or a
  conjunction such as "but", "and", "then", "once", at most eight words back) holds a
  negation cue ("can't promise delivery by Friday", "we cannot guarantee it by Monday") is
  not a commitment;
* past tense: a match right after a past-event word ("was dispatched on Monday", "placed on
  3 March", "since Friday") describes what happened, not a promise.

Text is NFKC-normalized and stripped of zero-width characters first, so full-width digits
and letters or a zero-width space inside "Fri\u200bday" do not hide a date. English only.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from evaldelta.checks._patterns import UserPattern

__all__ = ["DateMatch", "commitment_dates", "is_negated", "normalize_text"]

_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"))

WEEKDAY = (
    r"(?:mon(?:day)?|tue(?:s(?:day)?)?|wed(?:nesday)?|thu(?:r(?:s(?:day)?)?)?|"
    r"fri(?:day)?|sat(?:urday)?|sun(?:day)?)\.?"
)
MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
DAY = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?"
ORDINAL = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)"
PREFIX = (
    r"(?:by|on|before|until|till|for|this|next|coming|come|no\s+later\s+than|"
    r"not\s+later\s+than|latest|at\s+the\s+latest\s+on)"
)
VERB = (
    r"(?:arrive|arrives|arriving|deliver|delivers|delivered|delivery|reach\s+you|"
    r"be\s+with\s+you|with\s+you|get\s+to\s+you|expect\s+it|receive\s+it|dispatch\s+it)"
)

_PATTERNS: tuple[tuple[str, str], ...] = (
    ("calendar date", rf"\b{DAY}\s+(?:of\s+)?{MONTH}(?:\s+\d{{4}})?(?![a-z])"),
    ("calendar date", rf"\b{MONTH}\s+{DAY}(?:,?\s+\d{{4}})?\b"),
    (
        "numeric date",
        r"(?<![\d/.£$€#:-])(?:[12]\d|3[01]|0?[1-9])/(?:1[0-2]|0?[1-9])(?:/(?:\d{4}|\d{2}))?(?![\d/])",
    ),
    (
        "numeric date",
        r"(?<![\d.£$€#:-])(?:[12]\d|3[01]|0?[1-9])[.-](?:1[0-2]|0?[1-9])[.-](?:\d{4}|\d{2})(?!\d|\.\d)",
    ),
    ("numeric date", r"\b\d{4}-(?:1[0-2]|0[1-9])-(?:[12]\d|3[01]|0[1-9])\b"),
    (
        "weekday promise",
        rf"\b{PREFIX}\s+(?:the\s+)?(?:this\s+|next\s+|coming\s+)?{WEEKDAY}(?![a-z])",
    ),
    ("weekday promise", rf"\b{VERB}\s+(?:on\s+|by\s+)?{WEEKDAY}(?![a-z])"),
    ("weekday promise", rf"\b{WEEKDAY}\s+at\s+the\s+latest\b"),
    ("day of month", rf"\b(?:by|on|before|until)\s+the\s+{ORDINAL}\b(?!\s+(?:floor|time|attempt))"),
    ("relative day", r"\b(?:the\s+day\s+after\s+)?(?:tomorrow|tmrw|tmr)\b"),
    ("relative day", r"\b(?:by|before|until|later|end\s+of)\s+(?:today|tonight)\b"),
    ("relative day", rf"\b{VERB}\s+(?:today|tonight)\b"),
    ("relative day", r"\b(?:this|by\s+the|over\s+the|at\s+the)\s+weekend\b"),
    (
        "relative day",
        r"\b(?:by|before)\s+(?:the\s+)?(?:end|close)\s+of\s+(?:the\s+)?(?:day|week|month|business)\b",
    ),
    ("relative day", r"\b(?:next|this\s+coming)\s+week\b"),
    ("relative day", r"\b(?:eod|cob)\b"),
)
_COMPILED = tuple((label, re.compile(p, re.IGNORECASE)) for label, p in _PATTERNS)
_NOT_DATES = re.compile(r"^24/7$")

NEGATION = re.compile(
    r"\b(?:not|no|never|cannot|can\s+not|unable|without)\b|n['’]t\b", re.IGNORECASE
)
_CLAUSE_BREAK = re.compile(
    r"[,.;:!?()\n—–]|\b(?:but|however|then|and|so|because|although|though|while|when|once)\b",
    re.IGNORECASE,
)
PAST = re.compile(
    r"\b(?:was|were|had|been|placed|ordered|received|dispatched|shipped|sent|posted|since|"
    r"ago|last|returned|raised|contacted|called|emailed|bought|purchased|arrived)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class DateMatch:
    """One date commitment found in a reply: what matched, where, and which pattern kind."""

    text: str
    start: int
    kind: str


def normalize_text(text: str) -> str:
    """NFKC-normalize and drop zero-width characters (so look-alikes cannot hide a match)."""
    return unicodedata.normalize("NFKC", text).translate(_ZERO_WIDTH)


def is_negated(text: str, start: int, window_words: int = 8) -> bool:
    """True when the clause before ``start`` (up to ``window_words`` words) holds a negation."""
    before = text[:start]
    breaks = list(_CLAUSE_BREAK.finditer(before))
    clause = before[breaks[-1].end() :] if breaks else before
    words = clause.split()[-window_words:]
    return bool(NEGATION.search(" ".join(words)))


def _is_past(text: str, start: int) -> bool:
    words = text[:start].split()[-3:]
    return bool(words) and bool(PAST.search(" ".join(words)))


def commitment_dates(
    text: str,
    *,
    ignore_negated: bool = True,
    extra: Iterable[re.Pattern[str] | UserPattern] = (),
) -> list[DateMatch]:
    """Every date commitment in ``text``, in order of position (overlaps reported once).

    ``extra`` are the checks file's ``extra_patterns`` (compiled by
    :func:`~evaldelta.checks._patterns.compile_pattern`: a slow one raises
    :class:`~evaldelta.checks._patterns.PatternTimeout`).
    """
    norm = normalize_text(text)
    found: dict[int, DateMatch] = {}
    covered: list[tuple[int, int]] = []
    patterns: list[tuple[str, re.Pattern[str] | UserPattern]] = [
        *_COMPILED,
        *(("user pattern", p) for p in extra),
    ]
    for label, pattern in patterns:
        for m in pattern.finditer(norm):
            if _NOT_DATES.match(m.group(0)):
                continue
            if any(m.start() < e and s < m.end() for s, e in covered):
                continue
            if _is_past(norm, m.start()):
                continue
            if ignore_negated and is_negated(norm, m.start()):
                continue
            covered.append((m.start(), m.end()))
            found[m.start()] = DateMatch(m.group(0).rstrip("."), m.start(), label)
    return [found[k] for k in sorted(found)]
