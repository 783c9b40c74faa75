"""How hard we call a provider: a clock seam, retries with backoff, rate limits, one lane each.

A :class:`Lane` wraps one provider endpoint with a concurrency bound (a semaphore), request-
and token-per-minute buckets, a per-call timeout and the retry policy: retry on retryable
:class:`~evaldelta.run.providers.base.ProviderError` (429, 5xx, timeouts, dropped
connections) with exponential backoff and jitter, never sooner than the server's
Retry-After. Time comes from an injected :class:`Clock`, so tests run without waiting.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from evaldelta.run.providers.base import (
    ChatMessage,
    Completion,
    GenerationParams,
    Provider,
    ProviderError,
)

__all__ = ["Clock", "Lane", "RateLimiter", "RetryPolicy"]


class Clock:
    """Monotonic time and sleeping; tests pass a fake that advances instantly."""

    def now(self) -> float:
        """Seconds on a monotonic clock."""
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds``."""
        await asyncio.sleep(seconds)


@dataclass
class RetryPolicy:
    """Exponential backoff with equal jitter: attempt n waits in [d/2, d], d = min(cap, base 2^n).

    A server's Retry-After is a floor on the wait. ``rng`` is seeded (the run's ``seed``).
    """

    max_retries: int = 4
    base: float = 0.5
    cap: float = 30.0
    rng: random.Random = field(default_factory=lambda: random.Random(0))

    def delay(self, retry: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (0-based)."""
        ceiling = min(self.cap, self.base * 2.0**retry)
        wait = ceiling / 2 + self.rng.uniform(0, ceiling / 2)
        return max(wait, retry_after) if retry_after is not None else wait


class RateLimiter:
    """A token bucket refilled at ``per_minute`` / 60 per second, holding 10 s of budget.

    A single request larger than the bucket waits for a full bucket, then proceeds.
    :meth:`settle` corrects an estimate once the real usage is known.
    """

    def __init__(self, per_minute: float, clock: Clock) -> None:
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, per_minute / 6.0)
        self.level = self.capacity
        self.clock = clock
        self.stamp = clock.now()
        self.lock = asyncio.Lock()

    def _refill(self) -> None:
        now = self.clock.now()
        self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
        self.stamp = now

    async def acquire(self, amount: float = 1.0) -> None:
        """Wait until ``amount`` is available, then take it (FIFO among waiters)."""
        async with self.lock:
            need = min(amount, self.capacity)
            self._refill()
            while self.level < need:
                await self.clock.sleep((need - self.level) / self.rate)
                self._refill()
            self.level -= amount

    def settle(self, extra: float) -> None:
        """Take ``extra`` more (or give back, if negative) after the real usage is known."""
        self.level = min(self.capacity, self.level - extra)


class Lane:
    """One provider endpoint with its limits; :meth:`call` is the only way calls are made."""

    def __init__(
        self,
        provider: Provider,
        *,
        clock: Clock,
        retry: RetryPolicy,
        max_concurrency: int = 4,
        timeout: float = 60.0,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
    ) -> None:
        self.provider = provider
        self.clock = clock
        self.retry = retry
        self.timeout = timeout
        self.max_concurrency = max_concurrency
        self.semaphore = asyncio.Semaphore(max_concurrency)
        self.requests = RateLimiter(requests_per_minute, clock) if requests_per_minute else None
        self.tokens = RateLimiter(tokens_per_minute, clock) if tokens_per_minute else None
        self.retries = 0  # how many retries this lane made (for the summary)

    async def call(
        self, model: str, messages: Sequence[ChatMessage], params: GenerationParams
    ) -> Completion:
        """One completion, retried per the policy; raises the last ProviderError."""
        estimate = sum(len(m.content) for m in messages) / 4 + (params.max_tokens or 256)
        retry = 0
        while True:
            error = await self._once(model, messages, params, estimate)
            if isinstance(error, Completion):
                return error
            if not error.retryable or retry >= self.retry.max_retries:
                raise error
            await self.clock.sleep(self.retry.delay(retry, error.retry_after))
            retry += 1
            self.retries += 1

    async def _once(
        self,
        model: str,
        messages: Sequence[ChatMessage],
        params: GenerationParams,
        estimate: float,
    ) -> Completion | ProviderError:
        async with self.semaphore:
            if self.requests is not None:
                await self.requests.acquire(1)
            if self.tokens is not None:
                await self.tokens.acquire(estimate)
            try:
                completion = await asyncio.wait_for(
                    self.provider.complete(model, messages, params), self.timeout
                )
            except TimeoutError:
                return ProviderError(f"call timed out after {self.timeout:g} s", retryable=True)
            except ProviderError as exc:
                return exc
            except Exception as exc:  # a provider bug or an in-process model failure
                return ProviderError(f"{type(exc).__name__}: {exc}", retryable=False)
        if self.tokens is not None and completion.input_tokens is not None:
            used = completion.input_tokens + (completion.output_tokens or 0)
            self.tokens.settle(used - estimate)
        return completion
