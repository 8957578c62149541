"""Writing a rendered preview to a file: never over its own source, never half-written."""

from __future__ import annotations

import os
from pathlib import Path

from ragspine import files
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
    """Write ``text`` (UTF-8) to ``out`` so that it either keeps its old content or gets all of
    ``text`` (see :func:`ragspine.files.write_text_atomically`); failures are ConfigErrors."""
    if out.is_dir():
        raise ConfigError(f"cannot write to {quote_input(out)}: it is a folder")
    try:
        files.write_text_atomically(out, text)
    except OSError as exc:
        raise ConfigError(
            f"cannot write to {quote_input(out)}: {exc.strerror or exc}; "
            "the file was left as it was"
        ) from None
