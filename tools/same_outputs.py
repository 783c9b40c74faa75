"""Are the reports the same, byte for byte, as at another commit? (issue 25, "done when")

    python tools/same_outputs.py                 # against the commit named in BASELINE below
    python tools/same_outputs.py --against REF   # against any commit, branch or tag

The script checks out REF into a temporary git worktree, then captures the same scenarios
twice, each in a fresh interpreter whose ``evaldelta`` is one tree's ``src/``: ``evaldelta
demo`` (its printout, JSON and HTML), and for the four real datasets in ../shared/data/real
and the bundled seed data, ``compare`` as text, terminal (rich, colour on), Markdown, HTML and
JSON, gates with a policy (text, JUnit, exit code), ``plan`` and ``cases``. The inputs are
the same files in both runs (the bundled data from each tree's own package, which reports
name by file name alone). Every capture must be byte-identical, except the JSON
reports, which may gain fields (each old value must be present and equal in the new one).
Exit 0 when the same, 1 with the differing files named.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT.parent / "shared" / "data" / "real"
DATA = ROOT / "src" / "evaldelta" / "data"  # set to the captured tree's own in capture()
BASELINE = "0827dc6"  # main before the issue 25 refactor

POLICY = """\
basis = "interval"
min_informative = 10
[defaults]
max_regression = 0.05
min_cases = 20
min_score = 0.3
[standardized]
mix = "chosen"
margin = 0.02
"""

POLICY_004 = """\
basis = "interval"
max_cost_ratio = 1.5
[defaults]
max_regression = 0.15
min_score = 4.0
[critical]
cases = ["R00112"]
require = "all"
pass_threshold = 4.0
"""

SWE = "swebench_verified_bash_only"
SONNET = ("Claude 4 Sonnet (20250514)", "Claude 4.5 Sonnet (20250929)")


def _real(name: str) -> str:
    return str(REAL / name / f"{name}.csv")


def _scenarios(policy: str, policy_004: str) -> dict[str, list[str]]:
    """name -> the compare arguments (formats are added per capture)."""
    d = DATA
    out = {}
    out["real-sonnet-pair"] = [
        _real(SWE),
        "--baseline",
        SONNET[0],
        "--candidate",
        SONNET[1],
        "--mix",
        "equal",
        "--policy",
        policy,
    ]
    out["real-lcb-by-pair"] = [
        _real("livecodebench_codegen"),
        "--baseline",
        "GPT-4O-2024-05-13",
        "--candidate",
        "GPT-4O-2024-08-06",
        "--list-limit",
        "0",
    ]
    out["seed000"] = [
        str(d / "seed000.csv"),
        "--baseline",
        "v1",
        "--mix",
        "actual",
        "--mix",
        "equal",
        "--traffic",
        str(d / "traffic000.csv"),
    ]
    out["seed001"] = [
        str(d / "seed001.csv"),
        "--baseline",
        "A",
        "--mix",
        "equal",
        "--policy",
        policy,
    ]
    out["seed002"] = [str(d / "seed002.csv"), "--baseline", "incumbent"]
    out["seed002-upstream"] = [
        str(d / "seed002_upstream.csv"),
        "--baseline",
        "incumbent",
        "--expect-change",
        "prompt",
    ]
    out["seed004"] = [
        str(d / "seed004.csv"),
        "--baseline",
        "always_strong",
        "--candidate",
        "cascade",
        "--candidate",
        "always_cheap",
        "--three-arm",
        "always_cheap,cascade,always_strong",
        "--traffic",
        str(d / "traffic004.csv"),
        "--policy",
        policy_004,
    ]
    return out


REAL_ALL = (SWE, "swebench_pro_scale", "livecodebench_codegen", "metr_time_horizon")


def _every_arm(name: str, out: Path) -> None:
    """A real dataset, every arm against the first: compared once, rendered in each format
    (the compare takes 5-15 s; the CLI's formats print these same renderings)."""
    from rich.console import Console

    from evaldelta.comparison import compare
    from evaldelta.report import render_json, render_markdown, render_text
    from evaldelta.report.html import render_html
    from evaldelta.report.terminal import print_terminal

    result = compare([_real(name)])
    stem = f"real-{name}"
    out.joinpath(f"{stem}.txt").write_text(render_text(result), encoding="utf-8")
    out.joinpath(f"{stem}.md").write_text(render_markdown(result), encoding="utf-8")
    out.joinpath(f"{stem}.html").write_text(render_html(result), encoding="utf-8")
    out.joinpath(f"{stem}.json").write_text(f"{stem}\n0\n{render_json(result)}", encoding="utf-8")
    with out.joinpath(f"{stem}.terminal").open("w", encoding="utf-8") as f:
        print_terminal(
            result,
            Console(
                file=f,
                force_terminal=True,
                color_system="standard",
                width=120,
                highlight=False,
                soft_wrap=True,
            ),
        )


def _invoke(app: Any, args: list[str], out: Path, name: str) -> None:
    from typer.testing import CliRunner

    result = CliRunner().invoke(app, args, catch_exceptions=False)
    out.joinpath(name).write_text(
        f"$ evaldelta {' '.join(_short(a) for a in args)}\nexit {result.exit_code}\n"
        f"{result.stdout}",
        encoding="utf-8",
    )


def _short(arg: str) -> str:
    """An argument with the machine's folders taken out (the two trees differ there)."""
    for folder, label in ((str(REAL), "REAL"), (str(DATA), "DATA"), (tempfile.gettempdir(), "TMP")):
        arg = arg.replace(folder, label)
    return arg


def _terminal(app: Any, args: list[str], out: Path, name: str) -> None:
    """The rich report, as a terminal shows it (stdout a tty, colour on, COLUMNS wide)."""
    with _tty():
        _invoke(app, ["compare", *args], out, name)


@contextlib.contextmanager
def _tty() -> Any:
    """CliRunner's stdout says it is a terminal, so compare takes the rich path."""
    import click.testing

    original = click.testing._NamedTextIOWrapper.isatty  # type: ignore[attr-defined]
    click.testing._NamedTextIOWrapper.isatty = lambda self: True  # type: ignore[attr-defined]
    try:
        yield
    finally:
        click.testing._NamedTextIOWrapper.isatty = original  # type: ignore[attr-defined]


def capture(out: Path, quick: bool = False) -> None:
    """Every scenario's outputs into ``out`` (runs in the tree whose evaldelta is imported)."""
    import evaldelta
    from evaldelta.cli import app

    global DATA
    DATA = Path(evaldelta.__file__).parent / "data"  # reports name bundled files short
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="same-outputs-"))
    policy, policy_004 = Path("policy.toml"), Path("policy004.toml")
    cwd = Path.cwd()
    os.chdir(work)
    try:
        policy.write_text(POLICY, encoding="utf-8")
        policy_004.write_text(POLICY_004, encoding="utf-8")
        for name in () if quick else REAL_ALL:
            _every_arm(name, out)
        Path("demo").mkdir()
        _invoke(app, ["demo", "--out", "demo"], out, "demo.txt")
        for f in sorted(Path("demo").iterdir()):
            shutil.copy(f, out / f"demo-{f.name}")
        for name, args in _scenarios(str(policy), str(policy_004)).items():
            for fmt, ext in (
                ("text", "txt"),
                ("markdown", "md"),
                ("html", "html"),
                ("json", "json"),
            ):
                _invoke(app, ["compare", *args, "--format", fmt], out, f"{name}.{ext}")
            _terminal(app, args, out, f"{name}.terminal")
            if "--policy" in args:
                _invoke(app, ["compare", *args, "--format", "junit"], out, f"{name}.junit.xml")
                _invoke(app, ["gate", *args], out, f"{name}.gate.txt")
        _invoke(
            app,
            ["plan", str(DATA / "seed004.csv"), "--baseline", "always_strong"],
            out,
            "plan-seed004.txt",
        )
        _invoke(app, ["plan", _real(SWE), "--baseline", SONNET[0]], out, "plan-swe.txt")
    finally:
        os.chdir(cwd)
        shutil.rmtree(work, ignore_errors=True)
    out.joinpath("WHICH").write_text(str(Path(evaldelta.__file__).parent) + "\n")


def _contains(old: Any, new: Any, where: str = "$") -> list[str]:
    """Where ``new`` lacks or changes something of ``old`` (new dict keys are allowed)."""
    if isinstance(old, dict) and isinstance(new, dict):
        return [
            p
            for k, v in old.items()
            for p in (
                _contains(v, new[k], f"{where}.{k}") if k in new else [f"{where}.{k} missing"]
            )
        ]
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        pairs = enumerate(zip(old, new, strict=True))
        return [p for i, (a, b) in pairs for p in _contains(a, b, f"{where}[{i}]")]
    return [] if old == new else [f"{where}: {old!r} -> {new!r}"[:200]]


def _json_body(text: str) -> Any:
    """(command line, exit code, JSON) of a captured run; a JSON file written as is has none."""
    if text.lstrip().startswith(("{", "[")):
        return "", "", json.loads(text)
    head, _, body = text.partition("\n")  # the command line
    code, _, body = body.partition("\n")
    return head, code, json.loads(body) if body.strip() else None


def differences(before: Path, after: Path) -> list[str]:
    problems = []
    names = {p.name for p in before.iterdir()} | {p.name for p in after.iterdir()}
    listed = sorted(names - {"WHICH"})
    for name in listed:
        a, b = before / name, after / name
        if not a.exists() or not b.exists():
            problems.append(f"{name}: only {'after' if b.exists() else 'before'}")
            continue
        old, new = a.read_text(encoding="utf-8"), b.read_text(encoding="utf-8")
        if name.endswith(".json") and old != new:
            try:
                (h1, c1, j1), (h2, c2, j2) = _json_body(old), _json_body(new)
            except json.JSONDecodeError:
                problems.append(f"{name}: not JSON")
                continue
            lost = (
                ([f"{h1!r} != {h2!r}"] if h1 != h2 else [])
                + ([f"{c1} != {c2}"] if c1 != c2 else [])
                + _contains(j1, j2)
            )
            problems.extend(f"{name}: {p}" for p in lost[:5])
        elif old != new:
            diff = difflib.unified_diff(
                old.splitlines(), new.splitlines(), "before", "after", lineterm="", n=1
            )
            problems.append(f"{name}:\n" + "\n".join(list(diff)[:30]))
    return problems


def _capture_tree(src: Path, out: Path, quick: bool) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": str(src),
        "COLUMNS": "120",
        "NO_COLOR": "",
        "TERM": "xterm-256color",
    }
    command = [sys.executable, __file__, "--capture", str(out), *(["--quick"] if quick else [])]
    subprocess.run(command, env=env, check=True)
    which = out.joinpath("WHICH").read_text().strip()
    if Path(which) != src / "evaldelta":
        raise SystemExit(
            f"captured {which}, not {src / 'evaldelta'}: is evaldelta installed non-editable?"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", default=BASELINE, help="the commit to compare with")
    parser.add_argument("--capture", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--keep", type=Path, help="keep both captures in this folder")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="skip the four every-arm real datasets (about 1 of 4.5 minutes)",
    )
    args = parser.parse_args()
    if args.capture:
        capture(args.capture, args.quick)
        return 0
    keep = args.keep or Path(tempfile.mkdtemp(prefix="same-outputs-"))
    tree = Path(tempfile.mkdtemp(prefix="same-outputs-tree-"))
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(tree), args.against],
        check=True,
    )
    try:
        print(f"capturing {args.against} ...", file=sys.stderr)
        _capture_tree(tree / "src", keep / "before", args.quick)
        print("capturing this tree ...", file=sys.stderr)
        _capture_tree(ROOT / "src", keep / "after", args.quick)
    finally:
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False
        )
    problems = differences(keep / "before", keep / "after")
    count = len(list((keep / "after").iterdir())) - 1
    for p in problems:
        print(p)
    print(f"{count} outputs; {len(problems)} differ ({keep})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
