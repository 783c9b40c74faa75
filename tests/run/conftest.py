"""The fake LLM server every runner test in this folder talks to (127.0.0.1, offline)."""

from __future__ import annotations

import pytest

from tests.run.test_run import KEY
from tests.servers.fake_llm import FakeLLM


@pytest.fixture
def fake(fake: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> FakeLLM:
    monkeypatch.setenv("EVD_TEST_KEY", KEY)
    return fake
