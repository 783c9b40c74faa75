"""``run --couple`` measured on a real model: how much coupling cuts the paired delta's variance.

SmolLM2-135M-Instruct (the ``local`` provider, in-process llama.cpp) answers the live demo's
36 bundled questions (``src/evaldelta/data/live/cases.csv``: arithmetic, capitals, order
numbers; scored by the demo's mechanical check, the expected answer in the reply) under two
arms that differ only in temperature (0.7 and 1.0 by default, the demo's short-answer
prompt), ``--repeats`` times. The same arms run twice over the same cases: once with
``--couple`` (both arms send the seed of each (case, repeat), so llama.cpp's sampler draws
the same random numbers for both) and once without (each call draws its own seed). Each run
is compared with ``evaldelta.compare``; the figures printed are the Comparison's coupling
figures (per-case correlation, paired SE, the SE independent draws would give), and the
headline is the ratio of the paired delta's variance coupled to uncoupled on the same cases:
the share of the sample coupling saves for the same interval. A seeded bootstrap over cases
gives its 95% interval.

    .venv/bin/python bench/couple.py                    # 36 cases x 2 arms x 6 repeats x 2 runs
    .venv/bin/python bench/couple.py --repeats 2 --max-tokens 12 --temperatures 0.5 1.0

The store (``--store``, default ``bench/out/couple/runs.duckdb``) keeps every call: a rerun
reprints the same figures from the response cache (``--fresh`` starts over; the uncoupled
run's seeds are drawn afresh then, so its figures move a little).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from evaldelta.comparison import compare  # noqa: E402
from evaldelta.demo.live import TEMPLATE_V2  # noqa: E402
from evaldelta.report import render_text  # noqa: E402
from evaldelta.sources import Source  # noqa: E402

CASES = ROOT / "src" / "evaldelta" / "data" / "live" / "cases.csv"


def config_text(args: argparse.Namespace, couple: bool) -> str:
    low, high = args.temperatures
    template = "{ " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in TEMPLATE_V2.items()) + " }"
    arm = f'provider = "local"\nmodel = "smollm2"\nmax_tokens = {args.max_tokens}\n'
    arm += f"template = {template}\n"
    return f"""
cases = {json.dumps(str(CASES))}
repeats = {args.repeats}
store = {json.dumps(str(args.store))}
seed = {args.seed}
couple = {str(couple).lower()}

[providers.local]
kind = "local"
max_concurrency = 1
n_threads = {args.threads}

[score]
python = "evaldelta.demo.live:answer_matches"

[arms.{args.names[0]}]
temperature = {low}
{arm}
[arms.{args.names[1]}]
temperature = {high}
{arm}
"""


def run(args: argparse.Namespace, couple: bool) -> tuple[str, int, float]:
    """One run (or its resumption): the run id, the calls paid now, the seconds taken."""
    from evaldelta.run.cases import load_cases
    from evaldelta.run.config import parse_config
    from evaldelta.run.execute import execute

    config = parse_config(config_text(args, couple), str(ROOT / "bench" / "couple.toml"))
    start = time.perf_counter()
    summary = asyncio.run(execute(config, load_cases(CASES)))
    if summary.status != "complete":
        raise SystemExit(f"run {summary.run_id} ended {summary.status}")
    return summary.run_id, summary.progress.paid_calls, time.perf_counter() - start


def attempt_deltas(store: Path, run_id: str, names: tuple[str, str]) -> np.ndarray:
    """Candidate minus baseline score per (case, repeat): a cases x repeats matrix."""
    import duckdb

    with duckdb.connect(str(store), read_only=True) as con:
        rows = con.execute(
            "SELECT case_id, repeat, arm, score FROM eval_rows WHERE run_id = ?", [run_id]
        ).fetchall()
    score = {(str(c), int(r), str(a)): float(v) for c, r, a, v in rows}
    cases = sorted({c for c, _, _ in score})
    repeats = sorted({r for _, r, _ in score})
    return np.array(
        [[score[(c, r, names[1])] - score[(c, r, names[0])] for r in repeats] for c in cases]
    )


def same_text(store: Path, run_id: str, names: tuple[str, str]) -> float:
    """The share of (case, repeat) on which the two arms wrote the very same reply."""
    import duckdb

    with duckdb.connect(str(store), read_only=True) as con:
        rows = con.execute(
            "SELECT case_id, repeat, arm, output FROM attempts WHERE run_id = ?", [run_id]
        ).fetchall()
    outputs: dict[tuple[str, int], dict[str, Any]] = {}
    for case, repeat, arm, output in rows:
        outputs.setdefault((case, repeat), {})[arm] = output
    same = [o[names[0]] == o[names[1]] for o in outputs.values() if len(o) == 2]
    return sum(same) / len(same)


def figures(store: Path, run_id: str, names: tuple[str, str]) -> tuple[Any, Any, str]:
    """The pair's coupling figures, its overall delta, and the report's coupling line."""
    result = compare([Source(store, run=run_id)], baseline=names[0], candidates=(names[1],))
    pair = result.pair(names[1])
    text = render_text(result)
    line = next((x for x in text.splitlines() if x.startswith(("Arms coupled", "Arms paired"))), "")
    return pair.coupling, pair.overall, line


def cut(coupled: np.ndarray, free: np.ndarray, per_attempt: bool) -> float:
    """1 - var(coupled delta) / var(uncoupled delta), per attempt or on case means."""
    if per_attempt:
        vc, vf = coupled.var(ddof=1), free.var(ddof=1)
    else:
        vc, vf = coupled.mean(axis=1).var(ddof=1), free.mean(axis=1).var(ddof=1)
    return float(1.0 - vc / vf) if vf > 0 else float("nan")


def bootstrap(
    coupled: np.ndarray, free: np.ndarray, per_attempt: bool, seed: int, draws: int = 2000
) -> Any:
    """A 95% percentile interval of :func:`cut`, resampling cases (with all their repeats)."""
    rng = np.random.default_rng(seed)
    n = len(coupled)
    cuts = [cut(coupled[i], free[i], per_attempt) for i in rng.integers(0, n, size=(draws, n))]
    return np.nanpercentile(cuts, [2.5, 97.5])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=6)
    parser.add_argument("--max-tokens", type=int, default=16)
    parser.add_argument("--temperatures", type=float, nargs=2, default=(0.7, 1.0))
    parser.add_argument("--seed", type=int, default=0, help="the run seed --couple derives from")
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp threads")
    parser.add_argument(
        "--store", type=Path, default=ROOT / "bench" / "out" / "couple" / "runs.duckdb"
    )
    parser.add_argument("--fresh", action="store_true", help="delete the store first")
    args = parser.parse_args()
    low, high = args.temperatures
    args.names = (f"t{low:g}".replace(".", "_"), f"t{high:g}".replace(".", "_"))
    if args.fresh and args.store.parent.exists():
        shutil.rmtree(args.store.parent)
    args.store.parent.mkdir(parents=True, exist_ok=True)
    print(
        f"SmolLM2-135M-Instruct (local, llama.cpp, {args.threads} thread(s)), 36 questions x "
        f"{args.repeats} repeats, arms {args.names[0]} (temperature {low}) vs {args.names[1]} "
        f"(temperature {high}), max_tokens {args.max_tokens}; {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    rows = {}
    for label, couple in (("coupled", True), ("uncoupled", False)):
        rid, paid, seconds = run(args, couple)
        coupling, overall, line = figures(args.store, rid, args.names)
        rows[label] = (coupling, overall, attempt_deltas(args.store, rid, args.names))
        o = coupling.overall
        print(
            f"\n{label:9s} run {rid}: {paid} calls now in {seconds:.0f} s; "
            f"same reply on {same_text(args.store, rid, args.names):.0%} of (case, repeat)\n"
            f"  delta {overall.main.estimate:+.4f} [{overall.main.ci.low:+.4f}, "
            f"{overall.main.ci.high:+.4f}] on {o.n} cases\n"
            f"  per-case correlation {o.correlation:.3f}; paired SE {o.paired_se:.4f} vs "
            f"{o.independent_se:.4f} for independent draws ({o.variance_reduction:.0%} less "
            "variance than independent draws)"
        )
        for s in coupling.slices:
            print(
                f"    {s.slice:13s} r {s.correlation:+.3f}  paired SE {s.paired_se:.4f}  "
                f"independent SE {s.independent_se:.4f}  {s.variance_reduction:+.0%}"
            )
        if line:
            print(f"  report: {line}")
    coupled, free = rows["coupled"][2], rows["uncoupled"][2]
    cases, repeats = coupled.shape
    for per_attempt, what in (
        (True, f"per attempt ({cases * repeats} (case, repeat) pairs, one seed each)"),
        (False, f"on case means of {repeats} repeats ({cases} cases)"),
    ):
        share = cut(coupled, free, per_attempt)
        low_cut, high_cut = bootstrap(coupled, free, per_attempt, args.seed)
        print(
            f"\ncoupling cut the variance of the paired delta by {share:.0%} {what}; 95% "
            f"bootstrap over cases [{low_cut:.0%}, {high_cut:.0%}]: the same interval from "
            f"{1 - share:.0%} of the sample"
        )


if __name__ == "__main__":
    main()
