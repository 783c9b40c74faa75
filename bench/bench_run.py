"""Runner throughput against a test server with fixed latency, side by side with the ideal.

The server (tests/servers/fake_llm.py, run in its own process so it does not share the
runner's interpreter) answers every OpenAI-compatible request after ``--latency`` seconds.
With a concurrency bound C and latency L, no runner can beat C / L calls per second; the
script prints the measured calls per second beside that ideal and their ratio, for each C.

    python bench/bench_run.py                      # C = 64 and 256, latency 100 ms
    python bench/bench_run.py --concurrency 16 --calls 400

Every attempt is committed to the DuckDB run store before it counts (resume needs that), so
the store's write path is part of what is measured. A third column sends the same number of
requests from a bare httpx client at the same concurrency: on a small machine the test
server and the HTTP client stack, not the ideal, set the ceiling, and the "vs bare" ratio
says how much of what remains is the runner's own overhead (SDK, templates, cache, store).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SERVER = """
import sys, time
from tests.servers.fake_llm import FakeLLM
fake = FakeLLM()
fake.delay = float(sys.argv[1])
fake.start()
print(fake.url, flush=True)
fake.thread.join()
"""


def _config(folder: Path, url: str, concurrency: int, cases: Path) -> Path:
    text = f"""
cases = {json.dumps(str(cases))}
store = {json.dumps(str(folder / "runs.duckdb"))}
repeats = 1

[providers.fake]
kind = "openai"
base_url = "{url}/v1"
api_key_env = "EVD_BENCH_KEY"
max_concurrency = {concurrency}
max_retries = 0
timeout = 30

[template]
user = "{{{{ question }}}}"

[arms.a]
provider = "fake"
model = "bench-a"
temperature = 0

[arms.b]
provider = "fake"
model = "bench-b"
temperature = 0
"""
    path = folder / "run.toml"
    path.write_text(text)
    return path


def _measure(url: str, concurrency: int, calls: int) -> tuple[float, int]:
    from evaldelta.run.cases import load_cases
    from evaldelta.run.config import load_config
    from evaldelta.run.execute import execute

    with tempfile.TemporaryDirectory(prefix="evaldelta-bench-run-") as tmp:
        folder = Path(tmp)
        cases = folder / "cases.jsonl"
        with cases.open("w") as handle:
            for i in range(calls // 2):
                handle.write(json.dumps({"case_id": f"c{i}", "question": f"q {i}"}) + "\n")
        config = load_config(_config(folder, url, concurrency, cases))
        case_set = load_cases(cases)
        start = time.perf_counter()
        summary = asyncio.run(execute(config, case_set))
        wall = time.perf_counter() - start
        return wall, summary.progress.done


async def _raw(url: str, concurrency: int, calls: int) -> float:
    """The same requests from a bare httpx client: what this machine and server allow."""
    import httpx

    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    gate = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=30) as client:

        async def one(i: int) -> None:
            async with gate:
                body = {"model": "raw", "messages": [{"role": "user", "content": f"q {i}"}]}
                response = await client.post("/v1/chat/completions", json=body)
                response.raise_for_status()

        start = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(calls)))
        return calls / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--concurrency", type=int, action="append", help="(repeatable)")
    parser.add_argument("--latency", type=float, default=0.1, help="server latency, seconds")
    parser.add_argument("--calls", type=int, default=None, help="calls per measurement")
    args = parser.parse_args()
    levels = args.concurrency or [64, 256]
    os.environ["EVD_BENCH_KEY"] = "bench-key-not-secret"
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(args.latency)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        print(f"server {url}, latency {args.latency * 1000:.0f} ms, 2 arms, 1 repeat")
        print(f"{'concurrency':>11}  {'calls':>6}  {'wall s':>7}  {'calls/s':>8}  "
              f"{'ideal C/L':>9}  {'ratio':>6}  {'bare httpx/s':>12}  {'vs bare':>7}")  # fmt: skip
        for c in levels:
            calls = args.calls or max(8 * c, 400)
            wall, done = _measure(url, c, calls)
            rate = done / wall
            ideal = c / args.latency
            bare = asyncio.run(_raw(url, c, calls))
            print(f"{c:>11}  {done:>6}  {wall:>7.2f}  {rate:>8.1f}  {ideal:>9.1f}  "
                  f"{rate / ideal:>6.2f}  {bare:>12.1f}  {rate / bare:>7.2f}")  # fmt: skip
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()
