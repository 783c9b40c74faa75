"""CLI commands for the run feature (registered onto the main app by cli.py).

``evaldelta run`` exits 0 when every attempt it made succeeded (also when ``--max-cost`` or
``max_wall_seconds`` stopped it cleanly), and :data:`EXIT_ERRORS` (4) when any attempt of the
session ended in an error or the run stopped early on a repeated error; the summary then
counts the errored attempts by kind, with the first message of each.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from evaldelta.run.config import RunConfig
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
) -> None:
    """Run arms over cases (x repeats), recording every attempt in the run store; resumable."""
    import asyncio

    from evaldelta.errors import UsageError
    from evaldelta.run.cases import load_cases
    from evaldelta.run.config import RunConfig, load_config, with_flags
    from evaldelta.run.execute import execute
    from evaldelta.run.progress import progress_bar

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
    case_set = load_cases(cfg.cases)
    _coupling_warning(cfg)
    with progress_bar(progress) as update:
        summary = asyncio.run(execute(cfg, case_set, on_progress=update))
    _summary_lines(summary)
    _arm_lines(summary.store, summary.run_id)
    metric = " --metric pass" if cfg.checks is not None else ""
    typer.echo(
        f"evaldelta compare --store {summary.store} --run {summary.run_id}{metric}", err=True
    )
    if summary.progress.errors or summary.status == "stopped: repeated error":
        raise typer.Exit(EXIT_ERRORS)


def _coupling_warning(cfg: RunConfig) -> None:
    """Say once, before any call, which arms --couple cannot couple (not again as a warning)."""
    import warnings

    from evaldelta.run.coupling import CouplingWarning, warn_uncoupled

    warnings.filterwarnings("ignore", category=CouplingWarning)
    said = warn_uncoupled(cfg)
    if said is not None:
        typer.echo(f"evaldelta: warning: {said}", err=True)


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
