"""The HTML report in a real headless Chromium, driven over the DevTools protocol (CDP).

Proves, per page: no console error or exception, no network request besides the page itself,
one forest-plot mark per slice, and that hostile case text executes nothing. A screenshot of
seed 004's report is kept under tests/artifacts/; with EVALDELTA_UPDATE_SCREENSHOT=1 it also
replaces the README's docs/img/report.png.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from evaldelta.comparison import compare
from evaldelta.demo.scenarios import SCENARIOS, run_scenario, write_demo_html
from evaldelta.report.html import render_html
from tests.rows import write_rows

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "artifacts"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(),
        reason="Debian's chromium is not installed (.ci/run installs it: apt-get install chromium)",
    ),
]


class Browser:
    """A headless Chromium and one page, over CDP (flattened session on a websocket)."""

    def __init__(self, user_dir: Path) -> None:
        from websockets.sync.client import connect

        self.proc = subprocess.Popen(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-extensions",
                "--no-first-run",
                "--remote-debugging-port=0",
                f"--user-data-dir={user_dir}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.stack = ExitStack()
        self.stack.callback(self._stop)
        try:
            url = self._devtools_url()
            self.ws = self.stack.enter_context(connect(url, max_size=None, open_timeout=20))
            self._start()
        except BaseException:
            self.stack.close()
            raise

    def _start(self) -> None:
        self.next_id = 0
        self.events: list[dict[str, Any]] = []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", session=True)
        self.call(
            "Emulation.setDeviceMetricsOverride",
            session=True,
            width=1200,
            height=1500,
            deviceScaleFactor=1,
            mobile=False,
        )

    def _devtools_url(self) -> str:
        assert self.proc.stderr is not None
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            found = re.search(r"DevTools listening on (ws://\S+)", line)
            if found:
                return found.group(1)
        raise RuntimeError("chromium did not print its DevTools address within 20 s")

    def call(self, method: str, *, session: bool = False, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        msg: dict[str, Any] = {"id": self.next_id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        self.ws.send(json.dumps(msg))
        while True:
            reply = json.loads(self.ws.recv(timeout=20))
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})  # type: ignore[no-any-return]
            self.events.append(reply)

    def load(self, path: Path) -> None:
        self.events.clear()
        self.call("Page.navigate", session=True, url=path.as_uri())
        deadline = time.monotonic() + 20
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            if time.monotonic() > deadline:
                raise RuntimeError("the page did not load within 20 s")
            self.events.append(json.loads(self.ws.recv(timeout=20)))
        self.eval("new Promise(r => setTimeout(r, 200))")  # let late events arrive

    def eval(self, expression: str) -> Any:
        res = self.call(
            "Runtime.evaluate",
            session=True,
            expression=expression,
            returnByValue=True,
            awaitPromise=True,
        )
        return res.get("result", {}).get("value")

    def problems(self, page: Path) -> list[str]:
        """Console errors, exceptions, log errors and requests other than the page itself."""
        out = []
        for e in self.events:
            method, params = e.get("method"), e.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                out.append(f"console.{params['type']}: {params.get('args')}")
            elif method == "Runtime.exceptionThrown":
                out.append(f"exception: {params.get('exceptionDetails')}")
            elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                out.append(f"log: {params['entry'].get('text')}")
            elif method == "Network.requestWillBeSent":
                url = params["request"]["url"]
                if url != page.as_uri():
                    out.append(f"request: {url}")
        return out

    def screenshot(self, path: Path) -> Path:
        shot = self.call("Page.captureScreenshot", session=True, format="png")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(shot["data"]))
        return path

    def _stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        if self.proc.stderr is not None:
            self.proc.stderr.close()

    def close(self) -> None:
        self.stack.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with tempfile.TemporaryDirectory(
        prefix="evaldelta-chromium-", ignore_cleanup_errors=True
    ) as user_dir:
        b = Browser(Path(user_dir))
        try:
            yield b
        finally:
            b.close()


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.key for s in SCENARIOS])
def test_demo_report_loads_clean_with_one_mark_per_slice(browser, tmp_path, scenario):
    result = run_scenario(scenario)
    page = write_demo_html(scenario, result, tmp_path)
    browser.load(page)
    assert browser.problems(page) == []
    pairs = result.slicing().pairs
    for k, pair in enumerate(pairs):
        marks = browser.eval(f"document.querySelectorAll('[id^=\"forest-{k}-mark-\"]').length")
        assert marks == len(pair.slices), (k, marks, len(pair.slices))
    assert browser.eval("document.querySelectorAll('img, iframe, object, embed').length") == 0
    if scenario.key == "004":
        assert browser.eval("document.querySelector('#verdict .badge').textContent") == "FAIL"
        shot = browser.screenshot(ARTIFACTS / "report-004.png")
        assert shot.stat().st_size > 10_000
        if os.environ.get("EVALDELTA_UPDATE_SCREENSHOT") == "1":
            target = ROOT / "docs" / "img" / "report.png"
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(shot, target)


HOSTILE = [
    "<script>document.title='pwned'</script>",
    "<img src=x onerror=\"document.body.setAttribute('data-pwned','img')\">",
    "<a id=jslink href=\"javascript:document.body.setAttribute('data-pwned','link')\">x</a>",
]


def test_hostile_case_text_executes_nothing(browser, tmp_path):
    lines: list[tuple[object, ...]] = []
    for i, payload in enumerate(HOSTILE):
        case = f"{payload}-{i}"
        lines.append((case, HOSTILE[0], "a", 1, f"fine answer {payload}"))
        lines.append((case, HOSTILE[0], "<b>b</b>", 0, f"bad answer {payload} end"))
    for i in range(6):
        lines.append((f"same-{i}", "plain", "a", i % 2, "x"))
        lines.append((f"same-{i}", "plain", "<b>b</b>", (i + (i < 2)) % 2, "y"))
    columns = "case_id,slice,arm,score,output"
    rows = write_rows(tmp_path / "hostile.csv", lines, columns, eol="\r\n")
    page = tmp_path / "hostile.html"
    page.write_text(render_html(compare([rows], baseline="a")), encoding="utf-8")
    browser.load(page)
    browser.eval("document.querySelectorAll('details').forEach(d => d.open = true)")
    assert browser.problems(page) == []
    assert browser.eval("document.title") != "pwned"
    assert browser.eval("document.body.getAttribute('data-pwned')") is None
    assert browser.eval("document.querySelectorAll('a').length") == 0
    assert browser.eval("document.querySelectorAll('b').length") == 0
    # the payloads are shown as text, verbatim
    text = browser.eval("document.body.innerText")
    for payload in HOSTILE:
        assert payload in text
    # the slice filter works (and is the only script that runs)
    shown = browser.eval(
        "(() => { const s = document.querySelector('select[data-filter]');"
        " s.value = 'plain'; s.dispatchEvent(new Event('change'));"
        " return [...document.querySelectorAll('table.moved tbody tr')]"
        ".filter(r => !r.hidden).map(r => r.getAttribute('data-slice')); })()"
    )
    assert shown == ["plain", "plain"]
    assert browser.problems(page) == []
