"""The run store's ``eval_rows`` view: attempts in the long row format, with their metrics.

Split from :mod:`evaldelta.store` (whose :class:`~evaldelta.store.Store` mixes it in); the
view is described there. It is rebuilt whenever a write adds a case column or a metric.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from evaldelta.store._db import RESERVED_COLUMNS, _ident, _json_path

if TYPE_CHECKING:
    from evaldelta.store._db import _Connection

__all__ = ["View"]


class View:
    """Builds the ``eval_rows`` view (a mixin of ``Store``)."""

    con: _Connection
    version: int | None

    def _metrics(self) -> list[str]:
        if self.version == 1:
            return []
        names: list[str] = []
        for (text,) in self.con.execute("SELECT metrics FROM scorings ORDER BY run_id").fetchall():
            for name in json.loads(text or "[]"):
                if name not in RESERVED_COLUMNS and name not in names:
                    names.append(name)
        return names

    def _refresh_view(self) -> None:
        metrics = self._metrics()
        shown = [*metrics, *("reason." + m[6:] for m in metrics if m.startswith("check."))]
        columns: list[str] = []
        for (text,) in self.con.execute("SELECT case_columns FROM runs").fetchall():
            for name in json.loads(text or "[]"):
                if name not in RESERVED_COLUMNS and name not in shown and name not in columns:
                    columns.append(name)
        extra = "".join(
            f", json_extract_string(c.case_json, {_json_path(n)}) AS {_ident(n)}" for n in columns
        )
        join = ""
        if metrics:
            pivot = []
            for m in metrics:
                lit = "'" + m.replace("'", "''") + "'"
                pivot.append(f"max(value) FILTER (WHERE metric = {lit}) AS {_ident(m)}")
                if m.startswith("check."):
                    reason = _ident("reason." + m[6:])
                    pivot.append(f"max(reason) FILTER (WHERE metric = {lit}) AS {reason}")
            extra += "".join(f", s.{_ident(n)}" for n in shown)
            join = (
                " LEFT JOIN (SELECT run_id, arm, case_id, repeat, " + ", ".join(pivot) +
                " FROM scores GROUP BY run_id, arm, case_id, repeat) s ON a.run_id = s.run_id "
                "AND a.arm = s.arm AND a.case_id = s.case_id AND a.repeat = s.repeat"
            )  # fmt: skip
        self.con.execute(
            "CREATE OR REPLACE VIEW eval_rows AS SELECT a.run_id, a.case_id, a.arm, a.repeat, "
            "a.score, a.output, a.cost_usd, a.latency_ms, a.input_tokens, a.output_tokens, "
            "a.model_used, a.model_version, a.escalated, a.error, a.prompt_hash, a.payload_hash, "
            "a.retrieval_hash, a.rendered_prompt, a.sequence"
            f"{extra} FROM attempts a JOIN cases c ON a.run_id = c.run_id AND "
            f"a.case_id = c.case_id{join}"
        )
