"""How every format names a sequential comparison's intervals and p-values (issue 26).

A sequential comparison (``Comparison.sequential``, ``compare --sequential``, ``run
--until-decided``) holds confidence sequences: anytime-valid, wider than a fixed-sample
interval on the same cases, and never to be read as one. So wherever a fixed report says
"95% interval", a sequential one says "anytime 95% CS", and its p-values are called
anytime-valid. A fixed comparison's words are returned unchanged, so its reports do not move
by a byte. The section that explains the sequences and shows a stopped run's looks is
``sections/sequential.py``.
"""

from __future__ import annotations

from evaldelta.comparison.model import Comparison
from evaldelta.report._format import fmt_pct

__all__ = [
    "CS_WORD",
    "P_WORD",
    "interval_head",
    "interval_word",
    "intervals_phrase",
    "p_head",
]

CS_WORD = "confidence sequence"  # what a sequential report calls one of its intervals
P_WORD = "anytime-valid p"  # and one of its p-values


def interval_head(comparison: Comparison) -> str:
    """A table's interval column with its level: ``95% interval`` or ``anytime 95% CS``."""
    conf = fmt_pct(comparison.confidence)
    return f"{conf} interval" if comparison.sequential is None else f"anytime {conf} CS"


def interval_word(comparison: Comparison) -> str:
    """A table's interval column without its level: ``interval`` or ``anytime 95% CS``."""
    return "interval" if comparison.sequential is None else interval_head(comparison)


def intervals_phrase(comparison: Comparison) -> str:
    """The intervals in a title: ``95% intervals`` or ``anytime-valid 95% confidence sequences``."""
    conf = fmt_pct(comparison.confidence)
    if comparison.sequential is None:
        return f"{conf} intervals"
    return f"anytime-valid {conf} {CS_WORD}s"


def p_head(comparison: Comparison, holm: bool) -> str:
    """A table's p column: ``p (Holm)`` / ``p``, or ``anytime p (Holm)`` / ``anytime p``."""
    head = "p (Holm)" if holm else "p"
    return head if comparison.sequential is None else f"anytime {head}"
