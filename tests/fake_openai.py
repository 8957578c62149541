"""A fake OpenAI-compatible chat-completions endpoint on 127.0.0.1, over real sockets.

Each test scripts the replies in order (:class:`Reply`); the server records every request
(path, headers, JSON body) so a test can inspect what was sent. Started and stopped by the
``fake_endpoint`` fixture.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass
class Reply:
    """One scripted answer: a completion with ``text`` and ``tool_calls`` ((name, raw
    arguments) pairs), or an HTTP ``status`` with an error body; ``delay`` seconds first;
    ``stream`` sends it as server-sent events (``cut`` stops before the end)."""

    text: str = ""
    tool_calls: Sequence[tuple[str, str]] = ()
    status: int = 200
    delay: float = 0.0
    stream: bool = False
    cut: bool = False
    error: str = "scripted failure"
    headers: dict[str, str] = field(default_factory=dict)


def completion(reply: Reply) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": a}}
            for i, (n, a) in enumerate(reply.tool_calls)
        ]
    finish = "tool_calls" if reply.tool_calls else "stop"
    return {"id": "x", "object": "chat.completion", "choices": [
        {"index": 0, "message": message, "finish_reason": finish}
    ]}  # fmt: skip


class FakeEndpoint:
    """The server, its script and what it received."""

    def __init__(self) -> None:
        self.script: list[Reply] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # quiet test output
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                with endpoint._lock:
                    endpoint.requests.append({"path": self.path, "body": body})
                    endpoint.headers.append(dict(self.headers))
                    reply = endpoint.script.pop(0) if endpoint.script else Reply(status=500)
                if reply.delay:
                    time.sleep(reply.delay)
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    endpoint._send(self, reply)  # unless the client gave up (a timeout test)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def bodies(self) -> list[str]:
        """Every request body as JSON text."""
        return [json.dumps(r["body"], ensure_ascii=False) for r in self.requests]

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, reply: Reply) -> None:
        if reply.status != 200:
            data = json.dumps({"error": {"message": reply.error}}).encode()
            handler.send_response(reply.status)
            for name, value in reply.headers.items():
                handler.send_header(name, value)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)
            return
        if not reply.stream:
            data = json.dumps(completion(reply)).encode()
            handler.send_response(200)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)
            return
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Connection", "close")
        handler.end_headers()
        words = reply.text.split(" ")
        pieces = [w + (" " if i < len(words) - 1 else "") for i, w in enumerate(words)]
        if reply.cut:
            pieces = pieces[: max(1, len(pieces) * 2 // 3)]
        for piece in pieces:
            event = {"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
            handler.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
            handler.wfile.flush()
        if not reply.cut:
            end = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
            handler.wfile.write(f"data: {json.dumps(end)}\n\ndata: [DONE]\n\n".encode())
        handler.wfile.flush()
        handler.close_connection = True


@pytest.fixture()
def fake_endpoint() -> Iterator[FakeEndpoint]:
    endpoint = FakeEndpoint()
    endpoint.thread.start()
    try:
        yield endpoint
    finally:
        endpoint.server.shutdown()
        endpoint.server.server_close()
        endpoint.thread.join(timeout=5)
