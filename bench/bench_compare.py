"""Benchmark `evaldelta compare` on one large Parquet file against a plain pandas baseline.

Generates N paired binary cases x 2 arms (``base``, ``cand``) as ONE Parquet file with DuckDB
SQL (deterministic for a seed: every random draw is a hash of the row index and the seed),
then times the real CLI and a pandas script doing the same core computation, each in a fresh
subprocess, and reports wall time (median and max of the repetitions) and peak RSS.

Run from the repository root:

    /work/venv/bin/python bench/bench_compare.py            # N = 10,000,000 (a few minutes)
    /work/venv/bin/python bench/bench_compare.py --quick    # N = 200,000 smoke check

See bench/README.md for what is measured and the figures on record.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

BASELINE, CANDIDATE = "base", "cand"
BASE_PASS_RATE = 0.70
FLIP_RATE = 0.10  # share of cases where the candidate's score differs from the baseline's
TARGET_WALL_S = 10.0
TARGET_RSS_MB = 1000.0  # 1 GB, decimal like DuckDB's "1GB"
TARGET_N = 10_000_000
REPEATS = 3
GENERATOR_VERSION = 1  # bump when the generated data changes, so --keep cannot reuse stale files

# Runs one command as its own child and reports that child's wall time and peak RSS.
# RUSAGE_CHILDREN in this fresh wrapper covers only the one measured command (and anything
# it spawned), so every measurement is isolated from the others and from the parent.
# BENCH_TIMEOUT_S (if set) kills the command after that many seconds: rc is then null.
WRAPPER = r"""
import json, os, resource, subprocess, sys, time
timeout = float(os.environ.get("BENCH_TIMEOUT_S") or 0) or None
t0 = time.perf_counter()
try:
    rc = subprocess.run(sys.argv[1:], stdout=sys.stderr, timeout=timeout).returncode
except subprocess.TimeoutExpired:  # run() has killed and reaped the child
    rc = None
wall = time.perf_counter() - t0
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"rc": rc, "timed_out": rc is None, "wall_s": wall,
                  "maxrss_kib": ru.ru_maxrss, "cpu_s": ru.ru_utime + ru.ru_stime}))
"""


# -- data ----------------------------------------------------------------------------------
def _uniform(salt: str, seed: int) -> str:
    """A deterministic U[0, 1) draw per row, from a hash of the row index, seed and salt.

    ``salt`` is a SQL string expression (``"'base'"``, or one that appends the repeat).
    """
    return f"((hash(i, {seed}, {salt}) % 1000000)::DOUBLE / 1e6)"


def data_path(
    out: Path, n_cases: int, n_slices: int, seed: int, arms: int = 2, repeats: int = 1
) -> Path:
    """Where `generate` writes a file of these parameters (the 2-arm name is the historic one)."""
    shape = "" if (arms, repeats) == (2, 1) else f"_a{arms}_r{repeats}"
    return out / f"evals_v{GENERATOR_VERSION}_n{n_cases}_k{n_slices}{shape}_seed{seed}.parquet"


def generate(
    path: Path,
    n_cases: int,
    n_slices: int,
    seed: int,
    *,
    arms: tuple[str, ...] = (BASELINE, CANDIDATE),
    repeats: int = 1,
) -> None:
    """Write ``n_cases x len(arms) x repeats`` rows with one DuckDB ``COPY``.

    The first arm is the baseline; every other arm flips the baseline's score on
    `FLIP_RATE` of the cases (its own draw per arm). With repeats, each repeat draws the
    baseline score afresh. The 2-arm, 1-repeat file is the same as generator version 1's:
    the salts of arm 1 and repeat 0 are the original ``'flip'`` and ``'base'``.
    """
    import duckdb

    tmp = path.with_suffix(".tmp.parquet")  # renamed when complete: no half-written file
    id_width = max(7, len(str(n_cases - 1)))
    slice_width = max(2, len(str(n_slices - 1)))
    arm_rows = ", ".join(f"('{arm}', {j})" for j, arm in enumerate(arms))
    base_salt = "'base' || if(rep = 0, '', rep::VARCHAR)"
    flip_salt = "'flip' || if(j = 1, '', j::VARCHAR)"
    sql = f"""
    COPY (
        WITH cases AS (
            SELECT
                i,
                'c' || lpad(i::VARCHAR, {id_width}, '0') AS case_id,
                's' || lpad((hash(i, {seed}, 'slice') % {n_slices})::VARCHAR,
                            {slice_width}, '0') AS slice,
                {_uniform("'cost'", seed)} AS u_cost
            FROM range({n_cases}) t(i)
        ), draws AS (
            SELECT
                cases.*, a.arm, a.j, r.rep,
                CASE WHEN {_uniform(base_salt, seed)} < {BASE_PASS_RATE} THEN 1 ELSE 0 END
                    AS base_score,
                a.j > 0 AND {_uniform(flip_salt, seed)} < {FLIP_RATE} AS flip
            FROM cases, (VALUES {arm_rows}) a(arm, j), range({repeats}) r(rep)
        )
        SELECT
            case_id,
            arm,
            slice,
            rep::INTEGER AS repeat,
            CASE WHEN flip THEN 1 - base_score ELSE base_score END AS score,
            round(CASE WHEN j = 0 THEN 0.0020 + 0.0010 * u_cost
                       ELSE 0.0015 + 0.0010 * u_cost END, 6) AS cost_usd
        FROM draws
        ORDER BY i, j, rep
    ) TO '{tmp}' (FORMAT parquet, COMPRESSION zstd)
    """
    con = duckdb.connect()
    try:
        con.execute(sql)
    finally:
        con.close()
    tmp.replace(path)


def prepare(path: Path, keep: bool, make: Callable[[], None]) -> None:
    """Reuse ``path`` under ``--keep`` when it exists, else run ``make`` and say how long."""
    if keep and path.exists():
        print(f"data: reusing {path} ({path.stat().st_size / 1e6:.1f} MB)")
        return
    t0 = time.perf_counter()
    make()
    gen_s = time.perf_counter() - t0
    print(f"data: generated {path} in {gen_s:.1f} s ({path.stat().st_size / 1e6:.1f} MB)")


# -- the pandas baseline (run as a subprocess: bench_compare.py --pandas-worker ...) -------
def pandas_worker(data: Path, out: Path) -> None:
    """Read the Parquet with pandas, pivot per case, per-slice 2x2 counts and paired delta."""
    import pandas as pd

    df = pd.read_parquet(data, columns=["case_id", "arm", "slice", "repeat", "score"])
    df = df[df["arm"].isin([BASELINE, CANDIDATE])]
    # The case is the unit: repeats are averaged within (case, arm) first, as evaldelta does.
    wide = df.groupby(["case_id", "slice", "arm"], observed=True)["score"].mean().unstack("arm")
    del df
    b, c = wide[BASELINE], wide[CANDIDATE]
    paired = b.notna() & c.notna()
    b, c = b[paired], c[paired]
    cells = pd.DataFrame(
        {
            "both_pass": (b == 1) & (c == 1),
            "only_baseline": (b == 1) & (c == 0),
            "only_candidate": (b == 0) & (c == 1),
            "both_fail": (b == 0) & (c == 0),
        }
    ).astype("int64")
    per_slice = cells.groupby(level="slice").sum()

    def row(counts: pd.Series) -> dict[str, float | int]:
        n = int(counts.sum())
        fp, pf = int(counts["only_candidate"]), int(counts["only_baseline"])
        return {**{k: int(v) for k, v in counts.items()}, "n": n, "delta": (fp - pf) / n}

    result = {
        "overall": row(cells.sum()),
        "slices": {str(s): row(r) for s, r in per_slice.iterrows()},
    }
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


# -- measuring -----------------------------------------------------------------------------
def measure(
    cmd: list[str],
    env: dict[str, str] | None = None,
    timeout: float | None = None,
    check: bool = True,
) -> dict[str, Any]:
    """Wall time, CPU and peak RSS of ``cmd`` in a fresh wrapper; exit if it fails.

    With ``timeout`` the command is killed after that many seconds and the result has
    ``timed_out`` true (its wall time is then the timeout) instead of exiting. With
    ``check=False`` a failing command is returned too (``rc``, and ``stderr``'s tail).
    """
    env = dict(os.environ if env is None else env)
    env["BENCH_TIMEOUT_S"] = str(timeout or "")
    proc = subprocess.run(
        [sys.executable, "-c", WRAPPER, *cmd], capture_output=True, text=True, env=env
    )
    if proc.returncode != 0 or not proc.stdout.strip():
        sys.exit(f"wrapper failed ({proc.returncode}):\n{proc.stderr}")
    stats = json.loads(proc.stdout.strip().splitlines()[-1])
    if not stats["timed_out"] and stats["rc"] != 0:
        if check:
            sys.exit(f"command failed with exit code {stats['rc']}: {' '.join(cmd)}\n{proc.stderr}")
        stats["stderr"] = proc.stderr[-2000:]
    stats["rss_mb"] = stats["maxrss_kib"] * 1024 / 1e6
    return stats


def summarize(runs: list[dict[str, float]]) -> dict[str, float]:
    walls = [r["wall_s"] for r in runs]
    rss = [r["rss_mb"] for r in runs]
    return {
        "wall_median_s": statistics.median(walls),
        "wall_max_s": max(walls),
        "cpu_median_s": statistics.median(r["cpu_s"] for r in runs),
        "rss_median_mb": statistics.median(rss),
        "rss_max_mb": max(rss),
        "walls_s": walls,
        "rss_mb": rss,
    }


def _evaldelta_overall(doc: dict) -> tuple[float, dict[str, dict]]:
    pair = doc["metrics"][0]["slicings"][0]["pairs"][0]
    assert pair["baseline"] == BASELINE and pair["candidate"] == CANDIDATE, pair["baseline"]
    slices = {s["slice"]: s for s in pair["slices"]}
    return float(pair["overall"]["paired"]["estimate"]), slices


def check_agreement(ed_json: Path, pd_json: Path) -> tuple[float, float, int]:
    """Return (evaldelta estimate, pandas estimate, slices checked); exit on disagreement."""
    doc = json.loads(ed_json.read_text(encoding="utf-8"))  # must parse
    ref = json.loads(pd_json.read_text(encoding="utf-8"))
    ed_est, ed_slices = _evaldelta_overall(doc)
    pd_est = float(ref["overall"]["delta"])
    problems = []
    if not abs(ed_est - pd_est) <= 1e-12:
        problems.append(f"overall estimate: evaldelta {ed_est!r} vs pandas {pd_est!r}")
    if set(ed_slices) != set(ref["slices"]):
        problems.append(f"slices differ: {sorted(ed_slices)} vs {sorted(ref['slices'])}")
    for name, want in ref["slices"].items():
        got = ed_slices.get(name)
        if got is None:
            continue
        table = got["table"]
        cells = ("both_pass", "only_baseline", "only_candidate", "both_fail")
        if any(table[k] != want[k] for k in cells) or got["n_pairs"] != want["n"]:
            problems.append(f"slice {name}: 2x2 {table} vs pandas {want}")
        if not abs(got["paired"]["estimate"] - want["delta"]) <= 1e-12:
            problems.append(f"slice {name}: delta {got['paired']['estimate']} vs {want['delta']}")
    if problems:
        sys.exit("evaldelta and pandas disagree:\n  " + "\n  ".join(problems))
    return ed_est, pd_est, len(ref["slices"])


def compare_command(data: Path, result: Path) -> list[str]:
    """The measured `evaldelta compare` command: ``data`` to JSON at ``result``."""
    return [
        *[sys.executable, "-m", "evaldelta.cli", "compare", str(data)],
        *["--baseline", BASELINE, "--format", "json", "-o", str(result)],
    ]


def pandas_command(data: Path, result: Path) -> list[str]:
    """The measured pandas baseline (`pandas_worker` in a fresh process)."""
    return [
        sys.executable,
        str(Path(__file__).resolve()),
        "--pandas-worker",
        str(data),
        str(result),
    ]


# -- main ----------------------------------------------------------------------------------
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=TARGET_N, help="paired cases (N)")
    parser.add_argument("--slices", type=int, default=20, help="slices (K)")
    parser.add_argument("--out", type=Path, default=Path("bench/out"), help="output directory")
    parser.add_argument("--seed", type=int, default=0, help="data seed")
    parser.add_argument("--keep", action="store_true", help="reuse an existing data file")
    parser.add_argument("--quick", action="store_true", help="N = 200,000 smoke check")
    parser.add_argument("--repeats", type=int, default=REPEATS, help=argparse.SUPPRESS)
    parser.add_argument("--pandas-worker", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.pandas_worker:
        pandas_worker(*args.pandas_worker)
        return
    n = 200_000 if args.quick else args.cases
    if n < 1 or args.slices < 1:
        parser.error("--cases and --slices must be positive")
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    data = data_path(out, n, args.slices, args.seed)
    limit = os.environ.get("EVALDELTA_MEMORY_LIMIT", "1GB (default)")
    print(
        f"evaldelta compare benchmark: N={n:,} cases x 2 arms = {2 * n:,} rows, "
        f"K={args.slices} slices, seed={args.seed}"
    )
    print(
        f"machine: {os.cpu_count()} cores, {platform.machine()}, Python "
        f"{platform.python_version()}; EVALDELTA_MEMORY_LIMIT={limit}"
    )

    prepare(data, args.keep, lambda: generate(data, n, args.slices, args.seed))

    ed_json, pd_json = out / "result.json", out / "pandas_result.json"
    ed_cmd = compare_command(data, ed_json)
    pd_cmd = pandas_command(data, pd_json)
    runs: dict[str, list[dict[str, float]]] = {"evaldelta": [], "pandas": []}
    for rep in range(args.repeats):  # interleaved, so a noisy spell hits both tools
        for tool, cmd in (("evaldelta", ed_cmd), ("pandas", pd_cmd)):
            r = measure(cmd)
            runs[tool].append(r)
            print(
                f"  run {rep + 1}/{args.repeats} {tool:9s} wall {r['wall_s']:7.2f} s  "
                f"cpu {r['cpu_s']:7.2f} s  peak RSS {r['rss_mb']:8.1f} MB",
                flush=True,
            )
    ed, pdb = summarize(runs["evaldelta"]), summarize(runs["pandas"])

    print()
    print(f"{'tool':<16}{'wall s (median)':>16}{'wall s (max)':>14}{'peak RSS MB':>13}")
    for name, s in (("evaldelta", ed), ("pandas", pdb)):
        print(
            f"{name:<16}{s['wall_median_s']:>16.2f}{s['wall_max_s']:>14.2f}{s['rss_max_mb']:>13.1f}"
        )
    wall_ratio = ed["wall_median_s"] / pdb["wall_median_s"]
    rss_ratio = ed["rss_max_mb"] / pdb["rss_max_mb"]
    print(f"{'evaldelta/pandas':<16}{wall_ratio:>16.2f}{'':>14}{rss_ratio:>13.2f}")
    print("(peak RSS is the max over the repetitions)")

    print()
    scope = "" if n == TARGET_N else f"  [targets are for N={TARGET_N:,}; this run has N={n:,}]"
    wall_ok = ed["wall_median_s"] < TARGET_WALL_S
    rss_ok = ed["rss_max_mb"] < TARGET_RSS_MB
    print(f"targets for evaldelta at N={TARGET_N:,}:{scope}")
    print(
        f"  wall < {TARGET_WALL_S:.0f} s:   {ed['wall_median_s']:.2f} s median  "
        f"{'PASS' if wall_ok else 'MISS'}"
    )
    print(f"  peak RSS < 1 GB: {ed['rss_max_mb']:.1f} MB max  {'PASS' if rss_ok else 'MISS'}")

    ed_est, pd_est, n_slices = check_agreement(ed_json, pd_json)
    print()
    print(f"result: {ed_json} parses as JSON")
    print(
        f"overall paired estimate: evaldelta {ed_est!r}, pandas {pd_est!r}, "
        f"|diff| = {abs(ed_est - pd_est):.1e} (<= 1e-12: OK); "
        f"2x2 tables and deltas of all {n_slices} slices agree"
    )
    summary = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "cases": n,
        "slices": args.slices,
        "seed": args.seed,
        "cores": os.cpu_count(),
        "evaldelta_memory_limit": limit,
        "evaldelta": ed,
        "pandas": pdb,
        "ratio_wall": wall_ratio,
        "ratio_rss": rss_ratio,
        "targets_met": {"wall": wall_ok, "rss": rss_ok} if n == TARGET_N else None,
        "overall_estimate": ed_est,
    }
    summary_path = out / "summary.json"
    summary_path.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(f"summary: {summary_path}")


if __name__ == "__main__":
    main()
