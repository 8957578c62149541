"""Child-hit expansion and snippet post-processing, behind the security boundary.

A snippet keeps its child's ``text``, ``chunk_id`` and ``source_locator``; ``prompt_text`` holds
the parent section or the sentence window around the child, built only from the parts the
principal may see (decided by :func:`ragspine.security.visible`, nowhere else). A child the
principal may not see never becomes a snippet, and neither does anything from its parent.
Names are content too: a snippet's title, heading and the heading paths of its locators keep
only the section names the principal may see (:mod:`ragspine.narrative.labels`), even when a
stored chunk carried more.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ragspine.errors import ConfigError
from ragspine.narrative.ingest.chunking import HEADING_SEPARATOR
from ragspine.narrative.labels import (
    MaySee,
    name_levels,
    screen_locator,
    screen_path,
    screen_title,
)
from ragspine.narrative.retrieve.snippets import ChunkRecord, Locator, Snippet
from ragspine.security import Principal, Sensitivity, visible


class ExpansionMode(StrEnum):
    """What ``prompt_text`` holds: the child only, its parent section or its sentence window.

    ``auto`` uses a child's sentence window when it has one, else its parent section.
    """

    NONE = "none"
    PARENT = "parent"
    WINDOW = "window"
    AUTO = "auto"

    @classmethod
    def parse(cls, raw: str | ExpansionMode) -> ExpansionMode:
        """Parse a mode name; the error lists the valid names."""
        try:
            return cls(str(raw).strip().lower())
        except ValueError:
            names = ", ".join(m.value for m in cls)
            raise ConfigError(f"unknown expansion mode {raw!r}: use one of {names}") from None


@dataclass(frozen=True, slots=True)
class Passage:
    """A piece of expansion text (a paragraph, a sentence, a child) with its own sensitivity."""

    text: str
    sensitivity: int = 0
    allowed_groups: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class ParentSection:
    """A section: its own sensitivity and its parts in reading order."""

    parent_id: str
    locator: Locator
    parts: tuple[Passage, ...]
    sensitivity: int = 0
    allowed_groups: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class SentenceWindow:
    """The sentences around one child chunk (the child's own included), in reading order."""

    chunk_id: str
    parts: tuple[Passage, ...]


def parent_from_children(
    parent_id: str,
    locator: Locator,
    children: Sequence[ChunkRecord],
    *,
    sensitivity: int = 0,
) -> ParentSection:
    """A parent section assembled from its children (in reading order), each keeping its level.

    Building the section from its children, rather than from a stored section text, is what lets
    expansion leave out exactly the passages a principal may not see.
    """
    parts = tuple(
        Passage(c.text, _level(c.sensitivity), _groups(c))
        for c in children
        if c.parent_id == parent_id
    )
    return ParentSection(parent_id, locator, parts, _level(sensitivity))


def window_from_neighbours(
    chunks: Sequence[ChunkRecord], index: int, *, size: int = 1
) -> SentenceWindow:
    """The window of ``size`` chunks either side of ``chunks[index]`` within the same document."""
    if size < 0:
        raise ConfigError(f"window size must be non-negative, got {size!r}")
    centre = chunks[index]
    low, high = max(0, index - size), min(len(chunks), index + size + 1)
    parts = tuple(
        Passage(c.text, _level(c.sensitivity), _groups(c))
        for c in chunks[low:high]
        if c.doc_id == centre.doc_id
    )
    return SentenceWindow(centre.chunk_id, parts)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A child chunk that retrieval found, with its fused score."""

    chunk: ChunkRecord
    score: float


@dataclass(frozen=True, slots=True)
class ExpansionResult:
    """Snippets built for a principal, and how much was withheld (counts only)."""

    snippets: tuple[Snippet, ...]
    dropped_children: int = 0
    dropped_parts: int = 0
    unexpanded: int = 0


def _level(raw: object) -> int:
    return int(Sensitivity.parse(raw) if isinstance(raw, str) else Sensitivity(int(raw)))  # type: ignore[call-overload]


def _groups(item: object) -> frozenset[str]:
    return frozenset(getattr(item, "allowed_groups", None) or ())


def may_see(principal: Principal, item: object) -> bool:
    """Whether ``principal`` may see ``item`` (anything with ``sensitivity``, maybe groups)."""
    return visible(principal, getattr(item, "sensitivity"), _groups(item))  # noqa: B009


@dataclass(frozen=True, slots=True)
class _Names:
    """A snippet's title, heading and locators as the principal may see them."""

    title: str
    heading: str
    source_locator: Locator
    parent_locator: Locator | None


def _heading_path(chunk: ChunkRecord) -> list[str]:
    locator = chunk.source_locator
    if isinstance(locator, Mapping) and isinstance(locator.get("heading_path"), list | tuple):
        return [str(name) for name in locator["heading_path"]]
    heading = str(getattr(chunk, "heading", "") or "")
    return heading.split(HEADING_SEPARATOR) if heading else []


def screen_names(
    chunk: ChunkRecord, parent_locator: Locator | None, principal: Principal
) -> _Names:
    """The chunk's names with every section name ``principal`` may not see left out."""
    levels = name_levels(getattr(chunk, "section_levels", None) or ())
    locator = chunk.source_locator
    if not levels:  # no section is more sensitive than its document: no name to withhold
        title, heading = getattr(chunk, "title", ""), getattr(chunk, "heading", "")
        return _Names(str(title or ""), str(heading or ""), locator, parent_locator)

    def may_see(level: int) -> bool:
        return visible(principal, level)

    source = str(locator.get("file", "")) if isinstance(locator, Mapping) else ""
    return _Names(
        title=screen_title(str(getattr(chunk, "title", "") or ""), source, levels, may_see),
        heading=HEADING_SEPARATOR.join(screen_path(_heading_path(chunk), levels, may_see)),
        source_locator=_screened(locator, levels, may_see),
        parent_locator=_screened(parent_locator, levels, may_see),
    )


def _screened(locator: Locator | None, levels: Mapping[str, int], may_see: MaySee) -> Any:
    return screen_locator(locator, levels, may_see) if locator is not None else None


def _visible_parts(parts: Iterable[Passage], principal: Principal) -> tuple[list[Passage], int]:
    kept: list[Passage] = []
    withheld = 0
    for part in parts:
        if may_see(principal, part):
            kept.append(part)
        else:
            withheld += 1
    return kept, withheld


def expand_one(
    chunk: ChunkRecord,
    score: float,
    principal: Principal,
    *,
    mode: ExpansionMode = ExpansionMode.PARENT,
    parent: ParentSection | None = None,
    window: SentenceWindow | None = None,
) -> tuple[Snippet | None, int, bool]:
    """One child's snippet (None when the child is not visible), parts withheld, expanded or not."""
    if not may_see(principal, chunk):
        return None, 0, False
    levels = [_level(chunk.sensitivity)]
    parent_locator = chunk.parent_locator
    prompt_text = chunk.text
    withheld = 0
    expanded = False
    parts: list[Passage] = []
    separator = "\n\n"
    if mode is ExpansionMode.PARENT and parent is not None:
        if may_see(principal, parent):
            parts, withheld = _visible_parts(parent.parts, principal)
            levels.append(_level(parent.sensitivity))
            parent_locator = parent.locator
        else:
            withheld = len(parent.parts)
            parent_locator = None
    elif mode is ExpansionMode.WINDOW and window is not None:
        parts, withheld = _visible_parts(window.parts, principal)
        separator = " "
    if parts:
        joined = separator.join(part.text for part in parts)
        if chunk.text in joined:
            prompt_text = joined
            levels.extend(_level(part.sensitivity) for part in parts)
            expanded = True
    names = screen_names(chunk, parent_locator, principal)
    snippet = Snippet(
        text=chunk.text,
        chunk_id=chunk.chunk_id,
        doc_id=chunk.doc_id,
        source_locator=names.source_locator,
        library_id=chunk.library_id,
        score=score,
        prompt_text=prompt_text,
        parent_locator=names.parent_locator,
        heading=names.heading,
        title=names.title,
        metadata=chunk.metadata,
        sensitivity=max(levels),
    )
    return snippet, withheld, expanded


def build_snippets(
    candidates: Sequence[Candidate],
    principal: Principal,
    *,
    mode: ExpansionMode = ExpansionMode.PARENT,
    parents: Mapping[str, ParentSection] | None = None,
    windows: Mapping[str, SentenceWindow] | None = None,
) -> ExpansionResult:
    """Snippets for the visible candidates, in input order, expanded with visible text only."""
    parents = parents or {}
    windows = windows or {}
    snippets: list[Snippet] = []
    dropped = withheld = unexpanded = 0
    for candidate in candidates:
        chunk = candidate.chunk
        parent = parents.get(chunk.parent_id) if chunk.parent_id else None
        window = windows.get(chunk.chunk_id)
        one_mode = mode
        if mode is ExpansionMode.AUTO:
            one_mode = ExpansionMode.WINDOW if window is not None else ExpansionMode.PARENT
        snippet, parts_withheld, expanded = expand_one(
            chunk,
            candidate.score,
            principal,
            mode=one_mode,
            parent=parent,
            window=window,
        )
        if snippet is None:
            dropped += 1
            continue
        withheld += parts_withheld
        unexpanded += 0 if expanded or mode is ExpansionMode.NONE else 1
        snippets.append(snippet)
    return ExpansionResult(tuple(snippets), dropped, withheld, unexpanded)


def screen_snippets(
    snippets: Sequence[Snippet], principal: Principal
) -> tuple[tuple[Snippet, ...], int]:
    """The snippets ``principal`` may see, and how many were dropped (the last line of defence)."""
    kept = tuple(s for s in snippets if visible(principal, s.sensitivity))
    return kept, len(snippets) - len(kept)


# ---- post-processing --------------------------------------------------------------------------

PostprocessStep = Callable[[Sequence[Snippet]], Sequence[Snippet]]

_PROTECTED = ("text", "chunk_id", "doc_id", "source_locator", "library_id", "parent_locator")


def deduplicate(snippets: Sequence[Snippet]) -> list[Snippet]:
    """Keep the first snippet of each ``(library_id, chunk_id)``."""
    seen: set[tuple[str, str]] = set()
    kept: list[Snippet] = []
    for snippet in snippets:
        key = (snippet.library_id, snippet.chunk_id)
        if key not in seen:
            seen.add(key)
            kept.append(snippet)
    return kept


def order_by_score(snippets: Sequence[Snippet]) -> list[Snippet]:
    """Best score first; ties keep their input order."""
    return sorted(snippets, key=lambda s: -s.score)


@dataclass(frozen=True, slots=True)
class Postprocessor:
    """Runs post-processing steps and proves they kept every snippet's identity fields."""

    steps: tuple[PostprocessStep, ...] = field(default=(deduplicate,))

    def __call__(self, snippets: Sequence[Snippet]) -> tuple[Snippet, ...]:
        """Apply the steps; a step that alters or invents a snippet is a ConfigError."""
        originals = {(s.library_id, s.chunk_id): s for s in snippets}
        current: Sequence[Snippet] = tuple(snippets)
        for step in self.steps:
            current = tuple(step(current))
            for snippet in current:
                original = originals.get((snippet.library_id, snippet.chunk_id))
                if original is None or any(
                    getattr(snippet, name) != getattr(original, name) for name in _PROTECTED
                ):
                    name = getattr(step, "__name__", type(step).__name__)
                    raise ConfigError(
                        f"postprocess step {name!r} changed or invented snippet "
                        f"{snippet.chunk_id!r}: steps may only drop, reorder or rescore"
                    )
        return tuple(current)
