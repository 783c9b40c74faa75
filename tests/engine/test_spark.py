"""compare, gate and plan on Spark (PySpark local mode) give DuckDB's numbers, to 1e-12.

Every numeric field of the JSON outputs must agree within ``1e-12 * max(1, |x|)`` (sums
taken in another order differ in the last bits; nothing else may), and every other field
exactly. Data: the seeds' bundled files, one real dataset (METR time horizons: repeats,
one-arm-only cases) and a 1M-row synthetic Parquet file (clusters, costs, critical cases),
generated here with DuckDB SQL, deterministic for its seed.

One SparkSession serves the whole module (local[2], 4 shuffle partitions, no UI); the
tests are one xdist group so a parallel run starts one JVM. Spark answers each query in
about half a second however small, so the seeds and the 1M rows are compared once each:
the library's gate returns the comparison with its verdict, and the plan is drawn from the
same comparison (what plan_from_pilot does after its compare); the real dataset runs the
three commands themselves.
"""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from evaldelta.comparison import compare
from evaldelta.demo import data_path
from evaldelta.demo.scenarios import SCENARIOS
from evaldelta.gating import compare_with_policy
from evaldelta.planning import plan_from_comparison
from evaldelta.report import render_json
from evaldelta.report.plan import render_plan_json
from evaldelta.report.verdict import render_verdict_json
from tests.rows import write_rows

from ..conftest import REAL, ROOT

pyspark = pytest.importorskip("pyspark", reason="pyspark is not installed (pip install .[spark])")

pytestmark = [
    pytest.mark.spark,
    # PySpark 4.0's toPandas uses what pandas 3 deprecates; its py4j sockets close late
    pytest.mark.filterwarnings("ignore::DeprecationWarning:pyspark"),
    pytest.mark.filterwarnings("ignore:The 'future.infer_string' option:DeprecationWarning"),
    pytest.mark.filterwarnings("ignore:Exception ignored in. <socket.socket"),
    pytest.mark.filterwarnings("ignore:unclosed <socket.socket:ResourceWarning"),
    pytest.mark.xdist_group("spark"),
    pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java (none on PATH)"),
]

TOL = 1e-12
BY_KEY = {s.key: s for s in SCENARIOS}
METR = REAL / "metr_time_horizon" / "metr_time_horizon.csv"


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("evaldelta-tests")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def assert_same(duck: str, spark_out: str) -> float:
    """Assert two JSON documents agree (numbers to TOL, relative above 1); the largest gap."""
    worst = [0.0]

    def walk(a: Any, b: Any, where: str) -> None:
        if isinstance(a, dict):
            assert isinstance(b, dict) and a.keys() == b.keys(), where
            for key in a:
                walk(a[key], b[key], f"{where}.{key}")
        elif isinstance(a, list):
            assert isinstance(b, list) and len(a) == len(b), where
            for i, (x, y) in enumerate(zip(a, b, strict=True)):
                walk(x, y, f"{where}[{i}]")
        elif isinstance(a, float) or isinstance(b, float):
            assert isinstance(b, int | float) and not isinstance(b, bool), where
            if math.isnan(a) or math.isnan(b):
                assert math.isnan(a) and math.isnan(b), where
                return
            gap = abs(a - b) / max(1.0, abs(a), abs(b))
            worst[0] = max(worst[0], gap)
            assert gap <= TOL, f"{where}: duckdb {a!r}, spark {b!r}"
        else:
            assert a == b, f"{where}: duckdb {a!r}, spark {b!r}"

    walk(json.loads(duck), json.loads(spark_out), "$")
    return worst[0]


def both(fn: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
    return fn(*args, **kwargs), fn(*args, backend="spark", **kwargs)


@pytest.mark.parametrize("key", ["000", "001", "002"])
def test_seed_compare(spark: Any, key: str) -> None:
    scenario = BY_KEY[key]
    with ExitStack() as stack:
        options = dict(scenario.options)
        if scenario.traffic_file:
            options["traffic"] = stack.enter_context(data_path(scenario.traffic_file))
        data = stack.enter_context(data_path(scenario.data))
        duck, on_spark = both(compare, [data], **options)
    assert_same(render_json(duck), render_json(on_spark))
    if key == "002":  # binary, one repeat: the plan's McNemar path, from the same pilot
        plans = [plan_from_comparison(c, 0.05, metric="score") for c in (duck, on_spark)]
        assert_same(*(render_plan_json(p) for p in plans))


def test_seed_004_gate_three_arms(spark: Any) -> None:
    """Three arms, graded scores, costs, traffic mix, a critical case: examples/gate.toml."""
    scenario = BY_KEY["004"]
    with ExitStack() as stack:
        options = dict(scenario.options)
        options["traffic"] = stack.enter_context(data_path(scenario.traffic_file or ""))
        data = stack.enter_context(data_path(scenario.data))
        (dc, dv), (sc, sv) = both(
            compare_with_policy, [data], ROOT / "examples" / "gate.toml", **options
        )
    assert sc.three_arm is not None and sc.slicing().pairs[0].critical is not None
    assert_same(render_json(dc), render_json(sc))
    assert_same(render_verdict_json(dv, dc), render_verdict_json(sv, sc))


def test_table_in_the_spark_catalog(spark: Any, tmp_path: Path) -> None:
    """--table NAME: rows that already live in Spark, read in place (no file, no DuckDB)."""
    import duckdb

    with data_path("seed002.csv") as csv:
        rows = tmp_path / "seed002.parquet"
        duckdb.sql(f"COPY (FROM read_csv('{csv}')) TO '{rows}' (FORMAT parquet)")
        duck = compare([csv], baseline="incumbent")
    spark.read.parquet(str(rows)).createOrReplaceTempView("seed002_attempts")
    on_spark = compare([], baseline="incumbent", backend="spark", table="seed002_attempts")
    assert on_spark.inputs == ("seed002_attempts",)
    same = {"inputs": duck.inputs}
    assert_same(render_json(duck), render_json(dataclasses.replace(on_spark, **same)))


@pytest.mark.skipif(not METR.exists(), reason="../shared/data/real is not beside the repo")
@pytest.mark.parametrize("command", ["compare", "gate", "plan"])
def test_real_data_cli(spark: Any, run_cli: Any, tmp_path: Path, command: str) -> None:
    """The commands themselves, --backend spark against the default, on METR's repeated runs."""
    pick = ["--baseline", "o1-preview", "--candidate", "o1"]
    if command == "compare":
        args = ["compare", METR, *pick, "--format", "json"]
    elif command == "gate":
        policy = tmp_path / "gate.toml"
        policy.write_text("metric = 'score'\n[defaults]\nmax_regression = 0.1\nmin_cases = 5\n")
        args = ["gate", METR, *pick, "--policy", policy, "--format", "json"]
    else:
        args = ["plan", "--from", METR, *pick, "--effect", "0.1", "--format", "json"]
    duck = run_cli(*args)
    on_spark = run_cli(*args, "--backend", "spark")
    assert duck.code == on_spark.code and duck.code in (0, 1, 3), duck.err + on_spark.err
    assert_same(duck.out, on_spark.out)


GATE_1M = """metric = "score"
[defaults]
max_regression = 0.02
min_cases = 100
[critical]
cases = ["c17", "c4242"]
require = "all"
"""


@pytest.fixture(scope="module")
def rows_1m(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """100,000 paired cases x 2 arms x 5 repeats: 20 slices, 2,000 clusters, costs, unlabeled."""
    import duckdb

    path = tmp_path_factory.mktemp("spark") / "rows_1m.parquet"

    def u(salt: str) -> str:  # a deterministic U[0, 1) draw per attempt
        return f"((hash(i, arm, r, '{salt}') % 1000000)::DOUBLE / 1e6)"

    duckdb.sql(
        f"""
        COPY (
            SELECT 'c' || i AS case_id, arm, r AS repeat,
                's' || lpad((hash(i, 'slice') % 20)::VARCHAR, 2, '0') AS slice,
                'g' || (hash(i, 'cluster') % 2000)::VARCHAR AS cluster,
                CASE WHEN hash(i, arm, r, 'unlabeled') % 100 = 0 THEN NULL
                     WHEN 0.7 * ((hash(i, 'latent') % 1000000)::DOUBLE / 1e6)
                          + 0.3 * {u("noise")} < p + (hash(i, 'slice') % 20) / 100.0
                     THEN 1 ELSE 0 END AS score,
                round(0.0001 + {u("cost")} / 500, 6) AS cost_usd
            FROM range(100000) t(i), range(5) s(r),
                (VALUES ('base', 0.55), ('cand', 0.56)) a(arm, p)
            ORDER BY i, arm, r
        ) TO '{path}' (FORMAT parquet)
        """
    )
    return path


def test_1m_rows_gate_and_plan(spark: Any, rows_1m: Path, tmp_path: Path) -> None:
    """One million rows: the comparison, its verdict and the plan drawn from it agree."""
    policy = tmp_path / "gate.toml"
    policy.write_text(GATE_1M)
    (dc, dv), (sc, sv) = both(compare_with_policy, [rows_1m], policy, baseline="base")
    pair = sc.slicing().pairs[0]
    assert pair.overall.paired is not None and pair.overall.paired.n > 99_000
    assert sc.metrics[0].repeated and pair.critical is not None
    assert_same(render_json(dc), render_json(sc))
    assert_same(render_verdict_json(dv, dc), render_verdict_json(sv, sc))
    plans = [plan_from_comparison(c, 0.01, metric="score") for c in (dc, sc)]
    assert_same(*(render_plan_json(p) for p in plans))


def test_sample_on_spark_draws_duckdbs_sample(spark: Any, tmp_path: Path) -> None:
    """The rank is an MD5 both engines compute alike: the same rows, weights and report."""
    from evaldelta.planning.sampling import sample
    from evaldelta.report.plan import render_sample_json

    traffic = tmp_path / "traffic.parquet"
    import duckdb

    duckdb.sql(
        "COPY (SELECT 'r' || i AS request_id, CASE WHEN i % 10 < 6 THEN 'faq' WHEN i % 10 < 9 "
        "THEN 'draft' ELSE 'extract' END AS task, (i * 7919) % 12000 AS input_tokens, "
        "TIMESTAMP '2026-10-01' + to_hours(i % 1440) AS timestamp FROM range(30000) t(i)) "
        f"TO '{traffic}' (FORMAT parquet)"
    )
    options: dict[str, Any] = {
        "by": "task",
        "floor": 100,
        "total": 900,
        "seed": 5,
        "id_column": "request_id",
        "since": "2026-10-20",
    }
    results = []
    for name, backend in (("duck", None), ("spark", "spark")):
        out = tmp_path / f"{name}.csv"
        result = sample(traffic, out, backend=backend, **options)
        results.append((json.loads(render_sample_json(result)), out.read_text()))
    spark.read.parquet(str(traffic)).createOrReplaceTempView("traffic_log")
    in_place = tmp_path / "in_place.csv"
    result = sample(None, in_place, backend="spark", table="traffic_log", **options)
    results.append((json.loads(render_sample_json(result)), in_place.read_text()))
    (duck, duck_rows), (spark_json, spark_rows), (table_json, table_rows) = results
    for report in (duck, spark_json, table_json):
        report.pop("output"), report.pop("mix_file")
    assert duck == spark_json
    assert duck_rows == spark_rows and duck_rows.count("\n") == 901
    # the log as a table in Spark, read in place: the same rows and report, in the ids' order
    assert table_json.pop("input") == "traffic_log" and duck.pop("input") == str(traffic)
    assert table_json == duck
    header, *body = duck_rows.splitlines()
    assert table_rows.splitlines() == [header, *sorted(body, key=lambda r: "v" + r.split(",")[0])]


def test_a_duplicate_in_repeated_runs_is_refused_alike(spark: Any, tmp_path: Path) -> None:
    """The pivot's attempt screen (shifts and bit tests) finds it on Spark as on DuckDB."""
    from evaldelta.errors import DuplicateRowError

    columns = "case_id,arm,repeat,score"
    rows = [(f"c{i}", arm, r, (i + r) % 2) for i in range(40) for arm in "ab" for r in (0, 1, 2)]
    clean = write_rows(tmp_path / "clean.csv", rows, columns)
    assert_same(*(render_json(c) for c in both(compare, [clean], baseline="a")))
    dup = write_rows(tmp_path / "dup.csv", [*rows, ("c9", "b", 1, 0)], columns)
    messages = []
    for backend in (None, "spark"):
        with pytest.raises(DuplicateRowError) as err:
            compare([dup], baseline="a", backend=backend)
        messages.append(str(err.value))
    assert messages[0] == messages[1]
    assert "arm 'b', case 'c9', repeat 1 appears 2 times" in messages[0]
