"""The three-arm design (always-cheap, cascade, always-strong): seed 004's figures and more.

Reference values come from pandas / scipy on the bundled CSV, computed here independently of
evaldelta; the seed text's own rounded figures are quoted beside them.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import jsonschema
import pandas as pd
import pytest
from scipy import stats as sps

from evaldelta.comparison import compare
from evaldelta.comparison.model import Comparison, ThreeArmSlice
from evaldelta.demo import data_path
from evaldelta.demo.scenarios import SCENARIOS, run_scenario
from evaldelta.errors import UsageError
from evaldelta.report import render_json, render_markdown, render_text
from evaldelta.report._format import fmt_signed
from evaldelta.report.html import render_html
from evaldelta.sources import Source
from evaldelta.store import Store
from tests.conftest import one_line_error

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "schema" / "comparison.schema.json").read_text())
ROLES = ("always_cheap", "cascade", "always_strong")


@pytest.fixture(scope="module")
def seed004() -> Comparison:
    return run_scenario(next(s for s in SCENARIOS if s.key == "004"))


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    with data_path("seed004.csv") as path:
        return pd.read_csv(path)


@pytest.fixture(scope="module")
def wide(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.pivot_table(
        index=["case_id", "slice"], columns="arm", values="score"
    ).reset_index()


def _slice(result: Comparison, name: str) -> ThreeArmSlice:
    assert result.three_arm is not None
    return next(s for s in result.three_arm.slices if s.slice == name)


def test_seed004_overall_means_gap_and_recovered(seed004: Comparison, wide: pd.DataFrame) -> None:
    t = seed004.three_arm
    assert t is not None and (t.cheap, t.cascade, t.strong) == ROLES and t.roles_from == "given"
    o = t.overall
    # Seed 004: "the always-cheap arm scored 4.28, against 4.31 for the cascade and 4.34"
    assert (round(o.cheap_mean, 2), round(o.cascade_mean, 2), round(o.strong_mean, 2)) == (
        4.28,
        4.31,
        4.34,
    )
    assert o.n == len(wide) == 5000
    gap = wide.always_strong - wide.always_cheap
    rec = wide.cascade - wide.always_cheap
    assert o.gap.estimate == pytest.approx(gap.mean(), abs=1e-12)
    assert round(o.gap.estimate, 2) == 0.06  # "the 0.06 point gap"
    assert o.recovered.estimate == pytest.approx(rec.mean(), abs=1e-12)
    assert round(o.recovered.estimate, 3) == 0.031  # "recovered 0.03 of the 0.06 point gap"
    assert o.recovered_share == pytest.approx(rec.mean() / gap.mean(), rel=1e-9)
    # the intervals are the paired t on the per-case deltas
    for res, d in ((o.gap, gap), (o.recovered, rec)):
        se = d.std(ddof=1) / math.sqrt(len(d))
        half = sps.t.ppf(0.975, len(d) - 1) * se
        assert res.se == pytest.approx(se, rel=1e-9)
        assert res.ci.low == pytest.approx(d.mean() - half, rel=1e-9)
        assert res.ci.high == pytest.approx(d.mean() + half, rel=1e-9)


def test_seed004_slices_faq_and_extraction(seed004: Comparison, wide: pd.DataFrame) -> None:
    t = seed004.three_arm
    assert t is not None
    by_slice = wide.groupby("slice")
    ref_gap = (by_slice.always_strong.mean() - by_slice.always_cheap.mean()).to_dict()
    for s in t.slices:
        assert s.gap.estimate == pytest.approx(ref_gap[s.slice], abs=1e-12)
    faq, ext = _slice(seed004, "faq_lookup"), _slice(seed004, "extraction")
    # "FAQ lookup showed 4.51 cheap against 4.52 strong, a gap of 0.01"
    assert (round(faq.cheap_mean, 2), round(faq.strong_mean, 2)) == (4.51, 4.52)
    assert round(faq.gap.estimate, 2) == 0.01
    # "Extraction showed 3.10 cheap against 4.40 strong, a gap of 1.30"
    assert (round(ext.cheap_mean, 2), round(ext.strong_mean, 2)) == (3.10, 4.40)
    assert round(ext.gap.estimate, 2) == 1.30
    # sorted by gap, largest first: extraction leads, faq_lookup closes
    gaps = [s.gap.estimate for s in t.slices]
    assert gaps == sorted(gaps, reverse=True)
    assert t.slices[0].slice == "extraction" and t.slices[-1].slice == "faq_lookup"


def test_seed004_escalation_and_divergent_subset(seed004: Comparison, frame: pd.DataFrame) -> None:
    t = seed004.three_arm
    assert t is not None and t.escalation_basis == "escalated"
    o = t.overall
    casc = frame[frame.arm == "cascade"]
    esc = casc.escalated.astype(str).str.lower() == "true"
    assert (o.escalated_attempts, o.cascade_attempts) == (int(esc.sum()), len(casc)) == (600, 5000)
    assert o.escalation_rate == pytest.approx(0.12)
    kept = casc[~esc].set_index("case_id").score
    strong = frame[frame.arm == "always_strong"].set_index("case_id").score
    delta = kept - strong.reindex(kept.index)
    # "that subset was 4,400 rows with a delta of -0.033" (bundled data: -0.0325)
    assert o.divergent_n == len(delta) == 4400
    assert o.divergent is not None
    assert o.divergent.estimate == pytest.approx(delta.mean(), abs=1e-12)
    assert fmt_signed(o.divergent.estimate) == "-0.033"  # as the report rounds it
    assert o.divergent.se == pytest.approx(delta.std(ddof=1) / math.sqrt(len(delta)), rel=1e-9)
    # its extraction slice: the seed says -0.87; the bundled data gives about -1.02
    ext = _slice(seed004, "extraction")
    slices = casc.set_index("case_id").slice
    ext_delta = delta[slices.reindex(delta.index) == "extraction"]
    assert ext.divergent is not None and ext.divergent_n == len(ext_delta)
    assert ext.divergent.estimate == pytest.approx(ext_delta.mean(), abs=1e-12)
    assert fmt_signed(ext.divergent.estimate, 2) == "-1.02"
    ext_casc = casc[casc.slice == "extraction"]
    assert ext.escalation_rate == pytest.approx(
        (ext_casc.escalated.astype(str).str.lower() == "true").mean()
    )


def test_seed004_cost_per_arm(seed004: Comparison, frame: pd.DataFrame) -> None:
    t = seed004.three_arm
    assert t is not None and t.overall.cost is not None
    totals = frame.groupby("arm").cost_usd.sum()
    per_case = totals / frame.groupby("arm").case_id.nunique()
    for c in t.overall.cost:
        assert c.total_usd == pytest.approx(totals[c.arm], rel=1e-9)
        assert c.per_case == pytest.approx(per_case[c.arm], rel=1e-9)
    ext = _slice(seed004, "extraction")
    ext_totals = frame[frame.slice == "extraction"].groupby("arm").cost_usd.sum()
    assert ext.cost is not None
    for c in ext.cost:
        assert c.total_usd == pytest.approx(ext_totals[c.arm], rel=1e-9)


def test_seed004_text_section(seed004: Comparison) -> None:
    text = render_text(seed004)
    section = text[text.index("Three arms · ") :]
    assert text.index("evaldelta compare ·") < text.index("Three arms · ")
    assert (
        "The cascade recovered 0.031 of the 0.060 gap (52%) at 29% of always_strong's cost, "
        "escalating 12% of its attempts (600 of 5000)." in section
    )
    rows = [line.split()[0] for line in section.splitlines() if line.startswith("  ")]
    quality = rows[1 : rows.index("all") + 1]
    assert quality[0] == "extraction" and quality[-2] == "faq_lookup"
    assert "4400" in section and "-0.033" in section
    assert "Cost per arm: always_cheap $6.68" in section


def test_seed004_markdown_html_json(seed004: Comparison) -> None:
    md = render_markdown(seed004)
    lines = [line for line in md.splitlines() if "Three arms" in line]
    assert len(lines) == 1 and "recovered 0.031 of the 0.060 gap (52%)" in lines[0]
    page = render_html(seed004)
    section = page.split('<section id="three-arm">', 1)[1].split("</section>", 1)[0]
    assert "recovered 0.031 of the 0.060 gap (52%)" in section and "<svg" in section
    assert section.index("extraction") < section.index("faq_lookup")
    doc = json.loads(render_json(seed004))
    jsonschema.validate(doc, SCHEMA)
    assert doc["three_arm"]["overall"]["divergent_n"] == 4400


def test_model_used_fallback_when_no_escalated_column(tmp_path: Path, frame: pd.DataFrame) -> None:
    path = tmp_path / "no_flag.csv"
    frame.drop(columns=["escalated"]).to_csv(path, index=False)
    result = compare([path], baseline="always_strong", three_arm=ROLES)
    t = result.three_arm
    assert t is not None and t.escalation_basis == "model_used" and t.cheap_model == "cheap"
    assert t.overall.escalated_attempts == 600 and t.overall.divergent_n == 4400


def test_no_routing_columns_means_no_escalation(tmp_path: Path, frame: pd.DataFrame) -> None:
    path = tmp_path / "bare.csv"
    frame.drop(columns=["escalated", "model_used", "cost_usd"]).to_csv(path, index=False)
    result = compare([path], baseline="always_strong", three_arm=ROLES)
    t = result.three_arm
    assert t is not None and t.escalation_basis == "none"
    assert t.overall.escalation_rate is None and t.overall.divergent is None
    assert t.overall.cost is None
    assert any("no escalated or model_used column" in n for n in result.notes)
    assert "Three arms · " in render_text(result)
    jsonschema.validate(json.loads(render_json(result)), SCHEMA)


ZERO_GAP = """case_id,slice,arm,score
c1,s,cheap,3
c2,s,cheap,4
c3,s,cheap,5
c1,s,casc,4
c2,s,casc,4
c3,s,casc,4
c1,s,strong,5
c2,s,strong,4
c3,s,strong,3
"""


def test_zero_gap_gives_nan_share_and_a_note(write) -> None:
    result = compare([write("zero.csv", ZERO_GAP)], three_arm=("cheap", "casc", "strong"))
    t = result.three_arm
    assert t is not None and t.overall.gap.estimate == 0.0
    assert math.isnan(t.overall.recovered_share)  # never 0
    assert any("gap 0" in n and "undefined" in n for n in result.notes)
    assert json.loads(render_json(result))["three_arm"]["overall"]["recovered_share"] is None
    assert "n/a" in render_text(result).split("Three arms · ", 1)[1]


def test_html_escapes_arm_and_slice_names(write) -> None:
    text = ZERO_GAP.replace("strong", "<b>strong</b>").replace(",s,", ",<i>s</i>,")
    result = compare([write("evil.csv", text)], three_arm=("cheap", "casc", "<b>strong</b>"))
    section = render_html(result).split('<section id="three-arm">', 1)[1].split("</section>")[0]
    assert "<b>strong</b>" not in section and "<i>s</i>" not in section
    assert "&lt;b&gt;strong&lt;/b&gt;" in section


def _cascade_store(path: Path) -> Path:
    """A finished run with two model arms and a cascade of them, through the store's API."""
    model = {"kind": "model", "provider_kind": "openai", "template_sha256": "abc"}
    arms: dict[str, dict[str, object]] = {
        "small": {**model, "model": "m-small"},
        "large": {**model, "model": "m-large"},
        "routed": {
            "kind": "cascade",
            "cheap": {"arm": "small", **model, "model": "m-small"},
            "strong": {"arm": "large", **model, "model": "m-large"},
            "verifier": {"kind": "checks"},
        },
    }
    cases = [(f"c{i}", {"case_id": f"c{i}", "task": ("faq", "extract")[i % 2]}) for i in range(20)]
    with Store(path) as store:
        store.begin_run(
            "run-1",
            cases_path="cases.jsonl",
            cases_sha256="0" * 64,
            cases=cases,
            case_columns=["task"],
            repeats=1,
            arms=arms,
            pins={},
            evaldelta_version="test",
        )
        for i, (cid, _) in enumerate(cases):
            up = i % 4 == 0
            rows = {
                "small": (0.5, "m-small", False, 0.001),
                "large": (0.9, "m-large", False, 0.02),
                "routed": (
                    0.9 if up else 0.5,
                    "m-large" if up else "m-small",
                    up,
                    0.021 if up else 0.001,
                ),
            }
            for arm, (score, used, esc, cost) in rows.items():
                store.put_attempt(
                    "run-1",
                    arm,
                    cid,
                    0,
                    {"score": score, "model_used": used, "escalated": esc, "cost_usd": cost},
                )
        store.finish_run("run-1", "complete")
    return path


def test_roles_are_inferred_from_a_cascade_arms_pins(tmp_path: Path) -> None:
    path = _cascade_store(tmp_path / "runs.duckdb")
    result = compare([Source(path, run="run-1")], baseline="large", by=("task",))
    assert result.pins["routed"]["kind"] == "cascade"
    t = result.three_arm
    assert t is not None and t.roles_from == "pins"
    assert (t.cheap, t.cascade, t.strong) == ("small", "routed", "large")
    assert t.overall.escalated_attempts == 5 and t.overall.divergent_n == 15
    assert t.overall.gap.estimate == pytest.approx(0.4)
    assert t.overall.recovered.estimate == pytest.approx(0.1)
    assert t.overall.divergent is not None
    assert t.overall.divergent.estimate == pytest.approx(-0.4)
    # a comparison without the cascade's steps among the compared arms infers nothing
    two = compare([Source(path, run="run-1")], baseline="large", candidates=["routed"])
    assert two.three_arm is None


def test_cli_flag(run_cli) -> None:
    with data_path("seed004.csv") as data:
        res = run_cli(
            "compare", data, "--baseline", "always_strong", "--three-arm", ",".join(ROLES)
        )
        assert res.code == 0, res.err
        assert "Three arms · always_cheap -> cascade -> always_strong" in res.out
        res = run_cli("compare", data, "--three-arm", ",".join(ROLES), "--format", "json")
        assert res.code == 0, res.err
        assert json.loads(res.out)["three_arm"]["overall"]["escalated_attempts"] == 600


@pytest.mark.parametrize(
    ("roles", "needle"),
    [
        ("always_cheap,cascade,nope", "'nope' is not an arm of the data"),
        ("always_cheap,cascade", "exactly three arm names"),
        ("always_cheap,cascade,always_strong,extra", "exactly three arm names"),
        ("always_cheap,cascade,always_cheap", "three different arms"),
        ("always_cheap,,always_strong", "exactly three arm names"),
    ],
)
def test_bad_roles_are_a_usage_error(run_cli, roles: str, needle: str) -> None:
    with data_path("seed004.csv") as data:
        one_line_error(run_cli("compare", data, "--three-arm", roles), needle)


def test_bad_roles_in_the_library() -> None:
    with data_path("seed004.csv") as data, pytest.raises(UsageError, match="exactly three"):
        compare([data], three_arm=("always_cheap", "cascade"))
