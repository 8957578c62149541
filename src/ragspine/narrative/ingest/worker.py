"""A helper process that analyzes what an ingest writes while the ingest goes on writing.

Analysis (tokenizing, stop words, stemming, routing-term counts) holds the interpreter lock, so
a thread cannot overlap it with the chunking and SQLite writes of the same ingest; a second
process can. The ingest hands the worker two kinds of job: the routing-term counts of a batch
about to be written (see :func:`ragspine.stores.chunks.count_terms`) and the index terms of a
batch just written (``Analyzer.tokens_many``). The worker is an optimisation only: when it
cannot start, dies or fails, the caller computes the same values in process.

The child is ``python -m ragspine.narrative.ingest.worker``, started with the running
interpreter; it talks pickle over its own stdin and stdout, ignores Ctrl-C (the parent decides)
and exits when its stdin closes. ``RAGSPINE_INGEST_WORKER=0`` turns it off.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import queue
import signal
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from ragspine.analysis import Analyzer

log = logging.getLogger(__name__)

ENV_SWITCH = "RAGSPINE_INGEST_WORKER"
_STOP = object()
_TOKENS, _ROUTING = "tokens", "routing"


class WorkerGone(Exception):
    """The worker stopped or failed on a job; compute in process instead."""


def worker_wanted() -> bool:
    """Whether an ingest should start a worker: two or more CPUs and not switched off."""
    if os.environ.get(ENV_SWITCH, "").strip() == "0":
        return False
    return (os.cpu_count() or 1) >= 2


class AnalysisWorker:
    """One child process working through jobs in submission order; each job's result is
    claimed by its ticket (see the module docstring)."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self._process = process
        self._jobs: queue.Queue[Any] = queue.Queue()
        self._results: dict[int, tuple[str, Any]] = {}
        self._done = threading.Condition()
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

    def tokens(self, analyzer: Analyzer, texts: Sequence[str]) -> int:
        """Queue ``analyzer.tokens_many(texts)``; returns the job's ticket."""
        return self._submit(_TOKENS, (analyzer.to_config(), list(texts)))

    def routing_counts(self, rows: Sequence[tuple[int, str]]) -> int:
        """Queue the routing-term counts per level of ``(level, text)`` rows
        (:func:`ragspine.stores.chunks.count_terms`); returns the job's ticket."""
        return self._submit(_ROUTING, list(rows))

    def result(self, ticket: int) -> Any:
        """The result of the job with ``ticket`` (waiting for it); :class:`WorkerGone` when
        the worker stopped before it or failed on it."""
        with self._done:
            while ticket not in self._results and not self._gone:
                self._done.wait()
            reply = self._results.pop(ticket, None)
        if reply is None:
            raise WorkerGone("the analysis worker stopped")
        status, payload = reply
        if status != "ok":
            raise WorkerGone(str(payload))
        return payload

    def close(self) -> None:
        """Stop the worker (results not claimed are dropped); it exits once its input closes,
        reaped by a background thread, so the caller does not wait for it."""
        self._jobs.put(_STOP)
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

    def _submit(self, kind: str, payload: Any) -> int:
        ticket = self._next
        self._next += 1
        self._jobs.put((ticket, kind, payload))
        return ticket

    def _write(self) -> None:
        stdin = self._process.stdin
        assert stdin is not None
        try:
            while (job := self._jobs.get()) is not _STOP:
                pickle.dump(job, stdin, protocol=pickle.HIGHEST_PROTOCOL)
                stdin.flush()
        except (OSError, ValueError):
            pass  # the worker is gone: the reader reports it
        finally:
            with contextlib.suppress(OSError):
                stdin.close()

    def _read(self) -> None:
        stdout = self._process.stdout
        assert stdout is not None
        try:
            while True:
                ticket, reply = pickle.load(stdout)
                with self._done:
                    self._results[ticket] = reply
                    self._done.notify_all()
        except Exception:  # EOF, a broken pipe or a torn frame: the worker is gone
            with self._done:
                self._gone = True
                self._done.notify_all()
        finally:
            stdout.close()


def _run(kind: str, payload: Any) -> Any:
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
    while True:
        try:
            ticket, kind, payload = pickle.load(jobs)
        except EOFError:
            return
        try:
            reply: tuple[str, Any] = ("ok", _run(kind, payload))
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
