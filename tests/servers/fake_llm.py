"""A fake OpenAI-compatible and Anthropic-compatible server on 127.0.0.1, for offline tests.

Replies are deterministic: ``reply(model, prompt, n)`` where ``n`` counts earlier delivered
calls with the same (model, prompt), so repeated calls are distinct draws. Failures are
programmable: queue ``"429"``, ``"500"``, ``"400"``, ``"hang"``, ``"drop"`` or ``"malformed"``
(a 200 whose body is not JSON) for the next requests, hang every request whose prompt
matches, or draw failures at random: ``error_rate`` (429 or 500, half each) and
``malformed_rate`` from a seeded ``random.Random`` (``seed``), with ``per_model`` overriding
``delay``, ``error_rate`` and ``malformed_rate`` by model name. The server records every
request, the calls it delivered per (model, prompt), the auth headers it saw, and the most
requests it ever had in flight.
"""

from __future__ import annotations

import json
import random
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def default_reply(model: str, prompt: str, n: int) -> str:
    return f"{model} answer {n}: {prompt}"


class FakeLLM:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.failures: list[str] = []
        self.retry_after = "0"
        self.delay = 0.0
        self.error_rate = 0.0
        self.malformed_rate = 0.0
        self.per_model: dict[str, dict[str, float]] = {}
        self.rng = random.Random(0)
        self.reply: Callable[[str, str, int], str] = default_reply
        self.hang_if: Callable[[str], bool] = lambda prompt: False
        self.delivered: Counter[tuple[str, str]] = Counter()
        self.requests: list[dict[str, Any]] = []
        self.auth: set[str] = set()
        self.in_flight = 0
        self.max_in_flight = 0
        self.hanging = threading.Event()  # set while a request hangs
        self.release = threading.Event()
        handler = type("Handler", (_Handler,), {"fake": self})
        self.httpd = _QuietServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def start(self) -> FakeLLM:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def seed(self, value: int) -> None:
        """Reseed the random failure draws."""
        with self.lock:
            self.rng.seed(value)

    def setting(self, model: str, name: str) -> float:
        """A behaviour setting for one model: its override, else the server-wide value."""
        return float(self.per_model.get(model, {}).get(name, getattr(self, name)))

    def next_failure(self, model: str = "") -> str | None:
        with self.lock:
            if self.failures:
                return self.failures.pop(0)
            draw = self.rng.random()
            error, malformed = (
                self.setting(model, "error_rate"),
                self.setting(model, "malformed_rate"),
            )
            if draw < error:
                return "429" if draw < error / 2 else "500"
            if draw < error + malformed:
                return "malformed"
            return None


class _QuietServer(ThreadingHTTPServer):
    request_queue_size = 1024  # the listen backlog: socketserver's default of 5 drops bursts

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client killed mid-request (the resume test) is expected


class _Handler(BaseHTTPRequestHandler):
    fake: FakeLLM
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_POST(self) -> None:
        fake = self.fake
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length)
        if length == 0 or len(raw) < length:
            # The client died between its headers and its body (a SIGKILL in the resume
            # tests): nothing was asked, so nothing is answered or counted as delivered.
            self.close_connection = True
            return
        body = json.loads(raw)
        with fake.lock:
            fake.auth.add(self.headers.get("Authorization") or self.headers.get("x-api-key") or "")
            fake.in_flight += 1
            fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
        try:
            self._handle(body)
        finally:
            with fake.lock:
                fake.in_flight -= 1

    def _handle(self, body: dict[str, Any]) -> None:
        fake = self.fake
        anthropic = self.path.endswith("/messages")
        model = str(body.get("model"))
        prompt = "\n".join(str(m["content"]) for m in body.get("messages", []))
        if anthropic and body.get("system"):
            prompt = str(body["system"]) + "\n" + prompt
        failure = fake.next_failure(model)
        with fake.lock:
            fake.requests.append(
                {"model": model, "prompt": prompt, "body": body, "failure": failure,
                 "t": time.monotonic()}
            )  # fmt: skip
        if failure == "hang" or (failure is None and fake.hang_if(prompt)):
            fake.hanging.set()
            fake.release.wait(30)
            return
        if failure == "drop":
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if failure in ("429", "500", "400"):
            status = int(failure)
            headers = {"Retry-After": fake.retry_after} if status == 429 else {}
            self._send(status, {"error": {"message": f"fake {status}", "type": "x"}}, headers)
            return
        delay = fake.setting(model, "delay")
        if delay:
            time.sleep(delay)
        if failure == "malformed":
            data = b'{"id": "c1", "choices": [ this is not json'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        with fake.lock:
            n = fake.delivered[(model, prompt)]
            fake.delivered[(model, prompt)] += 1
        text = fake.reply(model, prompt, n)
        usage_in, usage_out = len(prompt.split()), len(text.split())
        version = f"{model}-2024-06-01"
        if anthropic:
            payload: dict[str, Any] = {
                "id": "msg_1", "type": "message", "role": "assistant", "model": version,
                "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": usage_in, "output_tokens": usage_out},
            }  # fmt: skip
        else:
            payload = {
                "id": "c1", "object": "chat.completion", "created": 0, "model": version,
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": usage_in, "completion_tokens": usage_out,
                          "total_tokens": usage_in + usage_out},
            }  # fmt: skip
        self._send(200, payload, {})

    def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)


def main() -> None:  # pragma: no cover - manual use: python -m tests.servers.fake_llm
    fake = FakeLLM().start()
    print(fake.url, flush=True)
    fake.thread.join()


if __name__ == "__main__":  # pragma: no cover
    main()
