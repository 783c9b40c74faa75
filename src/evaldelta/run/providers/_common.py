"""What the HTTP providers share: API keys from the environment, redaction, Retry-After.

Keys are read here, at construction, from a named environment variable and kept only on the
SDK client. Every message a provider raises passes through :func:`redact`, so a server that
echoes the key back (some do, partly masked) cannot carry it into the store or a log; the
runner masks every text it stores or prints with a :class:`Redactor` over the same keys
(a reply may echo a key too).
"""

from __future__ import annotations

import email.utils
import json
import os
import socket
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from evaldelta.errors import ProviderSetupError
from evaldelta.provider import ChatMessage, GenerationParams, ProviderError

__all__ = [
    "MASK",
    "MIN_PREFIX",
    "RETRYABLE_STATUS",
    "Redactor",
    "api_key_from_env",
    "openai_style_request",
    "parse_retry_after",
    "redact",
    "sdk_error",
]

# 408 timeout, 409 conflict (a lock on the server), 429 rate limit, every 5xx (529: overloaded)
RETRYABLE_STATUS = frozenset({408, 409, 429}) | frozenset(range(500, 600))
NO_KEY = "not-needed"  # sent to local servers (vLLM, Ollama, llama.cpp) that ignore the key
MASK = "***"
MIN_PREFIX = 8  # a key's prefix this long or longer is masked wherever it appears
_MIN_SECRET = 6  # shorter values are not treated as keys (masking them would garble text)
_DNS_PERMANENT = frozenset(
    getattr(socket, name)
    for name in ("EAI_NONAME", "EAI_NODATA", "EAI_FAIL", "EAI_ADDRFAMILY")
    if hasattr(socket, name)
)


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
    """``text`` with ``secret``, every prefix of it of 8+ characters, and its last 8 masked.

    A server that shows "sk-proj-abc123..." (a 14-character prefix) or "...ef123456" (the
    tail, as OpenAI's 401 does) leaks part of the key: both are masked, as is the whole key.
    """
    if not secret or secret == NO_KEY or len(secret) < _MIN_SECRET:
        return text
    if len(secret) < MIN_PREFIX:
        return text.replace(secret, MASK)
    head, parts, start = secret[:MIN_PREFIX], [], 0
    while (found := text.find(head, start)) >= 0:
        end = found + MIN_PREFIX
        while end - found < len(secret) and end < len(text) and text[end] == secret[end - found]:
            end += 1
        parts += [text[start:found], MASK]
        start = end
    text = "".join([*parts, text[start:]])
    return text.replace(secret[-8:], MASK) if len(secret) >= 12 else text


class Redactor:
    """Masks a run's API keys (the values of the variables its providers name) in text."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        found = {s for s in secrets if s and s != NO_KEY and len(s) >= _MIN_SECRET}
        self.secrets = tuple(sorted(found, key=lambda s: (-len(s), s)))

    @classmethod
    def from_env(cls, variables: Iterable[str]) -> Redactor:
        """A redactor over the (stripped) values of the environment ``variables``."""
        return cls(os.environ.get(v, "").strip() for v in variables)

    def text(self, text: str) -> str:
        """``text`` with every key, long key prefix and key tail masked."""
        for secret in self.secrets:
            text = redact(text, secret)
        return text

    def value(self, value: Any) -> Any:
        """A string masked; any other value as it is."""
        return self.text(value) if isinstance(value, str) and self.secrets else value

    def values(self, row: Mapping[str, Any]) -> dict[str, Any]:
        """A row of values with every string masked."""
        return {k: self.value(v) for k, v in row.items()}


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
        return ProviderError(
            f"{name} returned a malformed (non-JSON) response", retryable=True, kind="malformed"
        )
    if isinstance(exc, sdk.APIStatusError):
        status = exc.status_code
        return ProviderError(
            redact(f"{name} returned HTTP {status}: {exc.message}", key),
            retryable=status in RETRYABLE_STATUS,
            status=status,
            retry_after=parse_retry_after(dict(exc.response.headers)),
        )
    if isinstance(exc, sdk.APITimeoutError):
        return ProviderError(f"{name} call timed out", retryable=True, kind="timeout")
    if isinstance(exc, sdk.APIConnectionError):
        return _connection_error(exc, name, key)
    base = getattr(sdk, "OpenAIError", None) or getattr(sdk, "AnthropicError", None)
    if base is not None and isinstance(exc, base):  # malformed responses and the like
        return ProviderError(redact(f"{name} call failed: {exc}", key), retryable=False)
    return None


def _causes(exc: BaseException) -> list[BaseException]:
    """``exc`` and the exceptions it was raised from, outermost first (cycles cut)."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain and len(chain) < 20:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def _connection_error(exc: BaseException, name: str, key: str | None) -> ProviderError:
    """A connection failure: an unknown host (kind ``dns``) or a refused/reset connection.

    The SDK's own message is only "Connection error."; the innermost cause says which
    (``[Errno -2] Name or service not known``, ``Connect call failed``), so it is appended.
    A host that does not resolve will not resolve on a retry: not retryable (a temporary
    resolver failure, EAI_AGAIN, is retried).
    """
    chain = _causes(exc)
    root = chain[-1]
    detail = f" ({type(root).__name__}: {root})" if root is not exc and str(root) else ""
    message = redact(f"{name} connection failed: {exc}{detail}", key)
    dns = next((e for e in chain if isinstance(e, socket.gaierror)), None)
    if dns is not None:
        permanent = dns.errno in _DNS_PERMANENT
        return ProviderError(message, retryable=not permanent, kind="dns")
    return ProviderError(message, retryable=True, kind="connection")


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
