"""Run one peer library on a benchmark file; runs in the peers' venv, not evaldelta's.

    PEERS_PYTHON bench/peers/worker.py {evalstats,evalstats-auto,paired-eval,paired-eval-mcnemar}
        DATA.parquet OUT.json

Reads the 2-arm file of bench_compare.generate (arms ``base`` and ``cand``, one repeat) the
way a user of that library would, calls the library, and writes its figures and the time
of each phase as JSON. Only the standard library, pandas/pyarrow and the peer are used.

- ``evalstats``: ``evalstats.compare(load_from(df), factors="model", baseline="base",
  method="newcombe")``: the Newcombe interval evaldelta reports (and McNemar mid-p);
- ``evalstats-auto``: the same with evalstats' default ``method="auto"`` (Bonett-Price);
- ``paired-eval``: ``paired_eval.paired_compare(cand, base)``: the mean difference, a
  sign-flip permutation p-value and a percentile bootstrap interval (10,000 resamples each,
  seed 0, pure Python);
- ``paired-eval-mcnemar``: ``paired_eval.mcnemar_exact`` on the discordant counts and
  ``paired_eval.wilson_ci`` of each arm (z of a 95% interval to full precision).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any

BASELINE, CANDIDATE = "base", "cand"


def run_evalstats(data: Path, method: str) -> dict[str, Any]:
    t0 = time.perf_counter()
    import evalstats as es
    import pandas as pd

    t1 = time.perf_counter()
    df = pd.read_parquet(data, columns=["case_id", "arm", "score"])
    df = df.rename(columns={"case_id": "item", "arm": "model"})
    t2 = time.perf_counter()
    evaldata = es.load_from(df)
    t3 = time.perf_counter()
    kwargs = {} if method == "auto" else {"method": method}
    result = es.compare(evaldata, factors="model", baseline=BASELINE, **kwargs)
    t4 = time.perf_counter()
    doc = result.to_dict()
    pair = doc["pairwise"][0]
    return {
        "version": version("evalstats"),
        "methods": result.methods(),
        "timings_s": {"import": t1 - t0, "read": t2 - t1, "load_from": t3 - t2, "compare": t4 - t3},
        "arms": {
            name: {"mean": e["mean"], "ci": [e["ci_low"], e["ci_high"]]}
            for name, e in doc["entities"].items()
        },
        "pair": {k: pair[k] for k in ("a", "b", "diff", "ci_low", "ci_high", "p_value")},
    }


def _paired_scores(data: Path) -> tuple[list[float], list[float]]:
    """Each arm's scores as Python lists, aligned by case_id (paired-eval pairs by position)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    table = pq.read_table(data, columns=["case_id", "arm", "score"])
    base = table.filter(pc.equal(table["arm"], BASELINE)).sort_by("case_id")
    cand = table.filter(pc.equal(table["arm"], CANDIDATE)).sort_by("case_id")
    if not base["case_id"].equals(cand["case_id"]):
        sys.exit(f"{data}: the arms do not hold the same cases")
    return cand["score"].to_pylist(), base["score"].to_pylist()


def run_paired_eval(data: Path, what: str) -> dict[str, Any]:
    t0 = time.perf_counter()
    import paired_eval as pe

    t1 = time.perf_counter()
    cand, base = _paired_scores(data)
    t2 = time.perf_counter()
    out: dict[str, Any] = {"version": version("paired-eval"), "n": len(cand)}
    if what == "paired-eval":
        res = pe.paired_compare(cand, base)  # A = candidate, so mean_diff = cand - base
        out["paired_compare"] = {k: res[k] for k in ("mean_diff", "p_value", "diff_ci", "n")}
    else:
        only_cand = sum(1 for c, b in zip(cand, base, strict=True) if c > b)
        only_base = sum(1 for c, b in zip(cand, base, strict=True) if c < b)
        z = statistics.NormalDist().inv_cdf(0.975)
        out["mcnemar_exact"] = pe.mcnemar_exact(only_cand, only_base)
        out["discordant"] = {"only_candidate": only_cand, "only_baseline": only_base}
        out["wilson"] = {
            arm: list(pe.wilson_ci(int(sum(s)), len(s), z=z))
            for arm, s in ((BASELINE, base), (CANDIDATE, cand))
        }
    t3 = time.perf_counter()
    out["timings_s"] = {"import": t1 - t0, "read": t2 - t1, "statistics": t3 - t2}
    return out


def main() -> None:
    what, data, out = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    if what in ("evalstats", "evalstats-auto"):
        doc = run_evalstats(data, "newcombe" if what == "evalstats" else "auto")
    elif what in ("paired-eval", "paired-eval-mcnemar"):
        doc = run_paired_eval(data, what)
    else:
        sys.exit(f"unknown peer {what!r}")
    out.write_text(json.dumps({"peer": what, **doc}, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
