"""Inspect AI logs written by the real inspect-ai (0.3.160: DEFLATE zips; 0.3.285: zstd).

The reference figures are Inspect's own: each log's ``results`` (recorded in the fixture's
MANIFEST.json by tools/fixtures/inspect/make_fixtures.py through Inspect's own
``read_eval_log``), and per slice Inspect's own per-sample reductions (``reductions.json``:
each sample's score reduced over epochs by Inspect's ``mean`` reducer), grouped by the
sample's metadata.
"""

from __future__ import annotations

import json
import shutil
import zipfile
from collections import defaultdict
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from evaldelta.comparison import compare
from evaldelta.sources import ReadOptions, Source, detect, import_rows, open_sources
from evaldelta.sources.importers._zip import SafeZip

from ..conftest import one_line_error
from .helpers import LOGS, arm_slice, files_in, manifest

VERSIONS = ("v0.3.160", "v0.3.285")


def _entries(version: str, folder: str) -> list[dict]:  # type: ignore[type-arg]
    files = manifest("inspect", version)["files"]
    return [f for f in files if f["path"].startswith(f"{folder}/") and f.get("format")]


def _sample_ids(entry: dict) -> set[str]:  # type: ignore[type-arg]
    """The sample ids a zip log holds, from its member names (samples/{id}_epoch_{n}.json)."""
    names = entry["zip_members"]["names"]
    return {n[len("samples/") :].rsplit("_epoch_", 1)[0] for n in names if n.startswith("samples/")}


def _column(score: dict) -> tuple[str, str]:  # type: ignore[type-arg]
    """Our metric column for one of Inspect's score entries, and its headline statistic."""
    name, scorer = score["name"], score["scorer"]
    column = name if name == scorer else f"{scorer}.{name}"
    stat = "accuracy" if "accuracy" in score["metrics"] else "mean"
    return column, stat


@pytest.mark.parametrize("version", VERSIONS)
def test_the_fixtures_are_what_they_claim(version: str) -> None:
    methods = {8} if version == "v0.3.160" else {93}
    for log in files_in(LOGS / "inspect" / version / "eval", ".eval"):
        with zipfile.ZipFile(log) as zf:
            assert {i.compress_type for i in zf.infolist()} == methods


@pytest.mark.parametrize("version", VERSIONS)
def test_two_models_compare_with_inspects_own_rates(version: str) -> None:
    logs = files_in(LOGS / "inspect" / version / "eval", ".eval")
    entries = _entries(version, "eval")
    metrics = [_column(s)[0] for s in entries[0]["scores"]]
    result = compare(logs, metrics=metrics)
    assert result.baseline == "mockllm/model-a"  # the first log's model
    for entry in entries:
        for score in entry["scores"]:
            column, stat = _column(score)
            ours = arm_slice(result, column, entry["model"])
            # Inspect: the epoch-reduced (mean) score per sample, averaged over samples
            assert ours.estimate.estimate == pytest.approx(score["metrics"][stat], abs=1e-9)
            assert ours.scored_cases == score["scored_samples"]
        overall = arm_slice(result, metrics[0], entry["model"])
        assert overall.attempts == entry["total_samples"]  # every sample run is an attempt
        assert overall.reviewed == entry["completed_samples"]  # the errored run is unscored
        assert overall.cases == len(_sample_ids(entry))


def _reductions(log: Path) -> tuple[dict[str, dict[str, float]], dict[str, str]]:
    """Inspect's own reduced score per (scorer, sample), and each sample's category."""
    with SafeZip(log) as zf:
        reductions = json.loads(zf.read("reductions.json"))
        summaries = json.loads(zf.read("summaries.json"))
    values = {
        r["scorer"]: {str(s["sample_id"]): float(s["value"]) for s in r["samples"]}
        for r in reductions
        if all(isinstance(s["value"], int | float) for s in r["samples"])
    }
    category = {str(s["id"]): s["metadata"]["category"] for s in summaries}
    return values, category


@pytest.mark.parametrize("version", VERSIONS)
def test_per_slice_rates_equal_inspects_own_reductions(version: str) -> None:
    logs = files_in(LOGS / "inspect" / version / "eval", ".eval")
    result = compare(logs, metrics=["match", "closeness", "graded"], by=["metadata.category"])
    checked = 0
    for entry, log in zip(_entries(version, "eval"), logs, strict=True):
        values, category = _reductions(log)
        for scorer in ("match", "closeness", "graded"):
            per_slice: dict[str, list[float]] = defaultdict(list)
            for sample, value in values[scorer].items():
                per_slice[category[sample]].append(value)
            for name, vals in per_slice.items():
                ours = arm_slice(result, scorer, entry["model"], name)
                assert ours.estimate.estimate == pytest.approx(sum(vals) / len(vals), abs=1e-9)
                checked += 1
    assert checked == 2 * 3 * 3


@pytest.mark.parametrize("folder", ["json", "evalset", "cancelled"])
@pytest.mark.parametrize("version", VERSIONS)
def test_every_layout_reads_with_inspects_counts(version: str, folder: str, tmp_path: Path) -> None:
    for entry in _entries(version, folder):
        path = LOGS / "inspect" / version / entry["path"]
        assert detect(path) == "inspect"
        out = tmp_path / f"{path.stem}.parquet"
        result = import_rows([Source(path)], out)
        rows = pq.read_table(out).to_pylist()
        assert len(rows) == result.rows == entry["sample_runs"]
        assert {r["arm"] for r in rows} == {entry["model"]}
        assert {r["case_id"] for r in rows} <= set(entry["sample_ids"])
        assert {r["repeat"] for r in rows} <= set(range(entry["epochs"]))
        errored = [r for r in rows if r["error"]] if "error" in rows[0] else []
        assert len(errored) == len(entry["errored"])
        assert all(r["match"] is None for r in errored)
        for score in entry.get("scores") or []:
            column, stat = _column(score)
            means: dict[str, list[float]] = defaultdict(list)
            for r in rows:
                if r[column] is not None:
                    means[r["case_id"]].append(r[column])
            rate = sum(sum(v) / len(v) for v in means.values()) / len(means)
            assert rate == pytest.approx(score["metrics"][stat], abs=1e-9)


def test_an_eval_set_folder_gives_one_arm_per_model() -> None:
    folder = LOGS / "inspect" / "v0.3.285" / "evalset"
    result = compare([folder])
    assert set(result.arms_present) == {"mockllm/model-a", "mockllm/model-b"}
    for entry in _entries("v0.3.285", "evalset"):
        score = entry["scores"][0]
        assert arm_slice(result, "match", entry["model"]).estimate.estimate == pytest.approx(
            score["metrics"]["accuracy"]
        )


def test_the_chunked_layout_and_a_mixed_zip_read_like_their_originals(tmp_path: Path) -> None:
    base = LOGS / "inspect"
    pairs = [
        (base / "v0.3.285" / "chunked", base / "v0.3.285" / "evalset", "model-a"),
        (base / "v0.3.285" / "mixed", base / "v0.3.160" / "evalset", "model-b"),
    ]
    for folder, original_folder, model in pairs:
        (log,) = files_in(folder, ".eval")
        (original,) = [p for p in files_in(original_folder, ".eval") if model in p.name]
        if folder.name == "chunked":
            with zipfile.ZipFile(log) as zf:
                assert any(n.endswith("/sample.json") for n in zf.namelist())
        else:
            with zipfile.ZipFile(log) as zf:
                assert {i.compress_type for i in zf.infolist()} == {8, 93}
        a = pq.read_table(import_rows([Source(log)], tmp_path / "a.parquet").output)
        b = pq.read_table(import_rows([Source(original)], tmp_path / "b.parquet").output)
        cols = ["case_id", "repeat", "match", "closeness", "graded", "metadata.category"]
        key = ["case_id", "repeat"]
        assert (
            a.select(cols).sort_by([(k, "ascending") for k in key]).to_pylist()
            == b.select(cols).sort_by([(k, "ascending") for k in key]).to_pylist()
        )


def test_pins_come_from_the_header() -> None:
    (log, _) = files_in(LOGS / "inspect" / "v0.3.285" / "eval", ".eval")
    _, (opened,) = open_sources([Source(log)])
    pins = opened.pins["mockllm/model-a"]
    assert pins["model"] == "mockllm/model-a"
    assert pins["task"] == "evaldelta_fixture"
    assert pins["task_version"] == 1
    assert pins["packages.inspect_ai"] == "0.3.285"
    assert pins["revision.commit"] == "04aff55"
    assert pins["config.epochs"] == 3
    assert json.loads(str(pins["plan.steps"])) == ["mock_answer"]


def test_the_report_counts_what_was_not_mapped() -> None:
    (log, _) = files_in(LOGS / "inspect" / "v0.3.285" / "cancelled", ".eval"), None
    entry = _entries("v0.3.285", "cancelled")[0]
    _, (opened,) = open_sources([Source(log[0])])
    (report,) = opened.reports
    kinds = {i.kind: i for i in report.issues}
    assert kinds["log_status"].count == 1  # the run was cancelled
    assert kinds["cancelled_sample"].count == sum(
        1 for e in entry["errored"] if e["message"].startswith("CancelledError")
    )
    assert kinds["errored_sample"].count == sum(
        1 for e in entry["errored"] if not e["message"].startswith("CancelledError")
    )


def test_strict_makes_an_errored_sample_an_error(run_cli) -> None:  # type: ignore[no-untyped-def]
    logs = files_in(LOGS / "inspect" / "v0.3.160" / "eval", ".eval")
    res = run_cli("compare", *logs, "--strict")
    one_line_error(res, "errored samples", "--strict")


def test_a_case_key_that_is_not_unique_is_one_line(run_cli) -> None:  # type: ignore[no-untyped-def]
    logs = files_in(LOGS / "inspect" / "v0.3.160" / "eval", ".eval")
    res = run_cli("compare", *logs, "--case-key", "metadata.category")
    one_line_error(res, "two samples have case id", "--case-key metadata.category")


def _truncated(log: Path, tmp_path: Path, keep: float) -> Path:
    data = log.read_bytes()
    bad = tmp_path / log.name
    bad.write_bytes(data[: int(len(data) * keep)])
    return bad


@pytest.mark.parametrize("version", VERSIONS)
def test_a_truncated_log_is_one_line(version: str, tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    log = files_in(LOGS / "inspect" / version / "eval", ".eval")[0]
    bad = _truncated(log, tmp_path, 0.6)
    one_line_error(run_cli("compare", f"inspect:{bad}", bad), str(bad), "truncated")


def test_a_damaged_member_is_one_line(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    log = files_in(LOGS / "inspect" / "v0.3.285" / "eval", ".eval")[0]
    bad = tmp_path / "damaged.eval"
    shutil.copy(log, bad)
    with zipfile.ZipFile(bad) as zf:
        info = zf.getinfo("samples/q01_epoch_1.json")
    data = bytearray(bad.read_bytes())
    start = info.header_offset + 30 + len(info.filename) + len(info.extra) + 10
    data[start : start + 8] = b"\x00" * 8  # corrupt the zstd frame in place
    bad.write_bytes(bytes(data))
    # import reads every sample (compare reads the summaries and fetches only listed outputs)
    res = run_cli("import", "inspect", bad, "-o", tmp_path / "o.parquet")
    one_line_error(res, str(bad), "samples/q01_epoch_1.json")


def test_compare_reads_the_summaries_and_fetches_only_listed_outputs(tmp_path: Path) -> None:
    logs = files_in(LOGS / "inspect" / "v0.3.285" / "eval", ".eval")
    _, (opened,) = open_sources([Source(logs[0])], ReadOptions(outputs_on_demand=True))
    assert "output" not in opened.table.columns and opened.fetch_outputs is not None
    fetched = opened.fetch_outputs(["q01", "q02"], ["mockllm/model-a"], 4000)
    _, (full,) = open_sources([Source(logs[0])])
    rows = full.table.filter(full.table.repeat == 0).to_pyarrow().to_pylist()
    wanted = ("q01", "q02")
    expected = {(r["case_id"], r["arm"]): r["output"] for r in rows if r["case_id"] in wanted}
    assert fetched == expected
    # the summaries give the same rows as the samples themselves
    keep = ["case_id", "repeat", "match", "closeness", "graded", "metadata.category", "error"]
    lazy = opened.table.select(*keep).order_by(["case_id", "repeat"]).to_pyarrow().to_pylist()
    eager = full.table.select(*keep).order_by(["case_id", "repeat"]).to_pyarrow().to_pylist()
    assert lazy == eager
    result = compare(logs)
    pair = result.slicing().pairs[0]
    _, opened_all = open_sources([Source(p) for p in logs])
    first = {}
    for item in opened_all:
        t = item.table
        for r in (
            t.filter(t.repeat == 0).select("case_id", "arm", "output").to_pyarrow().to_pylist()
        ):
            first[(r["case_id"], r["arm"])] = r["output"]
    assert pair.discordant
    for moved in pair.discordant:  # each listed case shows its epoch-1 output, fetched on demand
        assert moved.baseline_output == first[(moved.case_id, pair.baseline)]
        assert moved.candidate_output == first[(moved.case_id, pair.candidate)]


def test_a_zip_bomb_is_refused(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    bomb = tmp_path / "bomb.eval"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("_journal/start.json", json.dumps({"version": 2, "eval": {}}))
        zf.writestr("header.json", b"{" + b" " * (64 * 1024 * 1024) + b"}")
    one_line_error(run_cli("compare", bomb, bomb), str(bomb), "zip bomb")


def test_a_climbing_member_name_is_refused(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "climb.eval"
    with zipfile.ZipFile(bad, "w") as zf:
        zf.writestr("_journal/start.json", "{}")
        zf.writestr("../../etc/evil.json", "{}")
    one_line_error(run_cli("compare", bad, bad), str(bad), "climbing")


def test_a_zip_that_is_not_a_log(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "other.eval"
    with zipfile.ZipFile(bad, "w") as zf:
        zf.writestr("_journal/start.json", json.dumps({"version": 2}))
    one_line_error(run_cli("compare", bad, bad), str(bad), "eval spec")


def test_samples_the_summaries_do_not_cover_are_read_in_full(tmp_path: Path) -> None:
    """A log whose summaries lag behind its samples still gives Inspect's own rates."""
    logs = files_in(LOGS / "inspect" / "v0.3.160" / "eval", ".eval")
    entries = _entries("v0.3.160", "eval")
    lagging = tmp_path / logs[0].name
    with (
        zipfile.ZipFile(logs[0]) as src,
        zipfile.ZipFile(lagging, "w", zipfile.ZIP_DEFLATED) as dst,
    ):
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "summaries.json":
                data = json.dumps(json.loads(data)[:10]).encode()
            dst.writestr(info.filename, data)
    result = compare([lagging, logs[1]], metrics=["match"])
    for entry in entries:
        score = entry["scores"][0]
        ours = arm_slice(result, "match", entry["model"])
        assert ours.estimate.estimate == pytest.approx(score["metrics"]["accuracy"])
        assert ours.attempts == entry["total_samples"]
