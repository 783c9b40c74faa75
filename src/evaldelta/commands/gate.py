"""``evaldelta gate``: compare, apply a policy, print the verdict, exit 0 / 1 / 3.

Also the shared step behind ``evaldelta compare --policy``. Exit codes: 0 pass, 1 fail,
3 inconclusive (unless the policy's ``on_inconclusive`` maps it), 2 bad input.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from evaldelta.commands._shared import (
    ArmOpt,
    BackendOpt,
    BaselineOpt,
    CandidateOpt,
    CaseKeyOpt,
    ColumnsOpt,
    ConfidenceOpt,
    FilesArg,
    FilterOpt,
    Interval,
    IntervalOpt,
    MixOpt,
    OrderOpt,
    OutputOpt,
    PassKOpt,
    ReduceOpt,
    RowOptions,
    RunOpt,
    ScaleOpt,
    SequentialOpt,
    StoreOpt,
    StrictOpt,
    TableOpt,
    TrafficOpt,
    announce_imports,
    announce_warnings,
    write_output,
)

__all__ = ["GateFormat", "policy_sha256", "register", "render_junit"]


class GateFormat(StrEnum):
    """Output formats of ``gate``."""

    text = "text"
    markdown = "markdown"
    json = "json"
    html = "html"
    junit = "junit"


def gate_cmd(
    files: FilesArg = None,
    policy: Annotated[
        Path | None,
        typer.Option("--policy", help="The gate policy (TOML); required unless --regression-set."),
    ] = None,
    arm: ArmOpt = None,
    baseline: BaselineOpt = None,
    candidate: CandidateOpt = None,
    by: Annotated[
        str | None,
        typer.Option("--by", help="Slicing column the policy's slices name (default: slice)."),
    ] = None,
    mix: MixOpt = None,
    traffic: TrafficOpt = None,
    confidence: ConfidenceOpt = 0.95,
    interval: IntervalOpt = Interval.newcombe,
    scale: ScaleOpt = None,
    expect_change: Annotated[
        list[str] | None,
        typer.Option(
            "--expect-change",
            metavar="KIND",
            help="An upstream change the release makes (prompt, payload or retrieval; "
            "repeatable); an undeclared one makes the gate refuse unless [upstream] allows it.",
        ),
    ] = None,
    format: Annotated[
        GateFormat,
        typer.Option(
            "--format",
            help="Verdict format (markdown for a PR comment; html: the full report; junit: "
            "JUnit XML for CI dashboards).",
        ),
    ] = GateFormat.text,
    output: OutputOpt = None,
    store: StoreOpt = None,
    run: RunOpt = None,
    columns: ColumnsOpt = None,
    case_key: CaseKeyOpt = None,
    filter: FilterOpt = None,
    strict: StrictOpt = False,
    backend: BackendOpt = "duckdb",
    table: TableOpt = None,
    regression_set: Annotated[
        list[Path] | None,
        typer.Option(
            "--regression-set",
            help="A regression set (evaldelta cases add): its cases are critical too (repeatable).",
        ),
    ] = None,
    reduce: ReduceOpt = "auto",
    sequential: SequentialOpt = False,
    order: OrderOpt = None,
    k: PassKOpt = None,
) -> None:
    """Gate a release: apply a policy to the comparison; exit 0 pass, 1 fail, 3 inconclusive."""
    shared = RowOptions.of(locals())  # first: the parameters only
    from evaldelta.errors import UsageError
    from evaldelta.gating import compare_with_policy  # here: it imports the engine (Ibis)
    from evaldelta.report.verdict import (
        render_verdict_json,
        render_verdict_markdown,
        render_verdict_text,
    )

    if policy is None and not regression_set:
        raise UsageError(
            "gate needs --policy FILE (a TOML policy; see examples/gate.toml) or "
            "--regression-set FILE"
        )
    comparison, verdict = compare_with_policy(
        shared.sources(),
        policy,
        **shared.compare_kwargs(),
        by=(by,) if by else None,
        regression_sets=tuple(regression_set or ()),
    )
    announce_imports(comparison.imports)
    announce_warnings(comparison)
    if format == GateFormat.html:
        from evaldelta.report.html import render_html

        write_output(render_html(comparison, verdict), output)
        raise typer.Exit(verdict.exit_code)
    if format == GateFormat.junit:
        write_output(render_junit(verdict, comparison, policy), output)
        raise typer.Exit(verdict.exit_code)
    renderers = {
        GateFormat.text: render_verdict_text,
        GateFormat.markdown: render_verdict_markdown,
        GateFormat.json: render_verdict_json,
    }
    write_output(renderers[format](verdict), output)
    raise typer.Exit(verdict.exit_code)


def policy_sha256(policy: Path | None) -> str | None:
    """The sha256 of the policy file's bytes (None without a policy file)."""
    if policy is None:
        return None
    import hashlib

    return hashlib.sha256(policy.read_bytes()).hexdigest()


def render_junit(verdict: Any, comparison: Any, policy: Path | None) -> str:
    """``--format junit``: the verdict as JUnit XML, with the policy file's hash."""
    from evaldelta.report.junit import render_verdict_junit

    return render_verdict_junit(verdict, comparison, policy_sha256=policy_sha256(policy))


def register(app: typer.Typer) -> None:
    """Add this module's commands to app."""
    app.command("gate")(gate_cmd)
