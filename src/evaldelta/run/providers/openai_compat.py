"""OpenAI-compatible chat completions (OpenAI, vLLM, Ollama, llama.cpp server, LM Studio, ...).

Calls go through the official ``openai`` SDK with ``max_retries=0``: evaldelta's own retry
policy (:mod:`evaldelta.run.limits`, tested) is the only one that runs, so a retry is never
hidden inside the SDK and never paid twice without being seen.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import openai

from evaldelta.provider import ChatMessage, Completion, GenerationParams, ProviderError
from evaldelta.run.providers._common import api_key_from_env, openai_style_request, sdk_error

__all__ = ["OpenAICompatProvider"]


class OpenAICompatProvider:
    """A :class:`~evaldelta.provider.Provider` over ``/v1/chat/completions``.

    ``base_url`` None means the SDK's default (``OPENAI_BASE_URL`` or api.openai.com); a
    key is then required in ``api_key_env``. With a ``base_url`` (a local server) a missing
    key is sent as a placeholder.
    """

    name = "openai"

    def __init__(
        self,
        *,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 60.0,
    ) -> None:
        self._key = api_key_from_env(api_key_env, provider=self.name, required=base_url is None)
        self._client = openai.AsyncOpenAI(
            api_key=self._key, base_url=base_url, timeout=timeout, max_retries=0
        )
        self._closed = False

    async def complete(
        self, model: str, messages: Sequence[ChatMessage], params: GenerationParams
    ) -> Completion:
        """One chat completion; failures become :class:`ProviderError`."""
        kwargs = openai_style_request(model, messages, params)
        start = time.perf_counter()
        try:
            response = await self._client.chat.completions.create(**kwargs)
        except Exception as exc:
            mapped = sdk_error(exc, name=self.name, key=self._key, sdk=openai)
            if mapped is None:
                raise
            raise mapped from None
        latency = (time.perf_counter() - start) * 1000.0
        if not response.choices:
            raise ProviderError(f"{self.name} returned no choices", retryable=True)
        choice = response.choices[0]
        usage = response.usage
        return Completion(
            text=choice.message.content or "",
            model_version=response.model or None,
            input_tokens=usage.prompt_tokens if usage is not None else None,
            output_tokens=usage.completion_tokens if usage is not None else None,
            finish_reason=choice.finish_reason,
            latency_ms=latency,
        )

    async def aclose(self) -> None:
        """Close the HTTP client (idempotent)."""
        if not self._closed:
            self._closed = True
            await self._client.close()
