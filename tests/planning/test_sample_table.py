"""``sample --backend URL --table NAME``: a traffic log that already lives on a backend.

The backend here is a DuckDB database file reached through its Ibis URL (``duckdb:///...``),
so the table path runs exactly as it would on a warehouse: no file is read, the log is
queried where it is. (Spark's catalog is covered in tests/engine/test_spark.py.)
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import duckdb
import pytest

from evaldelta.errors import BadValueError, UsageError
from evaldelta.planning.sampling import parse_band, sample
from evaldelta.report.plan import render_sample_json

OPTIONS: dict[str, Any] = {
    "by": "task",
    "floor": 40,
    "total": 300,
    "seed": 7,
    "id_column": "request_id",
    "since": "2026-10-20",
    "bands": [parse_band("input_tokens=0,500,2000")],
}


def _database(tmp_path: Path, sql: str, name: str = "traffic") -> str:
    """A DuckDB database file holding one table made by ``sql``; its Ibis URL."""
    path = tmp_path / "warehouse.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute(f"CREATE OR REPLACE TABLE {name} AS {sql}")
    return f"duckdb:///{path}"


LOG = (
    "SELECT 'r' || i AS request_id, CASE WHEN i % 10 < 6 THEN 'faq' WHEN i % 10 < 9 "
    "THEN 'draft' ELSE 'extract' END AS task, (i * 7919) % 12000 AS input_tokens, "
    "TIMESTAMP '2026-10-01' + to_hours(i % 1440) AS timestamp FROM range(20000) t(i)"
)


def _rows(path: Path) -> list[list[str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.reader(fh))


def test_a_table_in_place_draws_the_files_sample_in_the_ids_order(tmp_path: Path) -> None:
    url = _database(tmp_path, LOG)
    file = tmp_path / "traffic.parquet"
    duckdb.sql(f"COPY ({LOG}) TO '{file}' (FORMAT parquet)")
    from_file = sample(file, tmp_path / "file.csv", **OPTIONS)
    in_place = sample(None, tmp_path / "table.csv", backend=url, table="traffic", **OPTIONS)
    reports = [json.loads(render_sample_json(r)) for r in (from_file, in_place)]
    for report in reports:
        report.pop("output"), report.pop("mix_file")
    assert reports[1].pop("input") == "traffic" and reports[0].pop("input") == str(file)
    assert reports[0] == reports[1] and in_place.sampled == 300
    header, *body = _rows(tmp_path / "file.csv")
    table_header, *table_body = _rows(tmp_path / "table.csv")
    assert table_header == header == [
        "request_id", "task", "input_tokens", "timestamp", "input_tokens_band", "sample_weight"
    ]  # fmt: skip
    assert sorted(table_body) == sorted(body) and len(body) == 300
    # a table's rows have no order of their own: the sample comes in the order of the key
    assert [r[0] for r in table_body] == sorted(r[0] for r in body)
    assert (tmp_path / "table.mix.csv").read_text() == (tmp_path / "file.mix.csv").read_text()


def test_a_table_needs_an_id_unique_within_each_slice(tmp_path: Path) -> None:
    url = _database(
        tmp_path,
        "SELECT * FROM (VALUES ('a', 'x'), ('a', 'y'), ('b', 'x'), ('c', 'x')) v(request_id, task)",
    )
    out = tmp_path / "o.csv"
    with pytest.raises(UsageError, match=r"--table traffic: give --id COLUMN"):
        sample(None, out, by="task", backend=url, table="traffic")
    # the same id in two slices ranks two rows that never compete: allowed
    result = sample(None, out, by="task", backend=url, table="traffic", id_column="request_id")
    assert result.population == 4 and result.sampled == 4
    for dup in ("('a', 'x'), ('a', 'x'), ('b', 'x')", "(NULL, 'x'), (NULL, 'x'), ('b', 'x')"):
        url = _database(tmp_path, f"SELECT * FROM (VALUES {dup}) v(request_id, task)")
        with pytest.raises(UsageError, match=r"'request_id' is not unique .*: 1\)"):
            sample(None, out, by="task", backend=url, table="traffic", id_column="request_id")


def test_a_bad_value_in_a_table_is_named_by_the_rows_id(tmp_path: Path) -> None:
    url = _database(
        tmp_path,
        "SELECT * FROM (VALUES ('a', 'x', '2026-11-03', '5'), ('b', 'x', 'someday', '6'), "
        "(NULL, 'y', '2026-11-04', 'lots')) v(request_id, task, ts, tok)",
    )
    out = tmp_path / "o.csv"
    with pytest.raises(BadValueError) as exc:
        sample(None, out, by="task", since="2026-11-01", time_column="ts", backend=url,
               table="traffic", id_column="request_id")  # fmt: skip
    assert str(exc.value) == (
        "traffic (request_id='b'), field 'ts', value 'someday': "
        "is not a date or timestamp (needed by --since)"
    )
    with pytest.raises(BadValueError) as exc:
        sample(None, out, bands=[parse_band("tok=0,10")], backend=url, table="traffic",
               id_column="request_id")  # fmt: skip
    assert str(exc.value) == (
        "traffic (request_id=missing), field 'tok', value 'lots': "
        "is not a number (needed by --band)"
    )


def test_where_the_log_is_must_be_said_once(tmp_path: Path) -> None:
    url = _database(tmp_path, LOG)
    out = tmp_path / "o.csv"
    with pytest.raises(UsageError, match="--table NAME reads a table of --backend"):
        sample(None, out, by="task", table="traffic", id_column="request_id")
    with pytest.raises(UsageError, match="either a traffic file or --table"):
        sample(tmp_path / "t.csv", out, by="task", backend=url, table="traffic")
    with pytest.raises(UsageError, match="give a traffic file"):
        sample(None, out, by="task")


@pytest.mark.parametrize("where", ["file", "table"])
def test_no_row_allocated_still_writes_the_columns_and_their_types(
    tmp_path: Path, where: str
) -> None:
    """--floor 0 without --total allocates nothing: the file has the columns, no row."""
    out = tmp_path / "o.parquet"
    if where == "file":
        file = tmp_path / "traffic.parquet"
        duckdb.sql(f"COPY ({LOG}) TO '{file}' (FORMAT parquet)")
        result = sample(file, out, by="task", floor=0)
    else:
        url = _database(tmp_path, LOG)
        result = sample(None, out, by="task", floor=0, backend=url, table="traffic",
                        id_column="request_id")  # fmt: skip
    assert result.sampled == 0 and result.population == 20000
    described = duckdb.sql(f"DESCRIBE SELECT * FROM '{out}'").fetchall()
    assert [(r[0], r[1]) for r in described] == [
        ("request_id", "VARCHAR"), ("task", "VARCHAR"), ("input_tokens", "BIGINT"),
        ("timestamp", "TIMESTAMP"), ("sample_weight", "DOUBLE"),
    ]  # fmt: skip
    assert duckdb.sql(f"SELECT count(*) FROM '{out}'").fetchall() == [(0,)]


def test_sample_cli_reads_a_table(run_cli: Any, tmp_path: Path) -> None:
    url = _database(tmp_path, LOG)
    out = tmp_path / "s.csv"
    res = run_cli("sample", "--backend", url, "--table", "traffic", "--id", "request_id",
                  "--by", "task", "--floor", "30", "-o", out)  # fmt: skip
    assert res.code == 0, res.err
    assert "Sampled 90 of 20,000 rows from traffic by task" in res.out
    missing = run_cli("sample", "--backend", url, "--table", "traffic", "--by", "task", "-o", out)
    assert missing.code == 2
    assert missing.err.strip().splitlines() == [
        "evaldelta: error: --table traffic: give --id COLUMN, the row key (a table's rows "
        "have no order)"
    ]
