"""Write locks: one writer per library (and one for the glossary) across threads and processes.

A lock is an OS file lock (``flock``) on a file under ``<workspace>/locks/``. The operating system
releases it when its holder exits, so a killed ingest never leaves a library locked. The file
holds a line saying who holds it (process id, command, start time) so that a waiting writer, or
an error, can say who is writing. Readers never take a lock: they read the last committed state.

A thread that already holds a lock may take it again (re-entrant per thread), so a write that
calls another write of the same library does not deadlock.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from ragspine.errors import StoreError

LOCK_DIR = "locks"
log = logging.getLogger("ragspine.locks")
_POLL_SECONDS = 0.05
_TELL_AFTER_SECONDS = 0.5

_held = threading.local()


def _held_counts() -> dict[str, int]:
    counts: dict[str, int] | None = getattr(_held, "counts", None)
    if counts is None:
        counts = _held.counts = {}
    return counts


def lock_path(workspace: Path, resource: str) -> Path:
    """The lock file of ``resource`` (``library-NAME`` or ``glossary``) in a workspace."""
    return workspace / LOCK_DIR / f"{resource}.lock"


def _owner_line() -> str:
    command = " ".join(os.path.basename(a) if i == 0 else a for i, a in enumerate(sys.argv))
    return json.dumps(
        {
            "pid": os.getpid(),
            "command": command[:200],
            "since": datetime.now(UTC).isoformat(timespec="seconds"),
        }
    )


def describe_holder(path: Path) -> str:
    """Who holds the lock at ``path``, as a phrase (``process 123 (ragspine ingest ...) since
    ...``); ``"another writer"`` when the file says nothing readable."""
    try:
        owner = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        owner = {}
    if not isinstance(owner, dict) or "pid" not in owner:
        return "another writer"
    command = f" ({owner['command']})" if owner.get("command") else ""
    since = f" since {owner['since']}" if owner.get("since") else ""
    return f"process {owner['pid']}{command}{since}"


def is_held(path: Path) -> bool:
    """Whether anyone (another process, or another thread of this one) holds the lock at
    ``path`` right now. Only looks: a lock file that does not exist is not made, and the probe
    is a shared lock, so two probes never see each other. When the file system cannot tell
    (an NFS mount refuses a lock on a file opened for reading), the answer is yes."""
    try:
        handle = open(path, encoding="utf-8")  # noqa: SIM115 - closed below
    except OSError:
        return False  # never taken (or unreadable: no writer of ours made it)
    try:
        fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:  # BlockingIOError: a writer holds it
        return True
    else:
        fcntl.flock(handle, fcntl.LOCK_UN)
        return False
    finally:
        handle.close()


def held_locks(workspace: Path) -> list[str]:
    """``"resource: holder"`` for every lock of the workspace held right now (by anyone)."""
    folder = workspace / LOCK_DIR
    if not folder.is_dir():
        return []
    held = []
    for path in sorted(folder.glob("*.lock")):
        try:
            with open(path, "a+", encoding="utf-8") as handle:
                try:  # shared: a reader's probe (is_held) is not taken for a writer
                    fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
                except BlockingIOError:
                    held.append(f"{path.stem}: {describe_holder(path)}")
                else:
                    fcntl.flock(handle, fcntl.LOCK_UN)
        except OSError:
            continue
    return held


@contextmanager
def write_lock(
    path: Path,
    *,
    resource: str,
    timeout: float | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> Iterator[None]:
    """Hold the exclusive lock at ``path`` for the body of the ``with``.

    When another thread or process holds it, ``on_wait`` is told who (once) and the call waits:
    forever with ``timeout=None``, else at most ``timeout`` seconds before raising
    :class:`StoreError` naming the holder (``timeout=0`` fails at once).
    """
    key = os.path.abspath(path)
    counts = _held_counts()
    if counts.get(key):
        counts[key] += 1
        try:
            yield
        finally:
            counts[key] -= 1
        return
    handle = _acquire(path, resource=resource, timeout=timeout, on_wait=on_wait)
    counts[key] = 1
    try:
        yield
    finally:
        del counts[key]
        try:
            handle.seek(0)
            handle.truncate()
            handle.flush()
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
            handle.close()


def _acquire(
    path: Path,
    *,
    resource: str,
    timeout: float | None,
    on_wait: Callable[[str], None] | None,
) -> TextIO:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - held beyond this function
    except OSError as exc:
        raise StoreError(
            f"cannot create the lock file {path} for {resource} ({exc.strerror}): check that "
            "the workspace folder is writable"
        ) from None
    started = time.monotonic()
    deadline = None if timeout is None else started + timeout
    told = False
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            holder = describe_holder(path)
            if deadline is not None and time.monotonic() >= deadline:
                handle.close()
                raise StoreError(
                    f"{resource} is being written by {holder}; wait for it to finish and run "
                    "this again"
                ) from None
            # Said once, after a moment: short waits stay quiet, and the holder has written
            # who it is by then (it does so right after taking the lock).
            if not told and time.monotonic() - started >= _TELL_AFTER_SECONDS:
                message = f"waiting for {resource}: it is being written by {holder}"
                (on_wait or log.warning)(message)
                told = True
            time.sleep(_POLL_SECONDS)
        except OSError as exc:
            handle.close()
            raise StoreError(f"cannot lock {path} for {resource} ({exc.strerror})") from None
    handle.seek(0)
    handle.truncate()
    handle.write(_owner_line())
    handle.flush()
    return handle
