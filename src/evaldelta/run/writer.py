"""Group commit: every write is committed before it counts, many writes per commit.

A DuckDB commit costs a few milliseconds whatever it holds. Committing each attempt on its
own (and each response to the cache) capped the runner at about 150 attempts a second,
however many calls were in flight. Here a caller hands its write to :class:`GroupWriter`
and awaits it; the writer collects whatever writes arrive while the previous commit ran,
commits them in one transaction, and only then wakes their callers. So the rule that a
finished call is committed before anyone counts it still holds, and a run killed at any
moment loses only writes nobody had been told were done. Every row passes through the
writer's ``redact`` (the run's API keys masked) on its way in.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping
from typing import Any

from evaldelta.store import Store

__all__ = ["GroupWriter"]


AttemptRow = tuple[str, str, str, int, Mapping[str, Any]]
ResponseRow = tuple[str, Mapping[str, Any]]
Redact = Callable[[Mapping[str, Any]], Mapping[str, Any]]


def _unchanged(values: Mapping[str, Any]) -> Mapping[str, Any]:
    return values


class GroupWriter:
    """Serializes writes to one store and commits them in batches (one writer task).

    Each batch is one transaction with one multi-row statement per table: DuckDB's cost is
    per statement and per commit, not per row.
    """

    def __init__(self, store: Store, redact: Redact = _unchanged) -> None:
        self.store = store
        self.redact = redact
        self._attempts: list[tuple[AttemptRow, asyncio.Future[None]]] = []
        self._responses: list[tuple[ResponseRow, asyncio.Future[None]]] = []
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.commits = 0
        self.writes = 0

    async def put_attempt(
        self, run_id: str, arm: str, case_id: str, repeat: int, values: Mapping[str, Any]
    ) -> None:
        """Commit one attempt in the next group; return once it is committed."""
        await self._submit(self._attempts, (run_id, arm, case_id, repeat, self.redact(values)))

    async def put_response(self, key: str, values: Mapping[str, Any]) -> None:
        """Commit one cached response in the next group; return once it is committed."""
        await self._submit(self._responses, (key, self.redact(values)))

    async def _submit(self, queue: list[tuple[Any, asyncio.Future[None]]], row: Any) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._loop())
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        queue.append((row, future))
        self._wake.set()
        await future

    async def _loop(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            await asyncio.sleep(0)  # let every task that is ready add its write first
            attempts, self._attempts = self._attempts, []
            responses, self._responses = self._responses, []
            waiting = [f for _, f in attempts] + [f for _, f in responses]
            if not waiting:
                continue
            try:
                with self.store.transaction():
                    self.store.put_responses([row for row, _ in responses])
                    self.store.put_attempts([row for row, _ in attempts])
            except Exception as exc:  # every caller in the batch sees the failure
                for future in waiting:
                    if not future.done():
                        future.set_exception(exc)
                continue
            self.commits += 1
            self.writes += len(waiting)
            for future in waiting:
                if not future.done():
                    future.set_result(None)

    async def aclose(self) -> None:
        """Stop the writer task (pending writes have all been awaited by their callers)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
