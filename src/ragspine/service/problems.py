"""Errors as RFC 9457 problem documents (``application/problem+json``), never a traceback.

Each class of :mod:`ragspine.errors` maps to one status; the ``detail`` is the library's own
message, which already says what was wrong and what to do next. The service's own refusals
(no key, no scope, too large, too many requests) are :class:`HTTPProblem`.
"""

from __future__ import annotations

import logging
from typing import Any

from ragspine.errors import (
    ConfigError,
    GlossaryError,
    IngestError,
    MissingExtraError,
    PeriodError,
    ProviderError,
    QueryError,
    RagSpineError,
    StoreError,
    WorkflowError,
)

PROBLEM_TYPE = "application/problem+json"
DETAIL_LIMIT = 2000
LOG = logging.getLogger("ragspine.service")

STATUS_OF_ERROR: dict[type[RagSpineError], int] = {
    MissingExtraError: 503,
    ConfigError: 400,
    GlossaryError: 409,
    PeriodError: 422,
    IngestError: 422,
    StoreError: 503,
    QueryError: 422,
    ProviderError: 503,
    WorkflowError: 422,
}

TITLES = {
    400: "Bad request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    413: "Content too large",
    415: "Unsupported media type",
    422: "Unprocessable content",
    429: "Too many requests",
    500: "Internal server error",
    503: "Service unavailable",
}


class HTTPProblem(Exception):
    """A refusal of the service itself, with its status and a detail for the caller."""

    def __init__(self, status: int, detail: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.headers = headers or {}


def status_of(exc: RagSpineError) -> int:
    """The HTTP status of a library error: the entry of its nearest class in the tree."""
    for kind in type(exc).__mro__:
        if kind in STATUS_OF_ERROR:
            return STATUS_OF_ERROR[kind]
    return 400


def problem(status: int, detail: str, *, kind: str | None = None) -> dict[str, Any]:
    """The problem document of ``status`` with ``detail`` (bounded) and an optional error class."""
    if len(detail) > DETAIL_LIMIT:
        detail = detail[: DETAIL_LIMIT - 1] + "…"
    body: dict[str, Any] = {
        "type": "about:blank",
        "title": TITLES.get(status, "Error"),
        "status": status,
        "detail": detail,
    }
    if kind is not None:
        body["error"] = kind
    return body
