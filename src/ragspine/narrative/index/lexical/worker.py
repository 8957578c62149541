"""A helper process that analyzes chunk texts while the ingesting process writes them.

Analysis (tokenizing, stop words, stemming) holds the interpreter lock, so a thread cannot
overlap it with the SQLite writes of the same ingest; a second process can. The ingest hands
each written batch's texts to :class:`TokenWorker` and takes the terms back when the lexical
indexes are brought up to date. The worker is an optimisation only: when it cannot start, dies
or fails, the caller analyzes in process and gets the same terms.

The child is ``python -m ragspine.narrative.index.lexical.worker``, started with the running
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
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from ragspine.analysis import Analyzer

log = logging.getLogger(__name__)

ENV_SWITCH = "RAGSPINE_INGEST_WORKER"
_STOP = object()


class WorkerGone(Exception):
    """The worker stopped or failed; analyze in process instead."""


def worker_wanted() -> bool:
    """Whether an ingest should start a worker: two or more CPUs and not switched off."""
    if os.environ.get(ENV_SWITCH, "").strip() == "0":
        return False
    return (os.cpu_count() or 1) >= 2


class TokenWorker:
    """One child process analyzing texts in submission order (see the module docstring)."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self._process = process
        self._jobs: queue.Queue[Any] = queue.Queue()
        self._results: queue.Queue[Any] = queue.Queue()
        self._submitted = 0
        self._taken = 0
        self._writer = threading.Thread(target=self._write, name="token-worker-in", daemon=True)
        self._reader = threading.Thread(target=self._read, name="token-worker-out", daemon=True)
        self._writer.start()
        self._reader.start()

    @classmethod
    def start(cls) -> TokenWorker | None:
        """A running worker, or ``None`` when it is switched off or cannot start."""
        if not worker_wanted():
            return None
        env = dict(os.environ)
        package_root = str(Path(__file__).resolve().parents[4])  # the folder holding ragspine/
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

    def submit(self, analyzer: Analyzer, texts: Sequence[str]) -> None:
        """Queue ``texts`` for analysis; results come back in submission order."""
        self._submitted += 1
        self._jobs.put((analyzer.to_config(), list(texts)))

    def take(self) -> list[list[str]]:
        """The terms of the oldest job not taken yet (``Analyzer.tokens_many`` of its texts).

        Raises :class:`WorkerGone` when the worker stopped or failed on it.
        """
        if self._taken >= self._submitted:
            raise WorkerGone("no job is waiting")
        self._taken += 1
        result = self._results.get()
        if result is _STOP:
            self._results.put(_STOP)  # every later take fails the same way
            raise WorkerGone("the analysis worker stopped")
        status, payload = result
        if status != "ok":
            raise WorkerGone(str(payload))
        tokens: list[list[str]] = payload
        return tokens

    def close(self) -> None:
        """Stop the worker (jobs not taken are dropped)."""
        self._jobs.put(_STOP)
        try:
            self._process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()

    def __enter__(self) -> TokenWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

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
                self._results.put(pickle.load(stdout))
        except Exception:  # EOF, a broken pipe or a torn frame: the worker is gone
            self._results.put(_STOP)
        finally:
            stdout.close()


def _serve(jobs: IO[bytes], results: IO[bytes]) -> None:
    """The child's loop: analyze each job until the parent closes the pipe."""
    while True:
        try:
            config, texts = pickle.load(jobs)
        except EOFError:
            return
        try:
            reply: tuple[str, Any] = ("ok", Analyzer.from_config(config).tokens_many(texts))
        except Exception as exc:  # reported to the parent, which analyzes in process
            reply = ("error", f"{type(exc).__name__}: {exc}")
        pickle.dump(reply, results, protocol=pickle.HIGHEST_PROTOCOL)
        results.flush()


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and closes the pipe
    results = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # a stray print must not corrupt the result stream
    _serve(sys.stdin.buffer, results)


if __name__ == "__main__":
    main()
