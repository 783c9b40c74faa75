"""Time importing and comparing an Inspect AI log set, beside json.load of the same samples.

Builds two ``.eval`` logs (one per arm) of ``--samples`` samples x ``--epochs`` epochs
(default 10,000 x 5: 50,000 sample members per log, 100,000 in all). Every sample is a
real Inspect sample: the first sample of the committed inspect-ai 0.3.285 fixture log, its
id, epoch, scores and metadata rewritten (messages, events and output kept as Inspect wrote
them), and the log's summaries.json as Inspect writes it, with zstd members as current
Inspect writes them (zip method 93; ``--compression
deflate`` for the 0.3.160-style zips). The header is the fixture's, with the sample count.

Then, each in a fresh process (wall time and peak RSS from ``RUSAGE_CHILDREN``):

1. ``json.load``: open every sample member and ``json.loads`` it with the standard library,
   nothing else: the least any reader of these logs must do;
2. ``evaldelta compare a.eval b.eval --format json``: import both logs and compare them;
3. ``evaldelta import inspect a.eval b.eval -o rows.parquet``: the import alone.

    python bench/bench_import.py [--samples N] [--epochs E] [--compression zstd|deflate] [--keep]

Target (issue 9): step 2 under 10 s on this 2-core machine. The importer holds one sample's
messages at a time, so peak memory does not grow with the log.
"""

from __future__ import annotations

import argparse
import json
import random
import struct
import subprocess
import sys
import time
import zipfile
import zlib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out"
FIXTURE = ROOT / "tests" / "fixtures" / "logs" / "inspect" / "v0.3.285" / "eval"

WRAPPER = """
import resource, subprocess, sys, time
start = time.perf_counter()
code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode
wall = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(wall, peak, code)
"""

JSON_LOAD = """
import json, sys, zipfile, zstandard
dctx = zstandard.ZstdDecompressor()
n = 0
for path in sys.argv[1:]:
    with zipfile.ZipFile(path) as zf, open(path, "rb") as fh:
        for info in zf.infolist():
            if not info.filename.startswith("samples/"):
                continue
            if info.compress_type == 93:
                fh.seek(info.header_offset + 26)
                name_len = int.from_bytes(fh.read(2), "little")
                extra_len = int.from_bytes(fh.read(2), "little")
                fh.seek(info.header_offset + 30 + name_len + extra_len)
                data = dctx.decompress(fh.read(info.compress_size))
            else:
                data = zf.read(info)
            json.loads(data)
            n += 1
print(n)
"""


def _template() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The fixture's header, first sample and its summary (read with evaldelta's zip reader)."""
    sys.path.insert(0, str(ROOT / "src"))
    from evaldelta.sources.importers._zip import SafeZip

    log = sorted(FIXTURE.glob("*.eval"))[0]
    with SafeZip(log) as zf:
        header = json.loads(zf.read("header.json"))
        sample = json.loads(zf.read("samples/q01_epoch_1.json"))
        summary = json.loads(zf.read("summaries.json"))[0]
    return header, sample, summary


class _ZstdZip:
    """A minimal zip writer for zstd members (Python 3.11's zipfile cannot write method 93)."""

    def __init__(self, path: Path) -> None:
        import zstandard

        self.fh = path.open("wb")
        self.cctx = zstandard.ZstdCompressor(level=3, write_content_size=True)
        self.entries: list[tuple[bytes, int, int, int, int]] = []

    def add(self, name: str, data: bytes) -> None:
        raw = name.encode()
        packed = self.cctx.compress(data)
        crc = zlib.crc32(data)
        offset = self.fh.tell()
        self.fh.write(struct.pack("<4s5H3L2H", b"PK\x03\x04", 63, 0, 93, 0, 0x21,
                                  crc, len(packed), len(data), len(raw), 0))  # fmt: skip
        self.fh.write(raw + packed)
        self.entries.append((raw, crc, len(packed), len(data), offset))

    def close(self) -> None:
        start = self.fh.tell()
        for raw, crc, csize, usize, offset in self.entries:
            fields = (63, 63, 0, 93, 0, 0x21, crc, csize, usize, len(raw), 0, 0, 0, 0, 0, offset)
            self.fh.write(struct.pack("<4s6H3L5H2L", b"PK\x01\x02", *fields))
            self.fh.write(raw)
        size = self.fh.tell() - start
        n = len(self.entries)
        self.fh.write(struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, n, n, size, start, 0))
        self.fh.close()


def generate(path: Path, model: str, samples: int, epochs: int, compression: str) -> None:
    header, template, summary_template = _template()
    summaries = []
    header = json.loads(json.dumps(header))
    header["eval"]["model"] = model
    header["eval"]["dataset"]["samples"] = samples
    header["eval"]["dataset"].pop("sample_ids", None)
    header["eval"]["config"]["epochs"] = epochs
    header["results"]["total_samples"] = samples * epochs
    rng = random.Random(f"{model}-{samples}-{epochs}")
    skill = 0.72 if model.endswith("a") else 0.68
    categories = ("arithmetic", "geography", "science", "spelling", "history")
    if compression == "zstd":
        writer: Any = _ZstdZip(path)
        add = writer.add
    else:
        writer = zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=5)
        add = writer.writestr
    add("_journal/start.json", json.dumps({"version": 2, "eval": header["eval"],
                                            "plan": header["plan"]}).encode())  # fmt: skip
    base_difficulty = [rng.random() for _ in range(samples)]
    for epoch in range(1, epochs + 1):
        for i in range(samples):
            sample = dict(template)
            sample["id"], sample["epoch"] = f"s{i:06d}", epoch
            correct = rng.random() < skill * (0.5 + base_difficulty[i])
            sample["scores"] = {
                "match": {**template["scores"]["match"], "value": "C" if correct else "I"},
                "closeness": {**template["scores"]["closeness"], "value": rng.random()},
            }
            sample["metadata"] = {"category": categories[i % 5], "difficulty": "easy"}
            add(f"samples/s{i:06d}_epoch_{epoch}.json", json.dumps(sample).encode())
            summary = {**summary_template, "id": sample["id"], "epoch": epoch}
            summaries.append(
                {**summary, "scores": sample["scores"], "metadata": sample["metadata"]}
            )
    add("summaries.json", json.dumps(summaries).encode())
    add("header.json", json.dumps(header).encode())
    writer.close()


def measure(command: list[str]) -> tuple[float, float, int]:
    done = subprocess.run([sys.executable, "-c", WRAPPER, *command], capture_output=True,
                          text=True, check=True)  # fmt: skip
    wall, peak, code = done.stdout.split()
    return float(wall), int(peak) / 1000, int(code)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--compression", choices=("zstd", "deflate"), default="zstd")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", action="store_true", help="reuse logs of the same size")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    stem = f"inspect_{args.samples}x{args.epochs}_{args.compression}"
    logs = [OUT / f"{stem}_model-a.eval", OUT / f"{stem}_model-b.eval"]
    for log, model in zip(logs, ("mockllm/bench-a", "mockllm/bench-b"), strict=True):
        if not (args.keep and log.exists()):
            start = time.perf_counter()
            generate(log, model, args.samples, args.epochs, args.compression)
            print(f"generated {log.name}: {log.stat().st_size / 1e6:.1f} MB in "
                  f"{time.perf_counter() - start:.1f} s")  # fmt: skip
    cli = [sys.executable, "-m", "evaldelta.cli"]
    steps = {
        "json.load of every sample": [sys.executable, "-c", JSON_LOAD, *map(str, logs)],
        "evaldelta compare (import + compare)": [
            *cli, "compare", *map(str, logs), "--by", "metadata.category", "--format", "json",
            "-o", str(OUT / f"{stem}.json"),
        ],
        "evaldelta import -o rows.parquet": [
            *cli, "import", "inspect", *map(str, logs), "-o", str(OUT / f"{stem}.parquet"),
        ],
    }  # fmt: skip
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in steps}
    for _ in range(args.repeat):
        for name, command in steps.items():  # interleaved: a noisy spell hits every step
            wall, peak, code = measure(command)
            if code != 0:
                raise SystemExit(f"{name} failed with exit code {code}")
            runs[name].append((wall, peak))
    base = sorted(w for w, _ in runs["json.load of every sample"])[args.repeat // 2]
    n = 2 * args.samples * args.epochs
    print(f"\n{n:,} sample runs in 2 logs ({args.compression}), {args.repeat} runs each, median:")
    print(f"  {'step':40} {'wall s':>8} {'x json.load':>12} {'peak MB':>9}")
    for name, values in runs.items():
        wall = sorted(w for w, _ in values)[args.repeat // 2]
        peak = max(p for _, p in values)
        print(f"  {name:40} {wall:8.2f} {wall / base:12.2f} {peak:9.0f}")
    compare_wall = sorted(w for w, _ in runs["evaldelta compare (import + compare)"])[
        args.repeat // 2
    ]
    verdict = "PASS" if compare_wall < 10 else "MISS"
    print(f"target: import + compare under 10 s: {verdict} ({compare_wall:.2f} s)")
    result = json.loads((OUT / f"{stem}.json").read_text())
    pairs = result["metrics"][0]["slicings"][0]["pairs"][0]["overall"]["n_pairs"]
    print(f"check: the comparison holds {pairs:,} pairs")


if __name__ == "__main__":
    main()
