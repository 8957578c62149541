"""Section names (headings, heading paths, document titles) screened like text (contract 10).

A document's sidecar may give sections a higher sensitivity by heading name
(``section_sensitivity``). A *name* is then as sensitive as the most sensitive section it
names: a heading or a title equal to such a heading carries that section's level. Names are
compared in their matching form (:func:`ragspine.analysis.match_key`: NFKC, case folding,
invisible characters such as soft hyphens and zero-width spaces dropped, whitespace collapsed),
the sidecar key and the heading alike; a key that names no heading of its document fails that
document (:func:`unmatched_names`), so a typo never leaves a section public. The rule, applied
once at ingest for each chunk's level and again at snippet construction for the asker:

- a chunk's level is its document's, raised by every section named on its heading path, so a
  visible chunk never sits under a name more sensitive than itself;
- a heading path keeps only the names the reader may see (at ingest this drops nothing, by the
  rule above; at snippet construction it is the last line of defence);
- a title that names a section the reader may not see is replaced by the file's stem, and by
  nothing when that is also such a name.

At ingest "the reader" is anyone who may see the chunk (names at or below its level); at
snippet construction it is the principal, through :func:`ragspine.security.visible`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import PurePath
from typing import Any

from ragspine.analysis import match_key
from ragspine.security import Sensitivity

SectionLevels = Sequence[tuple[str, int]]
"""``(heading name, level)`` pairs from a document's ``section_sensitivity`` sidecar entry."""

MaySee = Callable[[int], bool]
"""Whether the reader may see something of the given level."""


def normalize_name(name: str) -> str:
    """The form names are compared in: :func:`ragspine.analysis.match_key` (NFKC, case-folded,
    invisible characters dropped, whitespace collapsed and trimmed)."""
    return match_key(name)


def unmatched_names(names: Iterable[str], headings: Iterable[str]) -> list[str]:
    """The ``names`` (sidecar keys) equal to none of ``headings``, in order."""
    present = {normalize_name(heading) for heading in headings}
    return [name for name in names if normalize_name(name) not in present]


def name_levels(section_levels: Iterable[tuple[str, int]]) -> dict[str, int]:
    """Normalised name -> the highest level any entry gives it."""
    levels: dict[str, int] = {}
    for name, level in section_levels:
        key = normalize_name(str(name))
        levels[key] = max(levels.get(key, int(level)), int(level))
    return levels


def name_level(name: str, base: int, levels: Mapping[str, int]) -> int:
    """The level of ``name``: ``base``, raised when it names a more sensitive section."""
    if not levels:
        return int(base)
    return max(int(base), levels.get(normalize_name(name), int(base)))


def path_level(path: Sequence[str], base: int, levels: Mapping[str, int]) -> Sensitivity:
    """A chunk's level: ``base`` raised by every section named on its heading ``path``."""
    level = int(base)
    for name in path:
        level = name_level(name, level, levels)
    return Sensitivity(level)


def screen_path(path: Sequence[str], levels: Mapping[str, int], may_see: MaySee) -> list[str]:
    """The names of ``path`` the reader may see, in order."""
    if not levels:
        return list(path)
    return [name for name in path if may_see(name_level(name, 0, levels))]


def screen_title(title: str, source: str, levels: Mapping[str, int], may_see: MaySee) -> str:
    """``title`` when the reader may see it, else the stem of ``source`` if that is not a
    hidden name either, else the empty string."""
    if not levels or may_see(name_level(title, 0, levels)):
        return title
    stem = PurePath(source).stem if source else ""
    return stem if may_see(name_level(stem, 0, levels)) else ""


def screen_locator(locator: Any, levels: Mapping[str, int], may_see: MaySee) -> Any:
    """A locator mapping with its ``heading_path`` screened (other forms are returned as is)."""
    if not levels or not isinstance(locator, Mapping) or "heading_path" not in locator:
        return locator
    path = locator["heading_path"]
    if not isinstance(path, list | tuple):
        return locator
    kept = screen_path([str(name) for name in path], levels, may_see)
    if len(kept) == len(path):
        return locator
    screened = dict(locator)
    if kept:
        screened["heading_path"] = kept
    else:
        del screened["heading_path"]
    return screened


def at_or_below(level: int) -> MaySee:
    """The ingest-time reader of a chunk at ``level``: anyone who may see that chunk."""
    return lambda other: int(other) <= int(level)
