"""Providers against the fake server on 127.0.0.1: parsing, error mapping, keys."""

from __future__ import annotations

import asyncio

import pytest

from evaldelta.errors import ProviderSetupError
from evaldelta.provider import ChatMessage, GenerationParams, Provider, ProviderError
from evaldelta.run.providers._common import parse_retry_after, redact
from evaldelta.run.providers.anthropic import AnthropicProvider
from evaldelta.run.providers.openai_compat import OpenAICompatProvider
from evaldelta.run.providers.registry import create_provider
from tests.servers.fake_llm import FakeLLM

MESSAGES = (ChatMessage("system", "be brief"), ChatMessage("user", "hello there"))
PARAMS = GenerationParams(temperature=0.0, max_tokens=20, seed=3, stop=("END",))


def _providers(fake: FakeLLM) -> list[Provider]:
    return [
        OpenAICompatProvider(base_url=fake.url + "/v1", api_key_env="EVD_TEST_KEY", timeout=5),
        AnthropicProvider(base_url=fake.url, api_key_env="EVD_TEST_KEY", timeout=5),
    ]


async def _call(provider: Provider) -> object:
    try:
        return await provider.complete("m1", MESSAGES, PARAMS)
    except ProviderError as exc:
        return exc
    finally:
        await provider.aclose()


@pytest.mark.parametrize("index", [0, 1], ids=["openai", "anthropic"])
def test_success_parses_text_usage_and_version(fake: FakeLLM, index: int) -> None:
    provider = _providers(fake)[index]
    result = asyncio.run(_call(provider))
    assert not isinstance(result, ProviderError)
    assert result.text == "m1 answer 0: be brief\nhello there"  # type: ignore[attr-defined]
    assert result.model_version == "m1-2024-06-01"  # type: ignore[attr-defined]
    assert result.input_tokens == 4  # type: ignore[attr-defined]
    assert result.output_tokens == 7  # type: ignore[attr-defined]
    body = fake.requests[0]["body"]
    assert body["temperature"] == 0.0 and body["max_tokens"] == 20
    if index == 0:
        assert body["seed"] == 3 and body["stop"] == ["END"]
    else:
        assert body["system"] == "be brief" and body["stop_sequences"] == ["END"]


@pytest.mark.parametrize("index", [0, 1], ids=["openai", "anthropic"])
@pytest.mark.parametrize(
    ("failure", "retryable", "status"),
    [("429", True, 429), ("500", True, 500), ("400", False, 400), ("drop", True, None)],
)
def test_failures_map_to_provider_errors(
    fake: FakeLLM, index: int, failure: str, retryable: bool, status: int | None
) -> None:
    fake.failures = [failure]
    fake.retry_after = "7"
    result = asyncio.run(_call(_providers(fake)[index]))
    assert isinstance(result, ProviderError)
    assert result.retryable is retryable
    assert result.status == status
    if failure == "429":
        assert result.retry_after == 7.0
    assert len(fake.requests) == 1  # the SDK's own retries are off


def test_missing_key_for_a_remote_endpoint_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVD_ABSENT_KEY", raising=False)
    with pytest.raises(ProviderSetupError, match="EVD_ABSENT_KEY"):
        OpenAICompatProvider(api_key_env="EVD_ABSENT_KEY")
    with pytest.raises(ProviderSetupError, match="EVD_ABSENT_KEY"):
        AnthropicProvider(api_key_env="EVD_ABSENT_KEY")


def test_key_comes_from_the_environment_and_is_sent(
    fake: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVD_TEST_KEY", "sk-test-SECRET-123456")
    asyncio.run(_call(_providers(fake)[0]))
    assert "Bearer sk-test-SECRET-123456" in fake.auth


def test_registry_kinds_and_errors() -> None:
    with pytest.raises(ProviderSetupError, match="unknown provider kind 'nope'"):
        create_provider("nope")
    provider = create_provider("openai", {"base_url": "http://127.0.0.1:9/v1"})
    assert provider.name == "openai"
    asyncio.run(provider.aclose())


def test_litellm_is_optional() -> None:
    try:
        import litellm  # noqa: F401
    except ImportError:
        with pytest.raises(ProviderSetupError, match=r"evaldelta\[litellm\]"):
            create_provider("litellm")
    else:  # pragma: no cover - only when the extra is installed
        assert create_provider("litellm").name == "litellm"


def test_redact_and_retry_after() -> None:
    assert redact("bad key sk-abcdef123456", "sk-abcdef123456") == "bad key ***"
    assert redact("key ...ef123456 rejected", "sk-abcdef123456") == "key ...*** rejected"
    # an 11-character prefix (masked "***") before the server's own "****"
    assert redact("key sk-abcdef12**** rejected", "sk-abcdef123456") == "key ******* rejected"
    assert parse_retry_after({"Retry-After": "2.5"}) == 2.5
    assert parse_retry_after({"retry-after-ms": "1500"}) == 1.5
    assert parse_retry_after({"Retry-After": "garbage"}) is None
    assert parse_retry_after(None) is None


@pytest.mark.parametrize("index", [0, 1], ids=["openai", "anthropic"])
@pytest.mark.parametrize(
    ("failure", "kind", "retryable"),
    [("401", "auth", False), ("403", "auth", False), ("404", "not_found", False),
     ("400", "bad_request", False), ("429", "rate_limit", True), ("500", "server", True),
     ("malformed", "malformed", True), ("reset", "connection", True)],
)  # fmt: skip
def test_every_failure_has_a_kind(
    fake: FakeLLM, index: int, failure: str, kind: str, retryable: bool
) -> None:
    fake.failures = [failure]
    result = asyncio.run(_call(_providers(fake)[index]))
    assert isinstance(result, ProviderError)
    assert (result.kind, result.retryable) == (kind, retryable), result


def test_an_unknown_host_is_kind_dns_and_not_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    def resolve(host: object, *args: object, **kwargs: object) -> object:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", resolve)  # offline: no resolver is asked
    provider = OpenAICompatProvider(base_url="http://unknown-host.test/v1", timeout=5)
    result = asyncio.run(_call(provider))
    assert isinstance(result, ProviderError)
    assert (result.kind, result.retryable) == ("dns", False)
    assert "Name or service not known" in str(result)  # the cause, not just "Connection error."
