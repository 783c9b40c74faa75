"""User regexes cannot hang or crash the tool: checks, --score-regex and cascade verifiers.

Every command that could hang on a regression runs in a subprocess with a timeout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evaldelta.checks import OutputCheck, parse_checks
from evaldelta.checks._mechanical import build_check, timed_out
from evaldelta.checks._patterns import MAX_EXPANDED, MAX_REPEAT, compile_pattern
from evaldelta.errors import ChecksFileError, ConfigError
from tests.conftest import CliResult, one_line_error
from tests.servers.fake_llm import FakeLLM

SLOW = "(a|aa)+$"  # exponential backtracking that the regex engine cannot optimize away
SLOW_TEXT = "a" * 40 + "!"
GUARD_S = 60  # a subprocess that takes longer than this has hung: fail instead of waiting
KEY = "sk-evd-FAKE-KEY-0123456789abcdef"


def cli_guarded(*args: object, cwd: Path | None = None, timeout: float = GUARD_S) -> CliResult:
    """Run the real entry point in a subprocess that cannot outlive ``timeout`` seconds."""
    env = {**os.environ, "EVD_TEST_KEY": KEY}
    proc = subprocess.run(
        [sys.executable, "-c", "from evaldelta.cli import main; main()", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env=env,
        check=False,
    )
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    """A shorter match timeout for the in-process tests (the CLI ones keep the default)."""
    monkeypatch.setattr("evaldelta.checks._patterns.MATCH_TIMEOUT", 0.25)


def one(text: str) -> Any:
    specs = parse_checks(text, "checks.yaml")
    return build_check(specs[0])


def write_rows(path: Path, outputs: list[str]) -> Path:
    with path.open("w") as fh:
        for i, out in enumerate(outputs):
            fh.write(json.dumps({"case_id": f"c{i}", "arm": "a", "output": out}) + "\n")
    return path


# ----------------------------------------------------------------------------- score


def test_score_with_a_backtracking_pattern_marks_the_check_unscored(tmp_path: Path) -> None:
    checks = tmp_path / "checks.yaml"
    checks.write_text(
        "checks:\n"
        f"  - {{id: slow, spec: s, kind: regex_required, pattern: '{SLOW}'}}\n"
        "  - {id: nested, spec: s, kind: regex_forbidden, pattern: '(a+)+$'}\n"
    )
    rows = write_rows(tmp_path / "rows.jsonl", [SLOW_TEXT, "aaa"])
    out = tmp_path / "scored.jsonl"
    start = time.monotonic()
    res = cli_guarded("score", rows, "--checks", checks, "-o", out)
    assert time.monotonic() - start < 15, "a pattern timeout must stop the scan"
    assert res.code == 0, res.err
    first, second = (json.loads(line) for line in out.read_text().splitlines())
    # the slow pattern gave up on row 1: neither pass nor fail, and the reason says why
    assert first["check.slow"] is None and first["pass"] is None
    assert "timed out" in first["reason.slow"] and SLOW in first["reason.slow"]
    # (a+)+$ is the textbook catastrophe for `re`; this engine answers it at once
    assert first["check.nested"] == 1 and second["check.nested"] == 0
    assert second["check.slow"] == 1 and second["pass"] == 0
    meta = json.loads((tmp_path / "scored.jsonl.meta.json").read_text())
    assert meta["timed_out_checks"] == {"slow": 1}
    assert "0/1 pass every check" in res.err


@pytest.mark.parametrize(
    "kind",
    [
        "{id: r, spec: s, kind: regex_required, pattern: 'PAT'}",
        "{id: r, spec: s, kind: regex_forbidden, pattern: 'PAT', ignore_negated: true}",
        "{id: r, spec: s, kind: allowed_values, field: f, pattern: 'PAT'}",
        "{id: r, spec: s, kind: no_commitment_date, extra_patterns: ['x', 'PAT']}",
    ],
)
@pytest.mark.usefixtures("quick")
def test_every_user_pattern_kind_times_out_unscored(kind: str) -> None:
    check = one("- " + kind.replace("PAT", SLOW))
    start = time.monotonic()
    result = check.evaluate(SLOW_TEXT, {"f": "x"})
    assert time.monotonic() - start < 5
    assert result.passed is None and timed_out(result), result
    assert f"the regular expression {SLOW!r} timed out" in result.reason


def test_score_rejects_huge_and_invalid_patterns_at_load(
    tmp_path: Path, run_cli: Callable[..., CliResult]
) -> None:
    rows = write_rows(tmp_path / "rows.jsonl", ["x"])
    cases = [
        ("a{1,99999999999}", "is above 100000"),
        ("((ab){1000}){1000}", "too large"),
        ("(unbalanced", "not a valid regular expression"),
        ("a)", "not a valid regular expression"),
    ]
    for pattern, why in cases:
        checks = tmp_path / "checks.yaml"
        checks.write_text(
            f"checks:\n  - id: r\n    spec: s\n    kind: regex_required\n    pattern: '{pattern}'\n"
        )
        res = run_cli("score", rows, "--checks", checks, "-o", tmp_path / "o.jsonl")
        one_line_error(res, "checks.yaml, line 5, field 'pattern'", repr(pattern), why)
    checks.write_text(
        "- {id: d, spec: s, kind: no_commitment_date, extra_patterns: ['a{1,99999999999}']}\n"
    )
    res = run_cli("score", rows, "--checks", checks, "-o", tmp_path / "o.jsonl")
    one_line_error(res, "line 1, field 'extra_patterns'", "'a{1,99999999999}'", "above")


def test_pattern_limits() -> None:
    compile_pattern("x" * (MAX_EXPANDED - 10))  # a long plain pattern is fine
    compile_pattern(f"a{{1,{MAX_REPEAT}}}")
    compile_pattern(r"(?:\d{1,3}\.){3}\d{1,3}|[{]{2}|\p{L}{3}|\{10000000\}")  # escaped braces
    for bad in (f"a{{{MAX_REPEAT + 1}}}", f"(ab){{{MAX_EXPANDED // 2 + 1}}}", "(a{400}){300}"):
        with pytest.raises(ValueError, match=r"above|too large"):
            compile_pattern(bad)
    start = time.monotonic()
    compile_pattern("(?:a{300}){300}")  # at the bound: compiles quickly
    assert time.monotonic() - start < 5


def test_re_syntax_still_works() -> None:
    # lookarounds, backreferences, named groups, inline flags: what `re` accepted still does
    check = one("- {id: g, spec: s, kind: regex_required, pattern: '(?<!not )guaranteed'}")
    assert check.evaluate("it is guaranteed", {}).passed is True
    assert check.evaluate("it is not guaranteed", {}).passed is False
    check = one(r"- {id: g, spec: s, kind: regex_forbidden, pattern: '\b(\w+) \1\b'}")
    assert check.evaluate("the the", {}).passed is False
    check = one("- {id: g, spec: s, kind: regex_required, pattern: 'ÉTÉ', ignore_case: true}")
    assert check.evaluate("un été chaud", {}).passed is True
    with pytest.raises(ChecksFileError, match=r"checks.yaml, line 1, field 'pattern'.*valid"):
        one("- {id: g, spec: s, kind: regex_required, pattern: '[z-a]'}")


# ----------------------------------------------------------------------- run: score regex


@pytest.mark.usefixtures("quick")
def test_output_check_errors_name_the_config_and_pattern() -> None:
    where = "run.toml, line 9, field 'score.regex'"
    for bad in ("a{1,99999999999}", "("):
        with pytest.raises(ConfigError) as info:
            OutputCheck("regex", bad, where=where)
        assert str(info.value).startswith(f"{where}, value {bad!r}: ")
    check = OutputCheck("regex", SLOW, where=where)
    start = time.monotonic()
    with pytest.raises(ConfigError) as info:
        check.value(SLOW_TEXT, {})
    assert time.monotonic() - start < 5
    message = str(info.value)
    assert message.startswith(f"{where}, value {SLOW!r}: ") and "timed out" in message
    assert "\n" not in message
    assert OutputCheck("regex", "(a+)+$").value(SLOW_TEXT, {}) == 0.0


@pytest.fixture
def fake(fake: FakeLLM) -> FakeLLM:
    fake.reply = lambda model, prompt, n: SLOW_TEXT if model == "cheap" else "ANSWER"
    return fake


def write_run(tmp: Path, url: str, body: str) -> Path:
    (tmp / "cases.jsonl").write_text(
        "".join(json.dumps({"case_id": f"c{i}", "prompt": f"q{i}"}) + "\n" for i in range(2))
    )
    config = tmp / "run.toml"
    config.write_text(
        f'cases = "cases.jsonl"\nstore = "runs.duckdb"\n\n[providers.fake]\nkind = "openai"\n'
        f'base_url = "{url}/v1"\napi_key_env = "EVD_TEST_KEY"\nmax_retries = 0\n\n'
        '[arms.cheap]\nprovider = "fake"\nmodel = "cheap"\n\n'
        '[arms.strong]\nprovider = "fake"\nmodel = "strong"\n' + body
    )
    return config


def test_run_score_regex_and_verifier_timeouts_are_the_attempts_errors(
    tmp_path: Path, fake: FakeLLM
) -> None:
    cascade = (
        '\n[arms.cascade]\nkind = "cascade"\ncheap = "cheap"\nstrong = "strong"\n'
        f'verifier = {{ regex = "{SLOW}" }}\n'
    )
    config = write_run(tmp_path, fake.url, cascade)
    res = cli_guarded("run", "--config", config, "--score-regex", SLOW, cwd=tmp_path)
    assert "Traceback" not in res.err, res.err
    from evaldelta.store import Store

    with Store(tmp_path / "runs.duckdb", read_only=True) as store:
        rows = store.con.execute("SELECT arm, score, error FROM attempts").fetchall()
    by_arm: dict[str, list[tuple[Any, Any]]] = {}
    for arm, score, error in rows:
        by_arm.setdefault(arm, []).append((score, error))
    assert {len(v) for v in by_arm.values()} == {2}
    # the score regex gave up on the cheap model's output: that attempt is unscored, and
    # its error names the flag and the pattern
    for score, error in by_arm["cheap"]:
        assert score is None and error.startswith("scorer raised ConfigError: --score-regex, ")
        assert repr(SLOW) in error and "timed out" in error
    assert by_arm["strong"] == [(0.0, None), (0.0, None)]
    # the verifier gave up on the cheap step: the cascade attempt is an error naming it
    for score, error in by_arm["cascade"]:
        assert score is None and error.startswith("verifier: ") and "run.toml, line" in error
        assert "arms.cascade.verifier.regex" in error and repr(SLOW) in error
        assert "timed out" in error


def test_run_rejects_a_huge_score_regex_at_load(
    tmp_path: Path, run_cli: Callable[..., CliResult]
) -> None:
    config = write_run(tmp_path, "http://127.0.0.1:9", '\n[score]\nregex = "a{1,99999999999}"\n')
    res = run_cli("run", "--config", config)
    one_line_error(res, "run.toml, line", "field 'score.regex'", "a{1,99999999999}", "above")
    config = write_run(tmp_path, "http://127.0.0.1:9", "")
    res = run_cli("run", "--config", config, "--score-regex", "(")
    one_line_error(res, "--score-regex", "not a valid regular expression")
