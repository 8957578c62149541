"""Relation extraction from narrative chunks behind one protocol.

A :class:`RelationExtractor` reads one chunk (:class:`ChunkText`) and proposes relations
(:class:`ExtractedRelation`); :func:`edges_from` turns them into edges carrying the chunk's
lineage, sensitivity and groups, and the extractor's origin. :func:`visible_chunks` is the gate
in front of every extractor run on a caller's behalf: it passes only chunks the caller may see
(:func:`ragspine.security.visible`).

:class:`GlossaryExtractor` is the deterministic extractor: each glossary term a chunk names
gives a ``mentions`` edge from its document (weight: how often), and each pair of terms named in
one sentence (:func:`~ragspine.narrative.ingest.sentences.split_sentences`) a ``co_occurs`` edge
whose locator is the chunk's plus the sentence number. The implicit ``total`` channel is left
out: the word is in nearly every report and rarely names the channel. A model-based extractor
arrives with the LLM provider; its edges are ``model-derived`` and stored unverified.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from ragspine.analysis import match_key
from ragspine.glossary import DEFAULT_CHANNEL, Glossary, TermHit, TermType
from ragspine.graph.relations import (
    EdgeKind,
    Lineage,
    NewEdge,
    Origin,
    document_node,
    term_node,
)
from ragspine.narrative.ingest.sentences import split_sentences
from ragspine.security import Principal, Sensitivity, visible


@dataclass(frozen=True, slots=True)
class ChunkText:
    """What an extractor reads of one chunk, and what its edges inherit."""

    library_id: str
    doc_id: str
    chunk_id: str
    text: str
    locator: Mapping[str, Any] = field(default_factory=dict)
    sensitivity: Sensitivity = Sensitivity.PUBLIC
    groups: frozenset[str] = frozenset()

    @property
    def document(self) -> str:
        """The chunk's document node id."""
        return document_node(self.library_id, self.doc_id)


@dataclass(frozen=True, slots=True)
class ExtractedRelation:
    """One relation an extractor found in a chunk; ``locator`` adds to the chunk's (e.g. the
    sentence number)."""

    source: str
    target: str
    kind: EdgeKind
    weight: int = 1
    locator: Mapping[str, Any] = field(default_factory=dict)


class RelationExtractor(Protocol):
    """Proposes relations found in one chunk's text."""

    @property
    def origin(self) -> Origin:
        """``deterministic`` for a rule, ``model-derived`` for a model (stored unverified)."""
        ...

    def extract(self, chunk: ChunkText) -> list[ExtractedRelation]:
        """The relations ``chunk`` states, in a deterministic order."""
        ...


SENTENCE_SEPARATOR = " | "
"""Joins a chunk's sentences (in matching form) so that the glossary pattern runs once per
chunk; no spelling holds it, so no match spans two sentences."""


class GlossaryExtractor:
    """Mentions of glossary terms and terms named together in one sentence."""

    origin = Origin.DETERMINISTIC

    def __init__(self, glossary: Glossary) -> None:
        self._glossary = glossary
        # Every hit of the implicit ``total`` channel is left out: a glossary naming no other
        # term gives no relation in any text, and its chunks need no search at all.
        self._names_terms = any(
            not _is_total(vocabulary.type, code)
            for vocabulary in (glossary.metrics, glossary.entities, glossary.channels)
            for code in vocabulary.index.values()
        )
        self._one_pass = not any(
            SENTENCE_SEPARATOR.strip() in spelling
            for vocabulary in (glossary.metrics, glossary.entities, glossary.channels)
            for spelling in vocabulary.index
        )

    @property
    def names_terms(self) -> bool:
        """Whether any text can give a relation (the glossary names a term besides the
        implicit ``total`` channel)."""
        return self._names_terms

    def _sentence_terms(self, text: str) -> list[list[str]]:
        """The term nodes each sentence of ``text`` names, in order of appearance."""
        sentences = split_sentences(text)
        keys = [match_key(sentence) for sentence in sentences]
        joined = SENTENCE_SEPARATOR.join(keys)
        if not self._one_pass or match_key(joined) != joined:
            return [self._terms(self._glossary.find_terms(sentence)) for sentence in sentences]
        starts, offset = [], 0
        for key in keys:
            starts.append(offset)
            offset += len(key) + len(SENTENCE_SEPARATOR)
        found: list[list[str]] = [[] for _ in sentences]
        for hit in self._glossary.find_terms(joined):
            if not _is_total(hit.type, hit.code):
                found[bisect_right(starts, hit.start) - 1].append(term_node(hit.type, hit.code))
        return found

    @staticmethod
    def _terms(hits: list[TermHit]) -> list[str]:
        return [term_node(h.type, h.code) for h in hits if not _is_total(h.type, h.code)]

    def extract(self, chunk: ChunkText) -> list[ExtractedRelation]:
        """``mentions`` edges per term named, then ``co_occurs`` edges per sentence and pair."""
        if not self._names_terms or not self._glossary.find_terms(chunk.text):
            # A term found in a sentence is found in the whole text (a sentence is a span of it
            # with its white space collapsed): no term at all, no sentences to look at.
            return []
        by_sentence = self._sentence_terms(chunk.text)
        counts = Counter(term for terms in by_sentence for term in terms)
        relations = [
            ExtractedRelation(chunk.document, term, EdgeKind.MENTIONS, count)
            for term, count in sorted(counts.items())
        ]
        for number, named in enumerate(by_sentence, start=1):
            terms = sorted(set(named))
            for i, first in enumerate(terms):
                for second in terms[i + 1 :]:
                    relations.append(
                        ExtractedRelation(
                            first, second, EdgeKind.CO_OCCURS, 1, {"sentence": number}
                        )
                    )
        return relations


def _is_total(term_type: TermType, code: str) -> bool:
    return term_type is TermType.CHANNEL and code == DEFAULT_CHANNEL


def edges_from(
    chunk: ChunkText,
    relations: Iterable[ExtractedRelation],
    *,
    origin: Origin,
    run_id: str,
) -> list[NewEdge]:
    """Edges for ``relations`` found in ``chunk``: its lineage (with the relation's locator
    added to the chunk's), its sensitivity and groups; model-derived ones unverified."""
    edges = []
    for relation in relations:
        locator = {**chunk.locator, **relation.locator}
        edges.append(
            NewEdge(
                relation.source,
                relation.target,
                relation.kind,
                origin,
                Lineage(chunk.library_id, chunk.doc_id, chunk.chunk_id, run_id, locator),
                chunk.sensitivity,
                chunk.groups,
                relation.weight,
                verified=None if origin is Origin.DETERMINISTIC else False,
            )
        )
    return edges


def visible_chunks(chunks: Iterable[ChunkText], principal: Principal) -> Iterator[ChunkText]:
    """The chunks ``principal`` may see: the only ones an extractor run for them reads."""
    return (c for c in chunks if visible(principal, c.sensitivity, c.groups or None))


def extract_edges(
    chunks: Iterable[ChunkText],
    extractor: RelationExtractor,
    *,
    principal: Principal,
    run_id: str,
) -> Iterator[NewEdge]:
    """Run ``extractor`` over the chunks ``principal`` may see; yields their edges."""
    for chunk in visible_chunks(chunks, principal):
        yield from edges_from(
            chunk, extractor.extract(chunk), origin=extractor.origin, run_id=run_id
        )
