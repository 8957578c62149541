"""The answer shape shared by every route: one :class:`Answer` citing :class:`Source`\\ s.

A narrative answer cites chunks (library, document, chunk id, locator, and the parent section's
locator); a structured answer cites facts (the source document and locator a ``query_metric``
result carries, and the fact's metric, entity, period and channel). Both are a :class:`Source`
tagged with its channel (``chunk`` or ``fact``), so an answer that merges the two channels numbers
its citations ``[1]``, ``[2]``, ... in one list. A structured answer also lists its
:class:`Figure`\\ s: the facts found and the computations over them, each with its lineage.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from ragspine.answer.locale import TEXTS, Locale
from ragspine.errors import ConfigError
from ragspine.graph.values import ExactNumber, FactRef, plain
from ragspine.narrative.retrieve.snippets import Locator, format_locator
from ragspine.narrative.retrieve.trace import Trace
from ragspine.structured.facts import FactKey, Scale
from ragspine.structured.query import MetricResult

if TYPE_CHECKING:
    from ragspine.answer.guard import GuardDecision

NO_MATERIAL_TEXT = TEXTS[Locale.EN]["no_material"]


class AnswerStatus(StrEnum):
    """How an answer ends: ``answered``; ``refused`` (no stored fact, or no relevant material,
    visible to the asker); ``needs_clarification`` (the question lacks a metric or an entity,
    or reads two ways, such as the sign of an average of negative values: the readings are
    named, and any figure shown is computed from stored facts); ``unrecognized_param`` (a term
    the glossary or the period grammar does not know)."""

    ANSWERED = "answered"
    REFUSED = "refused"
    NEEDS_CLARIFICATION = "needs_clarification"
    UNRECOGNIZED_PARAM = "unrecognized_param"
    NO_MATERIAL = "refused"  # the narrative route's name for a refusal


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
        """A JSON-ready form; ``channel`` says what it cites (``chunk`` or ``fact``)."""
        if self.fact is None:
            return {
                "marker": self.marker,
                "channel": SourceKind.CHUNK.value,
                "chunk_id": self.chunk_id,
                "doc_id": self.doc_id,
                "library_id": self.library_id,
                "source_locator": _plain(self.source_locator),
                "parent_locator": _plain(self.parent_locator),
            }
        return {
            "marker": self.marker,
            "channel": SourceKind.FACT.value,
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


class FigureKind(StrEnum):
    """A found fact, or a computation over found facts."""

    FACT = "fact"
    CHANGE = "change"
    PERCENT_CHANGE = "percent_change"
    AVERAGE = "average"
    SUM = "sum"
    SHARE = "share"
    RATIO = "ratio"
    PERIODS = "periods"
    """The periods a ``which year`` question selects (``periods``), from its ``inputs``."""
    COUNT = "count"
    """How many of its ``inputs``' periods a ``how many years`` question selects."""
    ROWS = "rows"
    """How many rows of a table a heading or a total has (one fact of each in ``inputs``)."""


@dataclass(frozen=True, slots=True)
class Figure:
    """One number of a structured answer with its lineage.

    A ``fact`` figure is a found :class:`~ragspine.structured.query.MetricResult` (``result``);
    a computation has ``value`` (exact), its unit, the ``expression`` it was computed by (written
    with the stored values) and the stored facts it used (``inputs``). ``text`` is the sentence
    the answer shows for it, citing ``markers``.
    """

    kind: FigureKind
    text: str
    markers: tuple[int, ...]
    result: MetricResult | None = None
    value: ExactNumber | None = None
    unit: str | None = None
    currency: str | None = None
    scale: Scale | None = None
    expression: str = ""
    inputs: tuple[FactRef, ...] = ()
    periods: tuple[str, ...] = ()
    """The selected periods (``periods`` and ``count`` figures)."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form; every value is a decimal string."""
        if self.result is not None:
            data = self.result.to_dict()
            data.pop("status")
            return {"kind": self.kind.value, **data, "text": self.text, "markers": [*self.markers]}
        if self.kind is FigureKind.PERIODS:
            return {
                "kind": self.kind.value,
                "periods": list(self.periods),
                "expression": self.expression,
                "inputs": [fact.to_dict() for fact in self.inputs],
                "text": self.text,
                "markers": list(self.markers),
            }
        assert self.value is not None
        extra = {"periods": list(self.periods)} if self.kind is FigureKind.COUNT else {}
        return {
            **extra,
            "kind": self.kind.value,
            **self.value.to_dict(),
            "unit": self.unit,
            "currency": self.currency,
            "scale": None if self.scale is None else self.scale.value,
            "expression": self.expression,
            "inputs": [fact.to_dict() for fact in self.inputs],
            "text": self.text,
            "markers": list(self.markers),
        }

    @property
    def decimal_value(self) -> str | None:
        """The value as a decimal string (rounded to 20 places only when not exact)."""
        if self.result is not None:
            return None if self.result.value is None else plain(self.result.value)
        return None if self.value is None else self.value.shown()


@dataclass(frozen=True, slots=True)
class CitedSentence:
    """One sentence of an answer and the markers of the sources it cites."""

    text: str
    markers: tuple[int, ...]

    def to_dict(self) -> dict[str, object]:
        return {"text": self.text, "markers": list(self.markers)}


@dataclass(frozen=True, slots=True)
class Answer:
    """A cited answer through one route (``structured``, ``narrative`` or ``composite``).

    ``route_reason`` says why the route was taken (the glossary terms and cue words that
    decided). ``sentences`` are the cited sentences ``text`` is made of; ``figures`` the numbers
    of the structured part; ``assumptions`` one line per default the answer used (an entity or a
    period the question did not name); ``flags`` what the answer noticed and did not use (a
    passage contradicting a stored fact). ``notes``, ``assumptions`` and ``flags`` are part of
    ``text``; ``notices`` are not: they say where the search behind the answer ran differently
    from its mode (``auto`` falling back to lexical), for the asker. ``param`` and
    ``suggestions`` come with ``unrecognized_param``. ``guard`` holds the numeric guard's
    decision on each sentence of a generated reply (empty for the offline answer).
    """

    route: str
    status: AnswerStatus = AnswerStatus.REFUSED
    text: str = NO_MATERIAL_TEXT
    sources: tuple[Source, ...] = ()
    trace: Trace = field(default_factory=Trace)
    notes: tuple[str, ...] = ()
    notices: tuple[str, ...] = ()
    route_reason: str = ""
    sentences: tuple[CitedSentence, ...] = ()
    figures: tuple[Figure, ...] = ()
    assumptions: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()
    locale: Locale = Locale.EN
    param: str | None = None
    suggestions: tuple[str, ...] = ()
    guard: tuple[GuardDecision, ...] = ()

    def to_dict(self, *, timings: bool = True) -> dict[str, object]:
        """A JSON-ready form (``timings=False`` zeroes the trace timings for exact comparisons);
        ``notices`` appears only when the search fell back, ``param`` and ``suggestions`` only
        with ``unrecognized_param``."""
        trace = self.trace if timings else self.trace.without_timings()
        shown: dict[str, object] = {
            "route": self.route,
            "route_reason": self.route_reason,
            "status": self.status.value,
            "locale": self.locale.value,
            "text": self.text,
            "sentences": [sentence.to_dict() for sentence in self.sentences],
            "figures": [figure.to_dict() for figure in self.figures],
            "sources": [source.to_dict() for source in self.sources],
            "assumptions": list(self.assumptions),
            "flags": list(self.flags),
            "notes": list(self.notes),
        }
        if self.status is AnswerStatus.UNRECOGNIZED_PARAM:
            shown["param"] = self.param
            shown["suggestions"] = list(self.suggestions)
        if self.notices:  # only when there are any: an answer's JSON is otherwise unchanged
            shown["notices"] = list(self.notices)
        if self.guard:  # a generated reply's sentences, each kept or dropped, and why
            shown["guard"] = [decision.to_dict() for decision in self.guard]
        shown["trace"] = trace.to_dict()
        return shown

    def render(self) -> str:
        """The answer text followed by its numbered sources, for a terminal."""
        lines = [self.text]
        if self.sources:
            lines.append("")
            lines.append(TEXTS[self.locale]["heading_sources"])
            lines.extend(source.render() for source in self.sources)
        return "\n".join(lines)


def _plain(locator: Locator | None) -> object:
    return locator if locator is None or isinstance(locator, str) else dict(locator)
