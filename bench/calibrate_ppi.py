"""Calibration of the judge correction: does the PPI++ paired interval cover the human delta?

Seeded simulation of issue 27's case: 1,000 shared cases, two arms, human truth pass/fail,
a judge that agrees with the humans on about 85% of answers but is lenient on the
candidate (it passes 30% of the candidate's human-failed answers, 10% of the baseline's),
and human labels for both arms on a random 50, 100 or 200 of the cases. For each
replication, evaldelta's own :func:`evaldelta.stats.ppi_paired` gives the judge-only
interval (the judge's paired delta over every case, what evaldelta reported before issue
27), the labelled-only interval (human deltas on the labelled cases) and the PPI++ paired
interval; the table gives how often each covers the human-truth paired delta.

Two truths are checked: the population delta (the expected human delta of the generating
model, what every interval of evaldelta targets: the cases are a sample) and the human delta
of the 1,000 cases drawn (a fixed eval set). A control scenario has a judge with the same
error rates on both arms (its delta's bias is then only -0.006, from the arms' different
rates), where the judge-only interval is nearly right and PPI++ must not do worse.

    python bench/calibrate_ppi.py                 # 5,000 replications per row (~30 s)
    python bench/calibrate_ppi.py --reps 200      # quicker

Difficulty ``u ~ U(0, 1)`` per case; human pass probability ``0.95 - 0.6 u`` for the
baseline and ``0.98 - 0.6 u`` for the candidate (rates 0.65 and 0.68: population delta
+0.03), independent given ``u``. Judge: each answer's human verdict flipped with the
arm's false-pass (human fail -> judge pass) and false-fail probabilities.
"""

from __future__ import annotations

import argparse
import math
import platform
import subprocess
import sys
import time
import warnings
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from evaldelta.stats import StatisticsWarning, ppi_paired

BASE, CAND, SLOPE = 0.95, 0.98, 0.6  # pass probability = level - SLOPE * u
TRUE_DELTA = CAND - BASE  # the population delta: the mean of u is 1/2 in both arms


@dataclass(frozen=True)
class Judge:
    name: str
    false_pass: tuple[float, float]  # (baseline, candidate): P(judge pass | human fail)
    false_fail: tuple[float, float]  # P(judge fail | human pass)


SCENARIOS = (
    Judge("lenient on candidate", (0.10, 0.30), (0.10, 0.10)),
    Judge("same error rates (control)", (0.10, 0.10), (0.10, 0.10)),
)


def _draw(rng: np.random.Generator, reps: int, cases: int, judge: Judge) -> tuple[np.ndarray, ...]:
    """Human and judge verdicts, ``(reps, cases)`` arrays of 0.0/1.0, for both arms."""
    u = rng.random((reps, cases))
    out = []
    for arm, level in enumerate((BASE, CAND)):
        human = (rng.random((reps, cases)) < level - SLOPE * u).astype(float)
        flip = np.where(human == 1.0, judge.false_fail[arm], judge.false_pass[arm])
        verdict = np.where(rng.random((reps, cases)) < flip, 1.0 - human, human)
        out += [human, verdict]
    return tuple(out)  # human_b, judge_b, human_c, judge_c


def _row(
    rng: np.random.Generator, reps: int, cases: int, labels: int, judge: Judge
) -> dict[str, float]:
    yb, fb, yc, fc = _draw(rng, reps, cases, judge)
    hits = {k: 0 for k in ("judge", "ppi", "labelled", "judge_fin", "ppi_fin", "labelled_fin")}
    widths = {"judge": 0.0, "ppi": 0.0, "labelled": 0.0}
    defined = {"judge": 0, "ppi": 0, "labelled": 0}
    lam, agree, undefined = 0.0, 0.0, 0
    warned: Counter[str] = Counter()
    for r in range(reps):
        keep = rng.choice(cases, size=labels, replace=False)
        hb, hc = np.full(cases, np.nan), np.full(cases, np.nan)
        hb[keep], hc[keep] = yb[r, keep], yc[r, keep]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", StatisticsWarning)
            res = ppi_paired(fb[r], fc[r], hb, hc)
        warned.update({str(w.message).split(":")[0] for w in caught})
        finite = float(np.mean(yc[r] - yb[r]))
        for key, est in (
            ("judge", res.judge_only),
            ("ppi", res.ppi),
            ("labelled", res.labelled_only),
        ):
            low, high = est.ci.low, est.ci.high
            if math.isnan(low):
                undefined += key == "ppi"
                continue
            hits[key] += low <= TRUE_DELTA <= high
            hits[f"{key}_fin"] += low <= finite <= high
            widths[key] += high - low
            defined[key] += 1
        lam += res.lam
        agree += (np.mean(fb[r] == yb[r]) + np.mean(fc[r] == yc[r])) / 2
    out = {k: v / reps for k, v in hits.items()}
    out |= {f"w_{k}": v / max(defined[k], 1) for k, v in widths.items()}
    return out | {"lam": lam / reps, "agree": agree / reps, "undef": undefined, "warned": warned}  # type: ignore[dict-item]


def _bias(judge: Judge) -> float:
    """The judge-only delta's population bias: E[f_c - f_b] - E[y_c - y_b]."""
    out = 0.0
    for arm, (level, sign) in enumerate(((BASE, -1.0), (CAND, 1.0))):
        rate = level - SLOPE / 2
        out += sign * (judge.false_pass[arm] * (1 - rate) - judge.false_fail[arm] * rate)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5000)
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--labels", default="50,100,200")
    parser.add_argument("--seed", type=int, default=20260527)
    args = parser.parse_args()
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    print(
        f"calibrate_ppi: {args.cases} cases, {args.reps} reps per row, seed {args.seed}, "
        f"95% intervals; numpy {np.__version__}, Python {platform.python_version()}, "
        f"commit {commit or '?'}"
    )
    print(f"population human delta {TRUE_DELTA:+.3f} (rates {BASE - SLOPE / 2:.2f} and "
          f"{CAND - SLOPE / 2:.2f})")  # fmt: skip
    header = (
        "| judge | labels | judge agrees | judge-only bias | coverage: judge-only | PPI++ "
        "| labelled-only | (these cases: judge-only | PPI++ | labelled) | width: judge-only "
        "| PPI++ | labelled | mean lambda |"
    )
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    started = time.perf_counter()
    for s, judge in enumerate(SCENARIOS):
        for labels in (int(x) for x in args.labels.split(",")):
            rng = np.random.default_rng([args.seed, s, labels])
            row = _row(rng, args.reps, args.cases, labels, judge)
            print(
                f"| {judge.name} | {labels} | {row['agree']:.3f} | {_bias(judge):+.3f} "
                f"| {row['judge']:.3f} | {row['ppi']:.3f} | {row['labelled']:.3f} "
                f"| {row['judge_fin']:.3f} | {row['ppi_fin']:.3f} | {row['labelled_fin']:.3f} "
                f"| {row['w_judge']:.3f} | {row['w_ppi']:.3f} | {row['w_labelled']:.3f} "
                f"| {row['lam']:.2f} |"
            )
            notes = [f"{row['undef']} undefined PPI++ intervals"] if row["undef"] else []
            notes += [f"{n} reps warned: {text}" for text, n in row["warned"].items()]
            if notes:
                print("  (" + "; ".join(notes) + ")")
    print(f"{time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
