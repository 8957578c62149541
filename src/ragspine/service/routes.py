"""The ``/v1`` routes and the health checks: each a thin call of one Workspace method.

JSON bodies mirror the Python API: the question (or the lookup's terms) plus option names of
:class:`~ragspine.answer.options.AskOptions` / :class:`~ragspine.narrative.retrieve.options.
SearchOptions`; an unknown option is a 422 listing the valid ones. Responses are the results'
``to_dict()``. Who asks is always the principal of the caller's API key.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import date
from functools import partial
from typing import Annotated, Any

from fastapi import APIRouter, Depends, File, Form, Query, Request, UploadFile
from fastapi.responses import Response
from fastapi.security import APIKeyHeader
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from ragspine.answer.options import AskOptions
from ragspine.errors import ConfigError, IngestError, QueryError
from ragspine.narrative import catalog
from ragspine.narrative.retrieve.options import SearchOptions
from ragspine.security import Sensitivity
from ragspine.service.guard import Caller, authenticate, key_text
from ragspine.service.jobs import Job, JobRunner
from ragspine.service.problems import HTTPProblem
from ragspine.service.uploads import (
    DOCUMENT_SUFFIXES,
    TABLE_SUFFIXES,
    checked_name,
    store_document,
)
from ragspine.stores.backend import SQLiteBackend
from ragspine.stores.chunks import check_library_name
from ragspine.structured.facts import FactKey
from ragspine.structured.ingest import ColumnMapping
from ragspine.workspace import Workspace

router = APIRouter()
_bearer = APIKeyHeader(name="Authorization", auto_error=False, description="Bearer KEY")
_x_api_key = APIKeyHeader(name="X-API-Key", auto_error=False)
MAX_UPLOAD_FILES = 100


async def caller(
    request: Request,
    authorization: Annotated[str | None, Depends(_bearer)],
    x_api_key: Annotated[str | None, Depends(_x_api_key)],
) -> Caller:
    """The authenticated caller (401 without a live key, 429 over its rate)."""
    state = request.app.state
    return authenticate(state.keys, state.limiter, key_text(authorization, x_api_key))


async def admin(who: Annotated[Caller, Depends(caller)]) -> Caller:
    """An authenticated caller with the admin scope (403 otherwise)."""
    who.require_admin()
    return who


async def workspace_of(request: Request) -> Workspace:
    workspace: Workspace = request.app.state.workspace
    return workspace


Who = Annotated[Caller, Depends(caller)]
Admin = Annotated[Caller, Depends(admin)]
WorkspaceDep = Annotated[Workspace, Depends(workspace_of)]


def json_response(data: object, status: int = 200) -> Response:
    """``data`` as JSON (already plain: the results' ``to_dict()``)."""
    return Response(
        json.dumps(data, ensure_ascii=False), status_code=status, media_type="application/json"
    )


def _date(raw: str | None) -> date | None:
    if raw is None:
        return None
    try:
        return date.fromisoformat(raw)
    except ValueError:
        raise QueryError(
            f"reference_date {raw[:40]!r} is not an ISO date such as 2024-12-31"
        ) from None


class SearchBody(BaseModel):
    """A question and search options (any field of ``SearchOptions``)."""

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={"examples": [{"question": "travel budget", "mode": "bm25", "top_k": 5}]},
    )
    question: str = Field(min_length=1, max_length=10_000)

    def options(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class AskBody(SearchBody):
    """A question, ``reference_date``, ``history`` and ask options (any field of
    ``AskOptions``: ``channel``, ``entity``, ``locale``, ``mode``, ``filters``, ``top_k``...)."""

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "examples": [
                {"question": "What was the revenue of ACME in FY2024?", "channel": "auto"},
                {"question": "Why did travel costs fall?", "mode": "bm25", "top_k": 5},
            ]
        },
    )
    reference_date: str | None = None
    history: list[tuple[str, str]] | None = Field(default=None, max_length=50)


QUICK_TOP_K = 100
"""The largest ``top_k`` searched on the event loop: a search of that size without
``near_duplicates`` or ``diversity`` takes milliseconds, less than a hop to a worker thread;
a larger or post-processed one (up to seconds) runs in a worker so other callers go on."""


def _slow(options: SearchOptions) -> bool:
    """Whether a search with ``options`` may take long enough to be run off the event loop."""
    postprocessed = options.near_duplicates is not None or options.diversity is not None
    return options.top_k > QUICK_TOP_K or postprocessed


def _may_call_model(request: Request, options: AskOptions) -> bool:
    """Whether ``ask`` with ``options`` may wait on a model endpoint (seconds, off the event
    loop); the workspace's provider is read when the app starts."""
    provider = options.provider or request.app.state.default_provider
    return options.agent or provider != "extractive"


@router.post("/v1/ask", tags=["answers"])
async def ask(body: AskBody, who: Who, ws: WorkspaceDep, request: Request) -> Response:
    """Answer a question through the route its words choose (``Workspace.ask``)."""
    options = AskOptions().with_changes(body.options())
    call = partial(
        ws.ask,
        body.question,
        options,
        principal=who.principal,
        history=body.history,
        reference_date=_date(body.reference_date),
    )
    # An offline answer takes about a millisecond: answering it in place is faster than a hop
    # to a worker thread; a model's answer, or a large search's, is awaited in one.
    slow = _may_call_model(request, options) or _slow(options)
    answer = await run_in_threadpool(call) if slow else call()
    return json_response(answer.to_dict())


@router.post("/v1/search", tags=["answers"])
async def search(body: SearchBody, who: Who, ws: WorkspaceDep) -> Response:
    """Search the document libraries (``Workspace.search``): snippets best first, a trace."""
    options = SearchOptions().with_changes(body.options())
    call = partial(ws.search, body.question, options, principal=who.principal)
    result = await run_in_threadpool(call) if _slow(options) else call()
    return json_response(result.to_dict())


class MetricBody(BaseModel):
    """One fact by metric, entity, period and channel."""

    model_config = ConfigDict(
        extra="forbid",  # a misspelt "chanel" is refused, never answered for the total
        json_schema_extra={
            "examples": [{"metric": "revenue", "entity": "ACME", "period": "FY2024"}]
        },
    )
    metric: str = Field(max_length=500)
    entity: str = Field(max_length=500)
    period: str = Field(max_length=100)
    channel: str | None = Field(default=None, max_length=500)
    reference_date: str | None = None


@router.post("/v1/metrics/query", tags=["facts"])
def metric(body: MetricBody, who: Who, ws: WorkspaceDep) -> Response:
    """``Workspace.query_metric``: found, not_found or unrecognized_param."""
    result = ws.query_metric(
        body.metric,
        body.entity,
        body.period,
        body.channel,
        principal=who.principal,
        reference_date=_date(body.reference_date),
    )
    return json_response(result.to_dict())


def _library_dict(library: Any) -> dict[str, Any]:
    data = asdict(library)
    data["default_sensitivity"] = Sensitivity(library.default_sensitivity).label
    return data


@router.get("/v1/libraries", tags=["libraries"])
def libraries(who: Who, ws: WorkspaceDep) -> Response:
    """The libraries the caller sees, with counts of what they may see."""
    return json_response([_library_dict(lib) for lib in ws.libraries(principal=who.principal)])


@router.get("/v1/libraries/{name}", tags=["libraries"])
def describe_library(name: str, who: Who, ws: WorkspaceDep) -> Response:
    """One library's settings and visible counts (``Workspace.describe_library``)."""
    data = ws.describe_library(name, principal=who.principal)
    return Response(
        json.dumps(data, ensure_ascii=False, default=str), media_type="application/json"
    )


class LibraryBody(BaseModel):
    """A new library."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"name": "reports", "description": "Quarterly reports"}]},
    )
    name: str = Field(min_length=1, max_length=200)
    description: str = Field(default="", max_length=10_000)
    default_sensitivity: str = "public"
    vectors: bool = False


@router.post("/v1/libraries", tags=["libraries"], status_code=201)
def create_library(body: LibraryBody, who: Admin, ws: WorkspaceDep) -> Response:
    """Register a library (admin)."""
    library = ws.create_library(
        body.name,
        description=body.description,
        default_sensitivity=body.default_sensitivity,
        vectors=body.vectors,
    )
    return json_response(_library_dict(library), 201)


@router.delete("/v1/libraries/{name}", tags=["libraries"])
def delete_library(name: str, who: Admin, ws: WorkspaceDep) -> Response:
    """Delete a library with its documents (admin). A library the key's clearance does not
    see is unknown, as in every read."""
    catalog.check_libraries(ws.chunks, [name], who.principal)
    return json_response({"library": name, "documents_deleted": ws.delete_library(name)})


@router.delete("/v1/documents/{doc_id:path}", tags=["documents"])
def delete_document(
    doc_id: str, who: Admin, ws: WorkspaceDep, library: Annotated[str, Query()]
) -> Response:
    """Delete one document from ``library`` (admin; a library the key does not see is
    unknown)."""
    catalog.check_libraries(ws.chunks, [library], who.principal)
    return json_response({"library": library, "deleted": ws.delete_documents(library, [doc_id])})


def _jobs(request: Request) -> JobRunner:
    runner: JobRunner = request.app.state.jobs
    return runner


async def _read(upload: UploadFile) -> bytes:
    return await upload.read()


@router.post("/v1/documents", tags=["documents"], status_code=202)
async def upload_documents(
    request: Request,
    who: Admin,
    files: Annotated[list[UploadFile], File(description="documents: .txt .md .html .pdf .docx")],
    library: Annotated[str, Form(min_length=1, max_length=200)],
    sensitivity: Annotated[str | None, Form()] = None,
    metadata: Annotated[str | None, Form(description="a JSON object of metadata")] = None,
) -> Response:
    """Upload documents; they are ingested by a background job (admin). Follow it at
    ``GET /v1/jobs/{id}``."""
    if not files or len(files) > MAX_UPLOAD_FILES:
        raise HTTPProblem(422, f"send 1-{MAX_UPLOAD_FILES} files")
    checked = [checked_name(upload.filename, DOCUMENT_SUFFIXES) for upload in files]
    check_library_name(library)  # refused now, not by the job after a 202
    if sensitivity is not None:
        Sensitivity.parse(sensitivity)
    meta = _json_object(metadata, "metadata")
    runner = _jobs(request)
    job_id, folder = runner.new_folder()
    try:
        stored = []
        for index, (upload, (name, suffix)) in enumerate(zip(files, checked, strict=True)):
            path = store_document(folder, index, name, suffix, await _read(upload))
            stored.append(path.name)
    except BaseException:
        runner.discard(job_id)
        raise
    job = runner.submit(
        Job(
            job_id,
            library,
            tuple(stored),
            sensitivity=sensitivity,
            metadata=meta,
            total=len(stored),
        )
    )
    return json_response(job.to_dict(), 202)


@router.get("/v1/jobs/{job_id}", tags=["documents"])
def job(job_id: str, request: Request, who: Admin) -> Response:
    """An ingest job: state, progress, result or error (admin)."""
    return json_response(_jobs(request).get(job_id).to_dict())


def _json_object(raw: str | None, field: str) -> dict[str, Any]:
    if raw is None or not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        raise ConfigError(f"{field} must be a JSON object") from None
    if not isinstance(value, dict):
        raise ConfigError(f"{field} must be a JSON object, not {type(value).__name__}")
    return value


@router.post("/v1/facts", tags=["facts"])
async def upload_facts(
    request: Request,
    who: Admin,
    file: Annotated[UploadFile, File(description="a CSV, XLSX, JSON or JSONL fact table")],
    mapping: Annotated[
        str | None, Form(description='JSON: {"columns": {...}, "defaults": {...}}')
    ] = None,
) -> Response:
    """Ingest a fact table with a column mapping; a bad row writes nothing (admin)."""
    name, _ = checked_name(file.filename, TABLE_SUFFIXES)
    document = _json_object(mapping, "mapping")
    parsed = ColumnMapping.from_dict(document, "mapping")
    if "source_doc_id" not in parsed.columns and "source_doc_id" not in parsed.defaults:
        parsed = ColumnMapping(
            parsed.columns, {**parsed.defaults, "source_doc_id": name}, parsed.sheet
        )
    runner = _jobs(request)
    job_id, folder = runner.new_folder()
    try:
        path = folder / name  # its name is what locators and errors show ("ch.csv: row 2")
        path.write_bytes(await file.read())
        ws: Workspace = request.app.state.workspace
        summary = await run_in_threadpool(ws.ingest_facts, path, mapping=parsed)
    finally:
        runner.discard(job_id)
    return json_response(asdict(summary))


class RollUpBody(MetricBody):
    """A roll-up: the metric summed over the entities (or channels) under one."""

    over: str = "entity"


class CompareBody(BaseModel):
    """One metric over several entities and/or periods."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"metric": "revenue", "entities": ["ACME"], "periods": ["FY2023", "FY2024"]}
            ]
        },
    )
    metric: str = Field(max_length=500)
    entities: list[str] = Field(min_length=1, max_length=100)
    periods: list[str] = Field(min_length=1, max_length=100)
    channel: str | None = None
    reference_date: str | None = None


@router.post("/v1/graph/rollup", tags=["graph"])
def rollup(body: RollUpBody, who: Who, ws: WorkspaceDep) -> Response:
    """``Graph.roll_up``."""
    result = ws.graph.roll_up(
        body.metric,
        body.entity,
        body.period,
        body.channel,
        principal=who.principal,
        axis=body.over,
        reference_date=_date(body.reference_date),
    )
    return json_response(result.to_dict())


@router.post("/v1/graph/compare", tags=["graph"])
def compare(body: CompareBody, who: Who, ws: WorkspaceDep) -> Response:
    """``Graph.compare``."""
    result = ws.graph.compare(
        body.metric,
        entities=body.entities,
        periods=body.periods,
        channel=body.channel,
        principal=who.principal,
        reference_date=_date(body.reference_date),
    )
    return json_response(result.to_dict())


@router.post("/v1/graph/derive", tags=["graph"])
def derive(body: MetricBody, who: Who, ws: WorkspaceDep) -> Response:
    """``Graph.derive``."""
    result = ws.graph.derive(
        body.metric,
        body.entity,
        body.period,
        body.channel,
        principal=who.principal,
        reference_date=_date(body.reference_date),
    )
    return json_response(result.to_dict())


@router.post("/v1/workflows/preview", tags=["workflows"])
async def workflow_preview(
    who: Who,
    file: Annotated[UploadFile, File(description="a Dify DSL export (YAML or JSON)")],
    format: Annotated[str, Query(pattern="^(json|svg)$")] = "json",
) -> Response:
    """A redacted preview of a Dify workflow export, as preview v1 JSON or SVG."""
    from ragspine.workflows.preview import preview

    content = await file.read()
    if not content:
        raise IngestError("the workflow upload is empty")
    result = await run_in_threadpool(lambda: preview(content, warn=False))
    # a newer DSL version previews but may be misread: said in a header (the preview JSON
    # is a fixed schema), ASCII so any client reads it
    headers = (
        {"RAGSpine-Warning": " | ".join(result.warnings).encode("ascii", "replace").decode()}
        if result.warnings
        else None
    )
    if format == "svg":
        return Response(result.to_svg(), media_type="image/svg+xml", headers=headers)
    return Response(result.to_json(), media_type="application/json", headers=headers)


@router.get("/healthz", tags=["health"])
@router.head("/healthz", include_in_schema=False)  # uptime checks send HEAD
def healthz() -> Response:
    """The process answers."""
    return json_response({"status": "ok"})


@router.get("/readyz", tags=["health"])
@router.head("/readyz", include_in_schema=False)  # uptime checks send HEAD
def readyz(ws: WorkspaceDep) -> Response:
    """The workspace opens, its glossary loads and its database answers (503 with the reason
    otherwise). A PostgreSQL workspace is not named: the URL is not for anonymous callers."""
    ws.glossary  # noqa: B018 - loads it, or raises the error the problem handler maps
    ws.facts.lookup(FactKey("", "", "", ""), max_level=-1)  # one indexed read: the store answers
    if isinstance(ws.backend, SQLiteBackend):
        return json_response({"status": "ready", "workspace": ws.path.name})
    return json_response({"status": "ready", "backend": "postgresql"})
