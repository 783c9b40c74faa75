"""How each case's repeats became one value, in one sentence, when a report must say it.

Said only when it matters to a reader: the repeats were reduced by something other than
the mean, or a log's tool reduces them otherwise than this report does (its own figures
then differ from these). Texts stay raw here: each renderer escapes them for its format.
"""

from __future__ import annotations

from evaldelta.comparison.model import Comparison

__all__ = ["repeats_sentence"]

_WORDS = {
    "mean": "averaged (the case mean)",
    "median": "reduced to their median",
    "mode": "reduced to their most common value",
    "max": "reduced to their best (max)",
    "min": "reduced to their worst (min)",
}


def _used(reducer: str) -> str:
    if reducer in _WORDS:
        return _WORDS[reducer]
    if reducer.startswith("at_least_"):
        return f"reduced by {reducer} (1 when at least {reducer[9:]} attempts pass, else 0)"
    if reducer.startswith("pass_at_"):
        return f"reduced by {reducer} (the unbiased pass@{reducer[8:]} estimate per case)"
    if reducer.startswith("pass_"):
        return f"reduced by {reducer} (pass^{reducer[5:]}: all {reducer[5:]} attempts pass)"
    return f"reduced by {reducer}"


def repeats_sentence(comparison: Comparison) -> str | None:
    """``Repeats: each case's attempts reduced to their best (max), the log's own ...``."""
    repeats = comparison.repeats
    if repeats is None:
        return None
    used = repeats.reducer
    why = {
        "--reduce": "as --reduce asks",
        "the logs' own": "the log's own reducer, as its tool reports",
        "default": "the default",
    }.get(repeats.chosen_by, repeats.chosen_by)
    text = f"Repeats: each case's attempts {_used(used)}, {why}."
    other = sorted({r for r in repeats.tools.values() if r != used})
    if other:
        logs = "The logs reduce" if len(repeats.tools) > 1 else "The log reduces"
        text += (
            f" {logs} them by {' and '.join(other)}, so the tool's own figures differ from "
            f"these (--reduce {other[0]} gives the tool's)."
        )
    return text
