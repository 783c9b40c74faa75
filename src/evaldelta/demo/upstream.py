"""``evaldelta demo``, seed 002: the upstream change detector on the 40 tickets.

``data/seed002_upstream.csv`` holds seed 002's rows with the hashes the runner records per
attempt (rendered prompt, request payload, retrieved documents). The arms are a model
release, yet the candidate's run came after the retriever's index was refreshed: a few
tickets retrieved a newer policy page, which the template renders into the prompt. Compare
reports those tickets with a diff; the gate refuses to decide until the policy allows it.
"""

from __future__ import annotations

import os
from pathlib import Path

from evaldelta.comparison import compare
from evaldelta.comparison.model import Comparison
from evaldelta.demo import data_path
from evaldelta.errors import GateRefusedError

__all__ = ["DATA", "POLICY", "upstream_demo", "upstream_demo_text"]

DATA = "seed002_upstream.csv"
POLICY = 'max_regression = 0.10\non_inconclusive = "pass"\n'
ALLOWING = POLICY + '[upstream]\nallow = ["retrieval", "prompt"]\n'


def upstream_demo() -> Comparison:
    """Seed 002's comparison on the rows that carry upstream hashes."""
    with data_path(DATA) as path:
        return compare([path], baseline="incumbent")


def _gate(path: Path, policy_text: str, folder: Path, name: str) -> str:
    from evaldelta.gating import compare_with_policy

    policy = folder / name
    policy.write_text(policy_text, encoding="utf-8")
    try:
        _, verdict = compare_with_policy([path], policy, baseline="incumbent")
    except GateRefusedError as exc:
        return f"evaldelta: error: {exc}".replace(f"{folder}{os.sep}", "") + " (exit 2)"
    from evaldelta.report.verdict import render_verdict_text

    return render_verdict_text(verdict).strip().splitlines()[1]


def upstream_demo_text() -> str:
    """The demo's section: what changed upstream, then the gate without and with allowance."""
    import tempfile

    from evaldelta.report._upstream import text_lines

    result = upstream_demo()
    lines = [
        "-" * 100,
        "Seed 002, the upstream change detector: the same tickets with each attempt's prompt, "
        "payload and retrieval hashes",
        "(data/seed002_upstream.csv). The seed: recorded artefacts are change detectors for "
        "anything upstream of the model call;",
        "a diff on them is a signal that code changed. The arms declare a model release; the "
        "candidate's retriever index was refreshed.",
        "-" * 100,
        *text_lines(result),
    ]
    with data_path(DATA) as path, tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        lines.append(f"evaldelta gate {DATA} --policy gate.toml (max_regression = 0.10):")
        lines.append("  " + _gate(path, POLICY, folder, "gate.toml"))
        lines.append('With [upstream] allow = ["retrieval", "prompt"] in the policy:')
        lines.append("  " + _gate(path, ALLOWING, folder, "gate-allow.toml"))
    return "\n".join(lines)
