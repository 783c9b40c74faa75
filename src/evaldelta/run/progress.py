"""The run's progress bar on standard error: calls done, errors, spend, ETA (terminals only).

When stderr is not a terminal (CI, pipes, tests) nothing is drawn; the command prints one
summary line at the end instead.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from evaldelta.run.execute import Progress

__all__ = ["progress_bar"]


@contextmanager
def progress_bar(enabled: bool = True) -> Iterator[Callable[[Progress], None] | None]:
    """A callback that updates a rich progress bar, or None when stderr is not a terminal."""
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn
    from rich.progress import Progress as Bar

    bar = Bar(
        TextColumn("evaldelta run"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("errors {task.fields[errors]}  spent ${task.fields[spent]:.4f}"),
        TimeRemainingColumn(),
        console=Console(stderr=True),
    )
    task = bar.add_task("run", total=None, errors=0, spent=0.0)

    def update(p: Progress) -> None:
        bar.update(
            task,
            total=p.total,
            completed=p.skipped + p.done,
            errors=p.errors,
            spent=p.spent_usd,
        )

    with bar:
        yield update
