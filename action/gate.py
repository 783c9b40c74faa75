"""The evaldelta GitHub Action's step: gate, write the job summary, keep ONE living PR comment.

``action.yml`` (the repository's root) runs this file with the action's inputs as ``INPUT_*``
variables, after installing evaldelta. It uses only the standard library besides evaldelta,
and talks to the REST API at ``GITHUB_API_URL`` (as Actions sets it), so the tests run it
against a fake API on 127.0.0.1 (``tests/servers/fake_github.py``):

1. compare the rows (paths or globs, any format evaldelta reads) and, with a policy, gate;
   write ``OUTPUT_DIR/report.md``, ``report.html`` and, with a policy, ``verdict.junit.xml``;
2. append the Markdown to the job summary (``GITHUB_STEP_SUMMARY``);
3. on a pull request, find the comment carrying this workflow and job's hidden marker
   (``GET /repos/{repo}/issues/{n}/comments``, every page) and edit it in place
   (``PATCH /repos/{repo}/issues/comments/{id}``), or create it once
   (``POST /repos/{repo}/issues/{n}/comments``); a pull request from a fork (its token is
   read-only) or a 403 writes the summary only and says why, without failing; the comment
   is cut below GitHub's 65,536-character limit, table rows first, with a line saying how
   many were left out and a link to the job summary;
4. set the outputs (``decision``, ``exit-code``, ``report-markdown``, ``report-html``,
   ``report-junit``) and exit 1 when the decision is in ``fail-on`` (2 for bad input).
"""

from __future__ import annotations

import glob
import json
import os
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

COMMENT_LIMIT = 65_536  # GitHub's maximum comment body, in characters
SUMMARY_LIMIT = 1_000_000  # a step's job summary may hold 1 MiB
MARGIN = 600  # room kept for the note on what was cut
API_VERSION = "2022-11-28"


class ActionError(Exception):
    """Bad input to the action: one line, exit 2."""


@dataclass(frozen=True)
class Inputs:
    """The action's inputs, as ``action.yml`` passes them."""

    rows: list[str]
    policy: str | None
    baseline: str | None
    candidates: list[str]
    traffic: str | None
    by: str | None
    fail_on: set[str]
    comment: bool
    output_dir: Path


def _words(text: str) -> list[str]:
    return [w for line in text.splitlines() for w in line.replace(",", " ").split() if w]


def read_inputs(env: dict[str, str]) -> Inputs:
    """The inputs from ``INPUT_*`` variables; bad values raise :class:`ActionError`."""

    def get(name: str) -> str:
        return env.get(f"INPUT_{name.upper().replace('-', '_')}", "").strip()

    patterns = [line.strip() for line in get("rows").splitlines() if line.strip()]
    if not patterns:
        raise ActionError("input 'rows' is empty: give the files to compare (paths or globs)")
    rows: list[str] = []
    for pattern in patterns:
        found = sorted(glob.glob(pattern, recursive=True))
        if not found:
            raise ActionError(f"input 'rows': {pattern!r} matches no file or folder")
        rows.extend(found)
    fail_on = set(_words(get("fail-on") or "fail"))
    if not fail_on <= {"fail", "inconclusive"}:
        bad = sorted(fail_on - {"fail", "inconclusive"})[0]
        raise ActionError(f"input 'fail-on': {bad!r} is not fail or inconclusive")
    comment = get("comment").lower() or "on"
    if comment not in ("on", "off", "true", "false"):
        raise ActionError(f"input 'comment': {comment!r} is not on or off")
    return Inputs(
        rows=rows,
        policy=get("policy") or None,
        baseline=get("baseline") or None,
        candidates=_words(get("candidates")),
        traffic=get("traffic") or None,
        by=get("by") or None,
        fail_on=fail_on,
        comment=comment in ("on", "true"),
        output_dir=Path(get("output-dir") or "evaldelta-report"),
    )


@dataclass(frozen=True)
class Outcome:
    """What the gate decided and wrote."""

    decision: str  # pass | fail | inconclusive | none (no policy) | error
    exit_code: int
    markdown: str
    paths: dict[str, Path]


def run_gate(inputs: Inputs) -> Outcome:
    """Compare (and gate, with a policy); write the reports. Raises evaldelta's errors."""
    from evaldelta.comparison import compare
    from evaldelta.gating import compare_with_policy
    from evaldelta.report import render_markdown
    from evaldelta.report.html import render_html
    from evaldelta.report.junit import render_verdict_junit
    from evaldelta.report.verdict import render_verdict_markdown

    options: dict[str, Any] = {
        "baseline": inputs.baseline,
        "candidates": inputs.candidates or None,
        "traffic": inputs.traffic,
    }
    if inputs.by:
        options["by"] = (inputs.by,)
    out = inputs.output_dir
    out.mkdir(parents=True, exist_ok=True)
    paths = {"markdown": out / "report.md", "html": out / "report.html"}
    if inputs.policy is None:
        comparison = compare(inputs.rows, **options)
        markdown = render_markdown(comparison)
        paths["html"].write_text(render_html(comparison), encoding="utf-8")
        decision, code = "none", 0
    else:
        import hashlib

        comparison, verdict = compare_with_policy(inputs.rows, inputs.policy, **options)
        details = render_markdown(comparison)
        markdown = (
            render_verdict_markdown(verdict)
            + "\n<details><summary>The comparison</summary>\n\n"
            + details
            + "\n</details>\n"
        )
        paths["html"].write_text(render_html(comparison, verdict), encoding="utf-8")
        digest = hashlib.sha256(Path(inputs.policy).read_bytes()).hexdigest()
        paths["junit"] = out / "verdict.junit.xml"
        paths["junit"].write_text(
            render_verdict_junit(verdict, comparison, policy_sha256=digest), encoding="utf-8"
        )
        decision, code = verdict.decision, verdict.exit_code
    paths["markdown"].write_text(markdown, encoding="utf-8")
    return Outcome(decision, code, markdown, paths)


def marker(env: dict[str, str]) -> str:
    """The hidden line that finds this workflow and job's comment again."""
    where = f"{env.get('GITHUB_WORKFLOW', '')}/{env.get('GITHUB_JOB', '')}".replace("--", "- -")
    return f"<!-- evaldelta-gate: {where} -->"


def summary_url(env: dict[str, str]) -> str:
    """The run's page, where the job summary is shown."""
    server = env.get("GITHUB_SERVER_URL", "https://github.com")
    repo, run = env.get("GITHUB_REPOSITORY", ""), env.get("GITHUB_RUN_ID", "")
    return f"{server}/{repo}/actions/runs/{run}"


def fit_comment(body: str, url: str, limit: int = COMMENT_LIMIT) -> str:
    """``body`` cut below ``limit`` characters: table rows go first, from the last table up.

    Each table that lost rows is followed by a line saying how many, with a link to the
    job summary, which holds them all. A body still too long is cut at a line, likewise.
    """
    if len(body) <= limit:
        return body
    lines = body.split("\n")
    rows = [i for i, line in enumerate(lines) if _is_table_row(lines, i)]
    budget = limit - MARGIN
    size = len(body)
    dropped: set[int] = set()
    for i in reversed(rows):
        if size <= budget:
            break
        dropped.add(i)
        size -= len(lines[i]) + 1
    out: list[str] = []
    cut = 0
    for i, line in enumerate(lines):
        if i in dropped:
            cut += 1
            continue
        if cut and not line.startswith("|"):
            out.append(
                f"\n_{cut} more rows left out to fit GitHub's comment limit: every row "
                f"is in the [job summary]({url})._\n"
            )
            cut = 0
        out.append(line)
    if cut:
        out.append(f"\n_{cut} more rows left out: every row is in the [job summary]({url})._")
    text = "\n".join(out)
    if len(text) > limit:
        head = text[:budget].rsplit("\n", 1)[0]
        text = head + (
            f"\n\n_The rest is left out to fit GitHub's comment limit: see the "
            f"[job summary]({url})._\n"
        )
    return text


def _is_table_row(lines: list[str], i: int) -> bool:
    """A Markdown table's body row (not its header or separator)."""
    if not lines[i].startswith("|") or i < 2:
        return False
    return lines[i - 1].startswith("|") and lines[i - 2].startswith("|")


class GitHubAPI:
    """The few REST calls the action makes, with the token Actions gives the job."""

    def __init__(self, env: dict[str, str]) -> None:
        self.base = env.get("GITHUB_API_URL", "https://api.github.com").rstrip("/")
        self.repo = env["GITHUB_REPOSITORY"]
        self.token = env.get("GITHUB_TOKEN", "")

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        """One request; the parsed JSON answer. HTTP errors raise ``urllib.error.HTTPError``."""
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            f"{self.base}{path}",
            data=data,
            method=method,
            headers={
                "Accept": "application/vnd.github+json",
                "Authorization": f"Bearer {self.token}",
                "X-GitHub-Api-Version": API_VERSION,
                "User-Agent": "evaldelta-action",
                **({"Content-Type": "application/json"} if data is not None else {}),
            },
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read() or b"null")

    def find_comment(self, number: int, mark: str) -> int | None:
        """The id of the pull request's comment carrying ``mark``, every page searched."""
        page = 1
        while True:
            comments = self.call(
                "GET", f"/repos/{self.repo}/issues/{number}/comments?per_page=100&page={page}"
            )
            for comment in comments:
                if mark in (comment.get("body") or ""):
                    return int(comment["id"])
            if len(comments) < 100:
                return None
            page += 1

    def upsert(self, number: int, mark: str, body: str) -> tuple[str, str]:
        """Edit the marked comment in place, or create it; returns (created|updated, url)."""
        found = self.find_comment(number, mark)
        if found is not None:
            done = self.call("PATCH", f"/repos/{self.repo}/issues/comments/{found}", {"body": body})
            return "updated", str(done.get("html_url", ""))
        done = self.call("POST", f"/repos/{self.repo}/issues/{number}/comments", {"body": body})
        return "created", str(done.get("html_url", ""))


def pull_request(env: dict[str, str]) -> tuple[int | None, bool]:
    """The pull request's number (None outside one) and whether it comes from a fork."""
    if env.get("GITHUB_EVENT_NAME") not in ("pull_request", "pull_request_target"):
        return None, False
    path = env.get("GITHUB_EVENT_PATH")
    if not path or not Path(path).is_file():
        return None, False
    event = json.loads(Path(path).read_text(encoding="utf-8"))
    pr = event.get("pull_request") or {}
    number = pr.get("number") or event.get("number")
    head = ((pr.get("head") or {}).get("repo") or {}).get("full_name")
    base = ((pr.get("base") or {}).get("repo") or {}).get("full_name")
    # pull_request_target runs with the base repository's token: it can write
    fork = env.get("GITHUB_EVENT_NAME") == "pull_request" and head is not None and head != base
    return (int(number) if number is not None else None), fork


def comment_on_pr(env: dict[str, str], inputs: Inputs, markdown: str) -> str:
    """Create or update the one living comment; returns the sentence for the log/summary."""
    if not inputs.comment:
        return "comment: off"
    number, fork = pull_request(env)
    if number is None:
        return "no pull request: the verdict is in the job summary only"
    if fork:
        return (
            "a pull request from a fork gets a read-only token, so no comment was posted: "
            "the verdict is in the job summary (post it from a pull_request_target or "
            "workflow_run workflow to comment on forks)"
        )
    url = summary_url(env)
    body = fit_comment(f"{marker(env)}\n{markdown}\n\n[Job summary]({url})\n", url)
    try:
        how, link = GitHubAPI(env).upsert(number, marker(env), body)
    except urllib.error.HTTPError as exc:
        detail = _api_message(exc)
        if exc.code == 403:
            return (
                f"the token may not comment (403: {detail}): the verdict is in the job summary; "
                "give the job `permissions: pull-requests: write`"
            )
        raise ActionError(f"GitHub API {exc.code} on the pull request comment: {detail}") from None
    except urllib.error.URLError as exc:
        raise ActionError(f"GitHub API unreachable: {exc.reason}") from None
    return f"pull request comment {how}: {link}"


def _api_message(exc: urllib.error.HTTPError) -> str:
    try:
        return str(json.loads(exc.read() or b"{}").get("message", exc.reason))
    except ValueError:
        return str(exc.reason)


def _append(path: str | None, text: str) -> None:
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(text)


def set_outputs(env: dict[str, str], values: dict[str, str]) -> None:
    """``name=value`` lines into ``GITHUB_OUTPUT`` (values here hold no line break)."""
    _append(env.get("GITHUB_OUTPUT"), "".join(f"{k}={v}\n" for k, v in values.items()))


def main(env: dict[str, str] | None = None) -> int:
    """Run the step; returns its exit code."""
    env = dict(os.environ if env is None else env)
    from evaldelta.errors import EvaldeltaError

    try:
        inputs = read_inputs(env)
        outcome = run_gate(inputs)
    except (ActionError, EvaldeltaError, OSError) as exc:
        message = " ".join(str(exc).split())
        print(f"::error title=evaldelta::{message}")
        _append(env.get("GITHUB_STEP_SUMMARY"), f"### evaldelta: error\n\n{message}\n")
        set_outputs(env, {"decision": "error", "exit-code": "2"})
        return 2
    _append(env.get("GITHUB_STEP_SUMMARY"), outcome.markdown[:SUMMARY_LIMIT] + "\n")
    outputs = {"decision": outcome.decision, "exit-code": str(outcome.exit_code)}
    outputs.update({f"report-{k}": str(p) for k, p in outcome.paths.items()})
    set_outputs(env, outputs)
    try:
        said = comment_on_pr(env, inputs, outcome.markdown)
    except ActionError as exc:
        said = f"no comment: {exc}"
        print(f"::warning title=evaldelta::{said}")
    print(f"evaldelta: decision {outcome.decision} (exit {outcome.exit_code}); {said}")
    if "fork" in said or "403" in said:
        print(f"::notice title=evaldelta::{said}")
        _append(env.get("GITHUB_STEP_SUMMARY"), f"\n_{said}._\n")
    return 1 if outcome.decision in inputs.fail_on else 0


if __name__ == "__main__":
    sys.exit(main())
