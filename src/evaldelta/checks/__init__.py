"""Requirement checks (mechanical) and the blinded LLM judge.

``load_checks("checks.yaml")`` reads and validates a checks file (:class:`OutputCheck` is one
check written inline in a run config instead); ``score_rows`` scores
rows that carry an ``output`` column (plus the case fields the checks read) and returns
them with ``check.<id>``, ``pass`` and ``judge_score`` columns. See ``examples/checks.yaml``
for the file format and :mod:`evaldelta.checks._judge` for how the judge is blinded.
"""

from evaldelta.checks._dates import DateMatch, commitment_dates
from evaldelta.checks._inline import OUTPUT_CHECK_KINDS, OutputCheck, OutputCheckKind
from evaldelta.checks._judge import (
    JudgeCheck,
    JudgePins,
    JudgeRun,
    PairItem,
    PairwiseRun,
    judge_pairwise,
    judge_single,
    pairwise_messages,
    single_messages,
)
from evaldelta.checks._mechanical import Check, CheckResult, split_values
from evaldelta.checks._score import (
    CheckSet,
    ScoreResult,
    join_cases,
    load_checks,
    metric_names,
    metric_values,
    missing_field,
    read_rows,
    score_rows,
    score_rows_async,
    write_rows,
)
from evaldelta.checks._spec import KINDS, CheckSpec, parse_checks, read_checks

__all__ = [
    "KINDS",
    "OUTPUT_CHECK_KINDS",
    "Check",
    "CheckResult",
    "CheckSet",
    "CheckSpec",
    "DateMatch",
    "JudgeCheck",
    "JudgePins",
    "JudgeRun",
    "OutputCheck",
    "OutputCheckKind",
    "PairItem",
    "PairwiseRun",
    "ScoreResult",
    "commitment_dates",
    "join_cases",
    "judge_pairwise",
    "judge_single",
    "load_checks",
    "metric_names",
    "metric_values",
    "missing_field",
    "pairwise_messages",
    "parse_checks",
    "read_checks",
    "read_rows",
    "score_rows",
    "score_rows_async",
    "single_messages",
    "split_values",
    "write_rows",
]
