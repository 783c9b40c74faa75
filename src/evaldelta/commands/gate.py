"""``evaldelta gate``: compare, apply a policy, print the verdict, exit 0 / 1 / 3.

Also the shared step behind ``evaldelta compare --policy``. Exit codes: 0 pass, 1 fail,
3 inconclusive (unless the policy's ``on_inconclusive`` maps it), 2 bad input.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from evaldelta._progress import working
from evaldelta.model import Comparison

__all__ = ["GateFormat", "compare_with_policy", "register"]


class GateFormat(StrEnum):
    """Output formats of ``gate``."""

    text = "text"
    markdown = "markdown"
    json = "json"


def compare_with_policy(
    sources: Sequence[Any],
    policy_path: Path,
    *,
    metrics: Sequence[str] | None = None,
    **options: Any,
) -> tuple[Comparison, Any]:
    """Load the policy, compare with its metric and critical selector, and evaluate.

    ``metrics`` defaults to the policy's metric (else ``score``); the policy's metric is
    added when missing. Returns the comparison and the :class:`~evaldelta.gate.Verdict`.
    """
    from evaldelta.compare import compare
    from evaldelta.errors import MissingColumnError, PolicyError
    from evaldelta.gate import evaluate
    from evaldelta.policy import critical_selector, load_policy

    policy = load_policy(policy_path)
    wanted = list(metrics or [policy.metric or "score"])
    if policy.metric is not None and policy.metric not in wanted:
        wanted.append(policy.metric)
    try:
        with working("evaldelta: comparing the arms for the gate..."):
            result = compare(
                sources, metrics=tuple(wanted), critical=critical_selector(policy), **options
            )
    except MissingColumnError as exc:
        if policy.metric is None or exc.location is None or exc.location.field != policy.metric:
            raise
        raise PolicyError(
            f"metric {policy.metric!r} is not a column of {exc.location.path}",
            policy.where("metric", value=policy.metric),
        ) from None
    return result, evaluate(policy, result)


def gate_cmd(
    files: Annotated[
        list[Path] | None, typer.Argument(help="CSV, JSONL or Parquet files with an arm column.")
    ] = None,
    policy: Annotated[
        Path | None, typer.Option("--policy", help="The gate policy (TOML); required.")
    ] = None,
    arm: Annotated[
        list[str] | None, typer.Option("--arm", help="NAME=FILE: a file holding one arm.")
    ] = None,
    baseline: Annotated[
        str | None, typer.Option(help="The baseline arm (default: the first row's arm).")
    ] = None,
    candidate: Annotated[
        list[str] | None,
        typer.Option("--candidate", help="A candidate arm (repeatable; default: all others)."),
    ] = None,
    by: Annotated[
        str, typer.Option("--by", help="Slicing column the policy's slices name.")
    ] = "slice",
    mix: Annotated[
        str, typer.Option(help="Chosen slice weights: actual, equal, or a CSV/JSON mix file.")
    ] = "actual",
    traffic: Annotated[
        Path | None, typer.Option(help="Traffic shares (CSV slice,weight or JSON).")
    ] = None,
    confidence: Annotated[float, typer.Option(help="Interval coverage.")] = 0.95,
    interval: Annotated[
        str, typer.Option(help="Paired binary interval: newcombe (default) or wald.")
    ] = "newcombe",
    scale: Annotated[
        str | None,
        typer.Option(help="Declared score scale LOW,HIGH; scores outside it are errors."),
    ] = None,
    format: Annotated[
        GateFormat, typer.Option("--format", help="Verdict format (markdown for a PR comment).")
    ] = GateFormat.text,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write here.")] = None,
) -> None:
    """Gate a release: apply a policy to the comparison; exit 0 pass, 1 fail, 3 inconclusive."""
    from evaldelta.cli import _parse_arm_files, _parse_scale, _write
    from evaldelta.engine import Source
    from evaldelta.errors import UsageError
    from evaldelta.report.verdict import (
        render_verdict_json,
        render_verdict_markdown,
        render_verdict_text,
    )

    if policy is None:
        raise UsageError("gate needs --policy FILE (a TOML policy; see examples/gate.toml)")
    sources = [Source(Path(f)) for f in files or []]
    sources += [Source(path, arm=name) for name, path in _parse_arm_files(arm or [])]
    if not sources:
        raise UsageError("give at least one FILE, or --arm NAME=FILE for each arm")
    _, verdict = compare_with_policy(
        sources,
        policy,
        baseline=baseline,
        candidates=candidate or None,
        by=(by,),
        mix=mix,
        traffic=traffic,
        confidence=confidence,
        interval=interval,
        scale=_parse_scale(scale),
    )
    renderers = {
        GateFormat.text: render_verdict_text,
        GateFormat.markdown: render_verdict_markdown,
        GateFormat.json: render_verdict_json,
    }
    _write(renderers[format](verdict), output)
    raise typer.Exit(verdict.exit_code)


def register(app: typer.Typer) -> None:
    """Add this module's commands to app."""
    app.command("gate")(gate_cmd)
