"""`evaldelta --help` must not pay for scipy, Ibis, DuckDB or matplotlib (issue 12).

The packages `evaldelta.stats` and `evaldelta.sources` load their modules on first use
(PEP 562 module ``__getattr__``), and the CLI's command modules import their engines inside
the commands. Checked by module presence in a fresh interpreter, not by timing.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("scipy", "ibis", "duckdb", "matplotlib", "numpy", "httpx", "jinja2")


def _loaded(code: str) -> set[str]:
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize(
    "code",
    [
        "import evaldelta.cli",
        "from evaldelta.cli import app\nimport contextlib, io\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    app(['--help'])",
        "import evaldelta, evaldelta.model, evaldelta.stats, evaldelta.sources",
    ],
)
def test_help_and_package_imports_stay_light(code: str) -> None:
    loaded = _loaded(code)
    heavy = sorted(m for m in loaded if m.split(".")[0] in HEAVY)
    assert not heavy, f"imported on the fast path: {heavy[:8]}"


def test_a_lazy_name_still_loads_on_use() -> None:
    loaded = _loaded("from evaldelta import stats\nstats.proportion(3, 10)")
    assert "scipy.stats" in loaded
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        import evaldelta.stats as es

        es.nope  # noqa: B018
