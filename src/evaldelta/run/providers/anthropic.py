"""Anthropic Messages API through the official ``anthropic`` SDK (``max_retries=0``).

System messages are joined into the request's ``system`` field; the rest are sent in order.
As with :mod:`.openai_compat`, evaldelta's retry policy is the only one that runs.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import anthropic

from evaldelta.provider import ChatMessage, Completion, GenerationParams
from evaldelta.run.providers._common import api_key_from_env, sdk_error

__all__ = ["AnthropicProvider"]

DEFAULT_MAX_TOKENS = 1024  # the Messages API requires max_tokens; used when none is pinned


class AnthropicProvider:
    """A :class:`~evaldelta.provider.Provider` over ``/v1/messages``."""

    name = "anthropic"

    def __init__(
        self,
        *,
        base_url: str | None = None,
        api_key_env: str = "ANTHROPIC_API_KEY",
        timeout: float = 60.0,
    ) -> None:
        self._key = api_key_from_env(api_key_env, provider=self.name, required=base_url is None)
        self._client = anthropic.AsyncAnthropic(
            api_key=self._key, base_url=base_url, timeout=timeout, max_retries=0
        )
        self._closed = False

    async def complete(
        self, model: str, messages: Sequence[ChatMessage], params: GenerationParams
    ) -> Completion:
        """One Messages call; failures become :class:`ProviderError`."""
        system = "\n\n".join(m.content for m in messages if m.role == "system")
        kwargs: dict[str, Any] = {
            "model": model,
            "messages": [
                {"role": m.role, "content": m.content} for m in messages if m.role != "system"
            ],
            "max_tokens": params.max_tokens or DEFAULT_MAX_TOKENS,
        }
        if system:
            kwargs["system"] = system
        # Sent as body fields: recent SDKs dropped them from the signature, while the API (and
        # Anthropic-compatible servers) still read them where the model supports them.
        sampling = {"temperature": params.temperature, "top_p": params.top_p}
        extra = {k: v for k, v in sampling.items() if v is not None}
        if extra:
            kwargs["extra_body"] = extra
        if params.stop:
            kwargs["stop_sequences"] = list(params.stop)
        # The Messages API has no seed; a pinned seed is recorded but cannot be sent.
        start = time.perf_counter()
        try:
            response = await self._client.messages.create(**kwargs)
        except Exception as exc:
            mapped = sdk_error(exc, name=self.name, key=self._key, sdk=anthropic)
            if mapped is None:
                raise
            raise mapped from None
        latency = (time.perf_counter() - start) * 1000.0
        text = "".join(
            str(getattr(block, "text", "")) for block in response.content if block.type == "text"
        )
        return Completion(
            text=text,
            model_version=response.model or None,
            input_tokens=response.usage.input_tokens,
            output_tokens=response.usage.output_tokens,
            finish_reason=response.stop_reason,
            latency_ms=latency,
        )

    async def aclose(self) -> None:
        """Close the HTTP client (idempotent)."""
        if not self._closed:
            self._closed = True
            await self._client.close()
