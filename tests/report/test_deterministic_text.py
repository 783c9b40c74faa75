"""The text report is the same in every process: no line depends on Python's hash seed."""

from __future__ import annotations

import os
import subprocess
import sys

from ..conftest import ROOT


def test_a_tied_mix_difference_names_the_same_slice_under_any_hash_seed() -> None:
    """Seed 001's two slices differ by 80 points each between the arms (a tie).

    The slice used to be the first of a set, whose order follows PYTHONHASHSEED: seeds 0 and
    1 named different slices. A tie now goes to the first name ("easy").
    """
    data = ROOT / "src" / "evaldelta" / "data" / "seed001.csv"
    command = [sys.executable, "-m", "evaldelta.cli", "compare", str(data)]
    command += ["--baseline", "A", "--mix", "equal"]
    outputs = []
    for seed in ("0", "1", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1] == outputs[2]
    assert "Largest mix difference: easy is 90% of A's cases and 10% of B's." in outputs[0]
