"""The answer shape shared by every channel: one :class:`Answer` citing :class:`Source`\\ s.

A narrative answer cites chunks (library, document, chunk id, locator, and the parent section's
locator); a structured answer cites facts (the source document and locator a ``query_metric``
result carries, and the fact's metric, entity, period and channel). Both are a :class:`Source`,
so an answer that merges the two channels numbers its citations ``[1]``, ``[2]``, ... in one list.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from ragspine.errors import ConfigError
from ragspine.narrative.retrieve.snippets import Locator, format_locator
from ragspine.narrative.retrieve.trace import Trace
from ragspine.structured.facts import FactKey

NO_MATERIAL_TEXT = "No relevant material was found for this question."


class AnswerStatus(StrEnum):
    """Whether an answer found material to answer from."""

    ANSWERED = "answered"
    NO_MATERIAL = "no_material"


class SourceKind(StrEnum):
    """What a citation points at."""

    CHUNK = "chunk"
    FACT = "fact"


@dataclass(frozen=True, slots=True)
class Source:
    """One citation, the one behind marker ``[marker]``: a chunk or a fact.

    A chunk citation has ``chunk_id`` and ``library_id`` (and may have ``parent_locator``); a fact
    citation has ``fact``. Build them with :meth:`of_chunk` and :meth:`of_fact`.
    """

    marker: int
    doc_id: str
    source_locator: Locator
    chunk_id: str | None = None
    library_id: str | None = None
    parent_locator: Locator | None = None
    fact: FactKey | None = None

    def __post_init__(self) -> None:
        if (self.chunk_id is None) == (self.fact is None):
            raise ConfigError("a source cites exactly one of a chunk (chunk_id) or a fact (fact)")

    @classmethod
    def of_chunk(
        cls,
        marker: int,
        *,
        chunk_id: str,
        doc_id: str,
        library_id: str,
        source_locator: Locator,
        parent_locator: Locator | None = None,
    ) -> Source:
        """A citation of a child chunk."""
        return cls(marker, doc_id, source_locator, chunk_id, library_id, parent_locator)

    @classmethod
    def of_fact(cls, marker: int, *, doc_id: str, locator: Locator, fact: FactKey) -> Source:
        """A citation of a fact found in ``doc_id`` at ``locator``."""
        return cls(marker, doc_id, locator, fact=fact)

    @property
    def kind(self) -> SourceKind:
        return SourceKind.CHUNK if self.chunk_id is not None else SourceKind.FACT

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready form; a chunk citation keeps the narrative answer's keys."""
        if self.fact is None:
            return {
                "marker": self.marker,
                "chunk_id": self.chunk_id,
                "doc_id": self.doc_id,
                "library_id": self.library_id,
                "source_locator": _plain(self.source_locator),
                "parent_locator": _plain(self.parent_locator),
            }
        return {
            "marker": self.marker,
            "kind": SourceKind.FACT.value,
            "doc_id": self.doc_id,
            "source_locator": _plain(self.source_locator),
            "fact": {
                "metric": self.fact.metric,
                "entity": self.fact.entity,
                "period": self.fact.period,
                "channel": self.fact.channel,
            },
        }

    def render(self) -> str:
        """One line of an answer's source list."""
        if self.fact is None:
            parent = (
                f" (section {format_locator(self.parent_locator)})" if self.parent_locator else ""
            )
            return (
                f"[{self.marker}] {self.library_id} / {self.doc_id} / {self.chunk_id}: "
                f"{format_locator(self.source_locator)}{parent}"
            )
        f = self.fact
        return (
            f"[{self.marker}] {self.doc_id}: {format_locator(self.source_locator)} "
            f"({f.metric}, {f.entity}, {f.period}, {f.channel})"
        )


@dataclass(frozen=True, slots=True)
class Answer:
    """A cited answer from one channel (``route``) or, later, several.

    ``notes`` are part of ``text``; ``notices`` are not: they say where the search behind the
    answer ran differently from its mode (``auto`` falling back to lexical), for the asker.
    """

    route: str
    status: AnswerStatus = AnswerStatus.NO_MATERIAL
    text: str = NO_MATERIAL_TEXT
    sources: tuple[Source, ...] = ()
    trace: Trace = field(default_factory=Trace)
    notes: tuple[str, ...] = ()
    notices: tuple[str, ...] = ()

    def to_dict(self, *, timings: bool = True) -> dict[str, object]:
        """A JSON-ready form (``timings=False`` zeroes the trace timings for exact comparisons);
        ``notices`` appears only when the search fell back."""
        trace = self.trace if timings else self.trace.without_timings()
        shown: dict[str, object] = {
            "route": self.route,
            "status": self.status.value,
            "text": self.text,
            "sources": [source.to_dict() for source in self.sources],
            "notes": list(self.notes),
        }
        if self.notices:  # only when there are any: an answer's JSON is otherwise unchanged
            shown["notices"] = list(self.notices)
        shown["trace"] = trace.to_dict()
        return shown

    def render(self) -> str:
        """The answer text followed by its numbered sources, for a terminal."""
        lines = [self.text]
        if self.sources:
            lines.append("")
            lines.append("Sources:")
            lines.extend(source.render() for source in self.sources)
        return "\n".join(lines)


def _plain(locator: Locator | None) -> object:
    return locator if locator is None or isinstance(locator, str) else dict(locator)
