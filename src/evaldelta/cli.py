"""The command line: the app, every command registered onto it, and the exit codes.

Each command lives in :mod:`evaldelta.commands` (one module per feature); this module only
assembles them and maps errors. Exit codes: 0 ok, 1 gate fail, 2 usage or data error, 3
gate inconclusive, 4 a run that finished with errored attempts (``evaldelta run``; see
commands/run.py).
"""

from __future__ import annotations

import os
import sys

import typer

from evaldelta.commands import cases as _cases_commands
from evaldelta.commands import checks as _checks_commands
from evaldelta.commands import compare as _compare_commands
from evaldelta.commands import demo as _demo_commands
from evaldelta.commands import gate as _gate_commands
from evaldelta.commands import importing as _import_commands
from evaldelta.commands import plan as _plan_commands
from evaldelta.commands import run as _run_commands
from evaldelta.errors import EvaldeltaError

__all__ = ["app", "main"]

app = typer.Typer(
    name="evaldelta",
    help="Compare LLM releases honestly: per-slice paired deltas with intervals, "
    "fixed-mix standardized rates, and the cases that moved.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

# the order of `evaldelta --help`
for _commands in (
    _compare_commands,
    _demo_commands,
    _gate_commands,
    _plan_commands,
    _run_commands,
    _checks_commands,
    _import_commands,
    _cases_commands,
):
    _commands.register(app)


def _one_line(text: str) -> str:
    """A message on one line: line breaks inside it (a parser's caret drawing) become spaces."""
    import re

    return re.sub(r"\s*[\r\n]+\s*", " ", text.strip())


def main() -> None:
    """Entry point: map every failure to one line on stderr and an exit code.

    evaldelta's own errors and the file system's (a folder that cannot be written, a disk
    that is full) are exit 2; anything else is a bug, reported in one line with exit 70
    (EX_SOFTWARE), and with its traceback when EVALDELTA_DEBUG=1.
    """
    try:
        app()  # typer's own usage errors exit with code 2 inside
    except EvaldeltaError as exc:
        typer.echo(f"evaldelta: error: {_one_line(str(exc))}", err=True)
        sys.exit(2)
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        typer.echo(f"evaldelta: error: {where}{exc.strerror or exc}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        typer.echo("evaldelta: interrupted", err=True)
        sys.exit(130)
    except MemoryError:  # an input past what the limits foresaw: still the input's size
        typer.echo(
            "evaldelta: error: out of memory: an input is larger than this machine can read "
            "(split the file, or import it in parts)",
            err=True,
        )
        sys.exit(2)
    except Exception as exc:
        if os.environ.get("EVALDELTA_DEBUG") == "1":
            raise
        if type(exc).__name__ == "OutOfMemoryException":  # DuckDB's, past its buffer limit
            limit = os.environ.get("EVALDELTA_MEMORY_LIMIT", "512MB")
            typer.echo(
                f"evaldelta: error: out of memory: these rows need more than DuckDB's buffer "
                f"of EVALDELTA_MEMORY_LIMIT={limit}; raise it and rerun (100M rows need about "
                "EVALDELTA_MEMORY_LIMIT=1500MB)",
                err=True,
            )
            sys.exit(2)
        typer.echo(
            f"evaldelta: internal error: {type(exc).__name__}: {exc} "
            "(a bug: please report it; EVALDELTA_DEBUG=1 shows the traceback)",
            err=True,
        )
        sys.exit(70)


if __name__ == "__main__":  # pragma: no cover
    main()
