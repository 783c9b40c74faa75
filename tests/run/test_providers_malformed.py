"""Malformed bodies and the test server's seeded, per-model behaviour, through the real SDKs."""

from __future__ import annotations

import asyncio

import pytest

from evaldelta.run.providers import ChatMessage, GenerationParams, ProviderError
from evaldelta.run.providers.anthropic import AnthropicProvider
from evaldelta.run.providers.openai_compat import OpenAICompatProvider
from tests.servers.fake_llm import FakeLLM

MESSAGES = [ChatMessage("user", "hello")]
PARAMS = GenerationParams(max_tokens=8)


@pytest.fixture
def fake(fake: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> FakeLLM:
    monkeypatch.setenv("EVD_FAKE_KEY", "k-test")
    return fake


def _providers(fake: FakeLLM):  # type: ignore[no-untyped-def]
    return [
        OpenAICompatProvider(base_url=f"{fake.url}/v1", api_key_env="EVD_FAKE_KEY"),
        AnthropicProvider(base_url=fake.url, api_key_env="EVD_FAKE_KEY"),
    ]


def test_a_non_json_body_is_a_retryable_provider_error(fake: FakeLLM):
    async def go() -> list[ProviderError]:
        errors = []
        for provider in _providers(fake):
            fake.failures = ["malformed"]
            with pytest.raises(ProviderError) as caught:
                await provider.complete("m", MESSAGES, PARAMS)
            errors.append(caught.value)
            ok = await provider.complete("m", MESSAGES, PARAMS)  # the next call is fine
            assert ok.text
            await provider.aclose()
        return errors

    errors = asyncio.run(go())
    assert all(e.retryable and "malformed" in str(e) for e in errors)


def test_random_failures_are_seeded_and_per_model(fake: FakeLLM):
    fake.error_rate, fake.malformed_rate = 0.3, 0.2
    fake.per_model = {"steady": {"error_rate": 0.0, "malformed_rate": 0.0}}

    def draws(seed: int, model: str) -> list[str | None]:
        fake.seed(seed)
        return [fake.next_failure(model) for _ in range(200)]

    first = draws(11, "flaky")
    assert first == draws(11, "flaky")  # the same seed, the same failures
    assert first != draws(12, "flaky")
    kinds = {f for f in first if f is not None}
    assert kinds == {"429", "500", "malformed"}
    assert 0.35 < sum(f is not None for f in first) / 200 < 0.65
    assert draws(11, "steady") == [None] * 200
