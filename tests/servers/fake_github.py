"""A fake GitHub REST API on 127.0.0.1: the issue-comment endpoints the action calls.

It answers as GitHub documents them (docs.github.com, REST API "Issue comments"):

- ``GET /repos/{owner}/{repo}/issues/{n}/comments?per_page=&page=``: a JSON array, oldest
  first, at most ``per_page`` (default 30, at most 100) a page, with a ``Link`` header;
- ``POST /repos/{owner}/{repo}/issues/{n}/comments`` ``{"body"}``: 201 and the comment;
- ``PATCH /repos/{owner}/{repo}/issues/comments/{id}`` ``{"body"}``: 200 and the comment;
- a body over 65,536 characters: 422 ``Validation Failed`` ("body is too long (maximum is
  65536 characters)");
- a read-only token (a fork's pull request, or ``read_only=True``): writes answer 403
  ``Resource not accessible by integration``;
- no ``Authorization: Bearer`` header: 401 ``Requires authentication``.

Every request is recorded in ``requests`` (method, path) for the tests.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

MAX_BODY = 65_536
DOCS = "https://docs.github.com/rest/issues/comments"


class FakeGitHub:
    """The server and its state: comments per issue number."""

    def __init__(self, token: str = "ghs_test", read_only: bool = False) -> None:
        self.token = token
        self.read_only = read_only
        self.comments: dict[int, list[dict[str, Any]]] = {}
        self.requests: list[tuple[str, str]] = []
        self._next = 1000
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The API base, as ``GITHUB_API_URL`` carries it."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> FakeGitHub:
        """Serve in a thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._server.shutdown()
        self._server.server_close()

    def add(self, number: int, body: str, login: str = "someone") -> int:
        """A comment made by someone else (or an earlier run)."""
        with self._lock:
            self._next += 1
            comment = {
                "id": self._next,
                "body": body,
                "user": {"login": login, "type": "User"},
                "html_url": f"https://github.com/o/r/pull/{number}#issuecomment-{self._next}",
            }
            self.comments.setdefault(number, []).append(comment)
            return self._next

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def _send(self, status: int, doc: Any, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(doc).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def _authorized(self) -> bool:
                if self.headers.get("Authorization") != f"Bearer {fake.token}":
                    doc = {"message": "Requires authentication", "documentation_url": DOCS}
                    self._send(401, doc)
                    return False
                return True

            def _body(self) -> dict[str, Any] | None:
                length = int(self.headers.get("Content-Length") or 0)
                doc = json.loads(self.rfile.read(length) or b"{}")
                body = doc.get("body")
                if not isinstance(body, str):
                    self._send(422, {"message": "Invalid request.", "documentation_url": DOCS})
                    return None
                if len(body) > MAX_BODY:
                    self._send(
                        422,
                        {
                            "message": "Validation Failed",
                            "errors": [
                                {
                                    "resource": "IssueComment",
                                    "code": "custom",
                                    "field": "body",
                                    "message": "body is too long (maximum is 65536 characters)",
                                }
                            ],
                            "documentation_url": DOCS,
                        },
                    )
                    return None
                return doc

            def _read_only(self) -> bool:
                if fake.read_only:
                    self._send(
                        403,
                        {
                            "message": "Resource not accessible by integration",
                            "documentation_url": DOCS,
                            "status": "403",
                        },
                    )
                return fake.read_only

            def do_GET(self) -> None:
                fake.requests.append(("GET", self.path))
                if not self._authorized():
                    return
                url = urlparse(self.path)
                parts = url.path.strip("/").split("/")
                if len(parts) != 6 or parts[3] != "issues" or parts[5] != "comments":
                    self._send(404, {"message": "Not Found", "documentation_url": DOCS})
                    return
                query = parse_qs(url.query)
                per_page = min(int(query.get("per_page", ["30"])[0]), 100)
                page = int(query.get("page", ["1"])[0])
                every = fake.comments.get(int(parts[4]), [])
                chunk = every[(page - 1) * per_page : page * per_page]
                headers = {}
                if page * per_page < len(every):
                    nxt = f"{fake.url}{url.path}?per_page={per_page}&page={page + 1}"
                    headers["Link"] = f'<{nxt}>; rel="next"'
                self._send(200, chunk, headers)

            def do_POST(self) -> None:
                fake.requests.append(("POST", self.path))
                if not self._authorized() or self._read_only():
                    return
                parts = urlparse(self.path).path.strip("/").split("/")
                doc = self._body()
                if doc is None:
                    return
                new = fake.add(int(parts[4]), doc["body"], login="github-actions[bot]")
                comment = next(c for c in fake.comments[int(parts[4])] if c["id"] == new)
                self._send(201, comment)

            def do_PATCH(self) -> None:
                fake.requests.append(("PATCH", self.path))
                if not self._authorized() or self._read_only():
                    return
                comment_id = int(urlparse(self.path).path.rstrip("/").split("/")[-1])
                doc = self._body()
                if doc is None:
                    return
                for comments in fake.comments.values():
                    for comment in comments:
                        if comment["id"] == comment_id:
                            comment["body"] = doc["body"]
                            self._send(200, comment)
                            return
                self._send(404, {"message": "Not Found", "documentation_url": DOCS})

        return Handler
