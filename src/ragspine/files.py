"""Crash-safe file writes: a file is either its old self or entirely new, never half-written.

Every module that persists a file (index segments and manifests, vector arrays, glossaries, SVG
previews) writes through :func:`write_atomically`, then calls :func:`fsync_dir` where the rename
itself must survive a power cut.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO


def write_atomically(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """Write ``path`` through ``write(stream)``: into a temporary file of the same folder that
    is flushed to disk and then renamed over ``path`` (removed on any failure).

    An existing file keeps its permissions; a new one gets those the umask gives.
    """
    try:
        mode: int | None = path.stat().st_mode & 0o7777
    except OSError:
        mode = None
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            write(stream)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode if mode is not None else 0o666 & ~_umask())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def write_text_atomically(path: Path, text: str) -> None:
    """:func:`write_atomically` for UTF-8 text."""
    data = text.encode("utf-8")
    write_atomically(path, lambda stream: stream.write(data))


def fsync_dir(folder: Path) -> None:
    """Flush a folder's entries (a rename into it) to disk; a no-op where that is unsupported."""
    if os.name != "posix":
        return
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current
