"""The upstream change detector in words: counts per arm pair, and a diff of an example case.

Shared by the text, Markdown and HTML reports. What counts as a confound, and its sentence,
is the gate's (:mod:`evaldelta.gating.confounds`); this module only lays it out. Texts stay
raw here: each renderer escapes them for its format.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from evaldelta.comparison.model import Comparison, UpstreamExample
from evaldelta.gating.confounds import confounds, upstream_sentence

__all__ = [
    "UpstreamLine",
    "example_diff",
    "markdown_lines",
    "text_lines",
    "upstream_view",
]

DIFF_LINES = 8  # changed lines shown per example


@dataclass(frozen=True)
class UpstreamLine:
    """One (pair, kind): the sentence, whether it is a confound, and example diffs."""

    sentence: str
    confounded: bool
    examples: tuple[tuple[str, tuple[str, ...]], ...]  # (case_id, diff lines)


def _lines(text: str) -> list[str]:
    return re.split(r"\r\n|\r|\n", text)


def example_diff(
    example: UpstreamExample, baseline: str, candidate: str, limit: int = DIFF_LINES
) -> tuple[str, ...]:
    """A unified diff (no context) of the two arms' texts, or their hashes without texts."""
    a, b = example.baseline_text, example.candidate_text
    if a is None or b is None:
        ha = (example.baseline_hash or "none")[:12]
        hb = (example.candidate_hash or "none")[:12]
        return (f"{baseline} sha256 {ha}..., {candidate} sha256 {hb}... (no text stored)",)
    diff = list(
        difflib.unified_diff(
            _lines(a), _lines(b), fromfile=baseline, tofile=candidate, n=0, lineterm=""
        )
    )
    if not diff:  # same text, different hash: whitespace or a field the text leaves out
        return ("the stored texts are the same; the hashes differ",)
    shown = diff[: limit + 2]
    if len(diff) > len(shown):
        shown.append(f"... ({len(diff) - len(shown)} more diff lines)")
    return tuple(shown)


def upstream_view(comparison: Comparison) -> list[UpstreamLine]:
    """Every (pair, kind) the rows recorded, confounded first, each with its example diffs."""
    checks = sorted(comparison.upstream, key=lambda c: not c.confounded)
    out = []
    for check in checks:
        examples = tuple(
            (e.case_id, example_diff(e, check.baseline, check.candidate)) for e in check.examples
        )
        out.append(UpstreamLine(upstream_sentence(check), check.confounded, examples))
    return out


def text_lines(comparison: Comparison) -> list[str]:
    """The text report's section: a loud warning per confound, then every count."""
    if not comparison.upstream:
        return []
    out = []
    for check in confounds(comparison):
        out.append(
            f"!! UPSTREAM INPUT CHANGED BEYOND THE ARMS' DECLARED DIFFERENCE: "
            f"{upstream_sentence(check)} (intended? --expect-change {check.kind}; a gate "
            f'policy\'s [upstream] allow = ["{check.kind}"])'
        )
    out.append("Upstream inputs (hashes recorded per attempt):")
    for line in upstream_view(comparison):
        out.append(f"  {line.sentence}")
        for case_id, diff in line.examples[:1] if line.confounded else ():
            out.append(f"    e.g. {case_id}:")
            out.extend(f"      {d}" for d in diff)
        others = [c for c, _ in line.examples[1:]] if line.confounded else []
        if others:
            out.append(f"    also: {', '.join(others)}")
    out.append("")
    return out


def markdown_lines(comparison: Comparison) -> list[str]:
    """The Markdown warning: one quoted line per confound, the first example as a diff."""
    from evaldelta.report._escape import md_text, strip_controls

    out = []
    for line in (v for v in upstream_view(comparison) if v.confounded):
        out.append(f"> ⚠️ **Upstream input changed:** {md_text(line.sentence)}.")
        for case_id, diff in line.examples[:1]:
            body = [strip_controls(d) for d in diff]
            fence = "`" * max(
                3, 1 + max((len(r) for d in body for r in re.findall("`+", d)), default=0)
            )
            out += [">", f"> e.g. {md_text(case_id)}:", f"> {fence}diff"]
            out += [f"> {d}" for d in body]
            out.append(f"> {fence}")
        out.append("")
    return out
