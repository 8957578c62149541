"""Writing a rendered preview to a file: never over its own source, never half-written."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from ragspine.errors import ConfigError, quote_input


def check_not_source(out: Path, source: Path) -> None:
    """Refuse ``out`` when it names the same file as ``source`` (by any path or link)."""
    if _same_file(out, source):
        raise ConfigError(
            f"refusing to write the output to {quote_input(out)}: it is the workflow file being "
            "previewed; choose another output path"
        )


def _same_file(out: Path, source: Path) -> bool:
    try:
        return os.path.samefile(out, source)
    except FileNotFoundError:
        return False  # out does not exist yet, or the source is missing (reported when read)
    except OSError:
        return out.resolve(strict=False) == source.resolve(strict=False)


def write_text_atomically(out: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``out`` through a temporary file in the same folder.

    ``out`` either keeps its old content or gets all of ``text``: the temporary file is renamed
    over it only once fully written and flushed to disk, and removed on any failure. A new file
    gets the permissions the process's umask gives; an existing one keeps its permissions.
    """
    if out.is_dir():
        raise ConfigError(f"cannot write to {quote_input(out)}: it is a folder")
    data = text.encode("utf-8")
    folder = out.parent
    try:
        mode = out.stat().st_mode & 0o7777
    except OSError:
        mode = 0o666 & ~_umask()
    try:
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{out.name}.", suffix=".tmp")
    except OSError as exc:
        raise ConfigError(f"cannot write to {quote_input(out)}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, out)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(exc, OSError):
            raise ConfigError(
                f"cannot write to {quote_input(out)}: {exc.strerror or exc}; "
                "the file was left as it was"
            ) from None
        raise


def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current
