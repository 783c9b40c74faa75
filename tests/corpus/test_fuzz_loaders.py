"""Fuzz every loader with hypothesis: whatever the bytes, the tool answers or refuses in a line.

Each loader gets generated input (tidy CSV, JSONL and Parquet rows; mix files; gate
policies; checks files; run configs; Inspect, promptfoo and lm-eval logs built from the
committed fixtures with values swapped for hostile ones), runs through the real CLI entry
point in-process, and must exit 0 or 2 (gate: 0, 1, 2 or 3) with no traceback and no
internal error. ``derandomize=True``: the examples are the same every run (no flaky CI).
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import zipfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ..conftest import ROOT

LOGS = ROOT / "tests" / "fixtures" / "logs"
FUZZ = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
COLUMNS = [
    "case_id",
    "arm",
    "score",
    "slice",
    "repeat",
    "cost_usd",
    "sample_weight",
    "cluster",
    "output",
    "pass",
    "Score",
    "case id",
    "",
]
NASTY = st.sampled_from(
    [
        "",
        " ",
        "nan",
        "inf",
        "-1",
        "1.5",
        "1e308",
        "true",
        "\x1b[31m",
        "a|b",
        "<b>x</b>",
        "\r",
        "\n",
        '"',
        "'",
        "é",
        "\x00",
        "9" * 30,
        "$0.10",
    ]
)
TEXT = st.one_of(NASTY, st.text(max_size=12), st.integers(-3, 5).map(str))


def run(*args: str | Path) -> tuple[int, str]:
    """The real entry point in-process: (exit code, stderr)."""
    from evaldelta.cli import main

    err = io.StringIO()
    old = sys.argv
    sys.argv = ["evaldelta", *map(str, args)]
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                main()
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
    finally:
        sys.argv = old
    return code, err.getvalue()


def answered(code: int, err: str, allowed: tuple[int, ...] = (0, 2)) -> None:
    assert code in allowed, (code, err)
    assert "Traceback" not in err and "internal error" not in err, err
    if code == 2:
        lines = err.strip().splitlines()
        assert lines[-1].startswith("evaldelta: error: "), err


@FUZZ
@given(
    header=st.lists(st.sampled_from(COLUMNS), min_size=1, max_size=6),
    rows=st.lists(st.lists(TEXT, min_size=0, max_size=7), max_size=8),
)
def test_tidy_csv(tmp_path: Path, header: list[str], rows: list[list[str]]) -> None:
    import csv

    path = tmp_path / "rows.csv"
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)
    answered(*run("compare", path))


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.floats(allow_nan=True),
    TEXT,
    st.lists(st.integers(), max_size=2),
)


@FUZZ
@given(rows=st.lists(st.dictionaries(st.sampled_from(COLUMNS), SCALARS, max_size=6), max_size=8))
def test_tidy_jsonl(tmp_path: Path, rows: list[dict[str, Any]]) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r, allow_nan=True) + "\n" for r in rows))
    answered(*run("compare", path))


@FUZZ
@given(
    n=st.integers(0, 6),
    score=st.lists(
        st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True)), min_size=6, max_size=6
    ),
    arms=st.lists(st.sampled_from(["a", "b", "a ", ""]), min_size=6, max_size=6),
    repeat=st.lists(st.one_of(st.none(), st.floats(-2, 3)), min_size=6, max_size=6),
    cost=st.lists(st.one_of(st.none(), st.floats(allow_nan=True)), min_size=6, max_size=6),
)
def test_tidy_parquet(
    tmp_path: Path, n: int, score: list[Any], arms: list[str], repeat: list[Any], cost: list[Any]
) -> None:
    table = pa.table(
        {
            "case_id": [str(i % 3) for i in range(n)],
            "arm": arms[:n],
            "score": score[:n],
            "repeat": pa.array(repeat[:n], type=pa.float64()),
            "cost_usd": pa.array(cost[:n], type=pa.float64()),
        }
    )
    path = tmp_path / "rows.parquet"
    pq.write_table(table, str(path))
    answered(*run("compare", path))


GOOD = "case_id,arm,slice,score\n1,a,s1,1\n1,b,s1,0\n2,a,s2,1\n2,b,s2,1\n3,a,s1,0\n3,b,s1,1\n"


@FUZZ
@given(entries=st.dictionaries(TEXT, SCALARS, max_size=4), as_json=st.booleans())
def test_mix_files(tmp_path: Path, entries: dict[str, Any], as_json: bool) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_text(GOOD)
    if as_json:
        mix = tmp_path / "mix.json"
        mix.write_text(json.dumps(entries, allow_nan=True))
    else:
        mix = tmp_path / "mix.csv"
        mix.write_text("slice,weight\n" + "".join(f"{k},{v}\n" for k, v in entries.items()))
    answered(*run("compare", rows, "--mix", mix))
    answered(*run("compare", rows, "--traffic", mix))


POLICY_KEYS = st.sampled_from(
    [
        "max_regression",
        "min_score",
        "min_cases",
        "basis",
        "metric",
        "on_inconclusive",
        "max_cost_ratio",
        "fail_adjust",
        "nonsense",
    ]
)
TOML_VALUES = st.sampled_from(
    [
        "0.1",
        "-1",
        "nan",
        "inf",
        '"x"',
        "true",
        "[1, 2]",
        "{a = 1}",
        '"interval"',
        '"point"',
        "3",
        "1e400",
        '"score"',
    ]
)


@FUZZ
@given(
    lines=st.lists(st.tuples(POLICY_KEYS, TOML_VALUES), max_size=5),
    section=st.sampled_from(
        [
            "",
            "[defaults]\n",
            "[slices.s1]\n",
            "[slices.zz]\n",
            "[standardized]\n",
            "[critical]\n",
            "[pins]\n",
        ]
    ),
)
def test_gate_policies(tmp_path: Path, lines: list[tuple[str, str]], section: str) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_text(GOOD)
    policy = tmp_path / "gate.toml"
    policy.write_text(section + "".join(f"{k} = {v}\n" for k, v in dict(lines).items()))
    answered(*run("gate", rows, "--policy", policy), allowed=(0, 1, 2, 3))


CHECK_KINDS = st.sampled_from(
    [
        "regex_required",
        "regex_forbidden",
        "word_count",
        "contains_field",
        "allowed_values",
        "json_schema",
        "fields_equal",
        "nope",
        "",
    ]
)


@FUZZ
@given(
    checks=st.lists(
        st.fixed_dictionaries(
            {"id": st.one_of(st.sampled_from(["c1", "c 2", ""]), TEXT), "kind": CHECK_KINDS},
            optional={
                "pattern": st.one_of(TEXT, st.sampled_from(["(", "(a+)+$", "a{1,99999999999}"])),
                "spec": TEXT,
                "min": st.integers(-2, 3),
                "max": st.integers(-2, 3),
                "field": TEXT,
            },
        ),
        max_size=3,
    )
)
def test_checks_files(tmp_path: Path, checks: list[dict[str, Any]]) -> None:
    import yaml

    rows = tmp_path / "rows.csv"
    rows.write_text("case_id,arm,output\n1,a,hello\n1,b,aaaa!\n")
    path = tmp_path / "checks.yaml"
    path.write_text(yaml.safe_dump({"checks": checks}))
    answered(*run("score", rows, "--checks", path, "-o", tmp_path / "out.csv"))


CONFIG_VALUES = st.sampled_from(['"openai"', "nan", "inf", "-1", "0", '"x"', "true", "[]", "1e9"])


@FUZZ
@given(
    provider=st.dictionaries(
        st.sampled_from(
            ["kind", "base_url", "api_key_env", "max_concurrency", "timeout", "max_retries", "rpm"]
        ),
        CONFIG_VALUES,
        max_size=4,
    ),
    arm=st.dictionaries(
        st.sampled_from(
            ["provider", "model", "temperature", "top_p", "max_tokens", "seed", "kind"]
        ),
        CONFIG_VALUES,
        max_size=4,
    ),
)
def test_run_configs(tmp_path: Path, provider: dict[str, str], arm: dict[str, str]) -> None:
    from evaldelta.errors import EvaldeltaError
    from evaldelta.run.config import parse_config

    text = "[providers.p]\n" + "".join(f"{k} = {v}\n" for k, v in provider.items())
    text += "[arms.a]\n" + "".join(f"{k} = {v}\n" for k, v in arm.items())
    try:
        parse_config(text, str(tmp_path / "run.toml"))
    except EvaldeltaError as exc:
        assert "\n" not in str(exc).strip(), str(exc)


def _mutate(value: Any, swap: Any, depth: int = 0) -> Any:
    """Swap every scalar whose path hash selects it; hypothesis picks the replacement."""
    if isinstance(value, dict):
        return {k: _mutate(v, swap, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_mutate(v, swap, depth + 1) for v in value]
    return swap(value)


@FUZZ
@given(
    choice=st.lists(st.integers(0, 9), min_size=1, max_size=30),
    replacement=SCALARS,
)
def test_inspect_logs(tmp_path: Path, choice: list[int], replacement: Any) -> None:
    (log,) = [p for p in sorted((LOGS / "inspect" / "v0.3.160" / "eval").glob("*.eval"))][:1]
    out = tmp_path / "fuzzed.eval"
    counter = iter(range(10**9))
    picks = set(choice)

    def swap(value: Any) -> Any:
        return replacement if next(counter) % 10 in picks else value

    with zipfile.ZipFile(log) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.startswith("samples/q0") or info.filename == "header.json":
                data = json.dumps(_mutate(json.loads(data), swap), allow_nan=True).encode()
            dst.writestr(info.filename, data)
    answered(*run("import", "inspect", out, "-o", tmp_path / "o.parquet"))


@FUZZ
@given(choice=st.lists(st.integers(0, 9), min_size=1, max_size=30), replacement=SCALARS)
def test_promptfoo_and_lm_eval_lines(tmp_path: Path, choice: list[int], replacement: Any) -> None:
    counter = iter(range(10**9))
    picks = set(choice)

    def swap(value: Any) -> Any:
        return replacement if next(counter) % 10 in picks else value

    promptfoo = LOGS / "promptfoo" / "v0.121.20" / "results.jsonl"
    (lmeval,) = sorted(
        (LOGS / "lmeval" / "v0.4.13").glob("arm-seed1/*/samples_evaldelta_mc_*.jsonl")
    )
    for source in (promptfoo, lmeval):
        lines = [json.loads(x) for x in source.read_text().splitlines()[:10]]
        out = tmp_path / source.name
        out.write_text("".join(json.dumps(_mutate(x, swap), allow_nan=True) + "\n" for x in lines))
        answered(*run("import", "auto", out, "-o", tmp_path / f"{source.stem}.parquet"))


@pytest.mark.parametrize("name", ["results.json"])
def test_the_fuzz_inputs_are_valid_to_start_with(name: str, tmp_path: Path) -> None:
    """Unmutated, the fuzzers' starting fixtures import cleanly (so the fuzzers test something)."""
    code, err = run(
        "import", "auto", LOGS / "promptfoo" / "v0.121.20" / name, "-o", tmp_path / "o.parquet"
    )
    assert code == 0, err
