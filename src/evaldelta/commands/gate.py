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
from evaldelta.commands._shared import (
    ArmOpt,
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
    OutputOpt,
    RunOpt,
    ScaleOpt,
    StoreOpt,
    StrictOpt,
    TrafficOpt,
    announce_imports,
    announce_warnings,
    inputs_from,
    parse_scale,
    read_options,
    write_output,
)
from evaldelta.model import Comparison

__all__ = ["GateFormat", "compare_with_policy", "register"]


class GateFormat(StrEnum):
    """Output formats of ``gate``."""

    text = "text"
    markdown = "markdown"
    json = "json"
    html = "html"


def compare_with_policy(
    sources: Sequence[Any],
    policy_path: Path,
    *,
    metrics: Sequence[str] | None = None,
    **options: Any,
) -> tuple[Comparison, Any]:
    """Load the policy, compare with its metric and critical selector, and evaluate.

    ``metrics`` defaults to the policy's metric (else the sources' default: ``score`` for
    tidy files); the policy's metric is added when missing. Returns the comparison and the
    :class:`~evaldelta.gate.Verdict`.
    """
    from evaldelta.compare import compare
    from evaldelta.errors import MissingColumnError, PolicyError
    from evaldelta.gate import evaluate
    from evaldelta.policy import critical_selector, load_policy

    policy = load_policy(policy_path)
    wanted: list[str] | None = list(metrics) if metrics else None
    if policy.metric is not None:
        wanted = wanted or []
        if policy.metric not in wanted:
            wanted.append(policy.metric)
    try:
        with working("evaldelta: comparing the arms for the gate..."):
            allowed = (*options.pop("allowed_pin_differences", ()), *policy.allow_pin_differences)
            result = compare(
                sources,
                metrics=tuple(wanted) if wanted else None,
                critical=critical_selector(policy),
                allowed_pin_differences=allowed,
                **options,
            )
    except MissingColumnError as exc:
        if policy.metric is None or exc.location is None or exc.location.field != policy.metric:
            raise
        raise PolicyError(
            f"metric {policy.metric!r} is not a column of {exc.location.path}",
            policy.where("metric", value=policy.metric),
        ) from None
    if result.pin_differences:
        from evaldelta.errors import GateRefusedError
        from evaldelta.report._pins import fmt_pin

        first = result.pin_differences[0]
        values = ", ".join(f"{a} {fmt_pin(v)}" for a, v in first.values.items())
        keys = ", ".join(repr(d.key) for d in result.pin_differences)
        raise GateRefusedError(
            f"{policy.path}: the gate refuses to decide: the arms differ in {keys} "
            f"(e.g. {first.key}: {values}) beyond the declared arm difference; hold it fixed "
            f"and rerun, or allow it in the policy: [pins] allow = [{keys}]"
        )
    return result, evaluate(policy, result)


def gate_cmd(
    files: FilesArg = None,
    policy: Annotated[
        Path | None, typer.Option("--policy", help="The gate policy (TOML); required.")
    ] = None,
    arm: ArmOpt = None,
    baseline: BaselineOpt = None,
    candidate: CandidateOpt = None,
    by: Annotated[
        str, typer.Option("--by", help="Slicing column the policy's slices name.")
    ] = "slice",
    mix: MixOpt = "actual",
    traffic: TrafficOpt = None,
    confidence: ConfidenceOpt = 0.95,
    interval: IntervalOpt = Interval.newcombe,
    scale: ScaleOpt = None,
    format: Annotated[
        GateFormat,
        typer.Option(
            "--format", help="Verdict format (markdown for a PR comment; html: the full report)."
        ),
    ] = GateFormat.text,
    output: OutputOpt = None,
    store: StoreOpt = None,
    run: RunOpt = None,
    columns: ColumnsOpt = None,
    case_key: CaseKeyOpt = None,
    filter: FilterOpt = None,
    strict: StrictOpt = False,
) -> None:
    """Gate a release: apply a policy to the comparison; exit 0 pass, 1 fail, 3 inconclusive."""
    from evaldelta.errors import UsageError
    from evaldelta.report.verdict import (
        render_verdict_json,
        render_verdict_markdown,
        render_verdict_text,
    )

    if policy is None:
        raise UsageError("gate needs --policy FILE (a TOML policy; see examples/gate.toml)")
    sources = inputs_from(files, arm, store, run)
    comparison, verdict = compare_with_policy(
        sources,
        policy,
        baseline=baseline,
        candidates=candidate or None,
        by=(by,),
        mix=mix,
        traffic=traffic,
        confidence=confidence,
        interval=interval.value,
        scale=parse_scale(scale),
        read_options=read_options(columns, case_key, filter, strict),
    )
    announce_imports(comparison.imports)
    announce_warnings(comparison)
    if format == GateFormat.html:
        from evaldelta.report.html import render_html

        write_output(render_html(comparison, verdict), output)
        raise typer.Exit(verdict.exit_code)
    renderers = {
        GateFormat.text: render_verdict_text,
        GateFormat.markdown: render_verdict_markdown,
        GateFormat.json: render_verdict_json,
    }
    write_output(renderers[format](verdict), output)
    raise typer.Exit(verdict.exit_code)


def register(app: typer.Typer) -> None:
    """Add this module's commands to app."""
    app.command("gate")(gate_cmd)
