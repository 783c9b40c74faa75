"""Retries, backoff, Retry-After, timeouts, concurrency and rate limits (fake clock)."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence

import pytest

from evaldelta.provider import ChatMessage, Completion, GenerationParams, ProviderError
from evaldelta.run.limits import Clock, Lane, RateLimiter, RetryPolicy
from evaldelta.run.providers.openai_compat import OpenAICompatProvider
from tests.servers.fake_llm import FakeLLM

MSG = (ChatMessage("user", "hi"),)


class FakeClock(Clock):
    """Time that advances only when someone sleeps; records every sleep."""

    def __init__(self) -> None:
        self.t = 0.0
        self.sleeps: list[float] = []

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.t += seconds
        await asyncio.sleep(0)


def lane_for(fake: FakeLLM, clock: Clock, **kw: object) -> Lane:
    timeout = float(kw.pop("timeout", 5.0))  # type: ignore[arg-type]
    provider = OpenAICompatProvider(base_url=fake.url + "/v1", timeout=timeout)
    return Lane(provider, clock=clock, retry=kw.pop("retry", RetryPolicy()), timeout=timeout, **kw)  # type: ignore[arg-type]


async def call(lane: Lane) -> Completion | ProviderError:
    try:
        return await lane.call("m", MSG, GenerationParams())
    except ProviderError as exc:
        return exc
    finally:
        await lane.provider.aclose()


def test_backoff_grows_with_jitter_inside_bounds() -> None:
    policy = RetryPolicy(base=0.5, cap=8.0, rng=random.Random(1))
    for retry in range(8):
        ceiling = min(8.0, 0.5 * 2**retry)
        for _ in range(20):
            assert ceiling / 2 <= policy.delay(retry) <= ceiling
    assert policy.delay(0, retry_after=12.0) == 12.0  # Retry-After is a floor


def test_retries_429_5xx_and_drops_then_succeeds(fake: FakeLLM) -> None:
    fake.failures = ["429", "500", "drop"]
    fake.retry_after = "3"
    clock = FakeClock()
    lane = lane_for(fake, clock, retry=RetryPolicy(max_retries=4, base=0.5, cap=30))
    result = asyncio.run(call(lane))
    assert isinstance(result, Completion)
    assert len(fake.requests) == 4 and lane.retries == 3
    assert clock.sleeps[0] == 3.0  # honoured Retry-After over a 0.25-0.5 s backoff
    assert 0.5 <= clock.sleeps[1] <= 1.0 and 1.0 <= clock.sleeps[2] <= 2.0


def test_gives_up_after_max_retries_and_never_retries_a_400(fake: FakeLLM) -> None:
    fake.failures = ["500"] * 5
    result = asyncio.run(call(lane_for(fake, FakeClock(), retry=RetryPolicy(max_retries=2))))
    assert isinstance(result, ProviderError) and result.status == 500
    assert len(fake.requests) == 3
    fake.requests.clear()
    fake.failures = ["400"]
    result = asyncio.run(call(lane_for(fake, FakeClock())))
    assert isinstance(result, ProviderError) and result.status == 400
    assert len(fake.requests) == 1


def test_per_call_timeout_then_retry(fake: FakeLLM) -> None:
    fake.failures = ["hang"]
    lane = lane_for(fake, FakeClock(), timeout=0.3, retry=RetryPolicy(max_retries=1))
    result = asyncio.run(call(lane))
    assert isinstance(result, Completion)
    assert len(fake.requests) == 2 and lane.retries == 1


class SlowProvider:
    name = "slow"

    def __init__(self) -> None:
        self.in_flight = 0
        self.max_in_flight = 0

    async def complete(
        self, model: str, messages: Sequence[ChatMessage], params: GenerationParams
    ) -> Completion:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        await asyncio.sleep(0.01)
        self.in_flight -= 1
        return Completion("ok", input_tokens=100, output_tokens=100)

    async def aclose(self) -> None:
        pass


def test_concurrency_bound_holds_at_the_server(fake: FakeLLM) -> None:
    fake.delay = 0.05

    async def main() -> None:
        lane = lane_for(fake, Clock(), max_concurrency=3)
        await asyncio.gather(*(lane.call("m", MSG, GenerationParams()) for _ in range(12)))
        await lane.provider.aclose()

    asyncio.run(main())
    assert fake.max_in_flight == 3


def test_requests_per_minute_limit_paces_calls() -> None:
    clock = FakeClock()
    provider = SlowProvider()
    lane = Lane(provider, clock=clock, retry=RetryPolicy(), max_concurrency=50,
                requests_per_minute=120)  # fmt: skip

    async def main() -> None:
        await asyncio.gather(*(lane.call("m", MSG, GenerationParams()) for _ in range(30)))

    asyncio.run(main())
    # a bucket of 10 s (20 requests) at 2 per second: the last 10 wait 5 s in all
    assert clock.t == pytest.approx(5.0)


def test_tokens_per_minute_limit_uses_reported_usage() -> None:
    clock = FakeClock()
    limiter = RateLimiter(6000, clock)  # 100 tokens per second, bucket of 1000

    async def main() -> None:
        for _ in range(3):
            await limiter.acquire(500)
            limiter.settle(200 - 500)  # the call used 200, not the 500 estimated

    asyncio.run(main())
    assert clock.t == 0.0  # 3 x 200 real tokens fit in the bucket
    asyncio.run(limiter.acquire(1000))
    assert clock.t == pytest.approx(6.0)  # 400 left, 600 more at 100/s


def test_retry_after_is_capped_at_max_retry_after() -> None:
    policy = RetryPolicy(base=0.5, cap=8.0, max_retry_after=60.0, rng=random.Random(1))
    assert policy.delay(0, retry_after=86400.0) == 60.0
    assert policy.delay(0, retry_after=12.0) == 12.0


def test_waits_count_against_the_calls_retry_budget(fake: FakeLLM) -> None:
    fake.failures = ["429"] * 10
    fake.retry_after = "86400"
    clock = FakeClock()
    counted: list[int] = []
    lane = lane_for(fake, clock, retry=RetryPolicy(max_retries=10, max_retry_after=60.0),
                    retry_budget=150.0, on_retry=lambda: counted.append(1))  # fmt: skip
    result = asyncio.run(call(lane))
    assert isinstance(result, ProviderError) and result.kind == "retry_budget"
    assert clock.sleeps == [60.0, 60.0]  # a third 60 s wait would pass the 150 s budget
    assert lane.retries == len(counted) == 2 and len(fake.requests) == 3
    assert "Retry-After of 86400 s capped at 60 s" in str(result)
    assert "retry budget of 150 s (120 s waited already)" in str(result)


def test_a_retry_past_the_runs_deadline_is_not_made(fake: FakeLLM) -> None:
    fake.failures = ["500"] * 3
    clock = FakeClock()
    lane = lane_for(fake, clock, retry=RetryPolicy(max_retries=4), deadline=0.1)
    result = asyncio.run(call(lane))
    assert isinstance(result, ProviderError) and result.kind == "retry_budget"
    assert "max_wall_seconds" in str(result) and lane.retries == 0
    assert len(fake.requests) == 1
