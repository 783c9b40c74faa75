"""The one I/O seam of the runner and the judge: an async chat-completion provider.

Every provider (OpenAI-compatible, Anthropic, litellm, the in-process local model, and the
test servers' clients) implements :class:`Provider`. The runner never talks HTTP itself;
tests swap the provider or point it at a server they start on 127.0.0.1.

API keys come from environment variables inside each provider and are never part of any
value defined here, so nothing below can carry a key into the store, a log or a report.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

__all__ = [
    "FATAL_KINDS",
    "ChatMessage",
    "Completion",
    "ErrorKind",
    "GenerationParams",
    "Provider",
    "ProviderError",
    "kind_of_status",
]

ErrorKind = Literal[
    "auth",  # HTTP 401, 403: a wrong or unauthorised key
    "not_found",  # HTTP 404: an unknown model or endpoint path
    "bad_request",  # another 4xx: the request itself is wrong
    "rate_limit",  # HTTP 429
    "server",  # HTTP 5xx
    "timeout",  # no (complete) reply within the timeout, HTTP 408
    "connection",  # refused, reset or dropped connections
    "dns",  # the host name does not resolve
    "malformed",  # a reply that is not the API's JSON
    "retry_budget",  # retries would wait past the call's retry budget or the run's wall time
    "provider",  # anything else a provider raised
    "scoring",  # the scorer, verifier or checks failed on a reply (not a provider error)
]
# The same failure on every call: no retry or later call can succeed, so a run stops early.
FATAL_KINDS: frozenset[ErrorKind] = frozenset({"auth", "not_found", "dns"})


def kind_of_status(status: int | None) -> ErrorKind:
    """The error kind of an HTTP status (``provider`` when there is none)."""
    if status is None:
        return "provider"
    if status in (401, 403):
        return "auth"
    if status == 404:
        return "not_found"
    if status == 408:
        return "timeout"
    if status == 429:
        return "rate_limit"
    if status >= 500:
        return "server"
    return "bad_request"


@dataclass(frozen=True)
class ChatMessage:
    """One chat message: ``role`` is ``system``, ``user`` or ``assistant``."""

    role: str
    content: str


@dataclass(frozen=True)
class GenerationParams:
    """Generation parameters, pinned and recorded with every run (None = provider default)."""

    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    stop: tuple[str, ...] = ()


@dataclass(frozen=True)
class Completion:
    """What a provider returned for one call.

    ``model_version`` is the model the API reports having used (it may differ from the
    requested id, e.g. a dated snapshot); ``input_tokens`` / ``output_tokens`` are the usage
    the API reports (None when it reports none); ``latency_ms`` is measured by the provider.
    """

    text: str
    model_version: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    finish_reason: str | None = None
    latency_ms: float | None = None


class ProviderError(Exception):
    """A failed call.

    ``retryable`` calls (429, 5xx, timeouts, dropped connections) may be retried;
    ``retry_after`` (seconds) is the server's Retry-After when it sent one; ``kind`` says
    what went wrong (default: from ``status``), for the run's summary and its early stop.
    """

    def __init__(
        self,
        message: str,
        *,
        retryable: bool,
        status: int | None = None,
        retry_after: float | None = None,
        kind: ErrorKind | None = None,
    ) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after
        self.kind: ErrorKind = kind if kind is not None else kind_of_status(status)


@runtime_checkable
class Provider(Protocol):
    """An async chat-completion client for one provider kind."""

    name: str

    async def complete(
        self, model: str, messages: Sequence[ChatMessage], params: GenerationParams
    ) -> Completion:
        """Make one call; raise :class:`ProviderError` on failure (never return a partial)."""
        ...

    async def aclose(self) -> None:
        """Release connections (idempotent)."""
        ...
