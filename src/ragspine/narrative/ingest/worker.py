"""A helper process that analyzes what an ingest writes while the ingest goes on writing.

Analysis (tokenizing, stop words, stemming, routing-term counts) holds the interpreter lock, so
a thread cannot overlap it with the chunking and SQLite writes of the same ingest; a second
process can. The ingest hands the worker three kinds of job for each batch before it is
written: the routing-term counts (see :func:`ragspine.stores.chunks.count_terms`), the index
terms (``Analyzer.tokens_many``) and the relation graph's relations of its chunks
(:class:`~ragspine.graph.extract.GlossaryExtractor`: sentence splitting and glossary look-ups).
The worker is an optimisation only: when it cannot start, dies or fails, the caller computes
the same values in process.

The child is ``python -m ragspine.narrative.ingest.worker``, started with the running
interpreter; it talks pickle over its own stdin and stdout, ignores Ctrl-C (the parent decides)
and exits when its stdin closes. ``RAGSPINE_INGEST_WORKER=0`` turns it off.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import signal
import subprocess
import sys
import threading
from collections import Counter, deque
from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ragspine.analysis import Analyzer

if TYPE_CHECKING:
    from ragspine.glossary import Glossary
    from ragspine.graph.extract import ExtractedRelation

log = logging.getLogger(__name__)

ENV_SWITCH = "RAGSPINE_INGEST_WORKER"
_TOKENS, _ROUTING, _RELATIONS = "tokens", "routing", "relations"


class WorkerGone(Exception):
    """The worker stopped or failed on a job; compute in process instead."""


def worker_wanted() -> bool:
    """Whether an ingest should start a worker: two or more CPUs and not switched off."""
    if os.environ.get(ENV_SWITCH, "").strip() == "0":
        return False
    return (os.cpu_count() or 1) >= 2


IN_FLIGHT = 2
"""Jobs handed to the child at a time: enough that it never waits for the next one, few enough
that the jobs behind them can still be taken back (see :meth:`AnalysisWorker.withdraw`)."""


class AnalysisWorker:
    """One child process working through jobs in submission order (those queued ``later``
    after all others), at most :data:`IN_FLIGHT` at a time; each job's result is claimed by
    its ticket, and a job not handed over yet can be taken back to compute in process (see
    the module docstring)."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self._process = process
        self._queue: deque[tuple[int, str, Any]] = deque()  # not handed to the child yet
        self._later: deque[tuple[int, str, Any]] = deque()  # handed over when _queue is empty
        self._in_flight = 0
        self._closing = False
        self._results: dict[int, tuple[str, Any]] = {}
        self._state = threading.Condition()  # guards everything above and _gone
        self._gone = False
        self._next = 0
        self._writer = threading.Thread(target=self._write, name="analysis-worker-in", daemon=True)
        self._reader = threading.Thread(target=self._read, name="analysis-worker-out", daemon=True)
        self._writer.start()
        self._reader.start()

    @classmethod
    def start(cls) -> AnalysisWorker | None:
        """A running worker, or ``None`` when it is switched off or cannot start."""
        if not worker_wanted():
            return None
        env = dict(os.environ)
        package_root = str(Path(__file__).resolve().parents[3])  # the folder holding ragspine/
        env["PYTHONPATH"] = os.pathsep.join(
            part for part in (package_root, env.get("PYTHONPATH", "")) if part
        )
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", __name__],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=env,
            )
        except OSError as exc:
            log.info("no analysis worker (%s): analyzing in process", exc)
            return None
        return cls(process)

    def tokens(self, analyzer: Analyzer, texts: Sequence[str], *, later: bool = False) -> int:
        """Queue ``analyzer.tokens_many(texts)``; returns the job's ticket. ``later``: hand
        it over only when no other kind of job waits (its result is needed last)."""
        return self._submit(_TOKENS, (analyzer.to_config(), list(texts)), later=later)

    def routing_counts(self, rows: Sequence[tuple[int, str]]) -> int:
        """Queue the routing-term counts per level of ``(level, text)`` rows
        (:func:`ragspine.stores.chunks.count_terms`); returns the job's ticket."""
        return self._submit(_ROUTING, list(rows))

    def relations(self, glossary: Glossary, chunks: Sequence[tuple[str, str, str]]) -> int:
        """Queue the relations ``GlossaryExtractor(glossary)`` finds in each ``(library_id,
        doc_id, text)`` chunk (one list per chunk, in order); returns the job's ticket. The
        glossary crosses the pipe once for as long as the same object is given."""
        return self._submit(_RELATIONS, (glossary, list(chunks)))

    def withdraw(self, ticket: int) -> bool:
        """Take back a job not handed to the child yet: ``True`` when taken back (the caller
        computes it; its ticket gives no result), ``False`` when it is under way or done."""
        with self._state:
            for waiting in (self._queue, self._later):
                for job in waiting:
                    if job[0] == ticket:
                        waiting.remove(job)
                        return True
        return False

    def ready(self, ticket: int) -> bool:
        """Whether :meth:`result` of ``ticket`` would return (or fail) without waiting."""
        with self._state:
            return ticket in self._results or self._gone

    def result(self, ticket: int) -> Any:
        """The result of the job with ``ticket`` (waiting for it); :class:`WorkerGone` when
        the worker stopped before it or failed on it."""
        with self._state:
            while ticket not in self._results and not self._gone:
                self._state.wait()
            reply = self._results.pop(ticket, None)
        if reply is None:
            raise WorkerGone("the analysis worker stopped")
        status, payload = reply
        if status != "ok":
            raise WorkerGone(str(payload))
        return payload

    def close(self) -> None:
        """Stop the worker (jobs not handed over and results not claimed are dropped); it
        exits once its input closes, reaped by a background thread, so the caller does not
        wait for it."""
        with self._state:
            self._closing = True
            self._queue.clear()
            self._later.clear()
            self._state.notify_all()
        threading.Thread(target=self._reap, name="analysis-worker-reap", daemon=True).start()

    def _reap(self) -> None:
        try:
            self._process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()

    def __enter__(self) -> AnalysisWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _submit(self, kind: str, payload: Any, *, later: bool = False) -> int:
        with self._state:
            ticket = self._next
            self._next += 1
            (self._later if later else self._queue).append((ticket, kind, payload))
            self._state.notify_all()
        return ticket

    def _next_job(self) -> tuple[int, str, Any] | None:
        """The next job to hand over (waiting for one and for room); ``None``: stop."""
        with self._state:
            while not (self._closing or self._gone) and (
                not (self._queue or self._later) or self._in_flight >= IN_FLIGHT
            ):
                self._state.wait()
            if self._closing or self._gone:
                return None
            self._in_flight += 1
            return (self._queue or self._later).popleft()

    def _write(self) -> None:
        stdin = self._process.stdin
        assert stdin is not None
        sent: object = None  # the glossary the child holds
        try:
            while (job := self._next_job()) is not None:
                ticket, kind, payload = job
                if kind == _RELATIONS:
                    glossary, chunks = payload
                    payload = (None if glossary is sent else glossary, chunks)
                    sent = glossary
                pickle.dump((ticket, kind, payload), stdin, protocol=pickle.HIGHEST_PROTOCOL)
                stdin.flush()
        except Exception as exc:  # a closed pipe, or a job that does not pickle
            log.info("analysis worker input closed (%s)", exc)  # the reader reports it gone
        finally:
            with contextlib.suppress(OSError):
                stdin.close()

    def _read(self) -> None:
        stdout = self._process.stdout
        assert stdout is not None
        try:
            while True:
                ticket, reply = pickle.load(stdout)
                with self._state:
                    self._results[ticket] = reply
                    self._in_flight -= 1
                    self._state.notify_all()
        except Exception:  # EOF, a broken pipe or a torn frame: the worker is gone
            with self._state:
                self._gone = True
                self._state.notify_all()
        finally:
            stdout.close()


def _run(kind: str, payload: Any, held: dict[str, Any]) -> Any:
    if kind == _RELATIONS:
        from ragspine.graph.extract import ChunkText, GlossaryExtractor

        glossary, chunks = payload
        if glossary is not None:  # a new glossary; None: the one sent last
            held["extractor"] = GlossaryExtractor(glossary)
        extractor = held["extractor"]
        found: list[list[ExtractedRelation]] = [
            extractor.extract(ChunkText(library_id, doc_id, "", text))
            for library_id, doc_id, text in chunks
        ]
        return found
    if kind == _TOKENS:
        config, texts = payload
        return Analyzer.from_config(config).tokens_many(texts)
    if kind == _ROUTING:
        from ragspine.stores.chunks import count_terms

        counts: dict[int, Counter[str]] = count_terms(payload)
        return counts
    raise ValueError(f"unknown job kind {kind!r}")


def _serve(jobs: IO[bytes], results: IO[bytes]) -> None:
    """The child's loop: run each job until the parent closes the pipe."""
    held: dict[str, Any] = {}  # the extractor of the last glossary sent
    while True:
        try:
            ticket, kind, payload = pickle.load(jobs)
        except EOFError:
            return
        try:
            reply: tuple[str, Any] = ("ok", _run(kind, payload, held))
        except Exception as exc:  # reported to the parent, which computes in process
            reply = ("error", f"{type(exc).__name__}: {exc}")
        pickle.dump((ticket, reply), results, protocol=pickle.HIGHEST_PROTOCOL)
        results.flush()


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and closes the pipe
    results = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # a stray print must not corrupt the result stream
    _serve(sys.stdin.buffer, results)


if __name__ == "__main__":
    main()
