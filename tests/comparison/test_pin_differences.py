"""Pins that differ beyond the declared arm difference: compare warns, gate refuses."""

from __future__ import annotations

from pathlib import Path

from evaldelta.comparison import compare
from evaldelta.comparison.pins import undeclared_differences
from evaldelta.report import render_text
from evaldelta.sources import Source
from evaldelta.store import resolve_run
from tests.comparison.test_compare_pins import ARMS, _store
from tests.conftest import one_line_error

POLICY = "max_regression = 5.0\non_inconclusive = 'pass'\n"


def _source(tmp_path: Path, arms=ARMS) -> Source:  # type: ignore[no-untyped-def]
    path = _store(tmp_path / "runs.duckdb", arms)
    return Source(path, run=resolve_run(path, None))


def test_a_generation_parameter_difference_is_reported_loudly(tmp_path: Path):
    result = compare([_source(tmp_path)], baseline="v1")
    # ARMS: the model differs (declared: the release under test) and params.top_p does not
    assert [d.key for d in result.pin_differences] == ["params.top_p"]
    assert dict(result.pin_differences[0].values) == {"v1": None, "v2": 0.9}
    first, rest = render_text(result).split("\n", 1)
    assert first == "baseline v1 (--baseline); candidates: v2"  # the report's first line
    assert rest.startswith("!! PINS DIFFER BEYOND THE ARMS' DECLARED DIFFERENCE: params.top_p")
    allowed = compare(
        [_source(tmp_path / "b")], baseline="v1", allowed_pin_differences=["params.*"]
    )
    assert allowed.pin_differences == ()
    assert "PINS DIFFER" not in render_text(allowed)


def test_declared_differences_alone_raise_nothing():
    pins = {
        "a": {"model": "m1", "template_sha256": "x", "params.temperature": 0, "run.judge": "j"},
        "b": {"model": "m2", "template_sha256": "y", "params.temperature": 0.0, "run.judge": "j"},
    }
    assert undeclared_differences(pins, ["a", "b"]) == ()
    pins["b"]["run.judge"] = "j2"  # a different judge is a confound
    assert [d.key for d in undeclared_differences(pins, ["a", "b"])] == ["run.judge"]
    del pins["b"]["params.temperature"]  # recorded for one arm only: differs too
    keys = [d.key for d in undeclared_differences(pins, ["a", "b"])]
    assert keys == ["params.temperature", "run.judge"]


def test_compare_cli_warns_on_stderr(tmp_path: Path, run_cli):
    path = _store(tmp_path / "runs.duckdb")
    res = run_cli("compare", "--store", path, "--baseline", "v1")
    assert res.code == 0, res.err
    assert "WARNING: the arms differ in pins beyond the release under test: params.top_p" in res.err
    quiet = run_cli(
        "compare", "--store", path, "--baseline", "v1", "--allow-pin-diff", "params.top_p"
    )
    assert "WARNING" not in quiet.err


def test_gate_refuses_unless_the_policy_allows(tmp_path: Path, run_cli, write):
    path = _store(tmp_path / "runs.duckdb")
    policy = write("gate.toml", POLICY)
    refused = run_cli("gate", "--store", path, "--policy", policy, "--baseline", "v1")
    one_line_error(refused, "refuses to decide", "'params.top_p'", "[pins] allow")
    allowing = write("allow.toml", POLICY + "[pins]\nallow = ['params.top_p']\n")
    ok = run_cli("gate", "--store", path, "--policy", allowing, "--baseline", "v1")
    assert ok.code in (0, 1, 3), ok.err
    assert "refuses" not in ok.err


def test_bad_pins_table_in_the_policy(tmp_path: Path, run_cli, write):
    path = _store(tmp_path / "runs.duckdb")
    policy = write("gate.toml", POLICY + "[pins]\nallow = 'params.top_p'\n")
    res = run_cli("gate", "--store", path, "--policy", policy, "--baseline", "v1")
    one_line_error(res, "gate.toml", "line 4", "allow must be a list")


def test_markdown_leads_with_the_pin_warning(tmp_path: Path):
    from evaldelta.report import render_markdown

    md = render_markdown(compare([_source(tmp_path)], baseline="v1"))
    assert md.startswith("> ⚠️ **The arms differ beyond the release under test:** `params.top_p`")


def test_the_library_refuses_as_the_cli_does(tmp_path: Path, write):
    import pytest

    from evaldelta.errors import GateRefusedError
    from evaldelta.gating import compare_with_policy

    policy = write("gate.toml", POLICY)
    with pytest.raises(GateRefusedError, match=r"'params\.top_p'"):
        compare_with_policy([_source(tmp_path)], policy, baseline="v1")
    allowing = write("allow.toml", POLICY + "[pins]\nallow = ['params.top_p']\n")
    result, verdict = compare_with_policy([_source(tmp_path / "b")], allowing, baseline="v1")
    assert result.pin_differences == () and verdict.exit_code in (0, 1, 3)
