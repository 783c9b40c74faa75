"""Run config: the example parses; bad configs fail in one line with file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaldelta.errors import (
    ConfigError,
    DuplicateRowError,
    MissingColumnError,
    TemplateError,
    UnreadableFileError,
    UsageError,
)
from evaldelta.run.cases import load_cases
from evaldelta.run.config import CascadeArm, ModelArm, load_config, parse_config, with_flags
from evaldelta.run.template import Template

ROOT = Path(__file__).resolve().parents[1]


def test_example_config_parses() -> None:
    config = load_config(ROOT / "examples" / "run.toml")
    assert [a.name for a in config.arms] == ["always_cheap", "always_strong", "cascade"]
    cheap = config.model_arm("always_cheap")
    assert cheap.params.temperature == 0 and cheap.params.seed == 7
    assert cheap.template.system is not None and "{{ question }}" in cheap.template.user
    cascade = config.arms[2]
    assert isinstance(cascade, CascadeArm) and cascade.verifier.kind == "regex"
    assert config.repeats == 3 and config.max_cost == 10.0
    assert config.providers["openai"].requests_per_minute == 500


ARM = '[arms.a]\nprovider = "openai"\nmodel = "m"\n'
CASCADE = '[arms.c]\nkind = "cascade"\ncheap = "x"\nstrong = "y"\n'


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("repeats = 0\n", 1, "repeats"),
        (ARM + "temperatur = 0\n", 4, "did you mean 'temperature'"),
        ('[arms.a]\nprovider = "nope"\nmodel = "m"\n', 2, "unknown provider"),
        (ARM + "top_p = 2\n", 4, "top_p"),
        (CASCADE + 'verifier = { regex = "a" }\n', 3, "names a model arm"),
        (CASCADE + 'verifier = { regex = "(" }\n', 5, "regular expression"),
        ('[providers.p]\nkind = "openai"\nmax_concurrency = 0\n', 3, "max_concurrency"),
        ("a = 1\nb = = 2\n", 2, "not valid TOML"),
    ],
)  # fmt: skip
def test_bad_config_is_one_line_with_file_and_line(text: str, line: int, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(text, "run.toml")
    text_ = str(info.value)
    assert text_.startswith(f"run.toml, line {line}"), text_
    assert message in text_ and "\n" not in text_


def test_flags_build_the_simple_case() -> None:
    config = with_flags(parse_config(""), arms=["a=openai:gpt-4o-mini", "b=anthropic:claude-x"],
                        repeats=3)  # fmt: skip
    assert [(a.name, a.provider, a.model) for a in config.arms if isinstance(a, ModelArm)] == [
        ("a", "openai", "gpt-4o-mini"), ("b", "anthropic", "claude-x"),
    ]  # fmt: skip
    for bad in ("a=openai", "=openai:m", "a=nope:m"):
        with pytest.raises(UsageError):
            with_flags(parse_config(""), arms=[bad])
    with pytest.raises(UsageError, match="no arms"):
        with_flags(parse_config(""))


def test_template_missing_field_names_template_field_and_case() -> None:
    config = parse_config('[arms.a]\nprovider = "openai"\nmodel = "m"\nuser = "{{ tikcet }}"\n',
                          "run.toml")  # fmt: skip
    with pytest.raises(TemplateError) as info:
        config.model_arm("a").template.render({"ticket": "x"}, "c1")
    msg = str(info.value)
    assert msg.startswith("run.toml, line 1") and "'tikcet'" in msg and "'c1'" in msg
    with pytest.raises(TemplateError, match="does not parse"):
        Template(user="{{ oops").render({}, "c1")


def test_template_is_sandboxed() -> None:
    from jinja2.exceptions import SecurityError

    with pytest.raises((TemplateError, SecurityError)):
        Template(user="{{ x.__class__.__mro__[1].__subclasses__() }}").render({"x": 1}, "c")


def test_bad_case_files_fail_in_the_engine_style(tmp_path: Path) -> None:
    missing = tmp_path / "nope.csv"
    with pytest.raises(UnreadableFileError, match="does not exist"):
        load_cases(missing)
    no_id = tmp_path / "a.csv"
    no_id.write_text("id,prompt\n1,x\n")
    with pytest.raises(MissingColumnError, match=r"a.csv, line 1, field 'case_id'"):
        load_cases(no_id)
    dup = tmp_path / "d.jsonl"
    dup.write_text('{"case_id": "x"}\n{"case_id": "y"}\n{"case_id": "x"}\n')
    with pytest.raises(DuplicateRowError, match=r"d.jsonl, line 3, field 'case_id', value 'x'"):
        load_cases(dup)
