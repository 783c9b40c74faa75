"""The peers' virtual environment and the commands that run them (bench/peers/worker.py).

evalstats 0.3.3 and paired-eval 0.4.0 (PyPI) are installed in their own venv, never in
evaldelta's: ``bench/out/peers-venv`` by default (git-ignored), created on first use from
``bench/peers/requirements.txt``.
"""

from __future__ import annotations

import subprocess
import sys
import venv
from pathlib import Path

HERE = Path(__file__).resolve().parent
REQUIREMENTS = HERE / "peers" / "requirements.txt"
WORKER = HERE / "peers" / "worker.py"

# name in the table -> the worker's first argument
PEERS = {
    "evalstats": "evalstats",
    "paired-eval compare": "paired-eval",
    "paired-eval mcnemar": "paired-eval-mcnemar",
}
LONG_RUN_S = 120.0  # a run this long is measured once: noise is small beside it


def _pinned() -> list[str]:
    lines = REQUIREMENTS.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def installed(python: Path) -> list[str] | None:
    """The pinned requirements as installed in ``python``'s venv, or None if it cannot run."""
    names = [req.split("==")[0] for req in _pinned()]
    code = (
        "import importlib.metadata as m, sys\n"
        "for n in sys.argv[1:]:\n"
        "    try: print(n + '==' + m.version(n))\n"
        "    except m.PackageNotFoundError: print(n + '==missing')\n"
    )
    proc = subprocess.run([str(python), "-c", code, *names], capture_output=True, text=True)
    return proc.stdout.split() if proc.returncode == 0 else None


def ensure_venv(path: Path) -> Path:
    """The venv's python, after creating the venv or installing the pins where needed."""
    python = path / "bin" / "python"
    if python.exists() and installed(python) == _pinned():
        return python
    if not python.exists():
        print(f"peers: creating their virtual environment {path} (once; about a minute)")
        venv.create(path, with_pip=True)
    print(f"peers: installing {' '.join(_pinned())} into {path} from PyPI")
    proc = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "-r", str(REQUIREMENTS)],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0 or installed(python) != _pinned():
        sys.exit(f"peers: could not install {REQUIREMENTS} into {path}:\n{proc.stderr}")
    return python


def command(python: Path, peer: str, data: Path, result: Path) -> list[str]:
    """The measured command of one peer (a `PEERS` value or ``evalstats-auto``)."""
    return [str(python), str(WORKER), peer, str(data), str(result)]


def too_big(prev_peak_mb: float, prev_n: int, n: int) -> str | None:
    """Why not to try ``n`` cases after ``prev_n`` used ``prev_peak_mb``, or None.

    Peak memory extrapolated linearly (an over-estimate for the fixed part) must stay under
    half of the memory the machine has free now: the machine is shared.
    """
    free_mb = meminfo_mb("MemAvailable")
    want = prev_peak_mb * n / prev_n
    if free_mb is not None and want > free_mb / 2:
        return (
            f"not run: extrapolated peak {want / 1e3:.1f} GB > half the free {free_mb / 1e3:.1f} GB"
        )
    return None


def meminfo_mb(key: str) -> float | None:
    """A /proc/meminfo figure (``MemTotal``, ``MemAvailable``) in decimal MB, if Linux."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith(f"{key}:"):
                return int(line.split()[1]) * 1024 / 1e6
    except OSError:
        pass
    return None
