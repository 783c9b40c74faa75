"""`evaldelta --help` must not pay for scipy, Ibis, DuckDB or matplotlib (issue 12).

The packages `evaldelta.stats` and `evaldelta.sources` load their modules on first use
(PEP 562 module ``__getattr__``), and the CLI's command modules import their engines inside
the commands. The statistics use ``scipy.special`` only: importing ``scipy.stats`` costs
about 1.5 s and ``scipy.optimize`` (root finding, for the gate and plan) 0.3 s more, and a
comparison needs neither. Checked by module presence in a fresh interpreter, not by timing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.rows import write_rows

HEAVY = ("scipy", "ibis", "duckdb", "matplotlib", "numpy", "httpx", "jinja2")
HELP = (
    "from evaldelta.cli import app\nimport contextlib, io\n"
    "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
    "    app(['--help'])"
)


def _loaded(code: str) -> set[str]:
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize(
    "code",
    [
        "import evaldelta.cli",
        HELP,
        "import evaldelta, evaldelta.comparison.model, evaldelta.stats, evaldelta.sources",
        "from evaldelta.stats import MIN_INFORMATIVE, POISSON_EDGE, MIN_CLUSTERS, WALD_MIN_PAIRS",
    ],
)
def test_help_and_package_imports_stay_light(code: str) -> None:
    loaded = _loaded(code)
    heavy = sorted(m for m in loaded if m.split(".")[0] in HEAVY)
    assert not heavy, f"imported on the fast path: {heavy[:8]}"


def test_help_is_plain_click_help_without_rich() -> None:
    # typer formats help with rich (and markdown-it, for rich markup) when the app asks for it:
    # about 0.2 s of the 0.3 s budget, so the app sets rich_markup_mode=None
    loaded = _loaded(HELP)
    fancy = sorted(m for m in loaded if m.split(".")[0] in ("rich", "markdown_it", "pygments"))
    assert not fancy, f"--help imported {fancy[:8]}"


def test_help_does_not_load_the_readers() -> None:
    # the command modules import evaldelta.sources (its dataclasses, the registry) inside the
    # commands that read rows: about 10 ms of the 0.3 s that --help may take
    loaded = _loaded(HELP)
    readers = sorted(m for m in loaded if m.startswith("evaldelta.sources"))
    assert not readers, f"--help loaded {readers[:8]}"


def test_a_lazy_name_still_loads_on_use() -> None:
    loaded = _loaded("from evaldelta import stats\nstats.proportion(3, 10)")
    assert "scipy.special" in loaded
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        import evaldelta.stats as es

        es.nope  # noqa: B018


# Every stats function a comparison calls, then the ones the gate, plan and sample add.
COMPARE_STATS = """
from evaldelta import stats
stats.proportion(3, 10)
stats.proportion_of_means(20, 0.4, 0.3, 60, minority_cases=8)
stats.mean_t(20, 0.4, 0.3)
stats.clustered_mean([3, 4, 5], [1.0, 2.0, 4.0], 5.0)
pp = stats.paired_proportions(40, 5, 9, 46)
stats.paired_means_from_summary(30, 0.1, 0.4, informative=12)
stats.newcombe_unpaired(30, 50, 35, 50)
stats.welch(0.4, 0.3, 20, 0.5, 0.3, 25)
stats.fixed_mix({"a": 0.1, "b": 0.2}, {"a": 0.05, "b": 0.04}, {"a": 1, "b": 1})
stats.simpson_check({"x": {"a": (3, 10)}, "y": {"a": (4, 10)}}, "x", "y")
stats.holm([0.01, 0.2, 0.04])
stats.interval_at(pp, 0.9)
"""
PLAN_STATS = """
from evaldelta import stats
from evaldelta.planning.allocation import allocate
stats.fail_pvalue(stats.paired_proportions(40, 5, 9, 46), 0.2)
stats.required_pairs(0.1, 0.5)
stats.required_pairs_mcnemar(0.1, 0.05)
stats.mde_mcnemar(300, 0.15)
stats.mde_paired_t(300, 0.4)
stats.pairs_to_clear_paired_binary(40, 5, 9, 46, 0.0)
allocate({"a": 0.5, "b": 0.5}, {"a": 0.3, "b": 0.4}, 1000, 100)
"""


def test_the_statistics_never_import_scipy_stats_or_statsmodels() -> None:
    compare = _loaded(COMPARE_STATS)
    assert "scipy.special" in compare
    slow = sorted(m for m in compare if m.startswith(("scipy.stats", "scipy.optimize")))
    assert not slow, f"a comparison's statistics imported {slow[:8]}"
    plan = _loaded(PLAN_STATS)
    assert "scipy.optimize" in plan  # root finding, imported where it is used
    slow = sorted(m for m in plan if m.startswith(("scipy.stats", "statsmodels")))
    assert not slow, f"the gate's and plan's statistics imported {slow[:8]}"


def test_compare_on_the_command_line_does_not_import_what_it_does_not_use(tmp_path: Path) -> None:
    lines = []
    for i in range(40):
        lines += [
            (f"c{i}", "base", f"s{i % 3}", i % 2),
            (f"c{i}", "cand", f"s{i % 3}", (i // 3) % 2),
        ]
    rows = write_rows(tmp_path / "rows.csv", lines, "case_id,arm,slice,score")
    code = (
        "import contextlib, io, sys\nfrom evaldelta.cli import main\n"
        f"sys.argv = ['evaldelta', 'compare', {str(rows)!r}, '--baseline', 'base',"
        " '--candidate', 'cand']\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    main()"
    )
    loaded = _loaded(code)
    assert "evaldelta.stats._paired" in loaded  # it did compare
    # pandas: Ibis's DuckDB to_pyarrow imports it (0.45 s) for nothing; sources/_fetch.py not.
    # scipy.optimize is used: the Comparison holds each open slice's pairs to detect and MDE
    # (root finding, comparison/_settle.py), which the JSON carries (issue 25, item 1)
    unused = ("scipy.stats", "statsmodels", "matplotlib", "jinja2", "pandas")
    slow = sorted(m for m in loaded if m.startswith(unused))
    assert not slow, f"evaldelta compare (text) imported {slow[:8]}"


def test_sample_on_the_command_line_imports_neither_scipy_nor_pandas(tmp_path: Path) -> None:
    # sample allocates counts only (no normal quantile: scipy.special, 0.2 s with numpy's
    # typing) and cuts the fetched rows on DuckDB, not with Arrow arrays built in Python
    # (pyarrow imports pandas, 0.3 s, to convert the first Python object)
    log = tmp_path / "traffic.csv"
    lines = ["request_id,task,input_tokens"]
    lines += [f"r{i},{('faq', 'code', 'chat')[i % 3]},{(i * 37) % 900}" for i in range(300)]
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "sample.csv"
    code = (
        "import contextlib, io, sys\nfrom evaldelta.cli import main\n"
        f"sys.argv = ['evaldelta', 'sample', {str(log)!r}, '--by', 'task', '--floor', '10',"
        f" '--total', '60', '--band', 'input_tokens=0,500', '-o', {str(out)!r}]\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    main()"
    )
    loaded = _loaded(code)
    assert "evaldelta.engine._sample" in loaded
    assert len(out.read_text(encoding="utf-8").splitlines()) == 61  # it did sample: 60 rows
    slow = sorted(m for m in loaded if m.split(".")[0] in ("scipy", "pandas", "matplotlib"))
    assert not slow, f"evaldelta sample imported {slow[:8]}"
