"""The lexical index manifest: format version, parameters, generation and segment list.

``lexical.json`` is the single switch point of a commit: it is replaced atomically after every
file it names has been written, so readers see either the old or the new commit.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ragspine.analysis import ANALYSIS_VERSION, Analyzer
from ragspine.errors import StoreError

MANIFEST = "lexical.json"
FORMAT = "ragspine-lexical"
FORMAT_VERSION = 2

_FILE_NUMBER = re.compile(r"(?:seg|del)-(\d+)")


def read_manifest(path: Path) -> dict[str, Any]:
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise StoreError(
            f"lexical index manifest {path} cannot be read ({exc}): delete {path.parent} and "
            "rebuild the index from the chunk store"
        ) from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise StoreError(
            f"{path} is not a RAGSpine lexical index manifest: delete {path.parent} and rebuild"
        )
    return manifest


def committed_generation(folder: Path) -> int | None:
    """The generation of the index committed in ``folder`` (None when there is none or its
    manifest cannot be read); cheap enough to call before every search."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    generation = manifest.get("generation") if isinstance(manifest, dict) else None
    return generation if isinstance(generation, int) and not isinstance(generation, bool) else None


def incompatibility(
    manifest: dict[str, Any], k1: float, b: float, analyzer: Analyzer | None
) -> str | None:
    """Why an index with this manifest cannot be opened with these options, or None."""
    version = manifest.get("version")
    if version != FORMAT_VERSION:
        return (
            f"has on-disk format version {version!r} but this RAGSpine reads version "
            f"{FORMAT_VERSION}"
        )
    if manifest.get("k1") != k1 or manifest.get("b") != b:
        return (
            f"was built with k1={manifest.get('k1')!r}, b={manifest.get('b')!r} but k1={k1!r}, "
            f"b={b!r} were asked for"
        )
    stored = manifest.get("analyzer")
    if not isinstance(stored, dict) or stored.get("version") != ANALYSIS_VERSION:
        return f"was built with analyzer {stored!r}, which this RAGSpine cannot reproduce"
    if analyzer is not None and analyzer.to_config() != stored:
        return f"was built with analyzer {stored!r} but {analyzer.to_config()!r} was asked for"
    if not isinstance(manifest.get("segments"), list):
        return "has a manifest without a segment list"
    return None


def int_field(manifest: dict[str, Any], field: str, path: Path) -> int:
    value = manifest.get(field)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise StoreError(
            f"{path} has an invalid {field} {value!r}: delete {path.parent} and rebuild"
        )
    return value


def next_free_file(folder: Path) -> int:
    """A file number above every ``seg-NNNNNN`` name in ``folder``."""
    numbers = [int(n) for p in folder.iterdir() for n in _FILE_NUMBER.findall(p.name)]
    return max(numbers, default=0) + 1
