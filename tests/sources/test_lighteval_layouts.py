"""lighteval details files outside lighteval's own folder layout, and LFS pointers to them."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from evaldelta.comparison import compare

from ..conftest import CliResult, one_line_error
from .helpers import LOGS, arm_slice

RUN = LOGS / "lighteval" / "v0.13.0"


def test_a_folder_of_details_files(tmp_path: Path) -> None:
    """Details copied into a folder of their own: the folder names the model."""
    for arm in ("a", "b"):
        target = tmp_path / f"model-{arm}"
        target.mkdir()
        for path in (RUN / f"arm-{arm}" / "details").rglob("details_*.parquet"):
            shutil.copy(path, target / path.name)
    moved = compare([tmp_path / "model-a", tmp_path / "model-b"])
    original = compare([RUN / "arm-a", RUN / "arm-b"])
    metric = original.metrics[0].metric
    for ours, theirs in (("model-a", "evaldelta/dummy-a"), ("model-b", "evaldelta/dummy-b")):
        assert (
            arm_slice(moved, metric, ours).estimate.estimate
            == arm_slice(original, metric, theirs).estimate.estimate
        )


def test_an_lfs_pointer_in_place_of_details(run_cli: Callable[..., CliResult]) -> None:
    folder = LOGS / "upstream/lighteval/tests/reference_details/SmolLM2-1.7B-Instruct-transformers"
    one_line_error(run_cli("compare", str(folder)), "Git LFS pointer")
