"""Issue 23's hostile inputs: time, peak memory and exit code of the CLI on each, capped.

Builds each hostile file of the issue (nesting 100,000 deep in an Inspect log, a TOML
policy and run config, a YAML checks file and a JSON mix; a 10/100/300 MB string in a
promptfoo log; a graded score of 1e300; a catastrophic regex over 20 replies; a billion-laughs
YAML list of patterns; a CSV of 10,004 columns; ESC and BEL bytes in an HTML report) plus a
realistic 100 MB Inspect ``.json`` log (the streaming reader's speed), then runs the CLI on
each in a fresh process under an address-space cap (``--cap-gb``, default 4) and a timeout
(``--timeout``, default 120 s), and prints one line per case: CPU and wall seconds, peak RSS,
the exit code and the last line of stderr.

    python bench/bench_bounds.py [--only NAME,...] [--repeats N] [--src DIR]

``--src DIR`` measures another tree (``PYTHONPATH=DIR``): put a snapshot of an older commit
there for the "before" figures (``git archive COMMIT src | tar -x -C /tmp/before``).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out" / "bounds"
LOGS = ROOT / "tests" / "fixtures" / "logs"
INSPECT_JSON = sorted((LOGS / "inspect" / "v0.3.285" / "json").glob("*.json"))[0]
PROMPTFOO = LOGS / "promptfoo" / "v0.121.20" / "results.json"
ROWS = "case_id,arm,slice,score\n1,a,s1,1\n1,b,s1,0\n2,a,s1,1\n2,b,s1,1\n"
DEEP = 100_000
CATASTROPHIC = "(a|aa)+$"


def _deep(depth: int = DEEP) -> str:
    return "[" * depth + "]" * depth


def inspect_deep(d: Path) -> list[str]:
    log = json.loads(INSPECT_JSON.read_text())
    log["samples"][0]["metadata"]["deep"] = "@DEEP@"
    (d / "deep.json").write_text(json.dumps(log).replace('"@DEEP@"', _deep()))
    return ["import", "inspect", str(d / "deep.json"), "-o", str(d / "o.parquet")]


def inspect_big(d: Path) -> list[str]:
    """A realistic ~100 MB Inspect .json log: the fixture's samples, repeated."""
    path = d / "big.json"
    if not path.exists():
        log = json.loads(INSPECT_JSON.read_text())
        samples = log["samples"]
        log["samples"] = []
        for i in range(3600):
            sample = copy.deepcopy(samples[i % len(samples)])
            sample["id"] = f"s{i}"
            log["samples"].append(sample)
        path.write_text(json.dumps(log))
    return ["import", "inspect", str(path), "-o", str(d / "o.parquet")]


def promptfoo_long(mb: int) -> Callable[[Path], list[str]]:
    def build(d: Path) -> list[str]:
        path = d / f"long{mb}.json"
        if not path.exists():
            doc = json.loads(PROMPTFOO.read_text())
            doc["results"]["results"][0]["response"]["output"] = "@LONG@"
            head, tail = json.dumps(doc).split('"@LONG@"')
            with path.open("w") as fh:
                fh.write(head + '"')
                for _ in range(mb):
                    fh.write("x" * (1 << 20))
                fh.write('"' + tail)
        return ["import", "promptfoo", str(path), "-o", str(d / "o.parquet")]

    return build


def policy_deep(d: Path) -> list[str]:
    (d / "rows.csv").write_text(ROWS)
    (d / "p.toml").write_text(f"max_regression = {_deep()}\n")
    return ["gate", str(d / "rows.csv"), "--policy", str(d / "p.toml")]


def config_deep(d: Path) -> list[str]:
    (d / "cases.jsonl").write_text('{"case_id": "1", "question": "hi"}\n')
    (d / "run.toml").write_text(f"repeats = {_deep()}\n")
    return ["run", str(d / "cases.jsonl"), "--config", str(d / "run.toml")]


def checks_deep(d: Path) -> list[str]:
    (d / "rows.csv").write_text("case_id,arm,output\n1,a,hello\n1,b,hi\n")
    (d / "c.yaml").write_text(f"checks: {_deep()}\n")
    return ["score", str(d / "rows.csv"), "--checks", str(d / "c.yaml"), "-o", str(d / "o.csv")]


def mix_deep(d: Path) -> list[str]:
    (d / "rows.csv").write_text(ROWS)
    (d / "m.json").write_text('{"s1": ' + _deep() + "}")
    return ["compare", str(d / "rows.csv"), "--mix", str(d / "m.json")]


def score_1e300(d: Path) -> list[str]:
    (d / "rows.csv").write_text("case_id,arm,score\n1,a,1e300\n1,b,0\n2,a,1\n2,b,2\n")
    return ["compare", str(d / "rows.csv")]


def regex_20(d: Path) -> list[str]:
    rows = "".join(f"{i},a,{'a' * 40}!\n" for i in range(20))
    (d / "rows.csv").write_text("case_id,arm,output\n" + rows)
    (d / "c.yaml").write_text(
        f"checks:\n- id: slow\n  spec: s\n  kind: regex_required\n  pattern: '{CATASTROPHIC}'\n"
    )
    return ["score", str(d / "rows.csv"), "--checks", str(d / "c.yaml"), "-o", str(d / "o.csv")]


def yaml_laughs(d: Path) -> list[str]:
    """Anchors in the judge defaults; a check's pattern list names the largest, 10^9 leaves."""
    lines = [
        "judge:",
        "  params:",
        '    a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]',
    ]
    for i in range(1, 9):
        lines.append(f"    a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    text = "\n".join(lines) + (
        "\nchecks:\n- id: c\n  spec: s\n  kind: no_commitment_date\n  extra_patterns: [*a8]\n"
    )
    (d / "rows.csv").write_text("case_id,arm,output\n1,a,hello\n")
    (d / "c.yaml").write_text(text)
    return ["score", str(d / "rows.csv"), "--checks", str(d / "c.yaml"), "-o", str(d / "o.csv")]


def csv_wide(d: Path) -> list[str]:
    extra = [f"x{i}" for i in range(10_001)]
    lines = [",".join(["case_id", "arm", "score", *extra])]
    for i in range(40):
        lines.append(",".join([str(i // 2), "ab"[i % 2], str(i % 2)] + ["1"] * len(extra)))
    (d / "wide.csv").write_text("\n".join(lines) + "\n")
    return ["compare", str(d / "wide.csv")]


def html_controls(d: Path) -> list[str]:
    rows = "case_id,arm,slice,score,output\n"
    rows += 'c\x1b[31m1,a,s\x07,1,"bell\x07 esc\x1b]0;title\x07"\nc\x1b[31m1,b,s\x07,0,x\n'
    rows += "c2,a,s\x07,0,y\nc2,b,s\x07,1,z\n"
    (d / "rows.csv").write_text(rows)
    return ["compare", str(d / "rows.csv"), "-o", str(d / "r.html")]


CASES: dict[str, Callable[[Path], list[str]]] = {
    "inspect .json, 100,000-deep metadata": inspect_deep,
    "promptfoo, 10 MB string": promptfoo_long(10),
    "promptfoo, 100 MB string": promptfoo_long(100),
    "promptfoo, 300 MB string": promptfoo_long(300),
    "TOML policy, 100,000 deep": policy_deep,
    "TOML run config, 100,000 deep": config_deep,
    "YAML checks, 100,000 deep": checks_deep,
    "JSON mix, 100,000 deep": mix_deep,
    "graded score 1e300": score_1e300,
    "catastrophic regex, 20 replies": regex_20,
    "billion-laughs pattern list": yaml_laughs,
    "CSV, 40 rows x 10,004 columns": csv_wide,
    "ESC and BEL in the HTML report": html_controls,
    "inspect .json, realistic 100 MB": inspect_big,
}


def measure(
    args: list[str], src: Path, cap: int, timeout: float
) -> tuple[float, float, int, int, str]:
    """(cpu s, wall s, peak RSS MB, exit code, last stderr line) of one capped CLI run."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    code = "from evaldelta.cli import main; main()"
    env = {**os.environ, "PYTHONPATH": str(src)}
    err = OUT / "stderr.txt"
    start = time.perf_counter()
    with err.open("wb") as fh:
        proc = subprocess.Popen(
            [sys.executable, "-c", code, *args],
            env=env, stdout=subprocess.DEVNULL, stderr=fh, preexec_fn=limit,
        )  # fmt: skip
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - start > timeout:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.02)
    wall = time.perf_counter() - start
    lines = err.read_text(errors="replace").strip().splitlines()
    last = lines[-1][:200] if lines else ""
    exit_code = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss // 1024, exit_code, last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated substrings of case names")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--src", type=Path, default=ROOT / "src")
    parser.add_argument("--cap-gb", type=float, default=4.0)
    parser.add_argument("--timeout", type=float, default=120.0)
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    wanted = [w.strip() for w in args.only.split(",") if w.strip()]
    print(f"src {args.src}  cap {args.cap_gb:g} GB  timeout {args.timeout:g} s")
    for name, build in CASES.items():
        if wanted and not any(w in name for w in wanted):
            continue
        folder = OUT / "".join(c if c.isalnum() else "-" for c in name)
        folder.mkdir(exist_ok=True)
        cli = build(folder)
        runs = [
            measure(cli, args.src, int(args.cap_gb * 1e9), args.timeout)
            for _ in range(args.repeats)
        ]
        cpu = min(r[0] for r in runs)
        wall = min(r[1] for r in runs)
        peak = max(r[2] for r in runs)
        code, last = runs[-1][3], runs[-1][4]
        extra = ""
        if name.startswith("ESC"):
            html = (folder / "r.html").read_bytes() if (folder / "r.html").exists() else b""
            extra = f" [ESC bytes: {html.count(27)}, BEL bytes: {html.count(7)}]"
        print(
            f"{name:40} cpu {cpu:6.2f}s wall {wall:6.2f}s peak {peak:6d} MB exit {code:3d}", extra
        )
        print(f"{'':40} {last}")


if __name__ == "__main__":
    main()
