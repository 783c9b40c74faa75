"""Hostile copies of the committed fixture logs: every one answered in a line, bounded (issue 23).

Each log format's fixture (tests/fixtures/logs/**) is copied four ways: truncated,
byte-mutated, deepened (one value replaced by 100,000 nested brackets) and lengthened (one
value replaced by a 3 MB string, read with ``EVALDELTA_MAX_STRING_MB=1``). ``evaldelta
import auto`` reads each copy in its own process under a 2 GB address-space cap and a 60 s
timeout, two at a time, and must exit 0 or 2 with no traceback and no internal error.

Everything is drawn from ``random.Random`` with fixed seeds: the copies are the same on
every run.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ..conftest import ROOT

LOGS = ROOT / "tests" / "fixtures" / "logs"
CAP = 2 * 1024**3
TIMEOUT = 60  # seconds
DEEP = 100_000
LONG = 3 * 1024 * 1024
NASTY = b'"\\[]{},:0-9eE.\x00\xff\n '


@dataclass(frozen=True)
class Target:
    """One fixture log: ``source`` (a file or a folder) is copied; ``member`` is mutated."""

    name: str
    source: Path
    member: str = ""  # a file inside a copied folder ("" = the source file itself)
    zip_member: str = ""  # a JSON member inside an .eval zip


def _one(pattern: str) -> Path:
    return sorted(LOGS.glob(pattern))[0]


TARGETS = [
    Target("inspect .eval (deflate)", _one("inspect/v0.3.160/eval/*model-a*.eval"),
           zip_member="header.json"),
    Target("inspect .eval (zstd)", _one("inspect/v0.3.285/eval/*model-a*.eval"),
           zip_member="samples/q01_epoch_1.json"),
    Target("inspect .json", _one("inspect/v0.3.285/json/*model-a*.json")),
    Target("promptfoo .json", LOGS / "promptfoo" / "v0.121.20" / "results.json"),
    Target("promptfoo .jsonl", LOGS / "promptfoo" / "v0.121.20" / "results.jsonl"),
    Target("lm-eval samples", LOGS / "lmeval" / "v0.4.13" / "arm-seed1",
           member="evaldelta__dummy-a/samples_evaldelta_mc_2026-12-01T09-37-56.552895.jsonl"),
    Target("lm-eval results", LOGS / "lmeval" / "v0.4.13" / "arm-seed1",
           member="evaldelta__dummy-a/results_2026-12-01T09-37-56.552895.json"),
    Target("helm stats", _one("helm/v0.5.16/benchmark_output/runs/evaldelta/*parity-a*"),
           member="per_instance_stats.json"),
    Target("helm predictions", _one("helm/v0.5.16/benchmark_output/runs/evaldelta/*parity-a*"),
           member="display_predictions.json"),
    Target("openai evals .jsonl", _one("openai_evals/v3.0.1.post1/*fn-a.jsonl")),
    Target("openai evals api", _one("openai_evals/api/output_items_run_a.json")),
    Target("lighteval results", LOGS / "lighteval" / "v0.13.0" / "arm-a",
           member="results/evaldelta/dummy-a/results_2026-12-01T10-18-41.850960.json"),
]  # fmt: skip


# -- the four ways a copy is made hostile --------------------------------------------------
def truncated(data: bytes, rng: random.Random) -> bytes:
    return data[: rng.randrange(1, max(2, len(data)))]


def mutated(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        out[rng.randrange(len(out))] = rng.choice(NASTY)
    return bytes(out)


def _replace_a_value(
    data: bytes, rng: random.Random, text: str, *, strings_only: bool = False
) -> bytes:
    """One value of the JSON document (or of one JSON Lines line) replaced by ``text``.

    ``strings_only``: a string value (the copy keeps every value's type, so what it tests
    is the string's length, not how a reader takes a list where it expects text).
    """
    try:
        doc = json.loads(data)
    except json.JSONDecodeError:  # JSON Lines: one line's value
        lines = data.split(b"\n")
        at = rng.choice([i for i, line in enumerate(lines) if line.strip()])
        lines[at] = _replace_a_value(lines[at], rng, text, strings_only=strings_only)
        return b"\n".join(lines)
    paths: list[tuple[Any, Any]] = []
    stack: list[Any] = [doc]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in items:
            if isinstance(value, str) or not strings_only:
                paths.append((node, key))
            if isinstance(value, dict | list) and value:
                stack.append(value)
    node, key = rng.choice(paths)
    node[key] = "@@HOSTILE@@"
    return json.dumps(doc, allow_nan=True).replace('"@@HOSTILE@@"', text, 1).encode()


def deepened(data: bytes, rng: random.Random) -> bytes:
    return _replace_a_value(data, rng, "[" * DEEP + "]" * DEEP)


def lengthened(data: bytes, rng: random.Random) -> bytes:
    return _replace_a_value(data, rng, '"' + "x" * LONG + '"', strings_only=True)


WAYS: dict[str, Callable[[bytes, random.Random], bytes]] = {
    "truncated": truncated,
    "mutated": mutated,
    "deepened": deepened,
    "lengthened": lengthened,
}
STRUCTURAL = ("deepened", "lengthened")  # these rewrite a JSON value, inside a zip member too


def _copy(target: Target, way: str, seed: int, folder: Path) -> Path:
    """The hostile copy of ``target`` in ``folder``; returns what to import."""
    rng = random.Random(f"{target.name}/{way}/{seed}")
    hostile = WAYS[way]
    out = folder / target.source.name
    if target.source.is_dir():
        shutil.copytree(target.source, out)
        member = out / target.member
        member.write_bytes(hostile(member.read_bytes(), rng))
    elif target.zip_member and way in STRUCTURAL:
        _rewrite_zip(target.source, out, target.zip_member, lambda b: hostile(b, rng))
    else:
        out.write_bytes(hostile(target.source.read_bytes(), rng))
    return out


def _rewrite_zip(source: Path, out: Path, name: str, change: Callable[[bytes], bytes]) -> None:
    """``source`` (DEFLATE or zstd members) written again, DEFLATE, with ``name`` changed."""
    from evaldelta.sources.importers._zip import SafeZip

    with SafeZip(source) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for member in src.names():
            data = src.read(member)
            dst.writestr(member, change(data) if member == name else data)


# -- running the CLI under the caps --------------------------------------------------------
# A fork server: one process imports evaldelta and its heavy libraries once, then forks a
# child per copy (each child: the address-space cap, an alarm at the timeout, the CLI's
# real entry point). A fresh interpreter per copy would spend most of a second on imports.
# The cap counts address space reserved, not memory used: glibc reserves 64 MB for each
# thread's malloc arena (DuckDB's and pyarrow's threads: 2.4 GB reserved, 0.2 GB used on
# a fixture), and a thread that cannot get its reserve aborts the process. Two arenas
# (MALLOC_ARENA_MAX) keep the reserve near what is used, so the cap measures the reading.
SERVER_ENV = {"MALLOC_ARENA_MAX": "2", "OPENBLAS_NUM_THREADS": "1"}
SERVER = """
import json, os, resource, signal, sys
from evaldelta.cli import main
import duckdb, ibis, ijson, numpy, orjson, pyarrow.parquet, zstandard  # noqa: F401
import evaldelta.sources.importers  # noqa: F401
for line in sys.stdin:
    job = json.loads(line)
    pid = os.fork()
    if pid == 0:
        code = 70
        try:
            resource.setrlimit(resource.RLIMIT_AS, (job["cap"], job["cap"]))
            signal.alarm(job["timeout"])
            os.environ.update(job["env"])
            os.dup2(os.open(job["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 2)
            os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
            sys.argv = ["evaldelta", *job["argv"]]
            try:
                main()
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    print(os.waitstatus_to_exitcode(status), flush=True)
"""


def _serve(jobs: list[tuple[str, Path]]) -> list[tuple[int, str]]:
    """(exit code, stderr) of ``evaldelta import auto PATH`` for each job, in a fork server."""
    env = {**os.environ, **SERVER_ENV, "PYTHONPATH": str(ROOT / "src")}
    env.pop("EVALDELTA_DEBUG", None)
    out = []
    with subprocess.Popen(
        [sys.executable, "-c", SERVER], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        text=True,
    ) as server:  # fmt: skip
        assert server.stdin is not None and server.stdout is not None
        for _, path in jobs:
            job = {
                "argv": ["import", "auto", str(path), "-o", str(path.parent / "rows.parquet")],
                "env": {"EVALDELTA_MAX_STRING_MB": "1"},
                "cap": CAP,
                "timeout": TIMEOUT,
                "stderr": str(path.parent / "stderr.txt"),
            }
            server.stdin.write(json.dumps(job) + "\n")
            server.stdin.flush()
            code = int(server.stdout.readline())
            out.append((code, (path.parent / "stderr.txt").read_text(errors="replace")))
        server.stdin.close()
    return out


def _verdict(code: int, err: str) -> str | None:
    """Why an answer is not one line with exit 0 or 2 (None when it is)."""
    if code == -14:
        return f"still running after {TIMEOUT} s"
    if code not in (0, 2):
        return f"exit {code}"
    if "Traceback" in err or "internal error" in err:
        return "traceback or internal error"
    if code == 2 and not err.strip().splitlines()[-1].startswith("evaldelta: error: "):
        return "exit 2 without a one-line error"
    return None


SEEDS = (1,)


@pytest.mark.slow
def test_hostile_copies_of_every_fixture_log_are_answered_in_a_line(tmp_path: Path) -> None:
    jobs = []
    for target in TARGETS:
        for way in WAYS:
            for seed in SEEDS:
                folder = tmp_path / f"{len(jobs):03d}"
                folder.mkdir()
                jobs.append(
                    (f"{target.name}, {way}, seed {seed}", _copy(target, way, seed, folder))
                )
    halves = [jobs[0::2], jobs[1::2]]  # two servers, one per core
    with ThreadPoolExecutor(max_workers=2) as pool:
        answers = dict(zip(("even", "odd"), pool.map(_serve, halves), strict=True))
    results = [*zip(halves[0], answers["even"], strict=True)]
    results += [*zip(halves[1], answers["odd"], strict=True)]
    failures = [
        f"{name}: {why}: {err.strip()[-400:]}"
        for (name, _), (code, err) in results
        if (why := _verdict(code, err)) is not None
    ]
    assert not failures, "\n".join(sorted(failures))
