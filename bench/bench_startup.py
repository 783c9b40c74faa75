"""Benchmark start-up: `import evaldelta`, `evaldelta --help` and a small `evaldelta compare`.

Issue 12's targets on this machine: `import evaldelta` and `evaldelta --help` under 0.3 s
wall, `evaldelta compare` on a 5,000-row file (2,500 paired binary cases x 2 arms, 4
slices) under 1.5 s. Every command runs in a fresh process through bench_compare.py's
measuring wrapper (wall time of that one child); the commands are interleaved, one of each
per round, after one untimed warm-up round (bytecode caches, the file in the page cache), so
a noisy spell on a shared machine hits all of them. The table gives the median wall time of
the rounds, its ratio to `python -c pass` measured the same way, and the median CPU time
(user + system: on a busy machine wall time also counts waiting for a core).

    .venv/bin/python bench/bench_startup.py [--repeats 5] [--out bench/out]

The CSV is written by a seeded generator (the same file for a seed): baseline pass rate
0.70, the candidate flips the baseline's score on 10% of cases (bench_compare.py's rates).
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import random
import sys
from pathlib import Path

from bench_compare import BASE_PASS_RATE, BASELINE, CANDIDATE, FLIP_RATE, measure, summarize

CASES, SLICES = 2_500, 4


def write_rows(path: Path, cases: int, slices: int, seed: int) -> None:
    """``cases`` paired binary cases x 2 arms as a tidy CSV (case_id, arm, slice, score)."""
    rng = random.Random(seed)
    with path.open("w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh)
        out.writerow(["case_id", "arm", "slice", "score"])
        for i in range(cases):
            case, name = f"c{i:05d}", f"s{rng.randrange(slices)}"
            base = int(rng.random() < BASE_PASS_RATE)
            cand = 1 - base if rng.random() < FLIP_RATE else base
            out.writerow([case, BASELINE, name, base])
            out.writerow([case, CANDIDATE, name, cand])


def commands(rows: Path) -> list[tuple[str, list[str], float | None]]:
    """(label, command, target wall seconds or None) for each measured command."""
    python = sys.executable
    evaldelta = str(Path(python).with_name("evaldelta"))  # the installed entry point
    compare = [evaldelta, "compare", str(rows), "--baseline", BASELINE, "--candidate", CANDIDATE]
    return [
        ("python -c pass", [python, "-c", "pass"], None),
        ("import evaldelta", [python, "-c", "import evaldelta"], 0.3),
        ("evaldelta --help", [evaldelta, "--help"], 0.3),
        (f"evaldelta compare ({2 * CASES:,} rows)", compare, 1.5),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="timed rounds (median)")
    parser.add_argument("--seed", type=int, default=0, help="data seed")
    parser.add_argument("--out", type=Path, default=Path("bench/out"), help="output directory")
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error("--repeats must be positive")
    args.out.mkdir(parents=True, exist_ok=True)
    rows = args.out / f"startup_n{CASES}_k{SLICES}_seed{args.seed}.csv"
    write_rows(rows, CASES, SLICES, args.seed)
    todo = commands(rows)
    load = os.getloadavg()[0]
    print(
        f"start-up benchmark: {os.cpu_count()} cores, {platform.machine()}, Python "
        f"{platform.python_version()}; load average {load:.2f} at the start"
    )
    print(f"data: {rows} ({2 * CASES:,} rows, {SLICES} slices, seed {args.seed})")
    for _, cmd, _ in todo:  # warm-up round, not timed
        measure(cmd)
    walls: dict[str, list[dict[str, float]]] = {label: [] for label, _, _ in todo}
    for _ in range(args.repeats):  # interleaved rounds
        for label, cmd, _ in todo:
            walls[label].append(measure(cmd))
    floor = summarize(walls[todo[0][0]])["wall_median_s"]

    print()
    head = f"{'command':<32}{'wall s':>8}{'max s':>8}{'cpu s':>8}{'target':>8}{'':>6}{'x pass':>8}"
    print(head)
    print("-" * len(head))
    for label, _, target in todo:
        s = summarize(walls[label])
        wall = s["wall_median_s"]
        goal = f"< {target:.1f}" if target is not None else ""
        verdict = "" if target is None else ("PASS" if wall < target else "MISS")
        print(
            f"{label:<32}{wall:>8.3f}{s['wall_max_s']:>8.3f}{s['cpu_median_s']:>8.3f}"
            f"{goal:>8}{verdict:>6}{wall / floor:>8.1f}"
        )
    print(
        f"(wall: median and max of {args.repeats} interleaved rounds; cpu: median user + "
        f"system time; load average {os.getloadavg()[0]:.2f} at the end)"
    )


if __name__ == "__main__":
    main()
