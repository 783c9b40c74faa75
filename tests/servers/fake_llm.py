"""A fake OpenAI-compatible and Anthropic-compatible server on 127.0.0.1, for offline tests.

Replies are deterministic: ``reply(model, prompt, n)`` where ``n`` counts earlier delivered
calls with the same (model, prompt), so repeated calls are distinct draws. Failures are
programmable: queue ``"429"``, ``"500"``, ``"400"``, ``"401"``, ``"403"``, ``"404"``, ``"hang"``,
``"drop"`` or ``"malformed"`` (a 200 whose body is not JSON) for the next requests, or
``always`` one of them for every request; hang every request whose prompt matches, or draw
failures at random: ``error_rate`` (429 or 500, half each) and ``malformed_rate`` from a
seeded ``random.Random`` (``seed``), with ``per_model`` overriding ``delay``, ``error_rate``
and ``malformed_rate`` by model name. The server records every request, the calls it
delivered per (model, prompt), the auth headers it saw, and the most requests it ever had in
flight.

Faults of the transport, queued like the others:

* ``"reset"``: the headers and half the body of a good reply, then a TCP reset (RST);
* ``"drip"``: a good reply whose body trickles out over ``drip_seconds`` (slower than the
  client's timeout, while each byte comes sooner than a read timeout would notice);
* ``"down"``: the server dies (the listening socket and every open connection closed) for
  ``downtime`` seconds, then listens again on the same port.

Error bodies say ``error_message``, formatted with ``status`` and ``key`` (the API key the
request carried), so a test can make a server echo part of the key as some do.
"""

from __future__ import annotations

import contextlib
import json
import random
import socket
import struct
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
        self.failures: list[str | None] = []
        self.always: str | None = None  # this failure on every request (after the queue)
        self.error_message = "fake {status}"
        self.drip_seconds = 3.0
        self.downtime = 3.0
        self.outages: list[tuple[float, float]] = []  # (down at, up again at), monotonic
        self.connections: set[socket.socket] = set()
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
        self.stopped = False
        self._listen(0)
        self.port = int(self.httpd.server_address[1])

    def _listen(self, port: int) -> None:
        handler = type("Handler", (_Handler,), {"fake": self})
        self.httpd = _QuietServer(("127.0.0.1", port), handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> FakeLLM:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.stopped = True
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def go_down(self) -> None:
        """Die for ``downtime`` seconds (refusing connections), then listen again."""
        with self.lock:
            start = time.monotonic()
            self.outages.append((start, start + self.downtime))
            open_connections = list(self.connections)
        self.httpd.shutdown()
        self.httpd.server_close()
        for conn in open_connections:  # keep-alive connections die with the server
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        time.sleep(self.downtime)
        if not self.stopped:
            self._listen(self.port)
            self.start()

    def next_failure(self, model: str = "") -> str | None:
        with self.lock:
            if self.failures:
                return self.failures.pop(0)
            if self.always is not None:
                return self.always
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

    def seed(self, value: int) -> None:
        """Reseed the random failure draws."""
        with self.lock:
            self.rng.seed(value)

    def setting(self, model: str, name: str) -> float:
        """A behaviour setting for one model: its override, else the server-wide value."""
        return float(self.per_model.get(model, {}).get(name, getattr(self, name)))


class _QuietServer(ThreadingHTTPServer):
    request_queue_size = 1024  # the listen backlog: socketserver's default of 5 drops bursts

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client killed mid-request (the resume test) is expected


class _Handler(BaseHTTPRequestHandler):
    fake: FakeLLM
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def setup(self) -> None:
        super().setup()
        with self.fake.lock:
            self.fake.connections.add(self.connection)

    def finish(self) -> None:
        with self.fake.lock:
            self.fake.connections.discard(self.connection)
        with contextlib.suppress(OSError):
            super().finish()

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
        if failure == "down":
            self.close_connection = True
            threading.Thread(target=fake.go_down, daemon=True).start()
            return
        if failure is not None and failure.isdigit():
            status = int(failure)
            headers = {"Retry-After": fake.retry_after} if status == 429 else {}
            key = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
            message = fake.error_message.format(status=status, key=key or self.headers.get(
                "x-api-key", ""))  # fmt: skip
            self._send(status, {"error": {"message": message, "type": "x"}}, headers)
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
            if failure not in ("reset", "drip"):  # those replies never arrive whole
                fake.delivered[(model, prompt)] += 1
        payload = self._payload(model, prompt, fake.reply(model, prompt, n), anthropic)
        if failure == "reset":
            self._reset(json.dumps(payload).encode())
        elif failure == "drip":
            self._drip(json.dumps(payload).encode())
        else:
            try:
                self._send(200, payload, {})
            except OSError:  # the connection died first (the server went down): not delivered
                with fake.lock:
                    fake.delivered[(model, prompt)] -= 1
                self.close_connection = True

    def _reset(self, data: bytes) -> None:
        """Headers and half the body, then a TCP reset (SO_LINGER 0 makes close send RST)."""
        self._headers(200, len(data), {})
        self.wfile.write(data[: len(data) // 2])
        self.wfile.flush()
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True
        self.connection.close()

    def _drip(self, data: bytes) -> None:
        """The body one byte at a time over ``drip_seconds`` (until the client gives up)."""
        self._headers(200, len(data), {})
        pause = self.fake.drip_seconds / max(1, len(data))
        try:
            for i in range(len(data)):
                self.wfile.write(data[i : i + 1])
                self.wfile.flush()
                time.sleep(pause)
        except OSError:  # the client timed out and hung up
            self.close_connection = True

    def _payload(self, model: str, prompt: str, text: str, anthropic: bool) -> dict[str, Any]:
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
        return payload

    def _headers(self, status: int, length: int, headers: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(length))
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()

    def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str]) -> None:
        data = json.dumps(payload).encode()
        self._headers(status, len(data), headers)
        self.wfile.write(data)


def main() -> None:  # pragma: no cover - manual use: python -m tests.servers.fake_llm
    fake = FakeLLM().start()
    print(fake.url, flush=True)
    fake.thread.join()


if __name__ == "__main__":  # pragma: no cover
    main()
