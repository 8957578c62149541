"""Uploaded files: checked names and sizes, stored under names the service makes.

An upload's own name is only ever a label (the document id, a fact's source): it is checked
(printable, no path separators, a known suffix, bounded length) and never becomes a path. Files
are written as ``<n><suffix>`` inside a folder the service made.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path, PurePosixPath

from ragspine.errors import IngestError, quote_input
from ragspine.files import write_text_atomically
from ragspine.narrative.ingest.loaders import LOADERS, SIDECAR_SUFFIX

DOCUMENT_SUFFIXES = frozenset(LOADERS)
TABLE_SUFFIXES = frozenset({".csv", ".xlsx", ".json", ".jsonl"})
NAME_LIMIT = 200


def checked_name(raw: str | None, suffixes: frozenset[str]) -> tuple[str, str]:
    """``(label, suffix)`` of an uploaded file name; a name that is empty, holds a path
    separator or a control character, or has an unknown suffix is an :class:`IngestError`."""
    name = unicodedata.normalize("NFC", raw or "")
    if not name or len(name) > NAME_LIMIT:
        raise IngestError(f"upload name {quote_input(name)} must be 1-{NAME_LIMIT} characters")
    if "/" in name or "\\" in name or name in (".", "..") or not name.isprintable():
        raise IngestError(
            f"upload name {quote_input(name)} must be a plain file name (no folders, no control "
            "characters)"
        )
    suffix = PurePosixPath(name).suffix.lower()
    if suffix not in suffixes:
        raise IngestError(
            f"upload {quote_input(name)}: unsupported file type; use one of "
            f"{', '.join(sorted(suffixes))}"
        )
    return name, suffix


def store_document(folder: Path, index: int, name: str, suffix: str, content: bytes) -> Path:
    """Write one uploaded document as ``folder/<index><suffix>`` with a sidecar giving it the
    document id ``name``; returns its path."""
    path = folder / f"{index}{suffix}"
    path.write_bytes(content)
    sidecar = path.with_name(path.name + SIDECAR_SUFFIX)
    # The upload's name, never the server's path, is what locators show.
    write_text_atomically(sidecar, json.dumps({"doc_id": name, "source": name}))
    return path
