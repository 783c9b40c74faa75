"""Regression cases: production failures the checks let through, kept as a reviewable file.

Every escalated ticket or quality review that finds something the checks let through is a
missing requirement (seed 002's closing). ``evaldelta cases add`` appends such cases, with
their provenance, to a versioned TOML file (:mod:`evaldelta.regression._file` says why TOML
and what each key means); the gate treats them as critical cases and names their
provenance when one fails (``gate --regression-set FILE`` or ``[critical] regression_set``).

::

    rows / run store ──cases add──▶ regression.toml ──gate──▶ "fails regression case R-0012
                                    (append-only, reviewed        (T2203), added from incident
                                     in a pull request)           INC-4471 by support-qa ..."
"""

from evaldelta.regression._add import AddResult, Attempt, add_cases, add_from, failing_attempts
from evaldelta.regression._file import (
    FORMAT_VERSION,
    SOURCE_KINDS,
    Provenance,
    RegressionCase,
    RegressionSet,
    append_text,
    case_block,
    load_set,
    parse_set,
)

__all__ = [
    "FORMAT_VERSION",
    "SOURCE_KINDS",
    "AddResult",
    "Attempt",
    "Provenance",
    "RegressionCase",
    "RegressionSet",
    "add_cases",
    "add_from",
    "append_text",
    "case_block",
    "failing_attempts",
    "load_set",
    "parse_set",
]
