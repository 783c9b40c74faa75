"""A spinner on standard error while long work runs, only when a person is watching.

Nothing is written when stderr is not a terminal (CI logs, pipes, tests), so output stays
clean and machine-readable.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["working"]


@contextmanager
def working(message: str) -> Iterator[None]:
    """Show ``message`` with a spinner on stderr while the block runs (terminals only)."""
    if not sys.stderr.isatty():
        yield
        return
    from rich.console import Console

    with Console(stderr=True).status(message):
        yield
