"""CLI commands for requirement checks and the reference-bias audit: ``score`` and ``audit``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from evaldelta.commands._shared import OutputOpt, write_output
from evaldelta.errors import UsageError

if TYPE_CHECKING:  # loaded by the commands that use them, so --help stays fast
    from evaldelta.checks import CheckSet
    from evaldelta.provider import Provider
    from evaldelta.stats._leakage import LeakageRule

__all__ = ["register"]


def _provider(name: str, base_url: str | None) -> Provider:
    """A judge provider by kind (openai, anthropic, litellm, local), from the runner's registry."""
    from evaldelta.run.providers.registry import create_provider

    return create_provider(name, {"base_url": base_url} if base_url else {})


def score_cmd(
    files: Annotated[
        list[str] | None,
        typer.Argument(
            help="[FORMAT:]PATH of rows with an output column, or of a log (Inspect AI, "
            "promptfoo, ...); or --store.",
            metavar="[[FORMAT:]PATH]...",
        ),
    ] = None,
    checks: Annotated[Path | None, typer.Option("--checks", help="The checks file (YAML).")] = None,
    output: OutputOpt = None,
    store: Annotated[
        Path | None,
        typer.Option("--store", help="Score a run of this run store and write the scores back."),
    ] = None,
    run: Annotated[
        str | None, typer.Option("--run", help="The run to score (id or prefix; default newest).")
    ] = None,
    cases: Annotated[
        Path | None, typer.Option("--cases", help="Case fields by case_id, joined onto the rows.")
    ] = None,
    skip_judge: Annotated[
        bool, typer.Option("--skip-judge", help="Leave out judge checks; pass covers the rest.")
    ] = False,
    judge_provider: Annotated[
        str | None,
        typer.Option("--judge-provider", help="Provider kind for judge checks (default: file's)."),
    ] = None,
    judge_base_url: Annotated[
        str | None, typer.Option("--judge-base-url", help="Base URL of the judge's server.")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the judge's shuffle (recorded).")] = 0,
) -> None:
    """Score attempts on a checks file: writes check.<id>, pass and judge_score columns.

    With --store, scores a run's stored attempts and writes the scores back into the store,
    where compare --store --metric pass reads them; scoring a run again replaces its scores.
    """
    from evaldelta.checks import join_cases, load_checks, read_rows, score_rows, write_rows
    from evaldelta.sources import parse_source

    if checks is None:
        raise UsageError("give --checks checks.yaml")
    if store is not None and files:
        raise UsageError("give FILEs or --store, not both")
    if store is None:
        if run is not None:
            raise UsageError("--run needs --store PATH")
        if not files:
            raise UsageError("give the FILE(s) to score, or --store PATH to score a stored run")
    if store is not None and not store.is_file():
        from evaldelta.errors import StoreError

        raise StoreError(f"the run store {store} does not exist")
    check_set = load_checks(checks)
    provider = None
    if check_set.judges and not skip_judge:
        names = {j.provider for j in check_set.judges}
        provider = _provider(judge_provider or sorted(names)[0], judge_base_url)
    if store is not None:
        _score_store(store, run, check_set, provider, skip_judge, seed, cases, output)
        return
    if output is None:
        raise UsageError("give -o OUT (.csv, .jsonl or .parquet) for the scored rows")
    rows = [r for f in files or [] for r in read_rows(parse_source(f))]
    if cases is not None:
        rows = join_cases(rows, read_rows(cases), str(cases))
    result = score_rows(
        rows,
        check_set,
        provider=provider,
        skip_judge=skip_judge,
        seed=seed,
        where=", ".join(map(str, files or [])),
        close_provider=True,
    )
    write_rows(result.rows, output)
    meta = _write_meta(result.meta(), output)
    passed = sum(1 for r in result.rows if r.get("pass") == 1)
    scored = sum(1 for r in result.rows if r.get("pass") is not None)
    note = f" (judge checks left out: {', '.join(result.skipped)})" if result.skipped else ""
    typer.echo(
        f"scored {len(result.rows)} rows on {len(result.included)} checks{note}: "
        f"{passed}/{scored} pass every check; wrote {output} and {meta.name}",
        err=True,
    )


def _write_meta(meta: dict[str, object], output: Path) -> Path:
    path = output.with_name(output.name + ".meta.json")
    path.write_text(json.dumps(meta, indent=2, default=str) + "\n", encoding="utf-8")
    return path


def _score_store(
    store: Path,
    run: str | None,
    check_set: CheckSet,
    provider: Provider | None,
    skip_judge: bool,
    seed: int,
    cases: Path | None,
    output: Path | None,
) -> None:
    """``score --store``: score a stored run in place; say what was replaced."""
    from evaldelta.checks import read_rows, write_rows
    from evaldelta.checks._store import score_store

    done = score_store(
        store,
        run,
        check_set,
        provider=provider,
        skip_judge=skip_judge,
        seed=seed,
        cases=read_rows(cases) if cases is not None else None,
        cases_where=str(cases),
        close_provider=True,
    )
    result, prev = done.result, done.previous
    if prev is not None:
        follows = "; its score column follows the new pass" if prev.get("score_is_pass") else ""
        typer.echo(
            f"evaldelta: replaced the earlier scores of run {done.run_id} (checks "
            f"{prev['checks_path']}, sha256 {str(prev['checks_sha256'])[:12]}, by "
            f"{prev['source']} at {prev['scored_at']:%Y-%m-%d %H:%M:%S}){follows}",
            err=True,
        )
    if output is not None:
        write_rows(result.rows, output)
        _write_meta(result.meta(), output)
    passed = sum(1 for r in result.rows if r.get("pass") == 1)
    scored = sum(1 for r in result.rows if r.get("pass") is not None)
    note = f" (judge checks left out: {', '.join(result.skipped)})" if result.skipped else ""
    typer.echo(
        f"scored {len(result.rows)} attempts of run {done.run_id} on {len(result.included)} "
        f"checks{note}: {passed}/{scored} pass every check; wrote {', '.join(done.metrics)} "
        f"to {store}",
        err=True,
    )
    typer.echo(
        f"evaldelta compare --store {store} --run {done.run_id} --metric pass"
        + "".join([f" --metric {m}" for m in done.metrics if m.startswith("check.")][:2]),
        err=True,
    )


def audit_cmd(
    files: Annotated[
        list[str] | None,
        typer.Argument(help="Outputs: case_id, arm, output ([FORMAT:]PATH, or a log)."),
    ] = None,
    goldens: Annotated[
        list[str] | None,
        typer.Option(
            "--goldens",
            help="ARM=PATH: goldens recorded from ARM (folder of "
            "<case_id>.txt, or a file with case_id and --golden-column). Repeatable.",
        ),
    ] = None,
    golden_column: Annotated[str, typer.Option(help="Goldens column in a file.")] = "reference",
    checks: Annotated[Path | None, typer.Option("--checks", help="Checks file for triage.")] = None,
    cases: Annotated[Path | None, typer.Option("--cases", help="Case fields by case_id.")] = None,
    claim: Annotated[str | None, typer.Option(help="What the suite reported, e.g. 40/40.")] = None,
    labels: Annotated[
        Path | None, typer.Option(help="Retrieval labels with an origin column.")
    ] = None,
    runs: Annotated[
        Path | None, typer.Option(help="Retrieval results: query_id, arm, doc_id.")
    ] = None,
    k: Annotated[
        int | None, typer.Option(help="Top-k cut-off of retrieval results (rank).")
    ] = None,
    format: Annotated[str, typer.Option("--format", help="text or json.")] = "text",
    output: OutputOpt = None,
    leakage: Annotated[
        str | None,
        typer.Option(
            help="Rubric leakage rule RATE,SHARE,ALPHA (default 0.9,0.8,0.05): flag a check "
            "when the favoured arm passes >= RATE, >= SHARE of the discordant pairs go its "
            "way, and the Holm-adjusted exact McNemar p < ALPHA.",
            metavar="RATE,SHARE,ALPHA",
        ),
    ] = None,
) -> None:
    """Reference-bias audit: self-agreement, triage, symmetry, rubric leakage; or retrieval."""
    from evaldelta.checks import join_cases, load_checks, read_rows
    from evaldelta.checks.audit import audit, read_goldens, retrieval_audit
    from evaldelta.report.audit import audit_to_json, render_audit_text, render_retrieval_text
    from evaldelta.sources import parse_source

    if format not in ("text", "json"):
        raise UsageError(f"--format is text or json, not {format!r}")
    if labels is not None or runs is not None:
        if labels is None or runs is None:
            raise UsageError("the retrieval audit needs both --labels and --runs")
        res = retrieval_audit(read_rows(labels), read_rows(runs), k=k)
        write_output(audit_to_json(res) if format == "json" else render_retrieval_text(res), output)
        return
    if not files:
        raise UsageError("give the outputs FILE(s), or --labels and --runs for retrieval")
    rows = [r for f in files for r in read_rows(parse_source(f))]
    if cases is not None:
        rows = join_cases(rows, read_rows(cases), str(cases))
    yardsticks = []
    for value in goldens or []:
        author, sep, path = value.partition("=")
        if not sep or not author.strip() or not path.strip():
            raise UsageError(f"--goldens takes ARM=PATH, not {value!r}")
        yardsticks.append(read_goldens(Path(path.strip()), author.strip(), golden_column))
    check_set = load_checks(checks) if checks is not None else None
    result = audit(
        rows,
        yardsticks,
        checks=check_set,
        where=", ".join(map(str, files)),
        leakage_rule=_leakage_rule(leakage),
    )
    text = audit_to_json(result) if format == "json" else render_audit_text(result, claim=claim)
    write_output(text, output)


def _leakage_rule(value: str | None) -> LeakageRule | None:
    """``--leakage RATE,SHARE,ALPHA`` as a rule; a bad value is a one-line usage error."""
    from evaldelta.stats._leakage import LeakageRule

    if value is None:
        return None
    parts = value.split(",")
    try:
        if len(parts) != 3:
            raise ValueError("three numbers are needed")
        rate, share, alpha = (float(p) for p in parts)
        return LeakageRule(min_pass_rate=rate, min_share=share, alpha=alpha)
    except ValueError as exc:
        raise UsageError(f"--leakage takes RATE,SHARE,ALPHA, not {value!r}: {exc}") from None


def register(app: typer.Typer) -> None:
    """Add ``score`` and ``audit`` to ``app``."""
    app.command("score")(score_cmd)
    app.command("audit")(audit_cmd)
