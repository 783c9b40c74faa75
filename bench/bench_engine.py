"""Issue 12's speed and memory targets, measured side by side in one run, with PASS/MISS.

    .venv/bin/python bench/bench_engine.py            # full sizes: 20M and 100M rows (long)
    .venv/bin/python bench/bench_engine.py --quick    # <= 1M rows: a smoke run of every row
    .venv/bin/python bench/bench_engine.py --only a,c --keep

Sections (bench/README.md says what each row measures):

a. 10M paired cases x 2 arms (20M rows, 20 slices): `evaldelta compare` beside ONE
   hand-written DuckDB query (`HAND_QUERY`) and the seeds' pandas method; their numbers
   must agree;
b. 100M rows: 2 arms x 50M cases, and 3 arms x 11.1M cases x 3 repeats; and a sweep of
   `--sizes` rows (1M, 10M, 100M) for flat memory and linear time;
c. `evaldelta sample` on a 10M-row traffic log beside one bare DuckDB pass over it;
d. evalstats 0.3.3 and paired-eval 0.4.0 in their own venv on a ladder of sizes, each run
   with a timeout, checked against evaldelta where they compute the same statistic.

Every figure is one command in its own fresh process (bench_compare.measure: wall time and
the peak RSS of that process), the commands of a section interleaved, median of 3.
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
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import bench_compare as bc
import engine_agree as agree
import engine_peers as peers

ROOT = Path(__file__).resolve().parents[1]
ARMS = ("base", "cand", "cand2")

# The hand-written query of section a: per-(arm, slice) case counts and pass rates (over each
# arm's cases, repeats averaged within a case first) and per-slice paired 2x2 tables (over the
# cases both arms scored), and the same over all cases (the () grouping set), in one pass.
HAND_QUERY = """
WITH cases AS (
    SELECT case_id, slice,
           avg(score) FILTER (WHERE arm = 'base') AS b,
           avg(score) FILTER (WHERE arm = 'cand') AS c
    FROM read_parquet('{path}')
    GROUP BY case_id, slice
)
SELECT coalesce(slice, '(all cases)') AS slice,
       count(b) AS base_cases, avg(b) AS base_rate,
       count(c) AS cand_cases, avg(c) AS cand_rate,
       count(*) FILTER (WHERE b = 1 AND c = 1) AS both_pass,
       count(*) FILTER (WHERE b = 1 AND c = 0) AS only_baseline,
       count(*) FILTER (WHERE b = 0 AND c = 1) AS only_candidate,
       count(*) FILTER (WHERE b = 0 AND c = 0) AS both_fail
FROM cases
GROUP BY GROUPING SETS ((slice), ())
"""


@dataclass(frozen=True)
class Sizes:
    compare_cases: int  # section a
    big_cases: int  # section b, 2 arms
    three_arm_cases: int  # section b, 3 arms x 3 repeats
    sweep_rows: tuple[int, ...]
    traffic_rows: int  # section c
    peer_cases: tuple[int, ...]  # section d
    peer_timeout_s: float


FULL = Sizes(
    10_000_000, 50_000_000, 11_111_111, (10**6, 10**7, 10**8), 10**7,
    (10**3, 10**4, 10**5, 10**6, 10**7), 600.0,
)  # fmt: skip
QUICK = Sizes(250_000, 500_000, 111_111, (10**4, 10**5, 10**6), 10**6, (10**3, 10**4), 30.0)


@dataclass
class Figure:
    """One measured command's figures, for the table (runs empty: not run, see ``note``)."""

    section: str
    what: str
    rows: int
    runs: list[dict[str, Any]]
    ref: Figure | None = None
    note: str = ""

    @property
    def done(self) -> bool:
        return bool(self.runs) and all(r["rc"] == 0 for r in self.runs)

    @property
    def status(self) -> str:
        """Why there are no figures: not run, timed out or failed ("" when done)."""
        for r in self.runs:
            if r["timed_out"]:
                return f"did not finish in {r['timeout_s']:g} s"
            if r["rc"] != 0:
                return f"failed (exit {r['rc']})"
        return "" if self.runs else self.note or "not run"

    @property
    def wall(self) -> float:
        return float(statistics.median(r["wall_s"] for r in self.runs))

    @property
    def rss(self) -> float:
        return float(max(r["rss_mb"] for r in self.runs))


@dataclass
class Bench:
    out: Path
    keep: bool
    repeats: int
    seed: int
    slices: int
    measured: dict[tuple[str, ...], list[dict[str, Any]]] = field(default_factory=dict)
    made: set[Path] = field(default_factory=set)
    figures: list[Figure] = field(default_factory=list)
    targets: list[tuple[str, str, str]] = field(default_factory=list)  # target, figure, verdict
    problems: list[str] = field(default_factory=list)

    @property
    def work(self) -> Path:
        return self.out / "engine"

    def data(self, n_cases: int, arms: int = 2, repeats: int = 1) -> Path:
        """The compare file of these parameters, generated once per run (or kept)."""
        path = bc.data_path(self.out, n_cases, self.slices, self.seed, arms, repeats)

        def make() -> None:
            bc.generate(path, n_cases, self.slices, self.seed, arms=ARMS[:arms], repeats=repeats)

        bc.prepare(path, self.keep or path in self.made, make)
        self.made.add(path)
        return path

    def result(self, data: Path, tool: str = "evaldelta") -> Path:
        return self.work / f"{data.stem}.{tool}.json"

    def interleave(
        self, tools: dict[str, list[str]], timeout: float | None = None
    ) -> dict[str, list[dict[str, Any]]]:
        """Measure each command ``repeats`` times, in turn; a command measured earlier in this
        run (another section, same file) is not measured again. With a timeout, a command
        that timed out or ran longer than peers.LONG_RUN_S is not repeated."""
        for rep in range(self.repeats):
            for name, cmd in tools.items():
                done = self.measured.setdefault(tuple(cmd), [])
                last = done[-1] if done else None
                long = last and timeout and last["wall_s"] > peers.LONG_RUN_S
                if len(done) > rep or (last and last["rc"] != 0) or long:
                    continue
                run = bc.measure(cmd, timeout=timeout, check=False)
                run["timeout_s"] = timeout
                done.append(run)
                if run["timed_out"]:
                    figure = f"did not finish in {timeout:g} s"
                elif run["rc"] != 0:
                    figure = f"FAILED (exit {run['rc']}):\n{run['stderr']}"
                else:
                    figure = f"wall {run['wall_s']:7.2f} s  peak RSS {run['rss_mb']:7.1f} MB"
                print(f"  run {rep + 1}/{self.repeats}  {name:<48} {figure}", flush=True)
        return {name: self.measured[tuple(cmd)] for name, cmd in tools.items()}

    def add(
        self, section: str, what: str, rows: int, runs: list[dict[str, Any]], **kw: Any
    ) -> Figure:
        figure = Figure(section, what, rows, runs, **kw)
        self.figures.append(figure)
        return figure

    def target(self, text: str, figure: str, ok: bool | None) -> None:
        verdict = "-" if ok is None else ("PASS" if ok else "MISS")
        self.targets.append((text, figure, verdict))

    def peak_target(self, text: str, fig: Figure, limit_mb: float) -> None:
        self.target_of(text, (fig,), lambda: f"{fig.rss:.0f} MB", lambda: fig.rss < limit_mb)

    def target_of(
        self, text: str, figs: tuple[Figure, ...], figure: Callable[[], str], ok: Callable[[], bool]
    ) -> None:
        """A target on measured figures: MISS, saying why, when one of them has none."""
        missing = [f"{f.what}: {f.status}" for f in figs if not f.done]
        if missing:
            self.target(text, "; ".join(missing), False)
        else:
            self.target(text, figure(), ok())

    def agreement(self, what: str, tolerance: str, problems: list[str]) -> None:
        self.problems += [f"{what}: {p}" for p in problems]
        print(f"  agreement, {what}: " + ("OK" if not problems else "DIFFERS") + f" ({tolerance})")
        for p in problems:
            print(f"    {p}")
        self.target(f"{what} agree", tolerance, not problems)


# -- the hand query (run as a subprocess: bench_engine.py --hand-query-worker DATA OUT) -------
def hand_query_worker(data: Path, out: Path) -> None:
    import duckdb

    con = duckdb.connect()  # DuckDB's defaults: all cores, 80% of RAM
    cursor = con.execute(HAND_QUERY.format(path=data))
    names = [d[0] for d in cursor.description]
    rows = {r[0]: dict(zip(names[1:], r[1:], strict=True)) for r in cursor.fetchall()}
    out.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")


# -- sections ----------------------------------------------------------------------------------
def section_compare(b: Bench, n: int) -> None:
    print(f"\n== a. compare: {n:,} paired cases x 2 arms, {b.slices} slices ==")
    data = b.data(n)
    ed_json, q_json, pd_json = (b.result(data, t) for t in ("evaldelta", "hand_query", "pandas"))
    hand = [sys.executable, str(Path(__file__).resolve()), "--hand-query-worker", str(data)]
    tools = {
        "evaldelta compare": bc.compare_command(data, ed_json),
        "hand-written DuckDB query": [*hand, str(q_json)],
        "pandas (the seeds' method)": bc.pandas_command(data, pd_json),
    }
    runs = b.interleave(tools)
    query = b.add("a", "hand-written DuckDB query", 2 * n, runs["hand-written DuckDB query"])
    ed = b.add("a", "evaldelta compare", 2 * n, runs["evaldelta compare"], ref=query)
    pandas = b.add(
        "a", "pandas (the seeds' method)", 2 * n, runs["pandas (the seeds' method)"], ref=ed
    )
    b.target_of(
        "a. compare wall <= 1.0x the hand query",
        (ed, query),
        lambda: f"{ed.wall / query.wall:.2f}x",
        lambda: ed.wall <= query.wall,
    )
    b.peak_target("a. compare peak RSS < 1 GB", ed, 1000)
    b.target_of(
        "a. compare >= 10x faster than pandas",
        (ed, pandas),
        lambda: f"{pandas.wall / ed.wall:.1f}x",
        lambda: pandas.wall >= 10 * ed.wall,
    )
    if ed.done and query.done:
        problems = agree.check_hand_query(ed_json, q_json)
        b.agreement("a. evaldelta JSON vs the hand query", "counts exact, rates 1e-12", problems)
    if ed.done and pandas.done:
        try:
            bc.check_agreement(ed_json, pd_json)
            problems = []
        except SystemExit as exc:
            problems = [str(exc)]
        b.agreement("a. evaldelta JSON vs pandas", "2x2 exact, deltas 1e-12", problems)  # fmt: skip


def _check_pairs(b: Bench, result: Path, n_cases: int, candidates: tuple[str, ...]) -> None:
    ed = agree.EvaldeltaResult(result)
    wrong = [f"{c}: {ed.pairs[c]['overall']['n_pairs']} pairs" for c in candidates
             if ed.pairs[c]["overall"]["n_pairs"] != n_cases]  # fmt: skip
    if wrong:
        b.problems.append(f"{result.name}: expected {n_cases:,} pairs per candidate: {wrong}")


def section_scale(b: Bench, s: Sizes) -> None:
    print("\n== b. 100M rows, and the row-count sweep ==")
    files = {f"compare {rows:,} rows (2 arms)": (b.data(rows // 2), rows) for rows in s.sweep_rows}
    big = b.data(s.big_cases)
    files[f"compare {2 * s.big_cases:,} rows (2 arms)"] = (big, 2 * s.big_cases)
    three = b.data(s.three_arm_cases, arms=3, repeats=3)
    three_name = f"compare {9 * s.three_arm_cases:,} rows (3 arms x 3 repeats)"
    files[three_name] = (three, 9 * s.three_arm_cases)
    runs = b.interleave({k: bc.compare_command(d, b.result(d)) for k, (d, _) in files.items()})
    figs = {k: b.add("b", k, rows, runs[k]) for k, (_, rows) in files.items()}
    for name, (data, rows) in files.items():
        cands = ARMS[1:3] if data == three else ARMS[1:2]
        if figs[name].done:
            _check_pairs(b, b.result(data), rows // (9 if data == three else 2), cands)
    for name in (f"compare {2 * s.big_cases:,} rows (2 arms)", three_name):
        b.peak_target(f"b. {name}: completes, peak < 2 GB", figs[name], 2000)
    sweep = [figs[f"compare {rows:,} rows (2 arms)"] for rows in s.sweep_rows]
    if not all(f.done for f in sweep):
        b.target_of("b. sweep", tuple(sweep), str, bool)
        return
    first = sweep[0]
    print(
        f"  sweep  {'rows':>13} {'ns/row':>9} {'x first':>8} {'marginal ns/row':>16}"
        f" {'peak x first':>13}"
    )
    marginal = []
    for prev, fig in zip([None, *sweep], sweep, strict=False):
        per_row = fig.wall / fig.rows
        step = (fig.wall - prev.wall) / (fig.rows - prev.rows) if prev else float("nan")
        marginal += [step] if prev else []
        x_first = per_row / (first.wall / first.rows)
        print(f"  {'':5} {fig.rows:>13,} {per_row * 1e9:>9.1f} {x_first:>8.2f} "
              f"{step * 1e9:>16.1f} {fig.rss / first.rss:>13.2f}")  # fmt: skip
    last = sweep[-1]
    b.target(f"b. sweep memory flat: peak at {last.rows:,} <= 1.5x at {first.rows:,}",
             f"{last.rss / first.rss:.2f}x", last.rss <= 1.5 * first.rss)  # fmt: skip
    if len(marginal) >= 2 and marginal[0] <= 0:  # the first step is within the noise
        b.target("b. sweep time linear", "first step's marginal time <= 0: noise", None)
    elif len(marginal) >= 2:
        growth = marginal[-1] / marginal[0]
        b.target(
            "b. sweep time linear: last marginal ns/row <= 1.5x the first",
            f"{growth:.2f}x",
            growth <= 1.5,
        )


def section_sample(b: Bench, rows: int) -> None:
    import bench_sample as bs
    import pyarrow.parquet as pq

    print(f"\n== c. sample: a {rows:,}-row traffic log ==")
    log = b.out / f"traffic_{rows}.parquet"
    bc.prepare(log, b.keep, lambda: bs.generate(log, rows))
    sample = b.work / "sample.parquet"
    tools = {
        "evaldelta sample": bs.sample_command(log, sample),
        "one bare DuckDB pass": [sys.executable, "-c", bs.SCAN, str(log)],
    }
    runs = b.interleave(tools)
    scan = b.add("c", "one bare DuckDB pass", rows, runs["one bare DuckDB pass"])
    ed = b.add("c", "evaldelta sample", rows, runs["evaldelta sample"], ref=scan)
    b.target_of("c. sample wall <= 1.5x one DuckDB pass", (ed, scan),
                lambda: f"{ed.wall / scan.wall:.2f}x",
                lambda: ed.wall <= 1.5 * scan.wall)  # fmt: skip
    if ed.done:
        print(f"  sample rows written: {pq.read_metadata(sample).num_rows:,}")


# peer -> its check (engine_agree) and the tolerances that check applies
CHECKS = {
    "evalstats": (agree.check_evalstats, "Wilson, delta, Newcombe 1e-12; mid-p 1e-9 rel"),
    "evalstats (default method)": (agree.check_bonett_price, "Bonett-Price formula 1e-12"),
    "paired-eval compare": (agree.check_paired_eval, "delta 1e-12; p and CI to MC error"),
    "paired-eval mcnemar": (agree.check_paired_eval, "exact p 1e-9 rel; Wilson 1e-12"),
}


def section_peers(b: Bench, ladder: tuple[int, ...], timeout: float, venv_path: Path) -> None:
    print(
        f"\n== d. peers, on {', '.join(f'{n:,}' for n in ladder)} paired cases"
        f" (timeout {timeout:g} s) =="
    )
    python = peers.ensure_venv(venv_path)
    print(f"  peers' venv {venv_path}: {' '.join(peers.installed(python) or [])}")
    stopped: dict[str, str] = {}
    last: dict[str, Figure] = {}
    for n in ladder:
        data = b.data(n)
        tools = {"evaldelta compare": bc.compare_command(data, b.result(data))}
        extra = [("evalstats (default method)", "evalstats-auto")] if n == ladder[0] else []
        for name, arg in [*peers.PEERS.items(), *extra]:
            why = stopped.get(name)
            if not why and name in last:
                why = peers.too_big(last[name].rss, last[name].rows // 2, n)
            if why:
                stopped[name] = why
                b.add("d", name, 2 * n, [], note=why)
                continue
            tools[name] = peers.command(python, arg, data, b.result(data, arg))
        if len(tools) == 1:  # every peer has stopped
            break
        runs = b.interleave(tools, timeout=timeout)
        ed = b.add("d", "evaldelta compare", 2 * n, runs["evaldelta compare"])
        for name, cmd in tools.items():
            if name == "evaldelta compare":
                continue
            fig = b.add("d", name, 2 * n, runs[name], ref=ed)
            if not fig.done:  # timed out or failed: not tried at larger sizes
                stopped[name] = f"not run: {fig.status} at {n:,} cases"
                continue
            last[name] = fig
            check, tolerance = CHECKS[name]
            problems = check(b.result(data), Path(cmd[-1]))
            b.agreement(f"d. {name} vs evaldelta at {n:,} cases", tolerance, problems)
    for name in peers.PEERS:
        biggest = max(
            (f.rows // 2 for f in b.figures if f.section == "d" and f.what == name and f.done),
            default=0,
        )
        b.target(f"d. {name}: largest size within {timeout:g} s", f"{biggest:,} cases", None)


# -- the report --------------------------------------------------------------------------------
def _version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def machine() -> dict[str, Any]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    git = ["git", "-C", str(ROOT)]
    commit = subprocess.run(
        [*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        [*git, "status", "--porcelain", "src"], capture_output=True, text=True
    ).stdout.strip()
    spec = find_spec("evaldelta")  # where the measured CLI is imported from (PYTHONPATH wins)
    src = Path(spec.origin).parent if spec and spec.origin else None
    dirty = dirty if src == ROOT / "src" / "evaldelta" else ""  # a snapshot elsewhere: n/a
    return {
        "cores": os.cpu_count(),
        "ram_gb": (peers.meminfo_mb("MemTotal") or 0) / 1e3,
        "free_gb": (peers.meminfo_mb("MemAvailable") or 0) / 1e3,
        "cpu": cpu,
        "load_1m": os.getloadavg()[0],
        "python": platform.python_version(),
        **{k: _version(k) for k in ("duckdb", "ibis-framework", "pandas", "pyarrow", "numpy")},
        "evaldelta": f"{_version('evaldelta')} at {commit}"
        + (" + uncommitted src/" if dirty else ""),
        "evaldelta_from": str(src),
        "EVALDELTA_MEMORY_LIMIT": os.environ.get("EVALDELTA_MEMORY_LIMIT", "(default)"),
    }


def report(b: Bench, quick: bool) -> None:
    print("\n## Figures (wall: median of the runs; peak RSS: max over them)\n")
    print("| section | command | rows | runs | wall s | peak RSS MB | wall ratio | RSS ratio |")
    print("| --- | --- | ---: | ---: | ---: | ---: | --- | --- |")
    for f in b.figures:
        if not f.done:
            print(f"| {f.section} | {f.what} | {f.rows:,} | {len(f.runs)} | {f.status} | | | |")
            continue
        ratio = (
            (f"{f.wall / f.ref.wall:.2f}x {f.ref.what}", f"{f.rss / f.ref.rss:.2f}x")
            if f.ref and f.ref.done
            else ("", "")
        )
        print(
            f"| {f.section} | {f.what} | {f.rows:,} | {len(f.runs)} | {f.wall:.2f} | {f.rss:.1f}"
            f" | {ratio[0]} | {ratio[1]} |"
        )
    print(
        "\n## Targets (issue 12)"
        + ("  [--quick: smaller sizes than the targets'; indicative only]" if quick else "")
        + "\n"
    )
    print("| target | figure | verdict |")
    print("| --- | --- | --- |")
    for text, figure, verdict in b.targets:
        print(f"| {text} | {figure} | {verdict} |")


def _rows(text: str) -> int:
    scale = {"k": 10**3, "m": 10**6}.get(text[-1:].lower(), 1)
    return int(float(text[:-1] if scale > 1 else text) * scale)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="<= 1M rows everywhere (smoke run)")
    parser.add_argument("--sizes", nargs="+", type=_rows, help="sweep row counts (1M 10M 100M)")
    parser.add_argument("--only", default="a,b,c,d", help="sections to run, e.g. a,d")
    parser.add_argument("--keep", action="store_true", help="reuse data files already in --out")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out", help="data and results")
    parser.add_argument("--repeats", type=int, default=bc.REPEATS, help="runs per command (3)")
    parser.add_argument("--seed", type=int, default=0, help="data seed")
    parser.add_argument("--slices", type=int, default=20, help="slices of the compare files")
    parser.add_argument("--peer-cases", nargs="+", type=_rows, help="the peers' ladder of sizes")
    parser.add_argument("--peer-timeout", type=float, help="seconds per peer run (600; quick 30)")
    parser.add_argument("--peers-venv", type=Path, default=ROOT / "bench" / "out" / "peers-venv")
    parser.add_argument("--hand-query-worker", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.hand_query_worker:
        hand_query_worker(*args.hand_query_worker)
        return
    base = QUICK if args.quick else FULL
    s = Sizes(
        **{
            **base.__dict__,
            **({"sweep_rows": tuple(args.sizes)} if args.sizes else {}),
            **({"peer_cases": tuple(args.peer_cases)} if args.peer_cases else {}),
            **({"peer_timeout_s": args.peer_timeout} if args.peer_timeout else {}),
        }
    )
    b = Bench(args.out, args.keep, args.repeats, args.seed, args.slices)
    b.work.mkdir(parents=True, exist_ok=True)
    info = machine()
    print(
        "machine: "
        + "; ".join(f"{k} {v:.1f}" if isinstance(v, float) else f"{k} {v}" for k, v in info.items())
    )
    started = time.perf_counter()
    only = set(args.only.split(","))
    if "a" in only:
        section_compare(b, s.compare_cases)
    if "b" in only:
        section_scale(b, s)
    if "c" in only:
        section_sample(b, s.traffic_rows)
    if "d" in only:
        section_peers(b, s.peer_cases, s.peer_timeout_s, args.peers_venv)
    report(b, args.quick)
    print(f"\n(total {time.perf_counter() - started:.0f} s)")
    summary = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "machine": info,
        "sizes": s.__dict__,
        "figures": [
            {
                **{k: v for k, v in f.__dict__.items() if k != "ref"},
                "ref": f.ref.what if f.ref else None,
            }
            for f in b.figures
        ],
        "targets": b.targets,
        "problems": b.problems,
    }
    (b.work / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(f"summary: {b.work / 'summary.json'}")
    if b.problems:
        sys.exit("the numbers disagree:\n  " + "\n  ".join(b.problems))


if __name__ == "__main__":
    main()
