"""evaldelta.planning.sampling: floors, whole slices, seeds, weights, mix file, bands, since."""

from __future__ import annotations

import csv
import time
from pathlib import Path

import duckdb
import pytest

from evaldelta.errors import BadValueError, MissingColumnError, UnreadableFileError, UsageError
from evaldelta.planning.sampling import mix_path_for, parse_band, sample

TASKS = "CASE WHEN i % 100 < 60 THEN 'faq' WHEN i % 100 < 61 THEN 'extract' ELSE 'draft' END"


def _log(path: Path, rows: int, fmt: str = "csv") -> Path:
    """A synthetic traffic log made in DuckDB: 60% faq, 1% extract, 39% draft."""
    options = {
        "csv": "FORMAT csv, HEADER true",
        "jsonl": "FORMAT json",
        "parquet": "FORMAT parquet",
    }
    duckdb.sql(
        f"""COPY (SELECT 'r' || i AS request_id, {TASKS} AS task,
                  (i * 7919) % 12000 AS input_tokens,
                  TIMESTAMP '2026-10-01' + to_hours(i % 1440) AS timestamp
           FROM range({rows}) t(i)) TO '{path}' ({options[fmt]})"""
    )
    return path


def _read(path: Path) -> list[dict[str, object]]:
    rel = duckdb.sql(f"SELECT * FROM '{path}'")
    cols = rel.columns
    return [dict(zip(cols, r, strict=True)) for r in rel.fetchall()]


@pytest.fixture
def log(tmp_path: Path) -> Path:
    return _log(tmp_path / "traffic.csv", 20_000)


def test_floor_per_slice_and_taken_whole(log: Path, tmp_path: Path) -> None:
    out = tmp_path / "s.csv"
    res = sample(log, out, by="task", floor=300)
    got = {s.slice: s for s in res.strata}
    assert {k: (s.population, s.sampled) for k, s in got.items()} == {
        "draft": (7800, 300), "extract": (200, 200), "faq": (12000, 300),
    }  # fmt: skip
    assert got["extract"].taken_whole and not got["faq"].taken_whole
    assert any("taken whole" in n and "extract" in n for n in res.notes)
    rows = _read(out)
    assert len(rows) == 800
    per: dict[str, list[float]] = {}
    for r in rows:
        per.setdefault(str(r["task"]), []).append(float(r["sample_weight"]))  # type: ignore[arg-type]
    for k, ws in per.items():
        assert sum(ws) == pytest.approx(got[k].population)  # weights sum to N_k
        assert len(ws) == got[k].sampled


def test_mix_file_has_traffic_shares(log: Path, tmp_path: Path) -> None:
    out = tmp_path / "s.jsonl"
    sample(log, out, by="task")
    mix = mix_path_for(out)
    assert mix == tmp_path / "s.mix.csv"
    with mix.open() as fh:
        shares = {r["slice"]: float(r["weight"]) for r in csv.DictReader(fh)}
    assert shares == pytest.approx({"draft": 0.39, "extract": 0.01, "faq": 0.60})


def test_total_floor_then_proportional(log: Path, tmp_path: Path) -> None:
    res = sample(log, tmp_path / "s.parquet", by="task", floor=300, total=2000)
    got = {s.slice: s.sampled for s in res.strata}
    # extract taken whole (200); 300 each for the others; remaining 1200 by N_k:
    # draft 1200 * 7800 / 19800 = 472.7, faq 1200 * 12000 / 19800 = 727.3 -> 473 / 727
    assert got == {"extract": 200, "draft": 300 + 473, "faq": 300 + 727}
    assert res.sampled == 2000 == len(_read(tmp_path / "s.parquet"))


def test_deterministic_for_a_seed_and_different_across_seeds(log: Path, tmp_path: Path) -> None:
    def ids(name: str, seed: int, **kw: object) -> list[str]:
        sample(log, tmp_path / name, by="task", floor=100, seed=seed, **kw)  # type: ignore[arg-type]
        return [str(r["request_id"]) for r in _read(tmp_path / name)]

    a, b, c = ids("a.csv", 7), ids("b.csv", 7), ids("c.csv", 8)
    assert a == b
    assert set(a) != set(c)
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    # an id column as the row key gives the same sample whatever the file order
    d = ids("d.csv", 7, id_column="request_id")
    shuffled = tmp_path / "shuffled.csv"
    duckdb.sql(f"COPY (SELECT * FROM '{log}' ORDER BY hash(request_id)) TO '{shuffled}'")
    sample(shuffled, tmp_path / "e.csv", by="task", floor=100, seed=7, id_column="request_id")
    e = [str(r["request_id"]) for r in _read(tmp_path / "e.csv")]
    assert sorted(d) == sorted(e)


def test_bands(log: Path, tmp_path: Path) -> None:
    band = parse_band("input_tokens=0,500,2000,8000")
    assert band.labels() == ["[0,500)", "[500,2000)", "[2000,8000)", "[8000,inf)"]
    out = tmp_path / "s.csv"
    res = sample(log, out, bands=[band], floor=50)
    assert res.by == "input_tokens_band"
    assert sorted(s.slice for s in res.strata) == sorted(band.labels())
    for r in _read(out):
        tokens, label = int(str(r["input_tokens"])), str(r["input_tokens_band"])
        lo, hi = label[1:-1].split(",")
        assert float(lo) <= tokens < float(hi)


def test_band_below_first_edge_and_missing(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("id,task,tok\n1,a,-5\n2,a,\n3,a,10\n4,a,600\n")
    res = sample(path, tmp_path / "o.csv", bands=[parse_band("tok=0,500")], floor=5)
    assert {s.slice: s.population for s in res.strata} == {
        "(below 0)": 1, "(missing)": 1, "[0,500)": 1, "[500,inf)": 1,
    }  # fmt: skip


def test_since_filter(log: Path, tmp_path: Path) -> None:
    res = sample(log, tmp_path / "s.csv", by="task", floor=10_000, since="2026-11-20")
    rows = _read(tmp_path / "s.csv")
    assert rows and all(str(r["timestamp"]) >= "2026-11-20" for r in rows)
    kept = duckdb.sql(
        f"SELECT count(*) FROM '{log}' WHERE timestamp >= TIMESTAMP '2026-11-20'"
    ).fetchall()[0][0]
    assert res.population == kept == len(rows)
    assert res.excluded_before_since == 20_000 - kept and res.excluded_no_time == 0


@pytest.mark.parametrize(
    "sql_type", ["TIMESTAMP", "TIMESTAMP_NS", "TIMESTAMP_S", "TIMESTAMPTZ", "DATE", "VARCHAR"]
)
def test_since_compares_instants_whatever_the_columns_type(tmp_path: Path, sql_type: str) -> None:
    """A time without a zone is UTC; --since with an offset is the same instant in any type."""
    path = tmp_path / "t.parquet"
    times = ["2026-11-01 22:00:00", "2026-11-02 01:59:59", "2026-11-02 02:00:00", "2026-11-03"]
    values = ", ".join(f"({i}, 'a', '{t}')" for i, t in enumerate(times))
    with duckdb.connect() as con:
        con.execute("SET TimeZone = 'UTC'") if sql_type == "TIMESTAMPTZ" else None
        con.execute(
            f"COPY (SELECT i, task, CAST(CAST(t AS TIMESTAMP) AS {sql_type}) AS timestamp "
            f"FROM (VALUES {values}) v(i, task, t)) TO '{path}' (FORMAT parquet)"
        )
    # 03:00 at +01:00 is 02:00 UTC: the last two rows are on or after it (a date is at 00:00)
    res = sample(path, tmp_path / "o.csv", by="task", floor=10, since="2026-11-02T03:00:00+01:00")
    kept = 1 if sql_type == "DATE" else 2
    assert res.population == kept and res.excluded_before_since == 4 - kept
    assert sorted(int(str(r["i"])) for r in _read(tmp_path / "o.csv")) == list(range(4))[-kept:]


def test_since_leaves_out_rows_without_time(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(
        '{"task": "a", "timestamp": "2026-11-02T10:00:00Z"}\n'
        '{"task": "a", "timestamp": null}\n'
        '{"task": "b", "timestamp": "2026-10-30 10:00:00"}\n'
    )
    res = sample(path, tmp_path / "o.jsonl", by="task", since="2026-11-01")
    assert res.population == 1 and res.excluded_no_time == 1 and res.excluded_before_since == 1


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_other_input_formats(tmp_path: Path, fmt: str) -> None:
    log = _log(tmp_path / f"t.{fmt}", 5_000, fmt)
    res = sample(log, tmp_path / "o.csv", by="task", floor=20, seed=3)
    assert res.sampled == 60 and len(_read(tmp_path / "o.csv")) == 60


def test_two_million_rows_streams(tmp_path: Path) -> None:
    log = _log(tmp_path / "big.parquet", 2_000_000, "parquet")
    start = time.perf_counter()
    res = sample(log, tmp_path / "o.parquet", by="task", floor=300, total=5000, seed=1)
    elapsed = time.perf_counter() - start
    assert res.population == 2_000_000 and res.sampled == 5000
    assert elapsed < 10


def test_errors(log: Path, tmp_path: Path) -> None:
    out = tmp_path / "o.csv"
    with pytest.raises(MissingColumnError, match="'nope'"):
        sample(log, out, by="nope")
    with pytest.raises(UnreadableFileError, match="does not exist"):
        sample(tmp_path / "missing.csv", out, by="task")
    with pytest.raises(UsageError, match="suffix"):
        sample(log, tmp_path / "o.xlsx", by="task")
    with pytest.raises(UsageError, match="below the floors"):
        sample(log, out, by="task", total=500)
    with pytest.raises(UsageError, match="no rows"):
        sample(log, out, by="task", since="2030-01-01")
    with pytest.raises(UsageError, match="--since takes"):
        sample(log, out, by="task", since="yesterday")
    with pytest.raises(UsageError, match="give --by"):
        sample(log, out)
    with pytest.raises(UsageError, match="overwrite the input"):
        sample(log, log, by="task")
    for bad in ("tok", "tok=", "tok=1,a", "tok=5,1", "tok=1,1"):
        with pytest.raises(UsageError, match="--band"):
            parse_band(bad)


def test_bad_values_name_file_line_field_value(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("task,tok,timestamp\na,1,2026-11-01\na,lots,2026-11-02\nb,3,someday\n")
    with pytest.raises(BadValueError) as exc:
        sample(path, tmp_path / "o.csv", bands=[parse_band("tok=0,10")])
    assert str(exc.value) == (
        f"{path}, line 3, field 'tok', value 'lots': is not a number (needed by --band)"
    )
    with pytest.raises(BadValueError) as exc:
        sample(path, tmp_path / "o.csv", by="task", since="2026-11-01")
    assert "line 4, field 'timestamp', value 'someday'" in str(exc.value)


def _reference(path: Path, by: str, sizes: dict[str, int], key: str | None, seed: int) -> set:
    """The sample by its definition, with hashlib: per slice the n_k rows of smallest
    (md5(key text + ":" + seed), row number), the key "v" + the id's text or the row number."""
    import hashlib

    ranked: dict[str, list[tuple[str, int, object]]] = {}
    for rn, row in enumerate(_read(path)):
        text = str(rn) if key is None else ("n" if row[key] is None else "v" + str(row[key]))
        rank = hashlib.md5(f"{text}:{seed}".encode()).hexdigest()
        ranked.setdefault(str(row[by]), []).append((rank, rn, row["request_id"]))
    return {rid for k, rows in ranked.items() for _, _, rid in sorted(rows)[: sizes.get(k, 0)]}


@pytest.mark.parametrize("key", [None, "request_id"])
def test_the_sample_is_the_smallest_md5_ranks_per_slice(
    log: Path, tmp_path: Path, key: str | None
) -> None:
    out = tmp_path / "s.csv"
    result = sample(log, out, by="task", floor=50, total=400, seed=9, id_column=key)
    sizes = {s.slice: s.sampled for s in result.strata}
    assert {r["request_id"] for r in _read(out)} == _reference(log, "task", sizes, key, 9)


def test_a_slice_fetched_short_is_fetched_again_with_the_same_sample(
    log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import evaldelta.engine._sample as engine_sample

    first = tmp_path / "a.csv"
    sample(log, first, by="task", floor=60, total=300, seed=2, id_column="request_id")
    shares: list[float] = []
    real = engine_sample._rank_bound

    def bound(share: float) -> str:
        shares.append(share)
        return real(share)

    # a share far too small: every slice comes back short and is fetched again (x4 each time)
    monkeypatch.setattr(engine_sample, "_first_share", lambda n, population: 1e-4)
    monkeypatch.setattr(engine_sample, "_rank_bound", bound)
    second = tmp_path / "b.csv"
    sample(log, second, by="task", floor=60, total=300, seed=2, id_column="request_id")
    assert len(shares) > 3 and max(shares) > 1e-4
    assert first.read_bytes() == second.read_bytes()


def test_a_slice_short_with_every_row_fetched_is_refused_not_written(
    log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # an internal guard: a slice's rows all fetched and still fewer than allocated would
    # be a bug; no sample with rows silently missing may be written
    import evaldelta.engine._sample as engine_sample

    monkeypatch.setattr(engine_sample, "_rank_bound", lambda share: "")  # no rank is below
    out = tmp_path / "s.csv"
    with pytest.raises(AssertionError, match="came back short"):
        sample(log, out, by="task", floor=60, total=300, seed=2, id_column="request_id")
    assert not out.exists()


def test_many_slices_take_the_join_path(tmp_path: Path) -> None:
    path = tmp_path / "many.csv"
    duckdb.sql(
        f"COPY (SELECT 'r' || i AS request_id, 'k' || (i % 90) AS task FROM range(9000) t(i)) "
        f"TO '{path}' (FORMAT csv, HEADER true)"
    )
    out = tmp_path / "s.csv"
    result = sample(path, out, by="task", floor=7, seed=4, id_column="request_id")
    assert len(result.strata) == 90 and result.sampled == 630
    sizes = {s.slice: s.sampled for s in result.strata}
    assert {r["request_id"] for r in _read(out)} == _reference(path, "task", sizes, "request_id", 4)
