"""The values that flow between narrative stages: search hits and snippets.

A :class:`LibraryHit` is what one library's search returns for one chunk (its score in that
library's ranking); fusion across libraries turns those into
:class:`~ragspine.narrative.retrieve.fusion.FusedHit` (the RRF score and the rank held in each
list). A :class:`Snippet` is what retrieval hands to generation: the child chunk's own fields
plus its expansion (``prompt_text``) and the ``parent_locator`` back-reference. Citations always
point at the child.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol

_EMPTY: Mapping[str, object] = MappingProxyType({})

Locator = Mapping[str, Any] | str
"""Where a chunk or section sits in its source: the chunk store's mapping (file, page, heading
path, paragraph) or, for stand-in sources, a plain string."""


def format_locator(locator: Locator | None) -> str:
    """A one-line form of a locator (``file=a.md, heading=Risks, paragraph=2``)."""
    if locator is None:
        return ""
    if isinstance(locator, str):
        return locator
    parts = []
    for key, value in locator.items():
        if isinstance(value, list | tuple):
            value = " > ".join(map(str, value))
        parts.append(f"{key}={value}")
    return ", ".join(parts)


@dataclass(frozen=True, slots=True)
class LibraryHit:
    """One chunk found by one library's search, with its score in that library's ranking
    (BM25, cosine or the per-library fusion of both); not comparable across libraries."""

    chunk_id: str
    score: float
    library_id: str = ""
    doc_id: str = ""


class ChunkRecord(Protocol):
    """What expansion needs to know about a child chunk (the chunk store's record fits)."""

    @property
    def chunk_id(self) -> str: ...
    @property
    def doc_id(self) -> str: ...
    @property
    def library_id(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def source_locator(self) -> Locator: ...
    @property
    def parent_id(self) -> str | None: ...
    @property
    def parent_locator(self) -> Locator | None: ...
    @property
    def metadata(self) -> Mapping[str, object]: ...
    @property
    def sensitivity(self) -> int: ...


@dataclass(frozen=True, slots=True)
class Snippet:
    """A child chunk ready for generation; ``prompt_text`` is its visible expansion.

    ``text``, ``chunk_id``, ``doc_id``, ``source_locator`` and ``library_id`` are the child's
    own (citations point here); ``prompt_text`` holds the parent section or sentence window built
    from visible text only, and ``parent_locator`` refers back to that section.
    """

    text: str
    chunk_id: str
    doc_id: str
    source_locator: Locator
    library_id: str
    score: float
    prompt_text: str
    parent_locator: Locator | None = None
    heading: str = ""
    title: str = ""
    metadata: Mapping[str, object] = field(default_factory=lambda: _EMPTY)
    sensitivity: int = 0

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready form."""
        return {
            "text": self.text,
            "chunk_id": self.chunk_id,
            "doc_id": self.doc_id,
            "library_id": self.library_id,
            "source_locator": _plain(self.source_locator),
            "parent_locator": _plain(self.parent_locator),
            "score": self.score,
            "prompt_text": self.prompt_text,
            "heading": self.heading,
            "title": self.title,
            "metadata": dict(self.metadata),
            "sensitivity": int(self.sensitivity),
        }


def _plain(locator: Locator | None) -> object:
    return dict(locator) if isinstance(locator, Mapping) else locator
