"""What the importer tests share: where the fixtures are, and reading results by name."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evaldelta.comparison.model import ALL_CASES, ArmSlice, Comparison

from ..conftest import ROOT

LOGS = ROOT / "tests" / "fixtures" / "logs"


def manifest(tool: str, version: str) -> dict[str, Any]:
    """The MANIFEST.json the fixture script wrote with the tool's own figures."""
    return json.loads((LOGS / tool / version / "MANIFEST.json").read_text())  # type: ignore[no-any-return]


def arm_slice(result: Comparison, metric: str, arm: str, slice: str = ALL_CASES) -> ArmSlice:
    """One arm's figures in one slice of the first slicing of ``metric``."""
    (found,) = [m for m in result.metrics if m.metric == metric]
    hits = [a for a in found.slicings[0].arms if a.arm == arm and a.slice == slice]
    if len(hits) != 1:
        raise LookupError(f"no row for arm {arm!r}, slice {slice!r} of {metric!r}")
    return hits[0]


def files_in(folder: Path, suffix: str) -> list[Path]:
    """The files of a fixture folder with this suffix, sorted."""
    return sorted(p for p in folder.iterdir() if p.name.endswith(suffix))
