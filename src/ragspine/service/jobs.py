"""Background ingest jobs of the HTTP service, persisted in the workspace (``jobs/``).

A job is one JSON file (``jobs/<id>.json``: state, progress, result or error) and, until it
ends, a folder of the uploaded files (``jobs/<id>/``). One thread per server process runs jobs
in order, each under the job's lock, so several server processes never run the same job. On
start, jobs left ``queued`` or ``running`` by a stopped server run again: an ingest lands per
document or not at all, and an unchanged document is a no-op, so a resumed job ends as if it had
never been interrupted.
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
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

from ragspine.errors import QueryError, RagSpineError, StoreError
from ragspine.files import write_text_atomically
from ragspine.locks import lock_path, write_lock
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


class JobRunner:
    """Runs the ingest jobs of one workspace on one background thread."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
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
        try:
            data = json.loads((self.folder / f"{job_id}.json").read_text("utf-8"))
        except FileNotFoundError:
            raise QueryError(f"unknown job {job_id!r}") from None
        except (OSError, ValueError) as exc:
            raise StoreError(f"cannot read job {job_id}: {exc}") from None
        return Job(**{**data, "files": tuple(data["files"]), "state": JobState(data["state"])})

    def resume(self) -> list[str]:
        """Run again every job a stopped server left queued or running; returns their ids."""
        if not self.folder.is_dir():
            return []
        resumed = []
        for path in sorted(self.folder.glob("*.json")):
            job = self.get(path.stem)
            if job.state in (JobState.QUEUED, JobState.RUNNING):
                self._executor.submit(self._run, job.job_id)
                resumed.append(job.job_id)
        return resumed

    def close(self, *, wait: bool = True) -> None:
        """Stop taking jobs; ``wait`` for the running one."""
        self._executor.shutdown(wait=wait, cancel_futures=not wait)

    def _save(self, job: Job) -> None:
        with self._lock:
            text = json.dumps(job.to_dict(), ensure_ascii=False, indent=1)
            write_text_atomically(self.folder / f"{job.job_id}.json", text + "\n")

    def _run(self, job_id: str) -> None:
        try:
            with write_lock(
                lock_path(self.workspace.path, f"job-{job_id}"), resource="job", timeout=0
            ):
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
                    "reason": o.reason.replace(str(folder), "upload"),
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
