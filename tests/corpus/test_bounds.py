"""The limits of issue 23, from the inside: exact at the limit, linear in time, inert in HTML.

tests/corpus/test_bad_inputs.py holds the hostile files that must be refused in one line;
this module checks the other side of each limit (a file at the limit is read), the JSON
scanner's exactness however a document is cut into blocks, the streaming reader's linear
reads of a long string, the regex time budget per file, and the HTML report's control bytes.
"""

from __future__ import annotations

import io
import itertools
import json
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaldelta._util import _limits, _toml
from evaldelta._util._json_bounds import BoundedReader, JsonScanner, LimitExceeded, nests_too_deep
from evaldelta._util._limits import MAX_DEPTH
from evaldelta.errors import ConfigError, PolicyError, UnreadableFileError

from ..conftest import one_line_error


def _nested(depth: int, leaf: object = 1) -> Any:
    value: Any = leaf
    for _ in range(depth):
        value = [value]
    return value


# -- the JSON scanner ------------------------------------------------------------------------
TEXT = st.text(alphabet=st.sampled_from('ab"\\[]{}:,/\n\t\u00e9\u2028'), max_size=12)
JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-9, 99), TEXT),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(TEXT, inner, max_size=4)),
    max_leaves=40,
)


def _feed(text: bytes, cuts: list[int], **limits: int) -> JsonScanner:
    scanner = JsonScanner(**limits)
    bounds = sorted({0, len(text), *(c % (len(text) + 1) for c in cuts)})
    for start, end in itertools.pairwise(bounds):
        scanner.feed(text[start:end])
    return scanner


@settings(max_examples=300, deadline=None, derandomize=True)
@given(doc=JSON, cuts=st.lists(st.integers(0, 10**6), max_size=8), ascii_only=st.booleans())
def test_the_scanner_knows_the_exact_depth_however_the_bytes_are_cut(
    doc: Any, cuts: list[int], ascii_only: bool
) -> None:
    text = json.dumps(doc, ensure_ascii=ascii_only).encode()
    depth = _limits.depth_of(doc, stop=10**6)
    scanner = _feed(text, cuts, max_depth=depth)  # at the limit: read
    assert (scanner.depth, scanner.in_string, scanner.escape) == (0, False, False)
    if depth:
        with pytest.raises(LimitExceeded, match=f"deeper than {MAX_DEPTH}"):
            _feed(text, cuts, max_depth=depth - 1)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    body=st.text(alphabet=st.sampled_from('x"\\\n\u00e9'), min_size=1, max_size=40),
    cuts=st.lists(st.integers(0, 10**6), max_size=6),
)
def test_the_scanner_measures_a_string_however_the_bytes_are_cut(
    body: str, cuts: list[int]
) -> None:
    token = json.dumps(body)  # the string as written, quotes included
    text = ("[1, " + token + ", 2]").encode()
    length = len(token.encode()) - 2  # what the limit counts: the bytes between the quotes
    _feed(text, cuts, max_value=length)
    with pytest.raises(LimitExceeded, match="string or number longer"):
        _feed(text, [*cuts, 5 + length // 2], max_value=length - 1)  # cut inside the string


def test_a_long_string_reaches_the_parser_in_reads_that_double(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import ijson

    monkeypatch.setenv("EVALDELTA_MAX_STRING_MB", "8")
    text = '{"items": [{"a": "' + "x" * (5 << 20) + '"}, {"b": 2}]}'
    sizes: list[int] = []

    class Counting(io.BytesIO):
        def read(self, size: int | None = -1) -> bytes:
            data = super().read(size)
            sizes.append(len(data))
            return data

    items = list(ijson.items(BoundedReader(Counting(text.encode()), "x.json"), "items.item"))
    assert items == [{"a": "x" * (5 << 20)}, {"b": 2}]
    assert len(sizes) <= 12, sizes  # 64 KB, 64 KB, 128 KB, ... : linear, not 80 reads


def test_a_long_number_is_a_value_too(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("EVALDELTA_MAX_STRING_MB", "0.05")
    text = b"[" + b"1" * 200_000 + b"]"
    with pytest.raises(UnreadableFileError, match=r"string or number longer than 0\.05 MB"):
        reader = BoundedReader(io.BytesIO(text), "n.json")
        while reader.read(65536):
            pass


def test_text_that_nests_too_deep_is_not_handed_to_json() -> None:
    from evaldelta.checks import split_values
    from evaldelta.checks._mechanical import parse_json_reply
    from evaldelta.sources.hashes import retrieved_ids

    deep = "[" * 100_000 + "]" * 100_000
    assert nests_too_deep(deep) and not nests_too_deep(json.dumps(_nested(MAX_DEPTH)))
    assert split_values(deep) == [deep]
    assert retrieved_ids(deep) == [deep]
    with pytest.raises(ValueError, match="200 levels"):
        parse_json_reply(deep)
    assert parse_json_reply('```json\n{"a": 1}\n```') == {"a": 1}
    start = time.perf_counter()
    with pytest.raises(ValueError):
        parse_json_reply("```" + " " * 200_000 + "x")  # no fence regex to backtrack
    assert time.perf_counter() - start < 1.0


# -- every reader: a document at the limit is read, one level deeper is refused --------------
def test_streamed_json_at_the_depth_limit(tmp_path: Path) -> None:
    from evaldelta.sources.importers._json import iter_items

    path = tmp_path / "log.json"
    path.write_text(json.dumps({"samples": [_nested(MAX_DEPTH - 2)]}))
    assert list(iter_items(path, "samples.item")) == [_nested(MAX_DEPTH - 2)]
    path.write_text(json.dumps({"samples": [_nested(MAX_DEPTH - 1)]}))
    with pytest.raises(UnreadableFileError, match="200 levels"):
        list(iter_items(path, "samples.item"))


def test_whole_json_and_json_lines_at_the_depth_limit(tmp_path: Path) -> None:
    from evaldelta.sources.importers._json import loads, read_json_lines

    at, past = json.dumps(_nested(MAX_DEPTH)), json.dumps(_nested(MAX_DEPTH + 1))
    assert loads(at, "a.json") == _nested(MAX_DEPTH)
    with pytest.raises(UnreadableFileError, match="200 levels"):
        loads(past, "a.json")
    path = tmp_path / "a.jsonl"
    path.write_text(f"{at}\n\n{past}\n")
    lines = read_json_lines(path)
    assert next(lines) == (1, _nested(MAX_DEPTH))
    with pytest.raises(UnreadableFileError, match=r"line 3.*200 levels"):
        next(lines)


def test_toml_at_the_depth_limit() -> None:
    at = "a = " + json.dumps(_nested(MAX_DEPTH - 1)) + "\n"  # the table is a level too
    assert _toml.loads(at, "p.toml", PolicyError)["a"] == _nested(MAX_DEPTH - 1)
    with pytest.raises(PolicyError, match="200 levels"):
        _toml.loads("a = " + json.dumps(_nested(MAX_DEPTH)) + "\n", "p.toml", PolicyError)
    dotted = ".".join(["k"] * MAX_DEPTH) + " = 1\n"
    assert _limits.depth_of(_toml.loads(dotted, "p.toml", PolicyError)) == MAX_DEPTH
    with pytest.raises(PolicyError, match="200 levels"):
        _toml.loads("k." + dotted, "p.toml", PolicyError)


def test_yaml_at_the_depth_limit() -> None:
    from evaldelta.checks._spec import parse_checks
    from evaldelta.errors import ChecksFileError

    def checks(depth: int) -> str:  # the mapping, the list and the check are 3 levels
        return f"checks:\n- id: c\n  spec: s\n  kind: regex_required\n  pattern: {depth}\n"

    value = json.dumps(_nested(MAX_DEPTH - 3, "x"))
    (spec,) = parse_checks(checks(0).replace("0\n", value + "\n"))
    assert spec.options["pattern"] == _nested(MAX_DEPTH - 3, "x")
    with pytest.raises(ChecksFileError, match="200 levels"):
        parse_checks(checks(0).replace("0\n", json.dumps(_nested(MAX_DEPTH - 2, "x")) + "\n"))


def test_yaml_aliases_within_the_limit_are_read() -> None:
    from evaldelta.checks._spec import parse_checks

    text = (
        "judge:\n  params:\n    p: &p ['a{3}', 'b+']\n"
        "checks:\n- id: c\n  spec: s\n  kind: no_commitment_date\n  extra_patterns: *p\n"
    )
    (spec,) = parse_checks(text)
    assert spec.options["extra_patterns"] == ["a{3}", "b+"]


def test_a_price_table_nested_too_deep(tmp_path: Path) -> None:
    from evaldelta.run.prices import PriceTable

    path = tmp_path / "prices.toml"
    path.write_text("models = " + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(ConfigError, match="200 levels"):
        PriceTable.load(path)


def test_the_width_check_reads_the_header_only(tmp_path: Path) -> None:
    from evaldelta.sources.tidy import _check_width

    path = tmp_path / "w.csv"
    path.write_text(",".join(f'"c,{i}"' for i in range(_limits.MAX_COLUMNS)) + "\n1\n")
    _check_width(path, ",")  # quoted commas are not columns
    path.write_text(",".join(f"c{i}" for i in range(_limits.MAX_COLUMNS + 1)) + "\n1\n")
    with pytest.raises(UnreadableFileError, match="4,097 columns"):
        _check_width(path, ",")


def test_a_score_at_the_range_limit_is_read(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "r.csv"
    path.write_text("case_id,arm,score\n1,a,1e15\n1,b,-1e15\n2,a,0\n2,b,1\n")
    assert run_cli("compare", str(path), "--format", "json").code == 0
    path.write_text("case_id,arm,score\n1,a,1.000001e15\n1,b,0\n2,a,0\n2,b,1\n")
    one_line_error(run_cli("compare", str(path)), "line 2", "1e15")


# -- regular expressions: a time budget per check and file -----------------------------------
def test_a_catastrophic_pattern_spends_its_budget_once_per_file(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from evaldelta.checks import _patterns
    from evaldelta.checks._mechanical import build_check, timed_out
    from evaldelta.checks._spec import parse_checks

    monkeypatch.setattr(_patterns, "MATCH_TIMEOUT", 0.05)
    monkeypatch.setattr(_patterns, "FILE_TIMEOUT", 0.2)
    (spec,) = parse_checks(
        "checks:\n- id: slow\n  spec: s\n  kind: regex_required\n  pattern: '(a|aa)+$'\n"
    )
    check = build_check(spec)
    start = time.perf_counter()
    results = [check.evaluate("a" * 60 + "!", {}) for _ in range(40)]
    elapsed = time.perf_counter() - start
    assert all(timed_out(r) for r in results)
    assert "for all the replies of this file" in results[-1].reason
    assert elapsed < 0.2 + 0.05 + 0.5  # the budget and one last call, not 40 timeouts
    fresh = build_check(spec)  # a new file, a new budget
    assert "0.05 s on this text" in fresh.evaluate("a" * 60 + "!", {}).reason


def test_the_checks_of_one_file_share_a_budget(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from evaldelta.checks import _patterns, load_checks
    from evaldelta.checks._mechanical import timed_out

    monkeypatch.setattr(_patterns, "MATCH_TIMEOUT", 0.05)
    monkeypatch.setattr(_patterns, "FILE_TIMEOUT", 0.3)
    monkeypatch.setattr(_patterns, "CHECKS_FILE_TIMEOUT", 0.4)
    one = "- id: slow{i}\n  spec: s\n  kind: regex_forbidden\n  pattern: '(a|aa)+$'\n"
    path = tmp_path / "c.yaml"
    path.write_text("checks:\n" + "".join(one.format(i=i) for i in range(5)))
    checks = load_checks(path).mechanical
    start = time.perf_counter()
    results = [c.evaluate("a" * 60 + "!", {}) for _ in range(30) for c in checks]
    assert all(timed_out(r) for r in results)
    assert time.perf_counter() - start < 0.4 + 0.05 + 0.5  # five checks, one budget


def test_a_fast_pattern_never_reaches_the_budget(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from evaldelta.checks import _patterns

    monkeypatch.setattr(_patterns, "FILE_TIMEOUT", 0.05)  # then only the per-MB allowance
    pattern = _patterns.compile_pattern("needle")
    text = "hay " * 250_000 + "needle"  # 1 MB: the allowance grows faster than a scan costs
    for _ in range(20):
        assert pattern.search(text) is not None
    assert pattern.budget.left() > 10.0


# -- HTML: no escape sequence or control byte from the data ----------------------------------
def test_the_html_report_drops_control_bytes_and_keeps_line_breaks(  # type: ignore[no-untyped-def]
    tmp_path: Path, run_cli
) -> None:
    rows = tmp_path / "r.csv"
    rows.write_text(
        "case_id,arm,slice,score,output\n"
        'c\x1b[31m1,a,s\x07,1,"bell\x07 esc\x1b]0;title\x07 line one\nline two"\n'
        "c\x1b[31m1,b,s\x07,0,x\nc2,a,s\x07,0,y\nc2,b,s\x07,1,z\n"
    )
    out = tmp_path / "r.html"
    assert run_cli("compare", str(rows), "-o", str(out)).code == 0
    html = out.read_bytes()
    assert b"\x1b" not in html and b"\x07" not in html
    assert b"line one\nline two" in html and b"c1" in html
