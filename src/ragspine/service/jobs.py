"""Background ingest jobs of the HTTP service, persisted in the workspace.

A job is one record (state, progress, result or error: ``jobs/<id>.json`` in a folder workspace,
a row of ``ingest_jobs`` in a PostgreSQL one) and, until it ends, a folder of the uploaded files
(``jobs/<id>/`` under the workspace folder, or the host's local folder). One thread per server
process runs jobs in order, each under the job's lock, so several server processes never run the
same job. On start, jobs left ``queued`` or ``running`` by a stopped server run again: an ingest
lands per document or not at all, and an unchanged document is a no-op, so a resumed job ends as
if it had never been interrupted. A PostgreSQL workspace's job is resumed by the host that took
its upload (the files wait in that host's folder).
"""

from __future__ import annotations

import json
import logging
import secrets
import shutil
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ragspine.errors import QueryError, RagSpineError, StoreError
from ragspine.files import write_text_atomically
from ragspine.locks import lock_path, write_lock

if TYPE_CHECKING:
    from ragspine.workspace import Workspace

JOBS_DIR = "jobs"
PROGRESS_SECONDS = 0.25
LOG = logging.getLogger("ragspine.service")


class JobState(StrEnum):
    """Where a job is."""

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class Job:
    """One ingest job as stored."""

    job_id: str
    library: str
    files: tuple[str, ...]
    sensitivity: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    state: JobState = JobState.QUEUED
    done: int = 0
    total: int = 0
    result: dict[str, Any] | None = None
    error: str | None = None
    resumed: int = 0
    created_at: str = ""
    updated_at: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The job as ``GET /v1/jobs/{id}`` shows it."""
        data = asdict(self)
        data["files"] = list(self.files)
        data["state"] = self.state.value
        return data


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class JobRecords(Protocol):
    """Where job records live."""

    def save(self, job_id: str, data: dict[str, Any]) -> None: ...

    def load(self, job_id: str) -> dict[str, Any] | None: ...

    def ids(self) -> list[str]:
        """The jobs this process may run, oldest first."""

    def lock(self, job_id: str) -> AbstractContextManager[None]:
        """The job's run lock, failing at once (:class:`StoreError`) when another holds it."""


class JobFiles:
    """Job records as JSON files of the workspace folder's ``jobs/``."""

    def __init__(self, workspace_folder: Path) -> None:
        self.workspace_folder = workspace_folder
        self.folder = workspace_folder / JOBS_DIR

    def save(self, job_id: str, data: dict[str, Any]) -> None:
        text = json.dumps(data, ensure_ascii=False, indent=1)
        write_text_atomically(self.folder / f"{job_id}.json", text + "\n")

    def load(self, job_id: str) -> dict[str, Any] | None:
        try:
            data: dict[str, Any] = json.loads((self.folder / f"{job_id}.json").read_text("utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise StoreError(f"cannot read job {job_id}: {exc}") from None
        return data

    def ids(self) -> list[str]:
        if not self.folder.is_dir():
            return []
        return [path.stem for path in sorted(self.folder.glob("*.json"))]

    def lock(self, job_id: str) -> AbstractContextManager[None]:
        return write_lock(
            lock_path(self.workspace_folder, f"job-{job_id}"), resource="job", timeout=0
        )


def job_records(workspace: Workspace) -> JobRecords:
    """The job records of ``workspace``'s backend."""
    from ragspine.stores.backend import SQLiteBackend

    if isinstance(workspace.backend, SQLiteBackend):
        return JobFiles(workspace.path)
    from ragspine.stores.postgres.backend import PostgresBackend
    from ragspine.stores.postgres.service import PostgresJobRecords

    assert isinstance(workspace.backend, PostgresBackend)
    return PostgresJobRecords(workspace.backend.db)


class JobRunner:
    """Runs the ingest jobs of one workspace on one background thread."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self.records = job_records(workspace)
        self.folder = workspace.path / JOBS_DIR
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ragspine-job")
        self._lock = threading.Lock()

    def new_folder(self) -> tuple[str, Path]:
        """A fresh job id and the folder its uploads go to."""
        job_id = secrets.token_hex(8)
        folder = self.folder / job_id
        folder.mkdir(parents=True)
        return job_id, folder

    def discard(self, job_id: str) -> None:
        """Remove the uploaded files of a job (ended, or never submitted)."""
        shutil.rmtree(self.folder / job_id, ignore_errors=True)

    def submit(self, job: Job) -> Job:
        """Persist ``job`` as queued and run it in the background."""
        job = replace(job, state=JobState.QUEUED, created_at=_now(), updated_at=_now())
        self._save(job)
        self._executor.submit(self._run, job.job_id)
        return job

    def get(self, job_id: str) -> Job:
        """The stored job ``job_id`` (an unknown id is a :class:`QueryError`)."""
        if not job_id.isalnum() or len(job_id) > 32:
            raise QueryError(f"unknown job {job_id[:40]!r}")
        data = self.records.load(job_id)
        if data is None:
            raise QueryError(f"unknown job {job_id!r}")
        return Job(**{**data, "files": tuple(data["files"]), "state": JobState(data["state"])})

    def resume(self) -> list[str]:
        """Run again every job a stopped server left queued or running; returns their ids."""
        resumed = []
        for job_id in self.records.ids():
            job = self.get(job_id)
            if job.state in (JobState.QUEUED, JobState.RUNNING):
                self._executor.submit(self._run, job.job_id)
                resumed.append(job.job_id)
        return resumed

    def close(self, *, wait: bool = True) -> None:
        """Stop taking jobs; ``wait`` for the running one."""
        self._executor.shutdown(wait=wait, cancel_futures=not wait)

    def _save(self, job: Job) -> None:
        with self._lock:
            self.records.save(job.job_id, job.to_dict())

    def _run(self, job_id: str) -> None:
        try:
            with self.records.lock(job_id):
                self._run_locked(job_id)
        except StoreError:  # another server process runs it
            return
        except Exception:  # a bug: keep the thread alive, the job says failed
            LOG.exception("job %s failed", job_id)

    def _run_locked(self, job_id: str) -> None:
        job = self.get(job_id)
        if job.state not in (JobState.QUEUED, JobState.RUNNING):
            return
        resumed = job.resumed + (job.state is JobState.RUNNING)
        job = replace(job, state=JobState.RUNNING, resumed=resumed, updated_at=_now())
        self._save(job)
        folder = self.folder / job_id
        progress = self._progress(job)
        try:
            report = self.workspace.ingest_documents(
                [folder / name for name in job.files],
                library=job.library,
                sensitivity=job.sensitivity,
                metadata=job.metadata or None,
                progress=progress,
            )
        except RagSpineError as exc:
            self.discard(job_id)
            self._save(
                replace(self.get(job_id), state=JobState.FAILED, error=str(exc), updated_at=_now())
            )
            return
        result = {
            "library": report.library_id,
            "created_library": report.created_library,
            "documents": [
                {
                    "doc_id": o.doc_id,
                    "status": o.status.value,
                    "chunks": o.chunks,
                    # the upload's own name, never the server's file ("upload/0.pdf")
                    "reason": o.reason.replace(o.source, o.doc_id or "upload").replace(
                        str(folder), "upload"
                    ),
                }
                for o in report.outcomes
            ],
        }
        failed = bool(report.failures)
        self.discard(job_id)  # the uploads are in the workspace now (or reported failed)
        self._save(
            replace(
                self.get(job_id),
                state=JobState.FAILED if failed else JobState.DONE,
                done=len(report.outcomes),
                total=len(report.outcomes),
                result=result,
                error="some documents failed: see result" if failed else None,
                updated_at=_now(),
            )
        )

    def _progress(self, job: Job) -> Callable[..., None]:
        """A progress callback saving the job at most every ``PROGRESS_SECONDS`` (each save is
        a file write and an fsync)."""
        last = 0.0

        def progress(done: int, total: int | None, *_: object) -> None:
            nonlocal last
            now = time.monotonic()
            if now - last >= PROGRESS_SECONDS:
                last = now
                self._save(
                    replace(self.get(job.job_id), done=done, total=total or 0, updated_at=_now())
                )

        return progress
