"""How hard we call a provider: a clock seam, retries with backoff, rate limits, one lane each.

A :class:`Lane` wraps one provider endpoint with a concurrency bound (a semaphore), request-
and token-per-minute buckets, a per-call timeout and the retry policy: retry on retryable
:class:`~evaldelta.provider.ProviderError` (429, 5xx, timeouts, dropped
connections) with exponential backoff and jitter, never sooner than the server's
Retry-After, which is capped (``max_retry_after``: a ``Retry-After: 86400`` does not put a
run to sleep for a day). The waits of one call count against its retry budget
(``retry_budget``) and the run's wall-clock deadline; a retry that would wait past either is
not made, and the call fails with kind ``retry_budget``. Time comes from an injected
:class:`Clock`, so tests run without waiting.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from evaldelta.provider import (
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

    A server's Retry-After is a floor on the wait, itself capped at ``max_retry_after``.
    ``rng`` is seeded (the run's ``seed``).
    """

    max_retries: int = 4
    base: float = 0.5
    cap: float = 30.0
    max_retry_after: float = 60.0
    rng: random.Random = field(default_factory=lambda: random.Random(0))

    def delay(self, retry: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (0-based)."""
        ceiling = min(self.cap, self.base * 2.0**retry)
        wait = ceiling / 2 + self.rng.uniform(0, ceiling / 2)
        if retry_after is None:
            return wait
        return max(wait, min(retry_after, self.max_retry_after))


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
        retry_budget: float = 300.0,
        deadline: float | None = None,
        on_retry: Callable[[], None] | None = None,
    ) -> None:
        self.provider = provider
        self.clock = clock
        self.retry = retry
        self.timeout = timeout
        self.max_concurrency = max_concurrency
        self.semaphore = asyncio.Semaphore(max_concurrency)
        self.requests = RateLimiter(requests_per_minute, clock) if requests_per_minute else None
        self.tokens = RateLimiter(tokens_per_minute, clock) if tokens_per_minute else None
        self.retry_budget = retry_budget  # seconds one call may wait between its retries
        self.deadline = deadline  # the run's end on the clock (max_wall_seconds), or None
        self.on_retry = on_retry
        self.retries = 0  # how many retries this lane made (for the summary)

    async def call(
        self, model: str, messages: Sequence[ChatMessage], params: GenerationParams
    ) -> Completion:
        """One completion, retried per the policy; raises the last ProviderError.

        A retry is counted when its request is about to be sent (after the wait), so the
        count is the number of requests beyond the first: what the server saw.
        """
        estimate = sum(len(m.content) for m in messages) / 4 + (params.max_tokens or 256)
        retry, waited = 0, 0.0
        while True:
            error = await self._once(model, messages, params, estimate)
            if isinstance(error, Completion):
                return error
            if not error.retryable or retry >= self.retry.max_retries:
                raise error
            wait = self.retry.delay(retry, error.retry_after)
            over = self._over_budget(wait, waited, error.retry_after)
            if over is not None:
                raise ProviderError(
                    f"{error}; {over}", retryable=False, status=error.status, kind="retry_budget"
                )
            await self.clock.sleep(wait)
            waited += wait
            retry += 1
            self.retries += 1
            if self.on_retry is not None:
                self.on_retry()

    def _over_budget(self, wait: float, waited: float, retry_after: float | None) -> str | None:
        """Why a retry after ``wait`` seconds is not made (None: it is)."""
        asked = ""
        if retry_after is not None and retry_after > self.retry.max_retry_after:
            asked = (
                f" (the server's Retry-After of {retry_after:g} s capped at "
                f"{self.retry.max_retry_after:g} s)"
            )
        if waited + wait > self.retry_budget:
            return (
                f"gave up: the next retry would wait {wait:g} s{asked}, past this call's retry "
                f"budget of {self.retry_budget:g} s ({waited:g} s waited already)"
            )
        if self.deadline is not None and self.clock.now() + wait > self.deadline:
            return (
                f"gave up: the next retry would wait {wait:g} s{asked}, past the run's "
                "max_wall_seconds"
            )
        return None

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
                return ProviderError(
                    f"call timed out after {self.timeout:g} s", retryable=True, kind="timeout"
                )
            except ProviderError as exc:
                return exc
            except Exception as exc:  # a provider bug or an in-process model failure
                return ProviderError(f"{type(exc).__name__}: {exc}", retryable=False)
        if self.tokens is not None and completion.input_tokens is not None:
            used = completion.input_tokens + (completion.output_tokens or 0)
            self.tokens.settle(used - estimate)
        return completion
