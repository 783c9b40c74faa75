"""Degenerate-data warnings from the statistics, folded into the artifact's notes.

The statistics warn as a library does, for the programmer who called them ("Welch's t is
undefined when both standard deviations are 0; returning nan."). A report's reader did not
call anything: :func:`in_reader_words` says the same in the reader's words (what is missing,
why, and that it is shown as n/a), before the note enters the artifact, so every format and
the JSON carry the same sentence (issue 24.11).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from evaldelta import stats

__all__ = ["Notes", "in_reader_words"]

_N = r"(\d[\d,]*)"
# (the statistics' message, the same in a reader's words); every message of stats/ that
# ends in "nan" is here (tests/comparison/test_notes.py triggers each one)
_READER: tuple[tuple[str, str], ...] = (
    (
        rf"Welch's t needs at least 2 cases per arm \(n_baseline={_N}, n_candidate={_N}\); "
        r"returning nan\.",
        r"no unpaired contrast (Welch interval): it needs at least 2 cases in each arm, and "
        r"the baseline has \1, the candidate \2; shown as n/a",
    ),
    (
        r"Welch's t is undefined when both standard deviations are 0; returning nan\.",
        "no unpaired contrast (Welch interval): within each arm every case scored the same, "
        "so there is no spread to measure it by; shown as n/a",
    ),
    (
        rf"A t interval needs n >= 2; got n = {_N}\. Returning nan\.",
        r"an interval needs at least 2 cases and there is \1; shown as n/a",
    ),
    (
        rf"Every one of the {_N} scores is (\S+) \(sd = 0\): .*; returning nan\.",
        r"all \1 scores are \2: an interval of zero width would claim a certainty that \1 "
        r"cases cannot give; the interval is shown as n/a",
    ),
    (
        rf"A paired t interval needs n >= 2 pairs; got n = {_N}\. Returning nan\.",
        r"a paired interval needs at least 2 pairs and there is \1; shown as n/a",
    ),
    (
        rf"Every one of the {_N} paired deltas is (\S+) \(sd = 0\): .*; returning nan\.",
        r"all \1 paired deltas are \2: an interval of zero width would claim a certainty "
        r"that \1 pairs cannot give; the interval and p are shown as n/a",
    ),
    (
        r"A paired difference is undefined for n = 0 pairs; returning nan\.",
        "no case was scored in both arms, so there is no paired difference; shown as n/a",
    ),
    (
        r"A clustered standard error needs at least 2 cases in at least 2 clusters "
        rf"\(n = {_N}, clusters = {_N}\); returning nan\.",
        r"a clustered standard error needs at least 2 cases in at least 2 clusters, and "
        r"there are \1 case(s) in \2 cluster(s); shown as n/a",
    ),
    (
        r"(?:The Wilson interval|A proportion) is undefined for n = 0; returning nan\.",
        "no scored case, so there is no rate and no interval; shown as n/a",
    ),
    (
        r"The difference of two proportions is undefined when an arm has n = 0 "
        rf"\(n_baseline={_N}, n_candidate={_N}\); returning nan\.",
        r"no difference of rates: an arm has no scored case (the baseline \1, the candidate "
        r"\2); shown as n/a",
    ),
    (
        r"The pooled z test is undefined when every case in both arms has the same outcome "
        r"\(pooled rate (\S+)\); returning a nan statistic and p-value\.",
        r"every case in both arms has the same outcome (rate \1), so the test has nothing "
        "to weigh; its statistic and p are shown as n/a",
    ),
    (
        r"No slice with positive weight has a finite estimate and standard error "
        r"\(dropped: (.*)\); the fixed-mix estimate is nan\.",
        r"no slice the mix weighs has both an estimate and a standard error (left out: \1), "
        "so the standardized result is shown as n/a",
    ),
    (
        r"No slice with positive weight has cases in every arm; standardized rates are nan\.",
        "no slice the mix weighs has cases in every arm, so the standardized rates are shown "
        "as n/a",
    ),
    (
        r"Arm (.+) has no cases; its pooled rate is nan\.",
        r"arm \1 has no cases, so its pooled rate is shown as n/a",
    ),
    (
        rf"An arm has no cases \(baseline n = {_N}, candidate n = {_N}\); the pooled delta "
        r"is nan\.",
        r"an arm has no cases (the baseline \1, the candidate \2), so the pooled difference "
        "is shown as n/a",
    ),
    (
        rf"With n = {_N} pairs and discordance (\S+), no difference is detectable at power "
        r"(\S+) \(the exact McNemar test\); returning nan\.",
        r"with \1 pairs of which a share of \2 disagree, no difference is detectable at "
        r"power \3 by the exact McNemar test; the minimum detectable effect is shown as n/a",
    ),
    (
        r"a criterion has no pair scored under both arms; its p-value is nan",
        "a criterion has no pair scored under both arms, so its p-value is shown as n/a",
    ),
)
_COMPILED = tuple((re.compile(pattern), words) for pattern, words in _READER)
# what is left of a programmer's phrasing in a message this table does not know yet
_LEFTOVERS = (
    (re.compile(r"[;,.]? ?[Rr]eturning (?:a )?nan[^.;]*\.?$"), "; shown as n/a"),
    (re.compile(r"\bis nan\b"), "is shown as n/a"),
    (re.compile(r"\bnan\b"), "n/a"),
    (re.compile(r"\(sd = 0\)"), "(no spread)"),
    (re.compile(r"\bn_(baseline|candidate)=(\d+)"), r"\2 in the \1"),
)


def in_reader_words(message: str) -> str:
    """A statistics warning as a report's reader should read it: no ``nan``, no argument names.

    Known messages are rewritten whole; anything else keeps its words with the programmer's
    leftovers replaced (``returning nan`` -> ``shown as n/a``, ``n_baseline=1`` -> ``1 in
    the baseline``).
    """
    for pattern, words in _COMPILED:
        if pattern.fullmatch(message):
            return pattern.sub(words, message)
    out = message
    for pattern, words in _LEFTOVERS:
        out = pattern.sub(words, out)
    return out


@dataclass
class Notes:
    """Degenerate-data warnings from the statistics, kept as notes in the artifact.

    The same warning in many places (Welch's t on each of 500 one-case slices) is one note
    that names a few of the places and counts the rest (:meth:`folded`).
    """

    items: list[str] = field(default_factory=list)
    _places: dict[str, list[str]] = field(default_factory=dict)
    # warnings not kept: a sequential comparison replaces every fixed-sample interval, so
    # what those intervals' coverage rests on (ReliabilityWarning) says nothing of its own
    skip: tuple[type[Warning], ...] = ()

    @contextmanager
    def capture(self, context: str) -> Iterator[None]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield
        for w in caught:
            if self.skip and issubclass(w.category, self.skip):
                continue
            if issubclass(w.category, stats.StatisticsWarning):
                places = self._places.setdefault(in_reader_words(str(w.message)), [])
                if context not in places:
                    places.append(context)
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)

    def folded(self, shown: int = 3) -> tuple[str, ...]:
        """Every note: plain ones first, then each warning with its places (a few, counted)."""
        out = list(self.items)
        for message, places in self._places.items():
            if len(places) <= shown:
                out.extend(f"{place}: {message}" for place in places)
            else:
                rest = len(places) - shown
                out.append(
                    f"{message} (in {len(places):,} places: {'; '.join(places[:shown])}; "
                    f"and {rest:,} more)"
                )
        return tuple(out)
