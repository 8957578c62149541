"""The fact-store seam: every backend implements :class:`FactStore`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from ragspine.structured.facts import Fact, FactKey

AnswerRow = tuple[str, str, str, str, str, str, int, str]
"""What an answer needs of a stored fact: value (decimal text), unit, currency, scale,
source_doc_id, locator, sensitivity, valid_as_of."""


@dataclass(frozen=True, slots=True)
class WriteSummary:
    """What one atomic write did."""

    added: int
    replaced: int
    unchanged: int


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """A superseded fact and the lineage of its replacement."""

    fact: Fact
    replaced_at: str
    replaced_by_source_doc_id: str
    replaced_by_locator: str


class FactStore(Protocol):
    """Storage of facts by identity (metric, entity, period, channel)."""

    def get(self, key: FactKey) -> Fact | None:
        """The current fact for ``key``, regardless of who asks (callers screen visibility)."""
        ...

    def write(self, facts: Iterable[Fact]) -> WriteSummary:
        """Store ``facts`` atomically: all land or none; a changed value moves the old one to
        history."""
        ...

    def history(self, key: FactKey) -> Sequence[HistoryEntry]:
        """Superseded versions of ``key``, oldest first."""
        ...

    def count(self) -> int:
        """Number of current facts."""
        ...

    def close(self) -> None: ...
