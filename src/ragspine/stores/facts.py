"""The fact-store seam: every backend implements :class:`FactStore`.

Backends live in ``ragspine/stores/<backend>/facts.py``; their SQL stays there. The contract suite
in ``tests/stores/contracts/fact_store.py`` states what every backend must do.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Protocol

from ragspine.security import Sensitivity
from ragspine.structured.facts import Fact, FactKey, Scale


@dataclass(frozen=True, slots=True)
class StoredFact:
    """What an answer needs of one stored fact (its key is the one asked for)."""

    value: Decimal
    unit: str
    currency: str
    scale: Scale
    source_doc_id: str
    locator: str
    sensitivity: Sensitivity
    valid_as_of: str

    @classmethod
    def of(cls, fact: Fact) -> StoredFact:
        """What a lookup of ``fact``'s key returns when the asker may see it."""
        return cls(
            fact.value,
            fact.unit,
            fact.currency,
            fact.scale,
            fact.source_doc_id,
            fact.locator,
            fact.sensitivity,
            fact.valid_as_of,
        )


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
    """Storage of facts by identity (metric, entity, period, channel).

    ``max_level`` is the highest sensitivity the asker may see
    (:func:`ragspine.security.max_visible_level`); a store applies it in its own query, so a fact
    above it is never read into Python.
    """

    def get(self, key: FactKey) -> Fact | None:
        """The current fact for ``key``, regardless of who asks (for ingestion and upkeep)."""
        ...

    def lookup(self, key: FactKey, *, max_level: int) -> StoredFact | None:
        """The current fact for ``key`` if its sensitivity is at most ``max_level``, else None.

        A fact above ``max_level`` and a missing one give the same answer.
        """
        ...

    def lookup_many(
        self, keys: Iterable[FactKey], *, max_level: int
    ) -> Mapping[FactKey, StoredFact]:
        """:meth:`lookup` of many keys at once (roll-ups read thousands): the keys found at
        ``max_level`` or below, each once; a key above it is left out exactly like a missing
        one."""
        ...

    def scan(
        self,
        *,
        max_level: int,
        metric: str | None = None,
        entity: str | None = None,
        period: str | None = None,
    ) -> Iterator[Fact]:
        """Current facts of sensitivity at most ``max_level``, narrowed to ``metric``,
        ``entity`` and ``period`` when given, ordered by (metric, entity, period, channel)."""
        ...

    def metrics_of(self, entity: str, *, max_level: int) -> frozenset[str]:
        """The metrics ``entity`` has a current fact for at ``max_level`` or below (a metric
        whose every fact is above it is not named)."""
        ...

    def write(self, facts: Iterable[Fact]) -> WriteSummary:
        """Store ``facts`` atomically: all land or none.

        A fact whose value (as exact decimal text), unit, currency, scale, source, locator and
        sensitivity equal the stored ones is unchanged; any other difference replaces the stored
        fact and moves it to history.
        """
        ...

    def history(self, key: FactKey) -> Sequence[HistoryEntry]:
        """Superseded versions of ``key``, oldest first."""
        ...

    def count(self) -> int:
        """Number of current facts."""
        ...

    def close(self) -> None:
        """Release the store's connections."""
        ...
