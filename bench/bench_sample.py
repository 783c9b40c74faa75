"""Time `evaldelta sample` on a large traffic log, with its peak memory, beside a plain scan.

Generates a traffic log of ``--rows`` rows (default 10,000,000) as Parquet in DuckDB:
a task column with seed 004's mix, input tokens, and a timestamp over eight weeks. Then
runs, each in a fresh process, measuring wall time and peak RSS (``RUSAGE_CHILDREN``):

1. ``evaldelta sample`` with a floor of 300 per task, a total of 5,000, difficulty bands
   on input tokens and a since-window of the last four weeks;
2. for contrast, one bare DuckDB pass over the same columns (the since-filter, a hash of
   the id and a count per task): the least any stratified sample must do, so the ratio says
   what sampling costs on top of reading the log once.

    python bench/bench_sample.py [--rows N] [--keep]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out"

WRAPPER = """
import resource, subprocess, sys, time
start = time.perf_counter()
code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode
wall = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(wall, peak, code)
"""

SCAN = """
import duckdb, sys
con = duckdb.connect(config={"memory_limit": "512MB"})
print(con.sql(
    "select task, count(*), min(hash(request_id, 1)), max(input_tokens) "
    f"from read_parquet('{sys.argv[1]}') where timestamp >= timestamp '2026-11-02' "
    "group by task"
).fetchall())
"""


def generate(path: Path, rows: int) -> None:
    start = time.perf_counter()
    duckdb.sql(
        f"""
        copy (
          select 'r' || i as request_id,
                 case when h < 41 then 'faq_lookup' when h < 61 then 'summarization'
                      when h < 76 then 'drafting' when h < 89 then 'classification'
                      when h < 97 then 'multi_step_reasoning' else 'extraction' end as task,
                 (hash(i, 7) % 12000)::int as input_tokens,
                 timestamp '2026-10-05' + to_seconds((hash(i, 11) % (56 * 86400))::bigint)
                   as timestamp
          from (select i, hash(i, 3) % 100 as h from range({rows}) t(i))
        ) to '{path}' (format parquet)
        """
    )
    size = path.stat().st_size / 1e6
    print(f"generated {rows:,} rows in {time.perf_counter() - start:.1f} s ({size:.1f} MB)")


def measure(command: list[str]) -> tuple[float, float, int]:
    out = subprocess.run(
        [sys.executable, "-c", WRAPPER, *command], capture_output=True, text=True, check=True
    ).stdout.split()
    return float(out[0]), float(out[1]) / 1024, int(out[2])


def sample_command(log: Path, sample: Path) -> list[str]:
    """The measured `evaldelta sample` command on ``log``, writing ``sample``."""
    return [
        sys.executable, "-m", "evaldelta.cli", "sample", str(log), "--by", "task",
        "--floor", "300", "--total", "5000", "--seed", "1", "--id", "request_id",
        "--band", "input_tokens=0,500,2000,8000", "--since", "2026-11-02", "-o", str(sample),
    ]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--keep", action="store_true", help="reuse the generated log")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    log = OUT / f"traffic_{args.rows}.parquet"
    if not (args.keep and log.exists()):
        generate(log, args.rows)
    sample = OUT / "sample.parquet"
    evaldelta = sample_command(log, sample)
    scan = [sys.executable, "-c", SCAN, str(log)]
    results: dict[str, list[tuple[float, float]]] = {"evaldelta sample": [], "duckdb scan": []}
    for _ in range(args.repeats):
        for name, command in (("evaldelta sample", evaldelta), ("duckdb scan", scan)):
            wall, peak, code = measure(command)
            if code != 0:
                raise SystemExit(f"{name} exited with {code}")
            results[name].append((wall, peak))
    print(f"{'tool':<18} {'wall s (median)':>16} {'peak RSS MB (max)':>18}")
    medians = {}
    for name, runs in results.items():
        walls = sorted(w for w, _ in runs)
        medians[name] = (walls[len(walls) // 2], max(p for _, p in runs))
        print(f"{name:<18} {medians[name][0]:>16.2f} {medians[name][1]:>18.1f}")
    ratio = medians["evaldelta sample"][0] / medians["duckdb scan"][0]
    print(f"evaldelta sample / one DuckDB scan: {ratio:.2f}x wall")
    drawn = duckdb.sql(f"select count(*) from read_parquet('{sample}')").fetchall()[0][0]
    print(f"sample rows written: {drawn:,} (floor 300 per task, total 5,000)")


if __name__ == "__main__":
    main()
