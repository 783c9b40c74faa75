r"""User-written regular expressions: checked and compiled at load time, matched with a timeout.

Every pattern a user writes (checks kinds ``regex_required``, ``regex_forbidden``,
``allowed_values`` ``pattern``, ``no_commitment_date`` ``extra_patterns``; a run's ``[score]
regex`` / ``--score-regex`` and a cascade's ``verifier = { regex = ... }``) goes through
:func:`compile_pattern`, and every match through :class:`UserPattern`, whose calls carry a
``timeout``. Our own fixed patterns (the date set, escaped literals) stay on ``re``.

Why the ``regex`` package (PyPI ``regex``) rather than ``re`` or ``google-re2``:

* ``re`` cannot be interrupted: ``(a|aa)+$`` on ``'a' * 40 + '!'`` backtracks for hours, and
  ``a{1,99999999999}`` raises OverflowError (not ``re.error``);
* ``regex`` accepts what ``re`` accepts with the same meaning (its default VERSION0), so
  every existing checks file and run config keeps working, lookarounds, backreferences,
  atomic groups and possessive quantifiers included (``(?<!not )guarantee`` is a natural
  negation-aware check), and ``\w`` / ``\b`` stay Unicode-aware;
* every ``regex`` match call takes ``timeout=`` (for ``finditer``, the whole scan), so a
  catastrophic pattern costs at most :data:`MATCH_TIMEOUT` seconds per reply, and at most
  :data:`FILE_TIMEOUT` seconds (plus :data:`FILE_TIMEOUT_PER_MB` for each MB of reply text
  it has scanned, so a pattern that merely reads a large file is never cut short) over all
  the replies of a file, and all the checks of a checks file together at most
  :data:`CHECKS_FILE_TIMEOUT`: the patterns of one check share a :class:`TimeBudget` whose
  parent is the checks file's, and once either is spent every further reply is unscored at
  once;
* google-re2 is linear-time (no timeout needed), but it rejects lookarounds and
  backreferences, has ASCII-only ``\w`` and ``\b``, reads ``a{1,99999999999}`` silently as
  literal text, and logs parse errors to stderr (which would break one-line errors).

``regex`` unrolls the *minimum* of a counted repeat when it compiles (``a{1000000}`` takes
about 270 MB and half a second, ``((ab){1000}){1000}{1000}`` all memory; maxima cost
nothing), so :func:`compile_pattern` first checks every count against :data:`MAX_REPEAT` and
the pattern's size with its minimum counts expanded against :data:`MAX_EXPANDED`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import regex

__all__ = [
    "CHECKS_FILE_TIMEOUT",
    "FILE_TIMEOUT",
    "FILE_TIMEOUT_PER_MB",
    "MATCH_TIMEOUT",
    "MAX_EXPANDED",
    "MAX_REPEAT",
    "PatternTimeout",
    "TimeBudget",
    "UserPattern",
    "compile_pattern",
]

#: Seconds one match call (one reply scanned by one pattern) may take before it gives up.
MATCH_TIMEOUT = 1.0
#: Seconds the patterns of one check may take over all the replies of a file (a scoring
#: pass over one file, or one run), before every further reply is left unscored ...
FILE_TIMEOUT = 10.0
#: ... plus this many seconds for each MB of reply text they have scanned (regex reads
#: tens of MB a second, so only a pattern that backtracks ever reaches the budget).
FILE_TIMEOUT_PER_MB = 1.0
#: Seconds all the checks of one checks file may take together over a file's replies (plus
#: the same allowance per MB), so that many slow checks cannot add up to hours either.
CHECKS_FILE_TIMEOUT = 30.0
#: The largest count a counted repeat ``{m,n}`` may name.
MAX_REPEAT = 100_000
#: The largest size (items, with every repeat's minimum count unrolled) a pattern may have:
#: about 27 MB and 50 ms to compile.
MAX_EXPANDED = 100_000

_COUNT = re.compile(r"\{(\d*)(?:,(\d*))?\}")
_BRACED_ESCAPES = frozenset("pPNx")  # \p{L}, \N{NAME}, \x{263a}: the braces are not a repeat


class PatternTimeout(TimeoutError):
    """A user pattern gave up on a text, or its check's time for the file is spent.

    It gave up after :data:`MATCH_TIMEOUT` seconds, or its :class:`TimeBudget` ran out.
    Internal: every caller turns it into an outcome (an unscored check, or a one-line
    :class:`~evaldelta.errors.ConfigError` naming the pattern), so it never reaches the CLI.
    """

    def __init__(self, pattern: UserPattern, *, spent: bool = False) -> None:
        self.pattern = pattern
        self.spent = spent
        where = (
            f"the time allowed for all the replies of this file ({FILE_TIMEOUT:g} s per "
            f"check, {CHECKS_FILE_TIMEOUT:g} s for all checks, +{FILE_TIMEOUT_PER_MB:g} s per "
            "MB of text)"
            if spent
            else f"{MATCH_TIMEOUT:g} s on this text"
        )
        super().__init__(
            f"the regular expression {_short(pattern.source)!r} timed out after {where} "
            "(it backtracks too much; simplify it)"
        )


class TimeBudget:
    """The time the patterns of one check may still spend on the replies of one file.

    ``seconds`` (:data:`FILE_TIMEOUT` by default), plus :data:`FILE_TIMEOUT_PER_MB` for each
    MB scanned; every match call is charged its time and its text's length, here and in
    ``parent`` (the checks file's budget, :data:`CHECKS_FILE_TIMEOUT`), and a call may take
    no more than the smaller of the two has left.
    """

    def __init__(self, seconds: float | None = None, parent: TimeBudget | None = None) -> None:
        self.seconds = FILE_TIMEOUT if seconds is None else seconds
        self.parent = parent
        self.spent = 0.0
        self.scanned = 0  # characters

    @classmethod
    def for_checks_file(cls) -> TimeBudget:
        """The budget all the checks of one checks file share (:data:`CHECKS_FILE_TIMEOUT`)."""
        return cls(CHECKS_FILE_TIMEOUT)

    def left(self) -> float:
        """Seconds left (zero or less: spent)."""
        own = self.seconds + FILE_TIMEOUT_PER_MB * self.scanned / 1e6 - self.spent
        return own if self.parent is None else min(own, self.parent.left())

    def charge(self, seconds: float, characters: int) -> None:
        """Count one match call."""
        self.spent += seconds
        self.scanned += characters
        if self.parent is not None:
            self.parent.charge(seconds, characters)


def _short(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass(frozen=True)
class UserPattern:
    """A compiled user pattern; every match call is bounded in time.

    Each call may take :data:`MATCH_TIMEOUT` seconds, and no more than is left of
    ``budget``, which the patterns of one check share. The calls raise
    :class:`PatternTimeout` when the pattern takes longer than that on a text, or at once
    when the budget is spent.
    """

    source: str
    compiled: Any  # a regex.Pattern
    budget: TimeBudget = field(default_factory=TimeBudget, compare=False)

    @property
    def groupindex(self) -> dict[str, int]:
        """Named groups and their numbers."""
        return dict(self.compiled.groupindex)

    def finditer(self, text: str) -> Iterator[Any]:
        """Every match in ``text`` (regex.Match objects); the whole scan shares the timeout."""
        timeout = self._timeout()
        start = time.perf_counter()
        try:
            yield from self.compiled.finditer(text, timeout=timeout)
        except TimeoutError:
            raise PatternTimeout(self, spent=timeout < MATCH_TIMEOUT) from None
        finally:
            self.budget.charge(time.perf_counter() - start, len(text))

    def search(self, text: str) -> Any:
        """The first match in ``text``, or None."""
        timeout = self._timeout()
        start = time.perf_counter()
        try:
            return self.compiled.search(text, timeout=timeout)
        except TimeoutError:
            raise PatternTimeout(self, spent=timeout < MATCH_TIMEOUT) from None
        finally:
            self.budget.charge(time.perf_counter() - start, len(text))

    def _timeout(self) -> float:
        """The next call's timeout: :data:`MATCH_TIMEOUT`, or less when the budget runs low."""
        left = self.budget.left()
        if left <= 0:
            raise PatternTimeout(self, spent=True)
        return min(MATCH_TIMEOUT, left)


def compile_pattern(
    source: str, *, ignore_case: bool = False, budget: TimeBudget | None = None
) -> UserPattern:
    """Check ``source`` against the size limits and compile it.

    ``budget``: the time budget it shares with the other patterns of its check (a new one
    when None). Raises ValueError with a one-line reason (the caller names the file, line
    and field).
    """
    problem = _size_problem(source)
    if problem is not None:
        raise ValueError(problem)
    try:
        compiled = regex.compile(source, regex.IGNORECASE if ignore_case else 0)
    except (regex.error, OverflowError, RecursionError, MemoryError) as exc:
        raise ValueError(f"not a valid regular expression: {exc}") from None
    return UserPattern(source, compiled, budget if budget is not None else TimeBudget())


def _size_problem(source: str) -> str | None:
    """Why ``source`` is too large to compile safely, or None.

    A one-pass scan: each group's size is the sum of its items, and a counted repeat
    multiplies the item before it by its minimum count. It over-counts a little (group
    prefixes, verbose-mode comments) and never under-counts an unrolled repeat.
    """
    stack = [0]  # the running size of each open group; stack[0] is the whole pattern
    last = 0  # the size of the previous item: what a quantifier repeats
    i, n = 0, len(source)
    while i < n:
        c = source[i]
        if c == "\\":
            j = i + 2
            if i + 2 < n and source[i + 1] in _BRACED_ESCAPES and source[i + 2] == "{":
                close = source.find("}", i + 2)
                j = close + 1 if close >= 0 else n
            i, last = j, 1
            stack[-1] += 1
        elif c == "[":
            i, last = _class_end(source, i), 1
            stack[-1] += 1
        elif c == "(":
            stack.append(0)
            i, last = i + 1, 0
        elif c == ")" and len(stack) > 1:
            last = stack.pop()
            stack[-1] += last
            i += 1
        elif c == "{" and (m := _COUNT.match(source, i)) and (m.group(1) or m.group(2)):
            low_text, high_text = m.group(1), m.group(2)
            for text in (low_text, high_text):
                if text and int(text) > MAX_REPEAT:
                    return f"the repeat count {int(text)} in {m.group(0)!r} is above {MAX_REPEAT}"
            low = int(low_text) if low_text else 0
            stack[-1] += last * (low - 1)
            last *= low
            i = m.end()
        else:
            stack[-1] += 1
            i, last = i + 1, 1
        if sum(stack) > MAX_EXPANDED:
            return (
                f"the pattern is too large: more than {MAX_EXPANDED} items once its counted "
                "repeats are unrolled; use smaller counts"
            )
    return None


def _class_end(source: str, start: int) -> int:
    """The index just past the character class that opens at ``start``."""
    j = start + 1
    if j < len(source) and source[j] == "^":
        j += 1
    if j < len(source) and source[j] == "]":
        j += 1
    while j < len(source):
        if source[j] == "\\":
            j += 2
        elif source.startswith("[:", j) and (end := source.find(":]", j + 2)) >= 0:
            j = end + 2
        elif source[j] == "]":
            return j + 1
        else:
            j += 1
    return j
