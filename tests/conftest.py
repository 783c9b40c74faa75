from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import hypothesis  # noqa: F401  # see the comment below
import pytest

from tests.servers.fake_llm import FakeLLM

# hypothesis's pytest plugin imports hypothesis lazily, at the session's end when no selected
# test used it. After the llama.cpp tests, CPython 3.11.7 can fail to parse that source there
# ("AST constructor recursion depth mismatch", pytest-dev/pytest#10874), turning a green run
# into an INTERNALERROR. Importing it here, while the interpreter is fresh, avoids the late parse.

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
REAL = SHARED / "data" / "real"


@dataclass
class CliResult:
    code: int
    out: str
    err: str


@pytest.fixture
def run_cli(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Callable[..., CliResult]:
    """Run the real entry point (evaldelta.cli.main) in-process; return code, stdout, stderr."""
    from evaldelta.cli import main

    def run(*args: str) -> CliResult:
        monkeypatch.setattr(sys, "argv", ["evaldelta", *map(str, args)])
        code = 0
        try:
            main()
        except SystemExit as exc:
            code = int(exc.code or 0) if not isinstance(exc.code, str) else 1
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    """The fake model server (tests/servers/fake_llm.py) on 127.0.0.1, stopped afterwards.

    A module that needs it changed (its replies, an API key in the environment) overrides
    this fixture with one that takes ``fake`` and returns it changed.
    """
    server = FakeLLM().start()
    yield server
    server.stop()


@pytest.fixture
def write(tmp_path: Path) -> Callable[[str, str], Path]:
    """Write a text file under tmp_path and return its path."""

    def _write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path

    return _write


def one_line_error(result: CliResult, *needles: str) -> None:
    """Assert a one-line error naming every needle, exit code 2, and no traceback."""
    assert result.code == 2, (result.code, result.out, result.err)
    lines = result.err.strip().splitlines()
    assert len(lines) == 1, result.err
    assert lines[0].startswith("evaldelta: error: ")
    assert "Traceback" not in result.err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
