"""Translation of storage-layer exceptions (sqlite3, psycopg, OS) into the project's exception
tree.

Applied at the public boundary (:class:`~ragspine.workspace.Workspace` methods), so that no
``sqlite3.Error`` or ``OSError`` from any depth reaches a caller untranslated.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TypeVar

from ragspine.errors import IngestError, RagSpineError, StoreError
from ragspine.locks import held_locks
from ragspine.stores.postgres.database import is_postgres_error, postgres_error

_BUSY = ("database is locked", "database table is locked", "database is busy")


def sqlite_error(exc: sqlite3.Error, workspace: Path, *, name_writers: bool = True) -> StoreError:
    """A :class:`StoreError` for ``exc`` saying what happened and what to do.

    ``name_writers`` lists the writers holding the workspace's locks (library names included);
    errors of reading calls leave them out, since a reader may not see every library.
    """
    text = str(exc)
    where = f"the workspace database in {workspace}"
    if any(marker in text for marker in _BUSY):
        holders = held_locks(workspace) if name_writers else []
        who = f" (writing now: {'; '.join(holders)})" if holders else ""
        return StoreError(
            f"{where} stayed locked by another writer{who}; run this again when it finishes"
        )
    if "readonly" in text or "read-only" in text:
        return StoreError(f"{where} is read-only ({text}): check the folder's permissions")
    if "malformed" in text or "not a database" in text:
        return StoreError(
            f"{where} is damaged ({text}): restore it from a backup, or ingest again into a "
            "new workspace"
        )
    if "disk I/O" in text or "full" in text:
        return StoreError(f"{where} could not be written ({text}): check free disk space")
    return StoreError(f"{where} failed: {text}")


def os_error(exc: OSError, workspace: Path) -> RagSpineError:
    """A :class:`StoreError` for a file of the workspace, an :class:`IngestError` for any other
    file (an input the caller named)."""
    name = exc.filename if exc.filename is not None else ""
    reason = exc.strerror or type(exc).__name__
    inside = False
    if name:
        try:
            Path(name).resolve().relative_to(workspace.resolve())
            inside = True
        except (OSError, ValueError):
            inside = False
    if inside or not name:
        return StoreError(f"workspace file {name or workspace}: {reason}")
    return IngestError(f"{name}: {reason}")


class _HasPath(Protocol):
    path: Path


T = TypeVar("T", bound=Callable[..., Any])


def _translating(method: T, *, name_writers: bool) -> T:
    @functools.wraps(method)
    def wrapper(self: _HasPath, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as exc:
            raise sqlite_error(exc, self.path, name_writers=name_writers) from exc
        except OSError as exc:
            raise os_error(exc, self.path) from exc
        except Exception as exc:
            if is_postgres_error(exc):
                raise postgres_error(exc, getattr(self, "location", "")) from exc
            raise

    return wrapper  # type: ignore[return-value]


def translate_store_errors(method: T) -> T:
    """Decorate a writing method of an object with a workspace ``path`` so that sqlite3,
    psycopg and OS errors leave it as :class:`RagSpineError` (a locked database names who is
    writing)."""
    return _translating(method, name_writers=True)


def translate_read_errors(method: T) -> T:
    """Like :func:`translate_store_errors` for a reading method: its errors name no writer
    (and so no library the reader may not see)."""
    return _translating(method, name_writers=False)
