"""A run's live counts and summary, and its progress bar on standard error (terminals only).

When stderr is not a terminal (CI, pipes, tests) nothing is drawn; the command prints one
summary line at the end instead, with the errored attempts counted by kind.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evaldelta.run.decided import Decision

__all__ = ["Progress", "RunSummary", "progress_bar"]


@dataclass
class Progress:
    """Live counts, updated as attempts are committed."""

    total: int = 0
    skipped: int = 0  # already in the store when the run started
    done: int = 0  # committed in this session
    errors: int = 0
    spent_usd: float = 0.0  # paid calls in this session with a known price
    paid_calls: int = 0
    cached_calls: int = 0
    retries: int = 0  # requests sent again after a failure (what the server saw beyond one)
    error_kinds: Counter[str] = field(default_factory=Counter)  # errored attempts by kind
    first_errors: dict[str, str] = field(default_factory=dict)  # kind -> its first message

    @property
    def not_attempted(self) -> int:
        """Attempts neither stored before nor made in this session (a stop, an interrupt)."""
        return max(0, self.total - self.skipped - self.done)

    def add_error(self, kind: str, message: str) -> None:
        """Count one errored attempt of ``kind``; keep the kind's first message."""
        self.errors += 1
        self.error_kinds[kind] += 1
        self.first_errors.setdefault(kind, message)


@dataclass(frozen=True)
class RunSummary:
    """What a run (or this session of it) did."""

    run_id: str
    store: str
    status: str  # complete | incomplete: errors | stopped: max cost | max wall time | ...
    progress: Progress
    new_run: bool
    arms: tuple[str, ...] = field(default_factory=tuple)
    detail: str | None = None  # why a run stopped early (stopped: repeated error)
    # run --until-decided: the final sequential comparison (its looks) and the verdict
    decision: Decision | None = None


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
