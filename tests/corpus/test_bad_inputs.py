"""The bad-input corpus: every entry point, each bad input, its one-line message and exit code.

Each case writes its files into a fresh folder, runs the real CLI entry point in-process
(``evaldelta.cli.main``) and expects exactly one line on stderr, starting
``evaldelta: error:``, holding every needle, with exit code 2 and no traceback. ``{d}`` in
an argument is the case's folder; ``env`` sets environment variables for the case (a lowered
limit keeps a hostile file small). A case is a row of :data:`CASES`; add one for every bad
input a user met. The hostile files of issue 23 (nesting, long strings, huge scores, wide
files, alias bombs) are at the end: each needle names the limit.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ..conftest import ROOT, one_line_error

LOGS = ROOT / "tests" / "fixtures" / "logs"
GOOD = "case_id,arm,slice,score\nc1,a,s1,1\nc2,a,s1,0\nc1,b,s1,1\nc2,b,s1,1\n"
TWO = "case_id,arm,slice,score\n1,a,s1,1\n1,b,s1,0\n2,a,s2,1\n2,b,s2,1\n"
Content = str | bytes | Callable[[Path], None]


@dataclass(frozen=True)
class Case:
    name: str
    args: tuple[str, ...]
    needles: tuple[str, ...]
    files: dict[str, Content] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)


def _zip(
    members: dict[str, bytes | str], method: int = zipfile.ZIP_DEFLATED
) -> Callable[[Path], None]:
    def write(path: Path) -> None:
        with zipfile.ZipFile(path, "w", method) as zf:
            for name, data in members.items():
                zf.writestr(name, data)

    return write


def _cut(source: Path, keep: float) -> Callable[[Path], None]:
    def write(path: Path) -> None:
        data = source.read_bytes()
        path.write_bytes(data[: int(len(data) * keep)])

    return write


def _parquet(columns: dict[str, list[object]]) -> Callable[[Path], None]:
    def write(path: Path) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table(columns), str(path))

    return write


INSPECT = sorted((LOGS / "inspect" / "v0.3.285" / "eval").glob("*.eval"))
PROMPTFOO = LOGS / "promptfoo" / "v0.121.20" / "results.json"
LMEVAL = sorted((LOGS / "lmeval" / "v0.4.13").glob("arm-seed1/*/samples_evaldelta_mc_*.jsonl"))
HELM_STATS = sorted((LOGS / "helm" / "v0.5.16").rglob("per_instance_stats.json"))

CASES: list[Case] = [
    # -- row files ---------------------------------------------------------------------------
    Case("missing file", ("compare", "{d}/nope.csv"), ("nope.csv", "does not exist")),
    Case("empty file", ("compare", "{d}/e.csv"), ("e.csv", "empty"), {"e.csv": ""}),
    Case(
        "header only", ("compare", "{d}/h.csv"), ("no data rows",), {"h.csv": "case_id,arm,score\n"}
    ),
    Case(
        "a folder of nothing",
        ("compare", "{d}/sub"),
        ("holding no log",),
        {"sub/readme.txt": "hello"},
    ),
    Case(
        "missing score column",
        ("compare", "{d}/r.csv"),
        ("'score'", "missing"),
        {"r.csv": "case_id,arm,slice\nc1,a,s\nc1,b,s\n"},
    ),
    Case(
        "missing case_id, close name",
        ("compare", "{d}/r.csv"),
        ("did you mean 'id'",),
        {"r.csv": "id,arm,score\n1,a,1\n1,b,0\n"},
    ),
    Case(
        "missing arm",
        ("compare", "{d}/r.csv"),
        ("'arm'", "missing"),
        {"r.csv": "case_id,score\n1,1\n2,0\n"},
    ),
    Case(
        "semicolon header",
        ("compare", "{d}/r.csv"),
        ("semicolon-separated",),
        {"r.csv": GOOD.replace(",", ";")},
    ),
    Case(
        "tab header in .csv",
        ("compare", "{d}/r.csv"),
        ("tab-separated",),
        {"r.csv": GOOD.replace(",", "\t")},
    ),
    Case(
        "duplicate header",
        ("compare", "{d}/r.csv"),
        ("line 1", "'score'", "twice"),
        {"r.csv": "case_id,arm,score,score\n1,a,1,0\n1,b,0,1\n"},
    ),
    Case(
        "row wider than header",
        ("compare", "{d}/r.csv"),
        ("line 3", "4 fields"),
        {"r.csv": "case_id,arm,score\n1,a,1\n1,b,0,9\n"},
    ),
    Case(
        "truncated csv quote",
        ("compare", "{d}/r.csv"),
        ("r.csv", "line"),
        {"r.csv": 'case_id,arm,score\n1,a,1\n1,b,"0\n'},
    ),
    Case(
        "non-numeric score",
        ("compare", "{d}/r.csv"),
        ("line 3", "'score'", "'maybe'"),
        {"r.csv": "case_id,arm,score\n1,a,1\n1,b,maybe\n"},
    ),
    Case(
        "infinite score",
        ("compare", "{d}/r.csv"),
        ("'score'", "not finite"),
        {"r.csv": "case_id,arm,score\n1,a,1\n1,b,inf\n"},
    ),
    Case(
        "NaN score in parquet",
        ("compare", "{d}/r.parquet"),
        ("row 2", "not finite"),
        {
            "r.parquet": _parquet(
                {"case_id": ["1", "1"], "arm": ["a", "b"], "score": [1.0, float("nan")]}
            )
        },
    ),
    Case(
        "blank case id",
        ("compare", "{d}/r.csv"),
        ("'case_id'", "blank"),
        {"r.csv": "case_id,arm,score\n1,a,1\n,b,0\n"},
    ),
    Case(
        "blank arm",
        ("compare", "{d}/r.csv"),
        ("'arm'", "blank"),
        {"r.csv": "case_id,arm,score\n1,a,1\n1,,0\n"},
    ),
    Case(
        "fractional repeat",
        ("compare", "{d}/r.csv"),
        ("'repeat'", "'1.4'", "whole number"),
        {"r.csv": "case_id,arm,score,repeat\n1,a,1,1\n1,a,0,1.4\n1,b,1,0\n"},
    ),
    Case(
        "negative repeat",
        ("compare", "{d}/r.csv"),
        ("'repeat'", "'-1'"),
        {"r.csv": "case_id,arm,score,repeat\n1,a,1,-1\n1,b,1,0\n"},
    ),
    Case(
        "duplicate attempt",
        ("compare", "{d}/r.csv"),
        ("duplicate row", "'c1'"),
        {"r.csv": GOOD + "c1,a,s1,0\n"},
    ),
    Case(
        "trailing-space arm collides",
        ("compare", "{d}/r.csv"),
        ("duplicate row",),
        {"r.csv": "case_id,arm,score\n1,a ,1\n1,a,0\n1,b,1\n"},
    ),
    Case(
        "slice differs between arms",
        ("compare", "{d}/r.csv"),
        ("two slices", "'c1'"),
        {"r.csv": "case_id,arm,slice,score\nc1,a,s1,1\nc1,b,s2,1\n"},
    ),
    Case(
        "negative cost",
        ("compare", "{d}/r.csv"),
        ("'cost_usd'", "'-10'", "finite number >= 0"),
        {"r.csv": "case_id,arm,score,cost_usd\n1,a,1,-10\n1,b,1,0.5\n"},
    ),
    Case(
        "cost with a dollar sign",
        ("compare", "{d}/r.csv"),
        ("'cost_usd'", "'$0.10'"),
        {"r.csv": "case_id,arm,score,cost_usd\n1,a,1,$0.10\n1,b,1,0.5\n"},
    ),
    Case(
        "cost as a word",
        ("compare", "{d}/r.csv"),
        ("'cost_usd'", "'free'"),
        {"r.csv": "case_id,arm,score,cost_usd\n1,a,1,0.2\n1,b,1,free\n"},
    ),
    Case(
        "bad sample weight",
        ("compare", "{d}/r.csv"),
        ("'sample_weight'",),
        {"r.csv": "case_id,arm,score,sample_weight\n1,a,1,0\n1,b,1,2\n"},
    ),
    Case(
        "score outside declared scale",
        ("compare", "{d}/r.csv", "--scale", "1,5"),
        ("outside the declared scale",),
        {"r.csv": "case_id,arm,score\n1,a,1\n1,b,9\n"},
    ),
    Case(
        "jsonl duplicate key",
        ("compare", "{d}/r.jsonl"),
        ("line 1", "duplicate key"),
        {
            "r.jsonl": '{"case_id":"1","arm":"a","score":1,"score":0}\n'
            '{"case_id":"1","arm":"b","score":1}\n'
        },
    ),
    Case("jsonl not json", ("compare", "{d}/r.jsonl"), ("r.jsonl",), {"r.jsonl": "{not json\n"}),
    Case(
        "parquet that is not",
        ("compare", "{d}/r.parquet"),
        ("PARQUET",),
        {"r.parquet": "this is not parquet\n"},
    ),
    Case(
        "zip that is no log",
        ("compare", "{d}/r.xlsx"),
        ("zip archive",),
        {"r.xlsx": _zip({"xl/workbook.xml": "<w/>"})},
    ),
    Case("binary junk", ("compare", "{d}/r.bin"), ("binary",), {"r.bin": bytes(range(256)) * 4}),
    Case("unknown format prefix", ("compare", "nosuch:{d}/r.csv"), ("unknown format 'nosuch'",)),
    Case(
        "single arm",
        ("compare", "{d}/r.csv"),
        ("only one arm",),
        {"r.csv": "case_id,arm,score\n1,a,1\n2,a,0\n"},
    ),
    # -- options -----------------------------------------------------------------------------
    Case(
        "unknown baseline",
        ("compare", "{d}/r.csv", "--baseline", "zeta"),
        ("'zeta'",),
        {"r.csv": GOOD},
    ),
    Case(
        "carriage-return baseline",
        ("compare", "{d}/r.csv", "--baseline", "\r"),
        ("unknown arm",),
        {"r.csv": GOOD},
    ),
    Case(
        "negative list limit",
        ("compare", "{d}/r.csv", "--list-limit", "-5"),
        ("--list-limit",),
        {"r.csv": GOOD},
    ),
    Case(
        "nan scale",
        ("compare", "{d}/r.csv", "--scale", "nan,5"),
        ("--scale", "finite"),
        {"r.csv": GOOD},
    ),
    Case(
        "inverted scale", ("compare", "{d}/r.csv", "--scale", "5,1"), ("--scale",), {"r.csv": GOOD}
    ),
    Case(
        "confidence of 1",
        ("compare", "{d}/r.csv", "--confidence", "1"),
        ("confidence",),
        {"r.csv": GOOD},
    ),
    Case("bad --arm", ("compare", "--arm", "nofile"), ("--arm takes NAME=FILE",)),
    Case(
        "bad --columns",
        ("compare", "{d}/r.csv", "--columns", "case_id"),
        ("--columns",),
        {"r.csv": GOOD},
    ),
    Case(
        "--columns names a missing column",
        ("compare", "{d}/r.csv", "--columns", "case_id=nope"),
        ("'nope'",),
        {"r.csv": GOOD},
    ),
    Case(
        "--filter on tidy rows",
        ("compare", "{d}/r.csv", "--filter", "x"),
        ("--filter does not apply",),
        {"r.csv": GOOD},
    ),
    Case(
        "--case-key on tidy rows",
        ("compare", "{d}/r.csv", "--case-key", "x"),
        ("--case-key",),
        {"r.csv": GOOD},
    ),
    Case(
        "--run without --store",
        ("compare", "{d}/r.csv", "--run", "x"),
        ("--run needs --store",),
        {"r.csv": GOOD},
    ),
    # -- mix and traffic files ---------------------------------------------------------------
    Case(
        "mix names an unknown slice",
        ("compare", "{d}/r.csv", "--mix", "{d}/m.csv"),
        ("'s9'",),
        {"r.csv": TWO, "m.csv": "slice,weight\ns1,1\ns9,2\n"},
    ),
    Case(
        "negative mix weight",
        ("compare", "{d}/r.csv", "--mix", "{d}/m.csv"),
        ("weight",),
        {"r.csv": TWO, "m.csv": "slice,weight\ns1,-1\ns2,1\n"},
    ),
    Case(
        "mix weight true",
        ("compare", "{d}/r.csv", "--mix", "{d}/m.json"),
        ("JSON number",),
        {"r.csv": TWO, "m.json": '{"s1": true, "s2": 1}'},
    ),
    Case(
        "mix weight text",
        ("compare", "{d}/r.csv", "--mix", "{d}/m.json"),
        ("JSON number",),
        {"r.csv": TWO, "m.json": '{"s1": "1", "s2": 1}'},
    ),
    Case(
        "all-zero mix",
        ("compare", "{d}/r.csv", "--mix", "{d}/m.csv"),
        ("all weights are zero",),
        {"r.csv": TWO, "m.csv": "slice,weight\ns1,0\ns2,0\n"},
    ),
    Case(
        "mix without columns",
        ("compare", "{d}/r.csv", "--traffic", "{d}/m.csv"),
        ("slice,weight",),
        {"r.csv": TWO, "m.csv": "a,b\n1,2\n"},
    ),
    Case(
        "mix not json",
        ("compare", "{d}/r.csv", "--mix", "{d}/m.json"),
        ("not valid JSON",),
        {"r.csv": TWO, "m.json": "{"},
    ),
    Case(
        "mix slice twice",
        ("compare", "{d}/r.csv", "--mix", "{d}/m.csv"),
        ("listed twice",),
        {"r.csv": TWO, "m.csv": "slice,weight\ns1,1\ns1,2\n"},
    ),
    # -- policies ----------------------------------------------------------------------------
    Case(
        "policy unknown key",
        ("gate", "{d}/r.csv", "--policy", "{d}/p.toml"),
        ("p.toml", "max_regresion"),
        {"r.csv": GOOD, "p.toml": "max_regresion = 0.1\n"},
    ),
    Case(
        "policy negative margin",
        ("gate", "{d}/r.csv", "--policy", "{d}/p.toml"),
        ("p.toml", "margin"),
        {"r.csv": GOOD, "p.toml": "max_regression = -0.1\n"},
    ),
    Case(
        "policy not toml",
        ("gate", "{d}/r.csv", "--policy", "{d}/p.toml"),
        ("p.toml",),
        {"r.csv": GOOD, "p.toml": "max_regression = = 1\n"},
    ),
    Case(
        "policy unknown slice",
        ("gate", "{d}/r.csv", "--policy", "{d}/p.toml"),
        ("p.toml", "nosuch"),
        {"r.csv": GOOD, "p.toml": "[slices.nosuch]\nmax_regression = 0.1\n"},
    ),
    Case("gate without policy", ("gate", "{d}/r.csv"), ("--policy",), {"r.csv": GOOD}),
    # -- plan and sample ---------------------------------------------------------------------
    Case(
        "plan budget beyond a float",
        (
            "plan",
            "--sd",
            "1",
            "--effect",
            "0.2",
            "--traffic",
            "{d}/m.csv",
            "--budget",
            "9223372036854775000",
        ),
        ("budget",),
        {"m.csv": "slice,weight\ns1,1\n"},
    ),
    Case(
        "plan floor without budget",
        ("plan", "--sd", "1", "--effect", "0.2", "--floor", "3"),
        ("--floor",),
    ),
    Case(
        "sample missing --by column",
        ("sample", "{d}/t.csv", "-o", "{d}/o.csv", "--by", "nope"),
        ("'nope'",),
        {"t.csv": "id,task\n1,a\n"},
    ),
    Case(
        "sample output suffix",
        ("sample", "{d}/t.csv", "-o", "{d}/o.xlsx", "--by", "task"),
        ("suffix",),
        {"t.csv": "id,task\n1,a\n"},
    ),
    Case(
        "sample bad band",
        ("sample", "{d}/t.csv", "-o", "{d}/o.csv", "--band", "x=3,1"),
        ("--band",),
        {"t.csv": "id,x\n1,2\n"},
    ),
    # -- imported logs -----------------------------------------------------------------------
    Case(
        "truncated inspect log",
        ("compare", "{d}/a.eval", "{d}/a.eval"),
        ("a.eval", "truncated"),
        {"a.eval": _cut(INSPECT[0], 0.5)},
    ),
    Case(
        "inspect zip bomb",
        ("compare", "{d}/b.eval", "{d}/b.eval"),
        ("zip bomb",),
        {
            "b.eval": _zip(
                {"_journal/start.json": "{}", "header.json": b"{" + b" " * (48 << 20) + b"}"}
            )
        },
    ),
    Case(
        "inspect climbing member",
        ("compare", "{d}/c.eval", "{d}/c.eval"),
        ("climbing",),
        {"c.eval": _zip({"_journal/start.json": "{}", "../x.json": "{}"})},
    ),
    Case(
        "inspect log without spec",
        ("compare", "{d}/d.eval", "{d}/d.eval"),
        ("eval spec",),
        {"d.eval": _zip({"_journal/start.json": json.dumps({"version": 2})})},
    ),
    Case(
        "inspect --strict", ("compare", str(INSPECT[0]), str(INSPECT[1]), "--strict"), ("--strict",)
    ),
    Case(
        "inspect bad case key",
        ("compare", str(INSPECT[0]), str(INSPECT[1]), "--case-key", "x.y"),
        ("--case-key",),
    ),
    Case(
        "truncated promptfoo",
        ("compare", "{d}/results.json"),
        ("truncated",),
        {"results.json": _cut(PROMPTFOO, 0.2)},
    ),
    Case(
        "promptfoo bad case key",
        ("compare", str(PROMPTFOO), "--case-key", "testIdx"),
        ("--case-key",),
    ),
    Case(
        "truncated lm-eval samples",
        ("compare", "{d}/" + LMEVAL[0].name, "--arm", "x={d}/" + LMEVAL[0].name),
        ("line",),
        {LMEVAL[0].name: _cut(LMEVAL[0], 0.5)},
    ),
    Case(
        "lm-eval unknown filter",
        ("compare", str(LOGS / "lmeval" / "v0.4.13"), "--filter", "nope"),
        ("--filter 'nope'",),
    ),
    Case(
        "helm stats not a list",
        ("compare", "{d}/run"),
        ("per-instance",),
        {"run/per_instance_stats.json": '{"instance_id": 1}'},
    ),
    Case(
        "helm truncated stats",
        ("compare", "{d}/run"),
        ("truncated",),
        {"run/per_instance_stats.json": _cut(HELM_STATS[0], 0.3)},
    ),
    Case("import without output", ("import", "auto", "{d}/r.csv"), ("-o OUT",), {"r.csv": GOOD}),
    Case(
        "import unknown format",
        ("import", "nosuch", "{d}/r.csv", "-o", "{d}/o.parquet"),
        ("unknown format",),
        {"r.csv": GOOD},
    ),
    Case(
        "import output suffix",
        ("import", "auto", "{d}/r.csv", "-o", "{d}/o.xlsx"),
        ("suffix",),
        {"r.csv": GOOD},
    ),
    Case(
        "import overlapping logs",
        ("import", "inspect", str(INSPECT[0]), str(INSPECT[0]), "-o", "{d}/o.parquet"),
        ("overlap",),
    ),
]


# -- issue 23: hostile files, each past a stated limit ---------------------------------------
LIMIT = "200 levels"  # every depth refusal names the limit
DEEPER = "[" * 201 + "]" * 201  # one level past it (the document's own level counts too)
DEEPEST = "[" * 100_000 + "]" * 100_000
INSPECT_JSON = sorted((LOGS / "inspect" / "v0.3.285" / "json").glob("*.json"))
INSPECT_DEFLATE = sorted((LOGS / "inspect" / "v0.3.160" / "eval").glob("*.eval"))


def _json_log(source: Path, change: Callable[[dict[str, object]], None]) -> Content:
    """A JSON log with one value replaced by the text of ``@RAW@`` (set by ``change``)."""

    def write(path: Path) -> None:
        doc = json.loads(source.read_text())
        change(doc)
        raw = doc.pop("@RAW@")
        path.write_text(json.dumps(doc).replace('"@RAW@"', str(raw), 1))

    return write


def _deep_metadata(depth_text: str) -> Callable[[dict[str, object]], None]:
    def change(doc: dict[str, object]) -> None:
        doc["samples"][0]["metadata"]["deep"] = "@RAW@"  # type: ignore[index]
        doc["@RAW@"] = depth_text

    return change


def _long_output(doc: dict[str, object]) -> None:
    doc["results"]["results"][0]["response"]["output"] = "@RAW@"  # type: ignore[index]
    doc["@RAW@"] = '"' + "x" * 40_000 + '"'


def _eval_member(source: Path, member: str, text: str) -> Callable[[Path], None]:
    """A copy of an Inspect .eval (DEFLATE) with ``member`` replaced by ``text``."""

    def write(path: Path) -> None:
        with (
            zipfile.ZipFile(source) as src,
            zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as dst,
        ):
            for info in src.infolist():
                dst.writestr(info.filename, text if info.filename == member else src.read(info))

    return write


def _laughs() -> str:
    """A checks file whose pattern list names 10^9 strings through nine levels of aliases."""
    lines = [
        "judge:",
        "  params:",
        '    a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]',
    ]
    lines += [f"    a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    lines += ["checks:", "- id: c", "  spec: s", "  kind: no_commitment_date"]
    return "\n".join([*lines, "  extra_patterns: [*a8]", ""])


def _parquet_with_pins(pins: str) -> Callable[[Path], None]:
    """A tidy Parquet file whose evaldelta pins metadata is ``pins``."""

    def write(path: Path) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.table({"case_id": ["1", "1"], "arm": ["a", "b"], "score": [1.0, 0.0]})
        pq.write_table(table.replace_schema_metadata({b"evaldelta.pins": pins}), str(path))

    return write


def _huge_promptfoo_score(path: Path) -> None:
    """promptfoo's JSON Lines results with the first row's score set to 1e300."""
    lines = (LOGS / "promptfoo" / "v0.121.20" / "results.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["score"] = 1e300
    path.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")


OUTPUTS = "case_id,arm,output\n1,a,hello\n1,b,hi\n"
HOSTILE: list[Case] = [
    Case(
        "inspect .json nested 100,000 deep in a sample",
        ("compare", "{d}/deep.json", "--arm", "x={d}/deep.json"),
        ("deep.json", LIMIT),
        {"deep.json": _json_log(INSPECT_JSON[0], _deep_metadata(DEEPEST))},
    ),
    Case(
        "inspect .json one level past the depth limit",
        ("import", "inspect", "{d}/deep.json", "-o", "{d}/o.parquet"),
        ("deep.json", LIMIT),
        {"deep.json": _json_log(INSPECT_JSON[0], _deep_metadata(DEEPER))},
    ),
    Case(
        "inspect .eval sample nested too deep",
        ("import", "inspect", "{d}/deep.eval", "-o", "{d}/o.parquet"),
        ("deep.eval", "samples/q01_epoch_1.json", LIMIT),
        {
            "deep.eval": _eval_member(
                INSPECT_DEFLATE[0],
                "samples/q01_epoch_1.json",
                '{"id": "q01", "x": ' + DEEPEST + "}",
            )
        },
    ),
    Case(
        "promptfoo .json string past the length limit",
        ("import", "promptfoo", "{d}/results.json", "-o", "{d}/o.parquet"),
        ("results.json", "longer than 0.01 MB", "EVALDELTA_MAX_STRING_MB"),
        {"results.json": _json_log(PROMPTFOO, _long_output)},
        {"EVALDELTA_MAX_STRING_MB": "0.01"},
    ),
    Case(
        "promptfoo .jsonl line nested too deep",
        ("import", "promptfoo", "{d}/results.jsonl", "-o", "{d}/o.parquet"),
        ("results.jsonl", "line 2", LIMIT),
        {
            "results.jsonl": lambda p: p.write_text(
                (LOGS / "promptfoo" / "v0.121.20" / "results.jsonl").read_text().splitlines()[0]
                + '\n{"promptIdx": 0, "testIdx": 1, "deep": '
                + DEEPER
                + "}\n"
            )
        },
    ),
    Case(
        "policy nested 100,000 deep",
        ("gate", "{d}/r.csv", "--policy", "{d}/p.toml"),
        ("p.toml", LIMIT),
        {"r.csv": GOOD, "p.toml": f"max_regression = {DEEPEST}\n"},
    ),
    Case(
        "policy nested past the limit by dotted keys",
        ("gate", "{d}/r.csv", "--policy", "{d}/p.toml"),
        ("p.toml", LIMIT),
        {"r.csv": GOOD, "p.toml": ".".join(["a"] * 201) + " = 1\n"},
    ),
    Case(
        "policy larger than the text limit",
        ("gate", "{d}/r.csv", "--policy", "{d}/p.toml"),
        ("p.toml", "16 MB"),
        {"r.csv": GOOD, "p.toml": "# " + "x" * (16 * 1024 * 1024) + "\n"},
    ),
    Case(
        "regression set nested too deep",
        ("cases", "list", "--set", "{d}/r.toml"),
        ("r.toml", LIMIT),
        {"r.toml": f"version = 1\nrevision = {DEEPEST}\n"},
    ),
    Case(
        "run config nested 100,000 deep",
        ("run", "{d}/cases.jsonl", "--config", "{d}/run.toml"),
        ("run.toml", LIMIT),
        {"cases.jsonl": '{"case_id": "1"}\n', "run.toml": f"repeats = {DEEPEST}\n"},
    ),
    Case(
        "checks file nested 100,000 deep",
        ("score", "{d}/r.csv", "--checks", "{d}/c.yaml", "-o", "{d}/o.csv"),
        ("c.yaml", "line 1", LIMIT),
        {"r.csv": OUTPUTS, "c.yaml": f"checks: {DEEPEST}\n"},
    ),
    Case(
        "checks file of nested blocks past the limit",
        ("score", "{d}/r.csv", "--checks", "{d}/c.yaml", "-o", "{d}/o.csv"),
        ("c.yaml", LIMIT),
        {
            "r.csv": OUTPUTS,
            "c.yaml": "".join(f"{'  ' * i}k{i}:\n" for i in range(201)) + "  " * 201 + "x\n",
        },
    ),
    Case(
        "checks file whose aliases expand to a billion patterns",
        ("score", "{d}/r.csv", "--checks", "{d}/c.yaml", "-o", "{d}/o.csv"),
        ("c.yaml", "aliases expand", "1,000,000"),
        {"r.csv": OUTPUTS, "c.yaml": _laughs()},
    ),
    Case(
        "checks file whose alias names its own node",
        ("score", "{d}/r.csv", "--checks", "{d}/c.yaml", "-o", "{d}/o.csv"),
        ("c.yaml", "line 1", "cycle"),
        {"r.csv": OUTPUTS, "c.yaml": "checks: &a [*a]\n"},
    ),
    Case(
        "json schema file nested too deep",
        ("score", "{d}/r.csv", "--checks", "{d}/c.yaml", "-o", "{d}/o.csv"),
        ("c.yaml", "schema_file", LIMIT),
        {
            "r.csv": OUTPUTS,
            "c.yaml": "checks:\n- id: s\n  spec: s\n  kind: json_schema\n  schema_file: s.json\n",
            "s.json": '{"type": ' + DEEPEST + "}",
        },
    ),
    Case(
        "checks file larger than the YAML limit",
        ("score", "{d}/r.csv", "--checks", "{d}/c.yaml", "-o", "{d}/o.csv"),
        ("c.yaml", "2 MB", "YAML"),
        {"r.csv": OUTPUTS, "c.yaml": "# " + "x" * (2 * 1024 * 1024) + "\n"},
    ),
    Case(
        "mix nested 100,000 deep",
        ("compare", "{d}/r.csv", "--mix", "{d}/m.json"),
        ("m.json", LIMIT),
        {"r.csv": TWO, "m.json": '{"s1": ' + DEEPEST + ', "s2": 1}'},
    ),
    Case(
        "graded score of 1e300",
        ("compare", "{d}/r.csv"),
        ("r.csv", "line 2", "'score'", "'1e300'", "1e15"),
        {"r.csv": "case_id,arm,score\n1,a,1e300\n1,b,0\n2,a,1\n2,b,2\n"},
    ),
    Case(
        "negative score past the range in parquet",
        ("compare", "{d}/r.parquet"),
        ("row 1", "'score'", "1e15"),
        {
            "r.parquet": _parquet(
                {
                    "case_id": ["1", "1", "2", "2"],
                    "arm": ["a", "b", "a", "b"],
                    "score": [-2e15, 0.0, 1.0, 2.0],
                }
            )
        },
    ),
    Case(
        "cost of 1e300 dollars",
        ("compare", "{d}/r.csv"),
        ("r.csv", "line 2", "'cost_usd'", "'1e300'", "1e15"),
        {"r.csv": "case_id,arm,score,cost_usd\n1,a,1,1e300\n1,b,0,1\n2,a,1,1\n2,b,1,1\n"},
    ),
    Case(
        "parquet whose evaldelta pins nest 100,000 deep",
        ("compare", "{d}/r.parquet"),
        ("r.parquet", LIMIT),
        {"r.parquet": _parquet_with_pins(DEEPEST)},
    ),
    Case(
        "imported score of 1e300",
        ("compare", "{d}/results.jsonl", "--metric", "score"),
        ("results.jsonl", "'score'", "1e15"),
        {"results.jsonl": lambda p: _huge_promptfoo_score(p)},
    ),
    Case(
        "csv of 5,000 columns",
        ("compare", "{d}/wide.csv"),
        ("wide.csv", "line 1", "5,003 columns", "4,096"),
        {
            "wide.csv": "case_id,arm,score,"
            + ",".join(f"x{i}" for i in range(5000))
            + "\n"
            + "".join(
                f"{i // 2},{'ab'[i % 2]},1," + ",".join(["1"] * 5000) + "\n" for i in range(4)
            )
        },
    ),
]
CASES += HOSTILE


def test_the_corpus_is_large_and_every_name_is_unique() -> None:
    assert len(CASES) >= 60
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input_is_one_line_with_exit_2(  # type: ignore[no-untyped-def]
    case: Case, tmp_path: Path, run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in case.env.items():
        monkeypatch.setenv(key, value)
    for name, content in case.files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if callable(content):
            content(path)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    args = [a.replace("{d}", str(tmp_path)) for a in case.args]
    one_line_error(run_cli(*args), *case.needles)
