"""Where the queries run: the embedded DuckDB (default), Spark, or any Ibis backend.

Rows are read and put in canonical form on DuckDB, as always (:func:`connect`). For another
engine the canonical relation is then moved there once and every later query (validation,
the per-case pivot, the reductions, the listings) runs on it::

    --backend duckdb        the embedded default; nothing moves
    --backend spark         PySpark local mode (EVALDELTA_SPARK_MASTER, default local[*]),
                            or a cluster through Spark Connect when SPARK_REMOTE is set
    --backend URL           any Ibis connection URL (postgres://..., trino://...)
    --table NAME            with spark or a URL: the rows already live there, in the long
                            row format (case_id, arm, score, slice, ...); nothing is read

A library caller may pass an Ibis backend object instead of a name. To move rows, a backend
that reads Parquet (local Spark, DuckDB, DataFusion, ...) reads one file written to a
temporary folder; Spark Connect and the others get the rows as an Arrow table.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import warnings
import weakref
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evaldelta.errors import UsageError

if TYPE_CHECKING:
    from evaldelta.sources._canonical import TableSet

__all__ = [
    "BACKENDS",
    "is_default",
    "move_rows",
    "move_table",
    "open_backend",
    "spark_connect",
]

BACKENDS = ("duckdb", "spark")


def is_default(backend: Any) -> bool:
    """True for the embedded DuckDB (``None`` or ``"duckdb"``): nothing moves."""
    return backend is None or (isinstance(backend, str) and backend.strip().lower() == "duckdb")


def open_backend(backend: Any) -> Any:
    """An Ibis connection for ``backend``: ``"spark"``, an Ibis URL, or a connection as given."""
    if not isinstance(backend, str):
        if not hasattr(backend, "table"):
            raise UsageError(f"backend {backend!r} is not an Ibis connection")
        return backend
    name = backend.strip()
    if name.lower() == "spark":
        return spark_connect()
    if "://" not in name:
        raise UsageError(
            f"unknown backend {backend!r}; give duckdb, spark or an Ibis connection URL "
            "(postgres://..., trino://..., bigquery://...)"
        )
    import ibis

    try:
        return ibis.connect(name)
    except ImportError as exc:
        raise UsageError(f"backend {name!r} needs a driver that is not installed: {exc}") from exc
    except Exception as exc:
        raise UsageError(f"cannot connect to backend {name!r}: {exc}") from exc


def spark_connect() -> Any:
    """Ibis on the active SparkSession, else a new one (Spark Connect when SPARK_REMOTE is set)."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise UsageError(
            "--backend spark needs PySpark and Java: pip install 'evaldelta[spark]'"
        ) from None
    import ibis

    # PySpark 4.0's toPandas (under Ibis's to_pyarrow) uses options and arguments pandas 3
    # deprecates (copy=, future.infer_string): a warning per query, and not ours to fix
    warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"pyspark(\.|$)")
    warnings.filterwarnings("ignore", "The 'future.infer_string' option", DeprecationWarning)
    session = SparkSession.getActiveSession()
    if session is None:
        builder: Any = SparkSession.builder.appName("evaldelta")
        if os.environ.get("SPARK_REMOTE"):
            builder = builder.remote(os.environ["SPARK_REMOTE"])
        else:
            master = os.environ.get("EVALDELTA_SPARK_MASTER", "local[*]")
            builder = (
                builder.master(master)
                .config("spark.ui.enabled", "false")
                .config("spark.ui.showConsoleProgress", "false")
            )
        try:
            session = builder.getOrCreate()
        except Exception as exc:  # no Java, a cluster that does not answer
            raise UsageError(f"cannot start a Spark session: {exc}".splitlines()[0]) from exc
    return ibis.pyspark.connect(session)


def _is_remote_spark(con: Any) -> bool:
    session = getattr(con, "_session", None)
    return session is not None and type(session).__module__.startswith("pyspark.sql.connect")


def move_rows(tables: TableSet, con: Any) -> TableSet:
    """The same :class:`TableSet` with its canonical relation materialised once on ``con``.

    The relation is written to one Parquet file (removed when the moved table is no longer
    referenced) and read there, so the engine's queries never join across connections.
    """
    moved = move_table(tables.con, tables.rows, con)
    return replace(tables, con=con, rows=moved, plain_rows=None)


def move_table(source: Any, table: Any, con: Any) -> Any:
    """``table`` (an expression on the DuckDB connection ``source``) as a table on ``con``.

    Written once to a Parquet file in a temporary folder and read there (a remote Spark gets
    Arrow instead: the cluster cannot read our folder); the folder is removed when the last
    expression over the moved table is gone.
    """
    folder = Path(tempfile.mkdtemp(prefix="evaldelta-rows-"))
    path = folder / "rows.parquet"
    source.to_parquet(table, str(path))
    if _is_remote_spark(con):  # the cluster cannot read our temp folder: send Arrow
        import pyarrow.parquet as pq

        name = f"evaldelta_rows_{folder.name.rsplit('-', 1)[-1]}"
        con._session.createDataFrame(pq.read_table(path)).createOrReplaceTempView(name)
        rows = con.table(name)
    elif hasattr(con, "read_parquet"):
        rows = con.read_parquet(str(path))
    else:
        import pyarrow.parquet as pq

        name = f"evaldelta_rows_{folder.name.rsplit('-', 1)[-1]}"
        temp = bool(getattr(con, "supports_temporary_tables", False)) or None
        rows = con.create_table(name, pq.read_table(path), temp=temp)
    # every query built on the moved rows holds this node; the file goes when they do
    weakref.finalize(rows.op(), shutil.rmtree, folder, True)
    return rows
