"""The reference-bias audit on seed 002's bundled tickets, the generator, and retrieval labels."""

from __future__ import annotations

import csv
import subprocess
import sys
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest

from evaldelta.checks.audit import (
    Yardstick,
    audit,
    normalize_whitespace,
    read_goldens,
    retrieval_audit,
)
from evaldelta.demo.audit import audit_demo
from evaldelta.demo.scenarios import run_demo
from evaldelta.errors import MissingColumnError, UsageError
from tests.rows import write_rows

REPO = Path(__file__).resolve().parents[2]
DATA = files("evaldelta.data").joinpath("seed002_tickets")
DIR = Path(str(DATA))
GENERATOR = REPO / "tools" / "generate_audit_demo.py"


@pytest.fixture(scope="module")
def demo() -> Any:
    return audit_demo()


def test_self_agreement_reproduces_the_seed(demo: Any) -> None:
    result, _ = demo
    # "incumbent vs its own goldens: 14/40"; "On a candidate it reports 11/40"
    assert result.agreement("incumbent", "incumbent").matched == 14
    assert result.agreement("incumbent", "candidate").matched == 11
    assert result.agreement("incumbent", "incumbent").compared == 40
    # whitespace normalization matters: strict equality finds fewer
    assert result.agreement("incumbent", "incumbent").raw_matched < 14


def test_requirements_and_cross_tab(demo: Any) -> None:
    result, _ = demo
    # "incumbent 34/40 0.850, candidate 36/40 0.900"; "33 ... 3 ... 1 ... 3"
    assert result.requirements == {"incumbent": (34, 40), "candidate": (36, 40)}
    t = result.cross_tab
    assert (t.both_pass, t.both_fail, t.only_baseline, t.only_candidate) == (33, 3, 1, 3)
    assert result.checks == (
        "order_number",
        "timeframe_in_policy",
        "remedy_in_policy",
        "no_commitment_date",
        "length",
    )


def test_triage_precision(demo: Any) -> None:
    result, _ = demo
    tri = next(t for t in result.triage if t.yardstick == "incumbent")
    assert tri.arm == "candidate" and tri.failures == 29
    assert [c.case_id for c in tri.substantive] == ["T2288", "T2301"]
    assert len(tri.cosmetic) == 27
    details = [c.detail for c in tri.cosmetic]
    assert details.count("rephrased") == 22 and details.count("sign-off only") == 5
    assert tri.precision == pytest.approx(2 / 29)  # "about 7%"
    t2301 = tri.substantive[1]
    assert t2301.checks == ("no_commitment_date",) and "by Friday" in t2301.detail
    t2288 = tri.substantive[0]
    assert t2288.checks == ("remedy_in_policy",) and "credit" in t2288.detail


def test_symmetry_winner_follows_authorship(demo: Any) -> None:
    result, _ = demo
    assert result.winners == {"incumbent": "incumbent", "candidate": "candidate"}
    assert result.follows_authorship is True
    assert result.agreement("candidate", "candidate").matched == 15
    assert result.agreement("candidate", "incumbent").matched == 9


def test_scored_demo_rows_agree_with_seed002_csv(demo: Any) -> None:
    _, scored = demo
    with files("evaldelta.data").joinpath("seed002.csv").open() as fh:
        expected = {
            (r["case_id"], r["arm"], r["slice"]): int(r["score"]) for r in csv.DictReader(fh)
        }
    got = {(r["case_id"], r["arm"], r["slice"]): r["pass"] for r in scored}
    assert got == expected


def test_the_friday_reply_is_caught(demo: Any) -> None:
    _, scored = demo
    row = next(r for r in scored if r["case_id"] == "T2301" and r["arm"] == "candidate")
    assert row["check.no_commitment_date"] == 0 and "by Friday" in row["output"]
    inc = next(r for r in scored if r["case_id"] == "T2301" and r["arm"] == "incumbent")
    assert inc["check.no_commitment_date"] == 1 and "within 5 working days" in inc["output"]


def test_ticket_2214_carries_both_phrasings_from_the_seed() -> None:
    golden = normalize_whitespace((DIR / "goldens" / "T2214.txt").read_text())
    assert golden.startswith(
        "Thanks for getting in touch. I'm sorry your order #2214 hasn't arrived yet. Our "
        "courier shows it as delayed at the Manchester depot. I've raised this with them and "
        "you should have an update within 2 working days. If it hasn't moved by then we'll "
        "send a replacement at no cost."
    )
    with (DIR / "replies.csv").open() as fh:
        cand = next(
            r for r in csv.DictReader(fh) if r["case_id"] == "T2214" and r["arm"] == "candidate"
        )
    assert normalize_whitespace(cand["output"]).startswith(
        "I'm sorry to hear order #2214 still hasn't reached you. The tracking shows it held at "
        "our Manchester depot, and I've escalated it with the courier — you should hear back "
        "within 2 working days. If there's no movement by then, we'll ship a replacement free "
        "of charge."
    )


def test_generator_reproduces_the_bundled_files(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(GENERATOR), "--out", str(tmp_path)], check=True, capture_output=True
    )
    committed = sorted(p.relative_to(DIR) for p in DIR.rglob("*") if p.is_file())
    generated = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert generated == committed
    for rel in generated:
        assert (tmp_path / rel).read_bytes() == (DIR / rel).read_bytes(), rel


def test_demo_prints_the_audit() -> None:
    text = run_demo()
    for needle in (
        "incumbent     14/40",
        "candidate     11/40",
        "recorded 40/40 for incumbent was never a measurement",
        "incumbent     34/40",
        "candidate     36/40",
        "33 pass under both, 3 fail under both, 1 pass only under incumbent, "
        "3 only under candidate",
        "T2301: fails no_commitment_date",
        "2/29 = 7%",
        "The winner follows authorship",
        "five mechanical checks",
    ):
        assert needle in text, needle


def test_audit_cli(run_cli: Any) -> None:
    res = run_cli(
        "audit",
        DIR / "replies.csv",
        "--cases",
        DIR / "tickets.csv",
        "--goldens",
        f"incumbent={DIR / 'goldens'}",
        "--checks",
        DIR / "checks.yaml",
        "--claim",
        "40/40",
    )
    assert res.code == 0, res.err
    assert "14/40" in res.out and "2/29 = 7%" in res.out and "Symmetry" not in res.out
    res = run_cli(
        "audit",
        DIR / "replies.csv",
        "--goldens",
        f"incumbent={DIR / 'goldens'}",
        "--format",
        "json",
    )
    assert res.code == 0 and '"matched": 14' in res.out
    res = run_cli("audit", DIR / "replies.csv", "--goldens", f"nobody={DIR / 'goldens'}")
    assert res.code == 2 and "goldens author 'nobody'" in res.err and res.err.count("\n") == 1
    res = run_cli("audit", DIR / "replies.csv", "--goldens", "incumbent")
    assert res.code == 2 and "ARM=PATH" in res.err


def test_goldens_from_a_column(tmp_path: Path) -> None:
    path = tmp_path / "g.csv"
    path.write_text('case_id,reference\na,"Hello  there"\nb,Bye\n')
    y = read_goldens(path, "v1")
    assert y.texts == {"a": "Hello  there", "b": "Bye"}
    rows = [
        {"case_id": "a", "arm": "v1", "output": "Hello\nthere"},
        {"case_id": "b", "arm": "v1", "output": "bye"},
        {"case_id": "a", "arm": "v2", "output": "Hi"},
        {"case_id": "c", "arm": "v2", "output": "Hi"},
    ]
    res = audit(rows, [y])
    assert res.agreement("v1", "v1").matched == 1 and res.agreement("v1", "v1").raw_matched == 0
    assert res.agreement("v1", "v2").missing == 1
    assert res.triage == () and res.follows_authorship is None
    with pytest.raises(MissingColumnError):
        read_goldens(path, "v1", column="golden")
    with pytest.raises(UsageError):
        audit(rows, [Yardstick("v3", {}, "x")])


# --------------------------------------------------------------------------- retrieval


def _retrieval(labels_origin: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    runs, labels = [], []
    for q in range(10):
        for rank in range(1, 4):
            runs.append({"query_id": q, "arm": "old", "doc_id": f"o{q}-{rank}", "rank": rank})
            runs.append({"query_id": q, "arm": "new", "doc_id": f"n{q}-{rank}", "rank": rank})
        # the labels: old's top 3 (two relevant), and, when pooled, new's top 3 (all relevant)
        for rank in range(1, 4):
            labels.append(
                {
                    "query_id": q,
                    "doc_id": f"o{q}-{rank}",
                    "relevant": int(rank < 3),
                    "origin": "old",
                }
            )
            if labels_origin == "pooled":
                labels.append(
                    {"query_id": q, "doc_id": f"n{q}-{rank}", "relevant": 1, "origin": "new"}
                )
    return labels, runs


def test_retrieval_labels_from_one_system_flag_the_bias() -> None:
    labels, runs = _retrieval("old")
    res = retrieval_audit(labels, runs, k=3)
    assert res.dominant_origin == "old" and res.winners["all"] == "old"
    assert res.follows_authorship is True
    new = next(s for s in res.scores if s.arm == "new" and s.labels_from == "all")
    assert new.relevant_found == 0 and new.unjudged == 30  # nothing new found was ever labelled


def test_retrieval_symmetry_over_origins() -> None:
    labels, runs = _retrieval("pooled")
    res = retrieval_audit(labels, runs, k=3)
    assert res.origins == {"old": 30, "new": 30} and res.dominant_origin is None
    assert res.winners == {"all": "new", "new": "new", "old": "old"}
    assert res.follows_authorship is True


def test_retrieval_cli(tmp_path: Path, run_cli: Any) -> None:
    labels, runs = _retrieval("old")
    for name, rows in (("labels.csv", labels), ("runs.csv", runs)):
        write_rows(tmp_path / name, rows, list(rows[0]), eol="\r\n")
    res = run_cli("audit", "--labels", tmp_path / "labels.csv", "--runs", tmp_path / "runs.csv")
    assert res.code == 0, res.err
    assert "drawn from one system's own results" in res.out
    res = run_cli("audit", "--labels", tmp_path / "labels.csv")
    assert res.code == 2 and "both --labels and --runs" in res.err
