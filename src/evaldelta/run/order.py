"""The order a run that stops once decided sends its cases in (``run --until-decided``).

One seeded random permutation of the case file (``random.Random(seed)``) orders the cases;
each slice's queue is that permutation restricted to the slice, so it is a uniformly random
order of the slice's cases. A look takes the next cases of every still-open slice, in
proportion to the slices' sizes (:func:`allocate`), and sends them in the permutation's
order; a case's ``sequence`` is its position in the run's order over every look (1, 2, ...).

Everything here is a pure function of the case file's slices, the seed, the batch size and
how many cases of each slice every earlier look sent (recorded in the store's looks table),
so a resumed run rebuilds the same looks from the same seed.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Order", "allocate", "make_order", "slice_name"]


def slice_name(case: Mapping[str, Any], by: str, columns: Sequence[str]) -> str:
    """A case's slice as a comparison of the run store names it (``sources/_canonical.py``).

    The text of the case's ``by`` field as the store's view extracts it from the case's
    JSON: ``(missing)`` when the field is null, ``all`` when the case file has no such column.
    """
    if by not in columns:
        return "all"
    value = case.get(by)
    if value is None:
        return "(missing)"
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    return str(value)


@dataclass(frozen=True)
class Order:
    """Each slice's case indices in the seeded order, and every case's rank in it."""

    slices: tuple[str, ...]  # in the order they first appear in the case file
    queues: Mapping[str, tuple[int, ...]]
    rank: Mapping[int, int]  # case index -> its place in the seeded permutation

    @property
    def sizes(self) -> dict[str, int]:
        """Cases per slice."""
        return {s: len(q) for s, q in self.queues.items()}

    def take(self, before: Mapping[str, int], sent: Mapping[str, int]) -> list[int]:
        """The case indices of a look that sends ``sent`` after ``before`` were sent, in order."""
        out: list[int] = []
        for name, count in sent.items():
            start = before.get(name, 0)
            out.extend(self.queues[name][start : start + count])
        return sorted(out, key=lambda i: self.rank[i])


def make_order(slices: Sequence[str], seed: int) -> Order:
    """The seeded order of cases whose slices are ``slices`` (one per case, in file order)."""
    permutation = list(range(len(slices)))
    random.Random(seed).shuffle(permutation)
    queues: dict[str, list[int]] = {name: [] for name in dict.fromkeys(slices)}
    for index in permutation:
        queues[slices[index]].append(index)
    return Order(
        slices=tuple(queues),
        queues={name: tuple(q) for name, q in queues.items()},
        rank={index: place for place, index in enumerate(permutation)},
    )


def allocate(
    order: Order,
    sent: Mapping[str, int],
    open_slices: Iterable[str],
    batch: int,
    cap: int | None = None,
) -> dict[str, int]:
    """Cases per slice of the next look: ``batch`` per open slice, shared by slice size.

    The look sends ``batch`` times the number of open slices that have cases left (at most
    ``cap``, and at most what is left), shared among them in proportion to their sizes by
    largest remainder; every such slice gets at least one while the total allows, and a
    slice's share beyond what it has left goes to the others. Ties go to the slice that
    comes first in the case file. Empty when nothing is left to send (or ``cap`` is 0).
    """
    wanted = set(open_slices)
    room = {
        s: len(order.queues[s]) - sent.get(s, 0)
        for s in order.slices
        if s in wanted and len(order.queues[s]) > sent.get(s, 0)
    }
    total = min(batch * len(room), sum(room.values()))
    if cap is not None:
        total = min(total, cap)
    if total <= 0:
        return {}
    size = order.sizes
    by_size = sorted(room, key=lambda s: (-size[s], order.slices.index(s)))
    share = {s: 0 for s in room}
    for s in by_size[:total]:  # at least one each, the largest slices first when short
        share[s] = 1
    left = total - sum(share.values())
    while left > 0:  # shares of what is left, by largest remainder; a capped share overflows
        active = [s for s in room if share[s] < room[s]]
        weight = sum(size[s] for s in active)
        exact = {s: left * size[s] / weight for s in active}
        given = {s: int(exact[s]) for s in active}
        ranked = sorted(active, key=lambda s: (-(exact[s] % 1.0), order.slices.index(s)))
        for s in ranked[: left - sum(given.values())]:
            given[s] += 1
        for s in active:
            share[s] += min(given[s], room[s] - share[s])
        left = total - sum(share.values())
    return {s: n for s, n in share.items() if n > 0}
