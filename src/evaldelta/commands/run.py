"""CLI commands for the run feature (registered onto the main app by cli.py)."""

from __future__ import annotations

import typer

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
