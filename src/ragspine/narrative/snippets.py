"""The values that flow between narrative stages: search hits and snippets.

A :class:`Hit` is what one library's search returns for one chunk; a :class:`Snippet` is what
retrieval hands to generation: the child chunk's own fields plus its expansion (``prompt_text``)
and the ``parent_locator`` back-reference. Citations always point at the child.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Protocol

_EMPTY: Mapping[str, object] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Hit:
    """One chunk found by one library's search, with its score there."""

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
    def source_locator(self) -> str: ...
    @property
    def parent_id(self) -> str | None: ...
    @property
    def parent_locator(self) -> str | None: ...
    @property
    def metadata(self) -> Mapping[str, object]: ...
    @property
    def sensitivity(self) -> int: ...


@dataclass(frozen=True, slots=True)
class Snippet:
    """A child chunk ready for generation; ``prompt_text`` is its visible expansion."""

    text: str
    chunk_id: str
    doc_id: str
    source_locator: str
    library_id: str
    score: float
    prompt_text: str
    parent_locator: str | None = None
    metadata: Mapping[str, object] = field(default_factory=lambda: _EMPTY)
    sensitivity: int = 0
