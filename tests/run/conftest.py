"""The fake LLM server every runner test in this folder talks to (127.0.0.1, offline)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.servers.fake_llm import FakeLLM
from tests.test_run import KEY


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLM]:
    monkeypatch.setenv("EVD_TEST_KEY", KEY)
    server = FakeLLM().start()
    yield server
    server.stop()
