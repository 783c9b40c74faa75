"""The upstream change detector: hashes, counts per pair, declarations, the gate's refusal."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from evaldelta.comparison import compare
from evaldelta.comparison.upstream import declared_by_pins
from evaldelta.errors import GateRefusedError
from evaldelta.provider import ChatMessage
from evaldelta.report import render_markdown, render_text
from evaldelta.sources.hashes import (
    payload_fields,
    payload_hash,
    prompt_hash,
    retrieval_hash,
    retrieved_ids,
    strip_secrets,
)
from tests.conftest import one_line_error
from tests.rows import write_rows

POLICY = 'max_regression = 0.5\non_inconclusive = "pass"\n'


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# -- hashes ---------------------------------------------------------------------------------


def test_prompt_hash_is_sha256_of_the_canonical_messages():
    # the canonical JSON written out by hand: [[role, content], ...], no spaces
    expected = _sha('[["system","Be brief."],["user","What is 2+2? é"]]')
    objects = [ChatMessage("system", "Be brief."), ChatMessage("user", "What is 2+2? é")]
    mappings = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "What is 2+2? é"}]},
    ]
    assert prompt_hash(objects) == expected
    assert prompt_hash(mappings) == expected  # content parts count as their text
    assert prompt_hash("What is 2+2?") == _sha('"What is 2+2?"')
    assert prompt_hash([ChatMessage("user", "What is 2+3?")]) != prompt_hash(
        [ChatMessage("user", "What is 2+2?")]
    )


def test_payload_hash_leaves_out_model_messages_and_secrets():
    payload = {
        "model": "gpt-x",
        "messages": [{"role": "user", "content": "hi"}],
        "temperature": 0.0,
        "max_tokens": 400,
        "api_key": "sk-abcdefghijklmnopqrstuvwx",
        "headers": {"Authorization": "Bearer abcdef123456", "X-Api-Key": "k", "Accept": "json"},
        "extra": ["Bearer abcdefghijk", "keep"],
    }
    kept = payload_fields(payload)
    assert kept == {
        "temperature": 0.0,
        "max_tokens": 400,  # not a secret although it ends in "tokens"
        "headers": {"Accept": "json"},
        "extra": ["keep"],
    }
    assert payload_hash(payload) == _sha(
        '{"extra":["keep"],"headers":{"Accept":"json"},"max_tokens":400,"temperature":0.0}'
    )
    # another model or key gives the same hash; another parameter does not
    other = {**payload, "model": "gpt-y", "api_key": "sk-zzzzzzzzzzzzzzzzzzzzzz"}
    assert payload_hash(other) == payload_hash(payload)
    assert payload_hash({**payload, "temperature": 0.7}) != payload_hash(payload)
    assert strip_secrets({"password": "p", "session_token": "t", "top_p": 1}) == {"top_p": 1}


def test_retrieval_hash_ignores_order_and_duplicates():
    assert retrieved_ids("b|a|a") == ["a", "b"]
    assert retrieved_ids('["b", "a"]') == ["a", "b"]
    assert retrieved_ids(["d2", "d1"]) == ["d1", "d2"]
    assert retrieved_ids(None) == []
    assert retrieval_hash("b, a") == retrieval_hash(["a", "b"]) == _sha('["a","b"]')


# -- counts ---------------------------------------------------------------------------------


def _prompt_rows(path: Path, changed: int = 3, n: int = 10) -> Path:
    rows: list[dict[str, object]] = []
    for i in range(n):
        for arm in ("a", "b"):
            text = f"system: be brief\nuser: question {i}" + (
                " v2" if arm == "b" and i < changed else ""
            )
            rows.append(
                {"case_id": f"c{i}", "arm": arm, "score": i % 2, "prompt_hash": _sha(text),
                 "rendered_prompt": text}
            )  # fmt: skip
    return write_rows(path, rows, eol="\r\n")  # csv.DictWriter's line ending


def test_counts_the_paired_cases_whose_prompt_differs(tmp_path: Path):
    result = compare([_prompt_rows(tmp_path / "rows.csv")], baseline="a")
    (check,) = result.upstream
    assert (check.kind, check.paired, check.compared, check.differing) == ("prompt", 10, 10, 3)
    assert check.confounded and check.declared == () and check.expected_by == ""
    assert [e.case_id for e in check.examples] == ["c0", "c1", "c2"]
    assert check.examples[0].candidate_text == "system: be brief\nuser: question 0 v2"
    text = render_text(result)
    assert text.splitlines()[1].startswith(
        "!! UPSTREAM INPUT CHANGED BEYOND THE ARMS' DECLARED DIFFERENCE: 3 of 10 paired cases "
        "saw a different rendered prompt between a and b"
    )
    assert "      -user: question 0\n      +user: question 0 v2" in text
    assert "upstream input changed" in render_markdown(result).lower()


def test_repeats_compare_as_sets_and_unrecorded_hashes_are_not_compared(tmp_path: Path):
    rows = [
        # c0: {x, y} in both arms, in another order over the repeats: the same
        {"case_id": "c0", "arm": "a", "repeat": 0, "score": 1, "payload_hash": "x"},
        {"case_id": "c0", "arm": "a", "repeat": 1, "score": 1, "payload_hash": "y"},
        {"case_id": "c0", "arm": "b", "repeat": 0, "score": 1, "payload_hash": "y"},
        {"case_id": "c0", "arm": "b", "repeat": 1, "score": 1, "payload_hash": "x"},
        # c1: {x, y} against {x}: differs
        {"case_id": "c1", "arm": "a", "repeat": 0, "score": 0, "payload_hash": "x"},
        {"case_id": "c1", "arm": "a", "repeat": 1, "score": 0, "payload_hash": "y"},
        {"case_id": "c1", "arm": "b", "repeat": 0, "score": 1, "payload_hash": "x"},
        {"case_id": "c1", "arm": "b", "repeat": 1, "score": 1, "payload_hash": "x"},
        # c2: no hash for arm b: paired, not compared
        {"case_id": "c2", "arm": "a", "repeat": 0, "score": 1, "payload_hash": "x"},
        {"case_id": "c2", "arm": "b", "repeat": 0, "score": 1, "payload_hash": ""},
        # c3: arm a only: not paired
        {"case_id": "c3", "arm": "a", "repeat": 0, "score": 1, "payload_hash": "z"},
    ]
    result = compare([write_rows(tmp_path / "rows.csv", rows, eol="\r\n")], baseline="a")
    (check,) = result.upstream
    assert (check.kind, check.paired, check.compared, check.differing) == ("payload", 3, 2, 1)
    assert [e.case_id for e in check.examples] == ["c1"]
    assert "1 more paired cases lack the hash in one arm" in render_text(result)


def test_rows_without_hash_columns_report_nothing(tmp_path: Path):
    rows = [{"case_id": "c0", "arm": a, "score": 1} for a in ("a", "b")]
    result = compare([write_rows(tmp_path / "rows.csv", rows, eol="\r\n")])
    assert result.upstream == ()
    assert "Upstream" not in render_text(result)


# -- what the arms declare ------------------------------------------------------------------


def test_declarations_from_pins():
    pins = {
        "v1": {"model": "m1", "template_sha256": "t1", "params.temperature": 0.0},
        "v2": {"model": "m2", "template_sha256": "t1", "params.temperature": 0.0},
        "v3": {"model": "m1", "template_sha256": "t2", "pins.retrieval_index": "2025-05"},
    }
    assert declared_by_pins(pins, "v1", "v2") == ("model",)
    assert declared_by_pins(pins, "v1", "v3") == ("prompt", "payload", "retrieval")
    assert declared_by_pins(pins, "v1", "nopins") == ()


def test_expect_change_declares_the_kind(tmp_path: Path, run_cli):
    path = _prompt_rows(tmp_path / "rows.csv")
    result = compare([path], baseline="a", expected_changes=["prompt"])
    (check,) = result.upstream
    assert check.differing == 3 and not check.confounded
    assert check.declared == ("prompt",) and check.expected_by == "expect_change"
    assert "as expected: the arms declare a prompt change (--expect-change)" in render_text(result)
    res = run_cli("compare", path, "--baseline", "a")
    assert res.code == 0
    assert "WARNING: 3 of 10 paired cases saw a different prompt between a and b" in res.err
    quiet = run_cli("compare", path, "--baseline", "a", "--expect-change", "prompt")
    assert quiet.code == 0 and "WARNING" not in quiet.err
    bad = run_cli("compare", path, "--expect-change", "model")
    one_line_error(bad, "--expect-change takes one of prompt, payload, retrieval, not 'model'")


# -- the gate -------------------------------------------------------------------------------


def test_gate_refuses_a_confounded_comparison_unless_allowed(tmp_path: Path, run_cli, write):
    path = _prompt_rows(tmp_path / "rows.csv")
    policy = write("gate.toml", POLICY)
    refused = run_cli("gate", path, "--policy", policy, "--baseline", "a")
    one_line_error(
        refused,
        "gate.toml: the gate refuses to decide: 3 of 10 paired cases saw a different rendered "
        "prompt between a and b",
        "(e.g. c0)",
        '[upstream] allow = ["prompt"]',
    )
    allowing = write("allow.toml", POLICY + '[upstream]\nallow = ["prompt"]\n')
    ok = run_cli("gate", path, "--policy", allowing, "--baseline", "a")
    assert ok.code == 0, ok.err
    declared = run_cli("gate", path, "--policy", policy, "--baseline", "a", "--expect-change",
                       "prompt")  # fmt: skip
    assert declared.code == 0, declared.err
    also = run_cli("compare", path, "--policy", policy, "--baseline", "a")
    one_line_error(also, "refuses to decide")


def test_the_library_refuses_and_names_who_allowed(tmp_path: Path, write):
    from evaldelta.gating import compare_with_policy

    path = _prompt_rows(tmp_path / "rows.csv")
    with pytest.raises(GateRefusedError, match="different rendered prompt"):
        compare_with_policy([path], write("gate.toml", POLICY), baseline="a")
    allowing = write("allow.toml", POLICY + '[upstream]\nallow = ["prompt"]\n')
    result, _ = compare_with_policy([path], allowing, baseline="a")
    assert result.upstream[0].expected_by == "policy"
    assert "(the policy's [upstream] allow)" in render_text(result)


def test_no_difference_no_refusal(tmp_path: Path, write):
    from evaldelta.gating import compare_with_policy

    path = _prompt_rows(tmp_path / "rows.csv", changed=0)
    result, verdict = compare_with_policy([path], write("gate.toml", POLICY), baseline="a")
    assert result.upstream[0].differing == 0 and verdict.exit_code == 0


def test_bad_upstream_table_in_the_policy(tmp_path: Path, run_cli, write):
    path = _prompt_rows(tmp_path / "rows.csv")
    policy = write("gate.toml", POLICY + '[upstream]\nallow = ["model"]\n')
    res = run_cli("gate", path, "--policy", policy, "--baseline", "a")
    one_line_error(res, "gate.toml", "line 4", "allow must be a list of prompt, payload, retrieval")
    unknown = write("unknown.toml", POLICY + '[upstream]\nallowed = ["prompt"]\n')
    res = run_cli("gate", path, "--policy", unknown, "--baseline", "a")
    one_line_error(res, "unknown.toml", "allowed")


def test_reports_escape_the_stored_texts(tmp_path: Path):
    from evaldelta.report.html import render_html

    hostile = "<script>alert(1)</script> ``` @everyone"
    rows = [
        {"case_id": "c0", "arm": "a", "score": 1, "prompt_hash": "h1", "rendered_prompt": "hi"},
        {"case_id": "c0", "arm": "b", "score": 1, "prompt_hash": "h2", "rendered_prompt": hostile},
    ]
    result = compare([write_rows(tmp_path / "rows.csv", rows, eol="\r\n")], baseline="a")
    html = render_html(result)
    assert '<section id="upstream">' in html and '<pre class="diff">' in html
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)" in html
    md = render_markdown(result)
    assert "> ````diff" in md  # a fence longer than the backtick run inside
    assert "> +<script>alert(1)</script> ``` @everyone" in md  # verbatim inside the fence
    assert md.count("````") == 2


def test_the_terminal_report_shows_it_too(tmp_path: Path):
    import io

    from rich.console import Console

    from evaldelta.report.terminal import print_terminal

    buffer = io.StringIO()
    result = compare([_prompt_rows(tmp_path / "rows.csv")], baseline="a")
    print_terminal(result, Console(file=buffer, width=200, color_system=None))
    assert "UPSTREAM INPUT CHANGED BEYOND THE ARMS' DECLARED DIFFERENCE" in buffer.getvalue()
