"""The last step of ``evaldelta sample``: cut each slice's rows from the fetched ones, write.

:class:`_Cut` takes, per slice, the fetched rows of smallest rank (the sampled units) with
their weights; :func:`_write` COPYs them to the output with DuckDB's writers, in the log's
order. Both run on the embedded DuckDB over the few fetched rows
(:mod:`evaldelta.engine._sample` fetches them).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from evaldelta.errors import Location, UnreadableFileError

__all__ = ["_RN", "_STRATUM", "_Cut", "_ident", "_lit", "_write"]

_RN = "_evaldelta_rn"
_STRATUM = "_evaldelta_stratum"


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _write(
    con: duckdb.DuckDBPyConnection,
    src: Any,
    out: Path,
    out_kind: str,
    pieces: list[Any],
    cut: _Cut | None,
    written: list[str],
) -> int:
    """COPY the sample to ``out`` with DuckDB's writers, its rows in order; return their count.

    ``pieces``: the fetched rows (Arrow tables, on the embedded DuckDB), from which ``cut``
    takes the sample; with no ``cut``, the one piece is the sample, weights and all.
    """
    names = [f"_evaldelta_piece{i}" for i in range(len(pieces))]
    fmt = {"csv": "FORMAT csv, HEADER true", "json": "FORMAT json", "parquet": "FORMAT parquet"}
    out.parent.mkdir(parents=True, exist_ok=True)
    for name, piece in zip(names, pieces, strict=True):
        con.register(name, piece)
    try:
        if cut is None:
            select = ", ".join(_ident(c) for c in [*written, "sample_weight"])
            body = f"SELECT {select} FROM {names[0]}"
        else:
            body = cut.rows(con, names, written)
        done = con.execute(
            f"COPY ({body} ORDER BY {_RN}) TO {_lit(str(out))} ({fmt[out_kind]})"
        ).fetchone()
        return int(done[0]) if done else 0
    except duckdb.Error as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise UnreadableFileError(f"cannot sample: {first}", Location(src.name)) from exc
    finally:
        for name in names:
            con.unregister(name)
        con.execute(f"DROP TABLE IF EXISTS temp.{_Cut.WANTED}")


@dataclass(frozen=True)
class _Cut:
    """Per slice, the ``sizes[k]`` fetched rows of smallest (rank, row position).

    Each slice's rows come from the piece ``final[k]`` (the fetch in which it was not
    short), and are weighted ``sample_weight = N_k / n_k`` (``population[k] / sizes[k]``,
    one IEEE division, as Python's). Made on the embedded DuckDB over the few fetched rows:
    no Python-side Arrow arrays (building one imports pandas: 0.3 s of a sample's start).
    With ``case`` (the case key column of a log with several arms), the units are cases:
    the ``sizes[k]`` cases of smallest rank, with every one of their rows.
    """

    sizes: Mapping[str, int]
    population: Mapping[str, int]
    final: Mapping[str, int]
    case: str | None = None
    WANTED = "_evaldelta_wanted"

    def rows(self, con: duckdb.DuckDBPyConnection, pieces: list[str], written: list[str]) -> str:
        """The sample's SELECT (without its order).

        Each slice's piece holds at least its ``sizes[k]`` rows (:meth:`TrafficScan._choose`
        refetches or refuses one that does not), so the cut takes exactly that many.
        """
        names = list(self.sizes)
        con.execute(
            f"CREATE TEMP TABLE {self.WANTED} AS SELECT unnest($1::VARCHAR[]) AS k, "
            "unnest($2::BIGINT[]) AS r, unnest($3::BIGINT[]) AS n, unnest($4::BIGINT[]) AS pop",
            [
                names,
                [self.final[k] for k in names],
                [self.sizes[k] for k in names],
                [self.population[k] for k in names],
            ],
        )
        fetched = " UNION ALL ".join(
            f"SELECT *, {i} AS _evaldelta_round FROM {name}" for i, name in enumerate(pieces)
        )
        position = (
            f"row_number() OVER (PARTITION BY f.{_STRATUM} ORDER BY f._rank, f.{_RN})"
            if self.case is None  # a case's rows share its rank: they are one unit
            else f"dense_rank() OVER (PARTITION BY f.{_STRATUM} ORDER BY f._rank, f.{self.case})"
        )
        ranked = (
            f"SELECT f.*, w.n AS _evaldelta_n, w.pop AS _evaldelta_pop, {position} "
            "AS _evaldelta_pos "
            f"FROM ({fetched}) AS f JOIN {self.WANTED} AS w "
            f"ON f.{_STRATUM} = w.k AND f._evaldelta_round = w.r"
        )
        kept = f"FROM ({ranked}) WHERE _evaldelta_pos <= _evaldelta_n"
        select = ", ".join(_ident(c) for c in written)
        weight = "CAST(_evaldelta_pop AS DOUBLE) / _evaldelta_n AS sample_weight"
        return f"SELECT {select}, {weight} {kept}"
