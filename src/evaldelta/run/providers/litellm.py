"""Every other provider through ``litellm`` (an optional extra: ``pip install evaldelta[litellm]``).

``litellm`` is imported when the provider is created, never at import time, so the core
install stays light; a missing package is a one-line :class:`ProviderSetupError`. litellm's
own retries are off (``num_retries=0``); keys come from the environment as litellm reads them.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Sequence
from typing import Any

from evaldelta.errors import ProviderSetupError
from evaldelta.provider import ChatMessage, Completion, GenerationParams, ProviderError
from evaldelta.run.providers._common import openai_style_request, parse_retry_after

__all__ = ["LiteLLMProvider"]


class LiteLLMProvider:
    """A :class:`~evaldelta.provider.Provider` over ``litellm.acompletion``."""

    name = "litellm"

    def __init__(self, *, base_url: str | None = None, timeout: float = 60.0) -> None:
        try:
            self._litellm: Any = importlib.import_module("litellm")
        except ImportError:
            raise ProviderSetupError(
                "provider 'litellm' needs the litellm package: pip install 'evaldelta[litellm]'"
            ) from None
        self._base_url = base_url
        self._timeout = timeout

    async def complete(
        self, model: str, messages: Sequence[ChatMessage], params: GenerationParams
    ) -> Completion:
        """One ``litellm.acompletion`` call; failures become :class:`ProviderError`."""
        kwargs = openai_style_request(model, messages, params)
        kwargs.update(timeout=self._timeout, num_retries=0)  # our lane retries, not litellm
        if self._base_url is not None:
            kwargs["api_base"] = self._base_url
        start = time.perf_counter()
        try:
            response = await self._litellm.acompletion(**kwargs)
        except Exception as exc:  # litellm maps every provider's errors onto its own classes
            status = getattr(exc, "status_code", None)
            headers = getattr(getattr(exc, "response", None), "headers", None)
            retryable = status is None or status == 429 or status >= 500
            raise ProviderError(
                f"litellm call failed: {type(exc).__name__}",
                retryable=retryable,
                status=status,
                retry_after=parse_retry_after(dict(headers) if headers else None),
            ) from None
        choice = response.choices[0]
        usage = getattr(response, "usage", None)
        return Completion(
            text=choice.message.content or "",
            model_version=getattr(response, "model", None),
            input_tokens=getattr(usage, "prompt_tokens", None),
            output_tokens=getattr(usage, "completion_tokens", None),
            finish_reason=getattr(choice, "finish_reason", None),
            latency_ms=(time.perf_counter() - start) * 1000.0,
        )

    async def aclose(self) -> None:
        """Nothing to release: litellm manages its own clients."""
