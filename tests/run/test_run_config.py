"""Run config: the example parses; bad configs fail in one line with file and line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
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
from tests.conftest import CliResult, one_line_error

ROOT = Path(__file__).resolve().parents[2]


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
        # the local provider's own keys: an unknown one was a TypeError (exit 70) at run time
        ('[providers.l]\nkind = "local"\nbogus = 1\n', 3, "unknown key 'bogus'"),
        ('[providers.l]\nkind = "local"\nrepack = "yes"\n', 3, "must be true or false"),
        ('[providers.l]\nkind = "local"\nn_ctx = 0\n', 3, "n_ctx"),
    ],
)  # fmt: skip
def test_bad_config_is_one_line_with_file_and_line(text: str, line: int, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(text, "run.toml")
    text_ = str(info.value)
    assert text_.startswith(f"run.toml, line {line}"), text_
    assert message in text_ and "\n" not in text_


def test_local_provider_keys_reach_the_provider() -> None:
    text = '[providers.l]\nkind = "local"\nrepack = true\nn_ctx = 512\n'
    config = parse_config(text + '[arms.a]\nprovider = "l"\nmodel = "smollm2"\n', "run.toml")
    options = config.providers["l"].factory_options()
    assert options["repack"] is True and options["n_ctx"] == 512


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


def template_run(tmp: Path, template: str) -> Path:
    """A run config whose [template] user is ``template`` (its provider is never called)."""
    (tmp / "cases.jsonl").write_text('{"case_id": "c1", "prompt": "hi"}\n')
    config = tmp / "run.toml"
    config.write_text(
        'cases = "cases.jsonl"\nstore = "runs.duckdb"\n\n[providers.fake]\nkind = "openai"\n'
        'base_url = "http://127.0.0.1:9/v1"\napi_key_env = "EVD_TEST_KEY"\n\n'
        f"[template]\nuser = '''{template}'''\n\n"
        '[arms.a]\nprovider = "fake"\nmodel = "m"\n'
    )
    return config


@pytest.mark.parametrize(
    ("template", "tag"),
    [
        ("{% include 'other.txt' %}", "{% include %}"),
        ("{% import 'macros.j2' as m %}{{ m.f() }}", "{% import %}"),
        ("{% from 'macros.j2' import f %}", "{% from ... import %}"),
        ("{% extends 'base.j2' %}", "{% extends %}"),
        ("ok{% if prompt %}{% include prompt %}{% endif %}", "{% include %}"),
    ],
)
def test_template_include_import_extends_are_one_line_errors(
    tmp_path: Path, run_cli: Callable[..., CliResult], template: str, tag: str
) -> None:
    res = run_cli("run", "--config", template_run(tmp_path, template))
    one_line_error(res, "run.toml, line 9, field 'template'", f"user template uses {tag}")
    assert not (tmp_path / "runs.duckdb").exists()  # refused before anything ran


def run_guarded(*args: object, cwd: Path) -> CliResult:
    """The real entry point in a subprocess that cannot outlive 60 s (a hang fails the test)."""
    proc = subprocess.run(
        [sys.executable, "-c", "from evaldelta.cli import main; main()", *map(str, args)],
        capture_output=True, text=True, timeout=60, cwd=cwd, check=False,
        env={**os.environ, "EVD_TEST_KEY": "sk-evd-FAKE"},
    )  # fmt: skip
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


@pytest.mark.parametrize(
    ("template", "why"),
    [
        ("{% for i in range(10**9) %}x{% endfor %}", "range() of 1,000,000,000 items"),
        (
            "{% for i in range(10000) %}{% for j in range(10000) %}{% endfor %}{% endfor %}",
            "more than 1,000,000 loop steps",  # in 0.3 s; the 5 s clock is far behind
        ),
        ("{% for i in range(2000) %}{{ 'x' * 1000 }}{% endfor %}", "more than 1,000,000 char"),
    ],
)
def test_template_loops_and_output_are_bounded(tmp_path: Path, template: str, why: str) -> None:
    start = time.monotonic()
    res = run_guarded("run", "--config", template_run(tmp_path, template), cwd=tmp_path)
    assert time.monotonic() - start < 30
    one_line_error(res, "run.toml, line 9, field 'template'", "user template", why, "'c1'")


# Work bounds: the step count (deterministic) or, on a very loaded machine, the clock.
WORK = ("more than 1,000,000 loop steps", "takes longer than 5 s")
HOSTILE: dict[str, str | tuple[str, ...]] = {
    "{{ 'x' * 10**9 }}": "with '*' longer than",
    "{{ 'x' ~ ('y' * 999999) ~ 'zz' }}": "with '~' longer than",
    "{{ 7 ** 100000 }}": "more than 4096 bits",
    "{{ 'x'|center(10**9) }}": "center(1000000000)",
    "{{ 'x'.ljust(10**9) }}": "ljust",
    "{{ '%0999999999d' % 1 }}": "format width",
    "{{ '{:>999999999}'.format(1) }}": "format width",
    "{{ [1]|batch(10**9, 0)|list|length }}": "batch(1000000000)",
    "{{ ('x' * 999999).replace('x', 'yy') }}": "with replace",
    "{% set l = [] %}{% for i in range(11) %}{{ l.append('x' * 100000) or '' }}{% endfor %}"
    "{{ l|join('--') }}": "with join",
    "{% macro f(n) %}{% if n %}{{ f(n-1) }}{{ f(n-1) }}{% endif %}{% endmacro %}{{ f(40) }}": WORK,
    "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}": "recurses too deeply",
    "{% set ns = namespace(s='x') %}{% for i in range(60) %}{% set ns.s = ns.s ~ ns.s %}"
    "{% endfor %}{{ ns.s|length }}": "with '~' longer than",
    "{% set ns = namespace(s=['x']) %}{% for i in range(60) %}{% set ns.s = [ns.s, ns.s] %}"
    "{% endfor %}{{ ns.s }}": "a value longer than",
    "{% for c in prompt %}{% for d in prompt %}{% endfor %}{% endfor %}": WORK,
    "{{ 1 / 0 }}": "ZeroDivisionError: division by zero",
}


def test_hostile_templates_fail_in_one_line_within_the_bounds(tmp_path: Path) -> None:
    script = tmp_path / "render.py"
    script.write_text(
        "import json, sys, time\n"
        "from evaldelta.errors import TemplateError\n"
        "from evaldelta.run.template import Template\n"
        "out = []\n"
        "for source in json.loads(sys.argv[1]):\n"
        "    start = time.monotonic()\n"
        "    try:\n"
        "        Template(user=source, where='t.toml').render({'prompt': 'p' * 2000}, 'c1')\n"
        "        out.append([source, 'rendered', 0])\n"
        "    except TemplateError as exc:\n"
        "        out.append([source, str(exc), time.monotonic() - start])\n"
        "print(json.dumps(out))\n"
    )
    proc = subprocess.run(
        [sys.executable, str(script), json.dumps(list(HOSTILE))],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    for source, message, seconds in json.loads(proc.stdout):
        assert message.startswith("t.toml: the user template "), (source, message)
        expected = HOSTILE[source]
        needles = expected if isinstance(expected, tuple) else (expected,)
        assert any(n in message for n in needles) and "\n" not in message, (source, message)
        assert seconds < 10, (source, seconds)


def test_ordinary_templates_still_render() -> None:
    source = (
        "{% for x in items|sort %}{{ loop.index }}/{{ loop.length }}:{{ x ~ '!' }} {% endfor %}"
        "{{ range(3)|list }} {{ '%05d'|format(42) }} {{ '{:>4}'.format(7) }} {{ 2 ** 10 }} "
        "{{ ('ab' * 3)|replace('a', 'A') }} {{ name|center(9)|trim }} {{ items|join(',') }}"
        "{% macro m(v) %}<{{ v }}>{% endmacro %}{{ m(name) }}"
    )
    (msg,) = Template(user=source).render({"items": [3, 1, 2], "name": "Ann"}, "c1")
    assert msg.content == "1/3:1! 2/3:2! 3/3:3! [0, 1, 2] 00042    7 1024 AbAbAb Ann 3,1,2<Ann>"
    long = "y" * 900_000  # a large case field renders whole
    assert Template(user="{{ prompt }}").render({"prompt": long}, "c")[0].content == long


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
