"""CLI commands for the run feature (registered onto the main app by cli.py).

``evaldelta run`` exits 0 when every attempt it made succeeded (also when ``--max-cost`` or
``max_wall_seconds`` stopped it cleanly), and :data:`EXIT_ERRORS` (4) when any attempt of the
session ended in an error or the run stopped early on a repeated error; the summary then
counts the errored attempts by kind, with the first message of each. With
``--until-decided`` (:mod:`evaldelta.run.decided`) it prints one line per look on stderr,
the report and the verdict on stdout, and exits with the gate's code (0 pass, 1 fail, 3
inconclusive), or 4 when a repeated error stopped it before it decided.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from evaldelta.comparison.model import Look
    from evaldelta.gating import Verdict
    from evaldelta.run.config import RunConfig
    from evaldelta.run.decided import UntilDecided
    from evaldelta.run.progress import RunSummary

__all__ = ["EXIT_ERRORS", "register"]

EXIT_ERRORS = 4  # the run finished, but some attempts ended in an error (see the summary)


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
    app.command("run")(run_cmd)


def run_cmd(
    cases: Annotated[
        Path | None,
        typer.Argument(help="Case file (CSV, JSONL or Parquet) with a case_id column."),
    ] = None,
    config: Annotated[
        Path | None, typer.Option("--config", help="Run config (TOML); see examples/run.toml.")
    ] = None,
    arm: Annotated[
        list[str] | None,
        typer.Option("--arm", help="NAME=PROVIDER:MODEL, e.g. cheap=openai:gpt-4o-mini."),
    ] = None,
    repeats: Annotated[int | None, typer.Option(help="Attempts per case and arm.")] = None,
    store: Annotated[
        Path | None, typer.Option(help="Run store (DuckDB file); default .evaldelta/runs.duckdb.")
    ] = None,
    max_cost: Annotated[
        float | None, typer.Option(help="Stop cleanly once this many USD are spent.")
    ] = None,
    score_regex: Annotated[
        str | None, typer.Option(help="Score 1 when this regex matches the output, else 0.")
    ] = None,
    checks: Annotated[
        Path | None,
        typer.Option(
            "--checks",
            help="Score each attempt on this checks file (pass, check.<id>, judge_score); "
            "score = the overall pass.",
        ),
    ] = None,
    progress: Annotated[bool, typer.Option(help="Progress bar on a terminal.")] = True,
    couple: Annotated[
        bool,
        typer.Option(
            "--couple",
            help="Send every arm the same seed per (case, repeat) (openai and local "
            "providers), so the arms' sampling shares its randomness.",
        ),
    ] = False,
    until_decided: Annotated[
        bool,
        typer.Option(
            "--until-decided",
            help="Send the cases in looks and stop once the --policy gate is decided "
            "(anytime-valid intervals); exit 0 pass, 1 fail, 3 inconclusive.",
        ),
    ] = False,
    policy: Annotated[
        Path | None, typer.Option("--policy", help="With --until-decided: the gate policy.")
    ] = None,
    by: Annotated[
        str | None,
        typer.Option("--by", help="With --until-decided: the slicing column (default: slice)."),
    ] = None,
    batch: Annotated[
        int | None,
        typer.Option(help="With --until-decided: cases per open slice per look (default 10)."),
    ] = None,
    stop: Annotated[
        str | None,
        typer.Option(
            help="With --until-decided: stop once the verdict is decided (verdict, the "
            "default) or every rule is (all)."
        ),
    ] = None,
    max_calls: Annotated[
        int | None,
        typer.Option(help="With --until-decided: at most this many calls (case x arm x repeat)."),
    ] = None,
    max_usd: Annotated[
        float | None,
        typer.Option(help="With --until-decided: no look once this many USD are spent."),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option(help="With --until-decided: the seed of the case order (default: config's)."),
    ] = None,
    scale: Annotated[
        str | None,
        typer.Option(help="With --until-decided: a graded score's scale LOW,HIGH."),
    ] = None,
) -> None:
    """Run arms over cases (x repeats), recording every attempt in the run store; resumable."""
    import asyncio

    from evaldelta.errors import UsageError
    from evaldelta.run.cases import load_cases
    from evaldelta.run.config import RunConfig, load_config, with_flags
    from evaldelta.run.execute import execute
    from evaldelta.run.progress import progress_bar

    flags = {"--policy": policy, "--by": by, "--batch": batch, "--stop": stop,
             "--max-calls": max_calls, "--max-usd": max_usd, "--seed": seed,
             "--scale": scale}  # fmt: skip
    given = [name for name, value in flags.items() if value is not None]
    if given and not until_decided:
        raise UsageError(f"{given[0]} goes with --until-decided")

    base = load_config(config) if config is not None else RunConfig()
    cfg = with_flags(
        base,
        arms=arm or (),
        cases=cases,
        repeats=repeats,
        store=store,
        max_cost=max_cost,
        score_regex=score_regex,
        checks=checks,
        couple=couple or None,
    )
    if cfg.cases is None:
        raise UsageError('give a CASES file, or cases = "..." in the run config')
    plan = None
    if until_decided:
        plan = _plan(policy, by, batch, stop, max_calls, max_usd, seed, scale, cfg.seed)
    case_set = load_cases(cfg.cases)
    _coupling_warning(cfg)
    with progress_bar(progress) as update:
        summary = asyncio.run(
            execute(cfg, case_set, on_progress=update, until_decided=plan, on_look=_look_line)
        )
    _summary_lines(summary)
    _arm_lines(summary.store, summary.run_id)
    metric = " --metric pass" if cfg.checks is not None else ""
    if plan is not None:  # the same sequential comparison and verdict, from the store
        typer.echo(
            f"evaldelta gate --store {summary.store} --run {summary.run_id} --policy "
            f"{plan.policy} --by {plan.by} --sequential --order sequence", err=True
        )  # fmt: skip
    else:
        typer.echo(
            f"evaldelta compare --store {summary.store} --run {summary.run_id}{metric}",
            err=True,
        )
    if summary.decision is not None:
        _decided(summary)
    if plan is not None:  # stopped before a look was judged (a repeated error, the wall time)
        typer.echo("  not decided yet: rerun the same command to resume the look", err=True)
    if plan is not None or summary.progress.errors or summary.status == "stopped: repeated error":
        raise typer.Exit(EXIT_ERRORS)


def _coupling_warning(cfg: RunConfig) -> None:
    """Say once, before any call, which arms --couple cannot couple (not again as a warning)."""
    import warnings

    from evaldelta.run.coupling import CouplingWarning, warn_uncoupled

    warnings.filterwarnings("ignore", category=CouplingWarning)
    said = warn_uncoupled(cfg)
    if said is not None:
        typer.echo(f"evaldelta: warning: {said}", err=True)


def _plan(
    policy: Path | None,
    by: str | None,
    batch: int | None,
    stop: str | None,
    max_calls: int | None,
    max_usd: float | None,
    seed: int | None,
    scale: str | None,
    config_seed: int,
) -> UntilDecided:
    """The --until-decided options, checked (one-line errors)."""
    from evaldelta.commands._shared import parse_scale
    from evaldelta.errors import UsageError
    from evaldelta.run.decided import UntilDecided

    if policy is None:
        raise UsageError("--until-decided needs --policy FILE: the gate whose answer it waits for")
    if not policy.is_file():
        raise UsageError(f"--policy {policy}: the policy file does not exist")
    plan = UntilDecided(
        policy=policy, by=by or "slice", batch=10 if batch is None else batch,
        stop=stop or "verdict", max_calls=max_calls, max_usd=max_usd,  # type: ignore[arg-type]
        seed=config_seed if seed is None else seed, scale=parse_scale(scale),
    )  # fmt: skip
    plan.check()
    return plan


def _look_line(look: Look, verdict: Verdict) -> None:
    """One line per look judged (on stderr): totals, the gate's outcome, the slices decided."""
    failed = list(
        dict.fromkeys(str(r.slice) for r in verdict.rules if r.outcome == "fail" and r.slice)
    )
    outcome = f"fail on {', '.join(failed)}" if failed else look.outcome
    usd = f", ${look.usd:.4f}" if look.usd is not None else ""
    decided = f"; decided: {', '.join(look.decided)}" if look.decided else ""
    typer.echo(
        f"evaldelta: look {look.index}: {look.cases} cases, {look.calls} calls{usd}; "
        f"{outcome}{decided}",
        err=True,
    )


def _decided(summary: RunSummary) -> None:
    """Why the run stopped, its calls beside the fixed design's; the report; the gate's exit."""
    from evaldelta.report import render_text

    assert summary.decision is not None
    comparison, verdict = summary.decision.comparison, summary.decision.verdict
    seq = comparison.sequential
    if seq is not None and seq.calls is not None and seq.fixed_calls:
        typer.echo(
            f"evaldelta: stopped after look {len(seq.looks)}: {seq.stopped_because}; "
            f"{seq.calls} calls of the fixed design's {seq.fixed_calls} "
            f"({seq.calls / seq.fixed_calls:.0%})",
            err=True,
        )
    typer.echo(render_text(comparison, verdict), nl=False)
    raise typer.Exit(verdict.exit_code)


def _summary_lines(summary: RunSummary) -> None:
    """The run's totals, why it stopped, and its errored attempts by kind (on stderr)."""
    p = summary.progress
    left = f", {p.not_attempted} not attempted" if p.not_attempted else ""
    typer.echo(
        f"evaldelta: run {summary.run_id} {summary.status}: {p.skipped + p.done}/{p.total} "
        f"attempts ({p.skipped} already stored, {p.done} now, {p.errors} errors{left}); "
        f"{p.paid_calls} paid calls, {p.cached_calls} from cache, {p.retries} retries, "
        f"${p.spent_usd:.4f} spent; store {summary.store}",
        err=True,
    )
    if summary.detail is not None:
        typer.echo(f"  stopped early: {_shown(summary.detail)}", err=True)
    for kind, count in p.error_kinds.most_common():
        first = _shown(p.first_errors.get(kind, ""))
        typer.echo(f"  errors: {count} {kind} (first: {first})", err=True)
    if p.errors:
        typer.echo(
            "  rerun the same command to retry the errored attempts (finished ones are kept)",
            err=True,
        )


def _shown(text: str, limit: int = 300) -> str:
    """A server's message for a terminal: one line, no control characters, bounded."""
    import re

    flat = " ".join(re.sub(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", " ", text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _arm_lines(store_path: str, run_id: str) -> None:
    """Per arm: attempts, cost, and a cascade's escalation rate (on stderr)."""
    from evaldelta.store import Store

    with Store(store_path, read_only=True) as store:
        totals = store.arm_totals(run_id)
    for row in totals:
        cost = "cost unknown" if row["cost_usd"] is None else f"${row['cost_usd']:.4f}"
        per = (
            f" (${row['cost_usd'] / row['attempts']:.6f}/attempt)"
            if row["cost_usd"] is not None and row["attempts"]
            else ""
        )
        escalated = (
            f"; escalated {row['escalation_rate']:.1%}"
            if row["escalation_rate"] is not None
            else ""
        )
        typer.echo(
            f"  arm {row['arm']}: {row['attempts']} attempts, {row['errors']} errors, "
            f"{cost}{per}{escalated}",
            err=True,
        )
