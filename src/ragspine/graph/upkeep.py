"""Keeping the relation store in step with what the workspace holds.

:class:`RelationUpkeep` is called by the library writer inside its transactions: the edges of a
document written are extracted (:class:`~ragspine.graph.extract.GlossaryExtractor`) and replace
those of its previous version; deleting documents or a library deletes the edges derived from
them, whatever their origin. Restricted chunks give no edges. The glossary's own edges (the
entity and channel hierarchy, and derivations once the caller supplies them) are replaced when
the glossary changed. :meth:`RelationUpkeep.extract_library` runs an extractor (e.g. a model) over
the chunks of a library its caller may see.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from ragspine.errors import QueryError, quote_input
from ragspine.glossary import Glossary
from ragspine.graph.extract import (
    ChunkText,
    ExtractedRelation,
    GlossaryExtractor,
    RelationExtractor,
    edges_from,
    extract_edges,
)
from ragspine.graph.relations import (
    NewEdge,
    Origin,
    document_node,
    glossary_edges,
    glossary_fingerprint,
    term_label,
)
from ragspine.security import Principal, Sensitivity
from ragspine.stores.chunks import ChunkStore, NewDocument
from ragspine.stores.graph import RelationStore

Derivations = Callable[[Glossary], Mapping[str, Iterable[str]]]
"""Metric code -> the metric codes its derivation reads (supplied by the derivation parser)."""
BATCH = 500


def declared_derivations(glossary: Glossary) -> dict[str, list[str]]:
    """Metric code -> the metric codes its glossary ``derivation`` names, for every metric
    that has one."""
    return {
        term.code: list(term.derivation.metrics())
        for term in glossary.terms()
        if term.derivation is not None
    }


@dataclass(frozen=True, slots=True)
class Extracted:
    """Relations found beforehand (by the ingest's analysis worker) with ``glossary``'s
    :class:`GlossaryExtractor`: ``(library_id, doc_id, chunk text)`` -> what it found there."""

    glossary: Glossary
    relations: Mapping[tuple[str, str, str], list[ExtractedRelation]]


class RelationUpkeep:
    """Writes the edges derived from documents and from the glossary."""

    def __init__(
        self,
        store: RelationStore,
        glossary: Callable[[], Glossary],
        *,
        derivations: Derivations | None = None,
    ) -> None:
        self.store = store
        self._glossary = glossary
        self._derivations = derivations
        self._extractor: tuple[Glossary, GlossaryExtractor] | None = None  # per glossary
        self._declared: tuple[Glossary, list[NewEdge], str] | None = None  # per glossary

    def _extractor_for(self, glossary: Glossary) -> GlossaryExtractor:
        made = self._extractor
        if made is None or made[0] is not glossary:
            made = self._extractor = (glossary, GlossaryExtractor(glossary))
        return made[1]

    def declared_edges(self, glossary: Glossary) -> list[NewEdge]:
        """The edges ``glossary`` declares: hierarchies and metric derivations (those of its
        ``derivation`` keys unless the caller supplied others)."""
        derive = self._derivations if self._derivations is not None else declared_derivations
        return glossary_edges(glossary, derivations=derive(glossary))

    def sync_glossary(self) -> bool:
        """Store the current glossary's edges when they changed; returns whether they did."""
        edges, fingerprint = self.declared(self._glossary())
        return self.store.replace_glossary_edges(edges, fingerprint)

    def declared(self, glossary: Glossary) -> tuple[list[NewEdge], str]:
        """:meth:`declared_edges` of ``glossary`` and their fingerprint, made once per
        glossary (readers compare the fingerprint with the stored one)."""
        made = self._declared
        if made is None or made[0] is not glossary:
            edges = self.declared_edges(glossary)
            made = (glossary, edges, glossary_fingerprint(edges))
            self._declared = made  # one assignment of a finished value (threads)
        return made[1], made[2]

    def extraction_glossary(self) -> Glossary | None:
        """The glossary documents written now are read with, or ``None`` when it names no term
        (then no chunk gives a relation): what to extract with beforehand (see
        :class:`Extracted`)."""
        glossary = self._glossary()
        return glossary if self._extractor_for(glossary).names_terms else None

    def documents_written(
        self, documents: Sequence[NewDocument], *, extracted: Extracted | None = None
    ) -> None:
        """Replace the edges of these documents with those of the versions being written
        (call inside the transaction that writes their chunks). ``extracted`` gives relations
        found beforehand; they are used only when found with the current glossary, and a
        chunk they lack is read here."""
        if not documents:
            return
        with self.store.transaction():
            self.sync_glossary()
            glossary = self._glossary()
            extractor = self._extractor_for(glossary)
            known = extracted.relations if extracted and extracted.glossary is glossary else {}
            by_library: dict[str, list[str]] = {}
            for new in documents:
                by_library.setdefault(new.document.library_id, []).append(new.document.doc_id)
            for library_id, doc_ids in by_library.items():
                self.store.delete_documents(library_id, doc_ids)
            edges: list[NewEdge] = []
            for new in documents:
                stored = new.document
                run_id = f"ingest:{stored.fingerprint[:16]}"
                for row in new.chunks:
                    if row.level >= Sensitivity.RESTRICTED:
                        continue
                    chunk = ChunkText(
                        stored.library_id, stored.doc_id, row.chunk_id, row.text,
                        row.locator, row.level,
                    )  # fmt: skip
                    found = known.get((stored.library_id, stored.doc_id, row.text))
                    if found is None:
                        found = extractor.extract(chunk)
                    edges += edges_from(chunk, found, origin=extractor.origin, run_id=run_id)
            self.store.add_edges(edges)

    def documents_deleted(self, library_id: str, doc_ids: Sequence[str]) -> None:
        """Delete the edges derived from these documents (inside their deleting transaction)."""
        self.store.delete_documents(library_id, doc_ids)

    def library_deleted(self, library_id: str) -> None:
        """Delete the edges derived from the library's documents."""
        self.store.delete_library(library_id)

    def rebuild_library(self, chunks: ChunkStore, library_id: str) -> int:
        """Replace the library's deterministic edges with those its stored chunks give under
        the current glossary, in one transaction (model-derived edges stay); for documents
        ingested before the relation graph existed or before terms were added. The caller
        holds the library's write lock. Returns how many edges were stored."""
        everyone_but_restricted = Principal(Sensitivity.CONFIDENTIAL)  # edges keep their level
        with self.store.transaction():
            self.sync_glossary()
            self.store.delete_library(library_id, origin=Origin.DETERMINISTIC)
            return self.extract_library(
                chunks,
                library_id,
                self._extractor_for(self._glossary()),
                principal=everyone_but_restricted,
                run_id="rebuild",
            )

    def extract_library(
        self,
        chunks: ChunkStore,
        library_id: str,
        extractor: RelationExtractor,
        *,
        principal: Principal,
        run_id: str,
    ) -> int:
        """Run ``extractor`` over the library's chunks ``principal`` may see and store the
        edges, a batch per transaction (a stopped run is finished by running it again: an edge
        found twice is stored once); the caller holds the library's write lock. Returns how
        many edges were new."""
        added = 0
        batch: list[NewEdge] = []
        glossary = self._glossary()
        for edge in extract_edges(
            library_chunks(chunks, library_id), extractor, principal=principal, run_id=run_id
        ):
            _check_extracted(edge, glossary)
            batch.append(edge)
            if len(batch) >= BATCH:
                added += self.store.add_edges(batch)
                batch.clear()
        return added + self.store.add_edges(batch)


def _check_extracted(edge: NewEdge, glossary: Glossary) -> None:
    """A :class:`~ragspine.errors.QueryError` unless ``edge`` links two different nodes, each
    a glossary term or the document of the chunk it was found in: an extractor's relation can
    name no node of its own making (``entity:ghost``), nor another document (a hidden one's
    name would show beside a public chunk's edge)."""
    own = document_node(edge.lineage.library_id, edge.lineage.doc_id)
    for node in (edge.source, edge.target):
        if node != own and term_label(glossary, node) is None:
            raise QueryError(
                f"the extractor proposed {quote_input(node)} in chunk "
                f"{quote_input(edge.lineage.chunk_id)}: a relation links glossary terms "
                "(entity:CODE, metric:CODE, channel:CODE) or the chunk's own document"
            )
    if edge.source == edge.target:
        raise QueryError(
            f"the extractor proposed an edge from {quote_input(edge.source)} to itself in chunk "
            f"{quote_input(edge.lineage.chunk_id)}"
        )


def library_chunks(chunks: ChunkStore, library_id: str) -> Iterator[ChunkText]:
    """Every chunk of a library, in key order, as an extractor reads it."""
    keys = [row.key for row in chunks.index_rows(library_id)]
    for start in range(0, len(keys), BATCH):
        found = chunks.chunks_by_key(keys[start : start + BATCH])
        for key in keys[start : start + BATCH]:
            chunk = found.get(key)
            if chunk is None:
                continue
            yield ChunkText(
                chunk.library_id, chunk.doc_id, chunk.chunk_id, chunk.text,
                chunk.source_locator, chunk.sensitivity,
            )  # fmt: skip
