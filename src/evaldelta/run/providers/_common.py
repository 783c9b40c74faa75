"""What the HTTP providers share: API keys from the environment, redaction, Retry-After.

Keys are read here, at construction, from a named environment variable and kept only on the
SDK client. Every message a provider raises passes through :func:`redact`, so a server that
echoes the key back (some do, partly masked) cannot carry it into the store or a log.
"""

from __future__ import annotations

import email.utils
import json
import os
import time
from collections.abc import Mapping, Sequence
from typing import Any

from evaldelta.errors import ProviderSetupError
from evaldelta.run.providers.base import ChatMessage, GenerationParams, ProviderError

__all__ = [
    "RETRYABLE_STATUS",
    "api_key_from_env",
    "openai_style_request",
    "parse_retry_after",
    "redact",
    "sdk_error",
]

# 408 timeout, 409 conflict (a lock on the server), 429 rate limit, every 5xx (529: overloaded)
RETRYABLE_STATUS = frozenset({408, 409, 429}) | frozenset(range(500, 600))
NO_KEY = "not-needed"  # sent to local servers (vLLM, Ollama, llama.cpp) that ignore the key


def api_key_from_env(variable: str, *, provider: str, required: bool) -> str:
    """The API key in ``variable``; a placeholder for local servers when not ``required``."""
    value = os.environ.get(variable, "").strip()
    if value:
        return value
    if required:
        raise ProviderSetupError(
            f"provider {provider!r} needs an API key in the environment variable {variable}, "
            "which is unset or empty (keys are read from the environment only)"
        )
    return NO_KEY


def redact(text: str, secret: str | None) -> str:
    """``text`` with every occurrence of ``secret`` (and its last 8 characters) masked."""
    if not secret or secret == NO_KEY:
        return text
    text = text.replace(secret, "***")
    tail = secret[-8:]
    return text.replace(tail, "***") if len(tail) >= 6 else text


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` (seconds or HTTP date) or ``retry-after-ms``."""
    if not headers:
        return None
    lowered = {k.lower(): v for k, v in headers.items()}
    ms = lowered.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            parsed = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(0.0, parsed.timestamp() - time.time())


def sdk_error(exc: BaseException, *, name: str, key: str | None, sdk: Any) -> ProviderError | None:
    """An official SDK's exception as a :class:`ProviderError`, or None (re-raise it).

    The openai and anthropic SDKs share their exception class names, so one mapping serves
    both.
    429, 5xx, timeouts, dropped connections and a 200 whose body is not JSON are retryable;
    other HTTP statuses and SDK errors are not. Every message goes through :func:`redact`.
    """
    if isinstance(exc, json.JSONDecodeError):  # a broken proxy or a truncated reply
        return ProviderError(f"{name} returned a malformed (non-JSON) response", retryable=True)
    if isinstance(exc, sdk.APIStatusError):
        status = exc.status_code
        return ProviderError(
            redact(f"{name} returned HTTP {status}: {exc.message}", key),
            retryable=status in RETRYABLE_STATUS,
            status=status,
            retry_after=parse_retry_after(dict(exc.response.headers)),
        )
    if isinstance(exc, sdk.APITimeoutError):
        return ProviderError(f"{name} call timed out", retryable=True)
    if isinstance(exc, sdk.APIConnectionError):
        return ProviderError(redact(f"{name} connection failed: {exc}", key), retryable=True)
    base = getattr(sdk, "OpenAIError", None) or getattr(sdk, "AnthropicError", None)
    if base is not None and isinstance(exc, base):  # malformed responses and the like
        return ProviderError(redact(f"{name} call failed: {exc}", key), retryable=False)
    return None


def openai_style_request(
    model: str, messages: Sequence[ChatMessage], params: GenerationParams
) -> dict[str, Any]:
    """The chat-completions request body (OpenAI's shape, which litellm also takes).

    Parameters left at None are not sent, so the server's own defaults apply.
    """
    kwargs: dict[str, Any] = {
        "model": model,
        "messages": [{"role": m.role, "content": m.content} for m in messages],
    }
    for name in ("temperature", "top_p", "max_tokens", "seed"):
        value = getattr(params, name)
        if value is not None:
            kwargs[name] = value
    if params.stop:
        kwargs["stop"] = list(params.stop)
    return kwargs
