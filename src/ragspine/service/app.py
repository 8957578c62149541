"""The FastAPI app over one workspace: problem handlers, body limits, the page, the routes.

:func:`create_app` takes an open :class:`~ragspine.workspace.Workspace` (the caller closes it);
:func:`app_from_environment` is the factory ``ragspine serve`` hands to uvicorn, so every worker
process opens the workspace named by ``RAGSPINE_WORKSPACE`` itself.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from importlib import resources
from typing import Any

from ragspine.errors import MissingExtraError, RagSpineError

try:
    from fastapi import FastAPI, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import FileResponse, Response
    from fastapi.staticfiles import StaticFiles
    from starlette.exceptions import HTTPException as StarletteHTTPException
except ImportError as exc:  # pragma: no cover - the base install has no server extra
    raise MissingExtraError("the HTTP service", "server") from exc

from ragspine.service.guard import BodyLimit, Limits, RateLimiter
from ragspine.service.jobs import JobRunner
from ragspine.service.keys import keys_of
from ragspine.service.problems import LOG, PROBLEM_TYPE, HTTPProblem, problem, status_of
from ragspine.service.routes import router
from ragspine.stores.postgres.database import postgres_error, postgres_error_types
from ragspine.workspace import Workspace

STATIC = resources.files("ragspine.service").joinpath("static")
PAGE_HEADERS = {
    # every asset comes from this server; previews are shown as blob: images (no script runs)
    "Content-Security-Policy": "default-src 'self'; img-src 'self' blob:; object-src 'none'; "
    "frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def problem_response(
    status: int, detail: str, *, kind: str | None = None, headers: Mapping[str, str] | None = None
) -> Response:
    """A problem+json response."""
    body = json.dumps(problem(status, detail, kind=kind), ensure_ascii=False)
    return Response(body, status_code=status, media_type=PROBLEM_TYPE, headers=headers)


_UNPARSED = "There was an error parsing the body"


def _validation_detail(exc: RequestValidationError) -> str:
    parts = []
    for error in exc.errors()[:5]:
        where = ".".join(str(p) for p in error.get("loc", ()) if p != "body")
        parts.append(f"{where or 'body'}: {error.get('msg', 'invalid')}")
    return "invalid request: " + "; ".join(parts)


def add_problem_handlers(app: FastAPI) -> None:
    """Map every error to a problem document; a bug is a 500 without its traceback."""

    @app.exception_handler(RagSpineError)
    async def library_error(request: Request, exc: RagSpineError) -> Response:
        return problem_response(status_of(exc), str(exc), kind=type(exc).__name__)

    @app.exception_handler(HTTPProblem)
    async def refusal(request: Request, exc: HTTPProblem) -> Response:
        return problem_response(exc.status, exc.detail, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        return problem_response(422, _validation_detail(exc))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        detail = exc.detail if isinstance(exc.detail, str) else "request refused"
        if exc.status_code == 400 and detail == _UNPARSED:
            # FastAPI's answer to a body its JSON parser gave up on (nested past its depth
            # limit): a malformed body, as every other one is, with what to fix
            detail = "invalid request: body: not JSON this server reads (nested too deeply?)"
            return problem_response(422, detail)
        return problem_response(exc.status_code, detail, headers=exc.headers)

    async def database_error(request: Request, exc: Exception) -> Response:
        """The database went away under a call that does not translate its errors."""
        LOG.warning("database error on %s %s: %s", request.method, request.url.path, exc)
        return problem_response(503, str(postgres_error(exc, "")), kind="StoreError")

    for kind in postgres_error_types():
        app.add_exception_handler(kind, database_error)

    @app.exception_handler(Exception)
    async def bug(request: Request, exc: Exception) -> Response:
        LOG.exception("internal error on %s %s", request.method, request.url.path)
        return problem_response(
            500, f"internal error ({type(exc).__name__}): see the server log and report it"
        )


def create_app(
    workspace: Workspace,
    *,
    limits: Limits | None = None,
    close_workspace: bool = False,
    run_jobs: bool = True,
) -> FastAPI:
    """The service over ``workspace``; ``close_workspace`` closes it when the app stops.

    ``run_jobs`` resumes the jobs a stopped server left unfinished when the app starts.
    """
    chosen = limits or Limits()
    jobs = JobRunner(workspace)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if run_jobs:
            jobs.resume()
        try:
            yield
        finally:
            jobs.close()
            if close_workspace:
                workspace.close()

    app = FastAPI(
        title="RAGSpine",
        summary="Question answering over business reports that never invents a number.",
        version="0.1.0",
        lifespan=lifespan,
        docs_url=None,  # FastAPI's docs pages load their scripts from a CDN
        redoc_url=None,
    )
    app.state.workspace = workspace
    app.state.keys = keys_of(workspace)
    app.state.limiter = RateLimiter(chosen.rate, chosen.burst)
    app.state.limits = chosen
    app.state.jobs = jobs
    app.state.default_provider = workspace.llm_settings.provider.value
    add_problem_handlers(app)
    app.include_router(router)
    app.mount("/static", StaticFiles(directory=str(STATIC)), name="static")

    @app.api_route("/", methods=["GET", "HEAD"], include_in_schema=False)
    def page() -> FileResponse:  # HEAD too: uptime checks and link checkers send it
        return FileResponse(
            str(STATIC.joinpath("index.html")), media_type="text/html", headers=PAGE_HEADERS
        )

    app.add_middleware(BodyLimit, limits=chosen)
    return app


LIMIT_VARIABLES = {
    "json_bytes": "RAGSPINE_SERVE_JSON_BYTES",
    "upload_bytes": "RAGSPINE_SERVE_UPLOAD_BYTES",
    "rate": "RAGSPINE_SERVE_RATE",
    "burst": "RAGSPINE_SERVE_BURST",
}


def limits_from_environment() -> Limits:
    """The :class:`Limits` named by ``RAGSPINE_SERVE_*`` variables (defaults otherwise)."""
    values: dict[str, Any] = {}
    for name, variable in LIMIT_VARIABLES.items():
        raw = os.environ.get(variable)
        if raw is not None:
            values[name] = float(raw) if name == "rate" else int(raw)
    return Limits(**values)


def app_from_environment() -> FastAPI:
    """The app over the workspace ``RAGSPINE_WORKSPACE`` (uvicorn's factory in each worker)."""
    workspace = Workspace.open(
        os.environ.get("RAGSPINE_WORKSPACE", "./ragspine-data"), create=False
    )
    return create_app(workspace, limits=limits_from_environment(), close_workspace=True)
