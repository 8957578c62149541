"""Who calls and how much: API-key authentication, scopes, per-key rate limits, body sizes.

The caller's principal comes from their key and from nothing else: no header, query or body
field names a clearance or a group.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from ragspine.security import Principal
from ragspine.service.keys import ApiKey, Keys
from ragspine.service.problems import HTTPProblem

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Limits:
    """Request limits: body bytes of JSON routes and of uploads, requests per second per key
    (``rate`` 0 turns the limit off) and the burst a key may spend at once."""

    json_bytes: int = 1 * MIB
    upload_bytes: int = 50 * MIB
    rate: float = 50.0
    burst: int = 100


@dataclass(frozen=True, slots=True)
class Caller:
    """An authenticated request: its key and the principal it asks as."""

    key: ApiKey

    @property
    def principal(self) -> Principal:
        return self.key.principal

    def require_admin(self) -> None:
        """Refuse a key without the admin scope (every write needs it)."""
        if not self.key.admin:
            raise HTTPProblem(403, "this route changes the workspace: it needs an admin key")


class RateLimiter:
    """A token bucket per key: ``rate`` tokens a second, at most ``burst`` saved."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = burst
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def take(self, key_id: str) -> None:
        """Spend one token of ``key_id`` or refuse with 429 and a ``Retry-After``."""
        if self.rate <= 0:
            return
        now = time.monotonic()
        with self._lock:
            tokens, last = self._buckets.get(key_id, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - last) * self.rate)
            if tokens < 1:
                self._buckets[key_id] = (tokens, now)
                wait = max(1, int((1 - tokens) / self.rate + 0.999))
                raise HTTPProblem(
                    429,
                    f"this key's rate limit is {self.rate:g} requests a second: retry later",
                    {"Retry-After": str(wait)},
                )
            self._buckets[key_id] = (tokens - 1, now)


def key_text(authorization: str | None, x_api_key: str | None) -> str | None:
    """The key a request carries: ``Authorization: Bearer KEY`` or ``X-API-Key: KEY``."""
    if authorization:
        scheme, _, value = authorization.partition(" ")
        if scheme.lower() == "bearer" and value.strip():
            return value.strip()
    if x_api_key and x_api_key.strip():
        return x_api_key.strip()
    return None


def authenticate(keys: Keys, limiter: RateLimiter, text: str | None) -> Caller:
    """The caller of a request carrying key ``text``; 401 without a live key, 429 over its rate."""
    if text is None:
        raise HTTPProblem(
            401,
            "this route needs an API key: send Authorization: Bearer KEY or X-API-Key: KEY "
            "(make one with ragspine keys create)",
            {"WWW-Authenticate": "Bearer"},
        )
    key = keys.authenticate(text)
    if key is None:
        raise HTTPProblem(401, "unknown or revoked API key", {"WWW-Authenticate": "Bearer"})
    limiter.take(key.key_id)
    return Caller(key)


UPLOAD_PATHS = ("/v1/documents", "/v1/facts", "/v1/workflows/preview")


class BodyLimit:
    """ASGI middleware refusing bodies over the limits with 413, whether or not they declare
    a ``Content-Length``."""

    def __init__(self, app: ASGIApp, limits: Limits) -> None:
        self.app = app
        self.limits = limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        limit = self.limits.upload_bytes if path in UPLOAD_PATHS else self.limits.json_bytes
        for name, value in scope.get("headers", ()):
            if name == b"content-length" and value.isdigit() and int(value) > limit:
                await _send_too_large(send, limit)
                return
        seen = 0
        exceeded = started = False

        async def limited() -> Message:
            nonlocal seen, exceeded
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    exceeded = True
                    raise _TooLarge
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if exceeded:  # the app's answer to a body cut short (e.g. a form parse error)
                return
            started = True
            await send(message)

        with contextlib.suppress(_TooLarge):
            await self.app(scope, limited, guarded_send)
        if exceeded and not started:
            await _send_too_large(send, limit)


class _TooLarge(Exception):
    """The body grew past the limit while the app read it."""


def _too_large(limit: int) -> str:
    return f"the request body is over this route's limit of {limit:,} bytes"


async def _send_too_large(send: Send, limit: int) -> None:
    import json

    from ragspine.service.problems import PROBLEM_TYPE, problem

    body = json.dumps(problem(413, _too_large(limit))).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", PROBLEM_TYPE.encode()),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
