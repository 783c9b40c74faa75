"""The looks of a run that stops once decided (``evaldelta run --until-decided``).

Split from :mod:`evaldelta.store` (whose :class:`~evaldelta.store.Store` mixes these methods
in). A look is recorded twice: when its cases are sent (``sent_json``: how many cases of
each slice, in the run's order), so a run killed in the middle of a look resumes that very
look, and once it is judged (the totals after it, the gate's outcome, the slices decided),
so a resumed run replays the judged looks instead of judging them again.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from evaldelta.store._db import _now

if TYPE_CHECKING:
    from evaldelta.store._db import _Connection

__all__ = ["Looks"]


class Looks:
    """The looks table (a mixin of ``Store``)."""

    con: _Connection
    version: int | None

    def looks(self, run_id: str) -> list[dict[str, Any]]:
        """A run's looks in order: look, sent, cases, calls, usd, outcome, decided."""
        if self.version is not None and self.version < 4:
            return []
        cur = self.con.execute(
            "SELECT look, sent_json, cases, calls, usd, outcome, decided_json FROM looks "
            "WHERE run_id = ? ORDER BY look",
            [run_id],
        )
        out = []
        for look, sent, cases, calls, usd, outcome, decided in cur.fetchall():
            out.append({
                "look": int(look), "sent": json.loads(sent or "{}"), "cases": cases,
                "calls": calls, "usd": usd, "outcome": outcome,
                "decided": json.loads(decided) if decided is not None else None,
            })  # fmt: skip
        return out

    def begin_look(self, run_id: str, look: int, sent: Mapping[str, int]) -> None:
        """Record that ``look`` sends ``sent`` cases per slice (before any of its calls)."""
        self.con.execute(
            "INSERT OR REPLACE INTO looks (run_id, look, sent_json, started_at) "
            "VALUES (?, ?, ?, ?)",
            [run_id, look, json.dumps(dict(sent)), _now()],
        )

    def judge_look(
        self,
        run_id: str,
        look: int,
        *,
        cases: int,
        calls: int,
        usd: float | None,
        outcome: str,
        decided: Sequence[str],
    ) -> None:
        """Record a look's totals, the gate's outcome then, and the slices it decided."""
        self.con.execute(
            "UPDATE looks SET cases = ?, calls = ?, usd = ?, outcome = ?, decided_json = ?, "
            "judged_at = ? WHERE run_id = ? AND look = ?",
            [cases, calls, usd, outcome, json.dumps(list(decided)), _now(), run_id, look],
        )
