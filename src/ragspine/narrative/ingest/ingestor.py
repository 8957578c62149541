"""Atomic, incremental document ingest into a library.

Each document is loaded and chunked entirely in memory first; only then is it written, in one
transaction that replaces any older version. An unchanged document (same content, metadata,
sensitivity and chunking options) is a no-op. The lexical indexes follow after the writes commit
(every :data:`STREAM_ROWS` changed chunks during a long ingest, and at its end).

From :data:`WORKER_ROWS` prepared chunks on (at once for an ingest of
:data:`WORKER_DOCUMENTS` documents or more), a worker process (:mod:`.worker`) takes over the
analysis of each batch (:mod:`.offload`): routing-term counts, index terms and relation-graph
relations, computed while later batches are chunked; a batch is written once they are ready (or
when :data:`WAITING_ROWS` chunks wait). Without it, the same values are computed in process.

In a library that keeps vectors, the chunks are embedded only after that (lexical first,
vectors after), their texts read back from the chunk store a slice at a time: the documents are
searchable lexically while they are being embedded, each embedded text goes to the embedding
cache as soon as it is computed, and the vector index commits last. A run stopped while
embedding leaves the library's vector index behind its chunks (searches use the last committed
vectors, and ``hybrid`` finds the newest chunks lexically); the next ingest, or ``library
vectors LIB on``, finishes them and embeds only what the cache lacks.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragspine.errors import ConfigError, IngestError, RagSpineError, quote_input
from ragspine.memory import give_back_free_memory
from ragspine.narrative.index.lexical.library_indexes import LibraryIndexes
from ragspine.narrative.index.vector.library_vectors import EmbedProgress, LibraryVectors
from ragspine.narrative.ingest.chunking import (
    HEADING_SEPARATOR,
    ChunkDraft,
    ChunkingOptions,
    ParentDraft,
    chunk_sections,
)
from ragspine.narrative.ingest.loaders import (
    SIDECAR_SUFFIX,
    Paragraph,
    Section,
    iter_document_files,
    load_document,
)
from ragspine.narrative.ingest.offload import (
    BatchJobs,
    BatchResults,
    IngestAnalysis,
)
from ragspine.narrative.labels import (
    at_or_below,
    name_levels,
    path_level,
    screen_locator,
    screen_path,
    screen_title,
    unmatched_names,
)
from ragspine.security import Sensitivity
from ragspine.stores.chunks import (
    ChunkRow,
    ChunkStore,
    IndexRow,
    Library,
    NewDocument,
    ParentRow,
    StoredDocument,
)

if TYPE_CHECKING:
    from ragspine.graph.upkeep import RelationUpkeep

log = logging.getLogger("ragspine.narrative")

RESERVED_META_KEYS = ("doc_id", "title", "sensitivity", "section_sensitivity")
BEIR_BATCH = 1000
DEFAULT_CHUNKING = ChunkingOptions()
SECTION_RULE = "section-names:2"
"""Part of the fingerprint of a document with ``section_sensitivity``: changes whenever headings
are matched to its keys by another rule, so the next ingest labels such documents again."""
HEADINGS_LISTED = 20
_METADATA_JSON = json.JSONEncoder(ensure_ascii=False, sort_keys=True, default=str).encode
"""``json.dumps(metadata, sort_keys=True, ensure_ascii=False, default=str)`` with one encoder."""


class IngestStatus(StrEnum):
    """What happened to one document."""

    ADDED = "added"
    UNCHANGED = "unchanged"
    REPLACED = "replaced"
    FAILED = "failed"
    SKIPPED = "skipped"


@dataclass(frozen=True, slots=True)
class DocumentOutcome:
    """The result for one source document."""

    source: str
    doc_id: str
    status: IngestStatus
    chunks: int = 0
    reason: str = ""


@dataclass(frozen=True, slots=True)
class IngestReport:
    """Outcomes of one ingest run, in input order."""

    library_id: str
    outcomes: tuple[DocumentOutcome, ...]
    generation: int
    created_library: bool = False

    def count(self, status: IngestStatus) -> int:
        """How many documents ended with ``status``."""
        return sum(1 for outcome in self.outcomes if outcome.status is status)

    @property
    def failures(self) -> tuple[DocumentOutcome, ...]:
        return tuple(o for o in self.outcomes if o.status is IngestStatus.FAILED)

    def summary(self) -> str:
        """A human-readable summary ending with one line per failure and its reason."""
        counts = ", ".join(f"{self.count(status)} {status.value}" for status in IngestStatus)
        lines = [f"library {self.library_id}: {counts}"]
        lines += [
            f"  {o.status.value} {o.source}: {o.reason}"
            for o in self.outcomes
            if o.reason and o.status is not IngestStatus.ADDED
        ]
        return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class DocumentSource:
    """A document ready to chunk: its identity, text sections and what makes it unique."""

    doc_id: str
    title: str
    source: str
    sections: tuple[Section, ...]
    content_hash: str
    metadata: dict[str, Any] = field(default_factory=dict)
    sensitivity: Sensitivity | None = None
    section_levels: tuple[tuple[str, Sensitivity], ...] = ()
    """``(heading, level)``: chunks under a section with that heading (at any depth) get at
    least that level, and the name itself is that sensitive wherever it appears (a heading
    path, the title); see :mod:`ragspine.narrative.labels`."""


def _without_nul(source: DocumentSource, metadata_json: str) -> tuple[DocumentSource, str]:
    """``source`` without NUL characters (U+0000) in its text, title, headings and metadata,
    and its metadata's JSON (``metadata_json``: :data:`_METADATA_JSON` of it as given): no
    text, and a PostgreSQL text field cannot hold one (that store failed the whole run on one
    file that the embedded store took)."""
    texts = [source.title, *(h for sec in source.sections for h in sec.heading_path)]
    texts += [p.text for sec in source.sections for p in sec.paragraphs]
    nul_in_metadata = "\\u0000" in metadata_json  # escaped even with ensure_ascii off
    if not nul_in_metadata and not any("\x00" in text for text in texts):
        return source, metadata_json
    sections = tuple(
        Section(
            tuple(h.replace("\x00", "") for h in sec.heading_path),
            tuple(replace(p, text=p.text.replace("\x00", "")) for p in sec.paragraphs),
        )
        for sec in source.sections
    )
    if nul_in_metadata:
        metadata_json = metadata_json.replace("\\u0000", "")
    cleaned = replace(
        source,
        title=source.title.replace("\x00", ""),
        sections=sections,
        metadata=json.loads(metadata_json) if nul_in_metadata else source.metadata,
    )
    return cleaned, metadata_json


def parse_section_levels(raw: object, where: str) -> tuple[tuple[str, Sensitivity], ...]:
    """Read a sidecar's ``section_sensitivity`` mapping (heading -> level)."""
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise IngestError(
            f"{where}: section_sensitivity must map section headings to levels, "
            'e.g. {"Compensation": "confidential"}'
        )
    return tuple(sorted((str(h).strip(), Sensitivity.parse(v)) for h, v in raw.items()))


def check_section_names(source: DocumentSource) -> None:
    """Fail when a ``section_sensitivity`` key names no heading of ``source``, so that a typo
    never leaves the section it meant public."""
    if not source.section_levels:
        return
    headings = list(
        dict.fromkeys(name for section in source.sections for name in section.heading_path)
    )
    missing = unmatched_names([name for name, _ in source.section_levels], headings)
    if not missing:
        return
    listed = ", ".join(quote_input(name) for name in headings[:HEADINGS_LISTED]) or "none"
    if len(headings) > HEADINGS_LISTED:
        listed += f" and {len(headings) - HEADINGS_LISTED} more"
    raise IngestError(
        f"{source.source}: section_sensitivity names no heading of the document: "
        f"{', '.join(quote_input(name) for name in missing)} (its headings: {listed}); spell "
        "each key like its heading (case, spacing and invisible characters aside)"
    )


@dataclass(frozen=True, slots=True)
class Labelled:
    """The level a section or chunk draft is stored at, and the heading, locator and title a
    reader of that level may see."""

    level: Sensitivity
    heading: str
    locator: dict[str, Any]
    title: str


def label(
    heading_path: tuple[str, ...],
    locator: dict[str, Any],
    source: DocumentSource,
    level: Sensitivity,
) -> Labelled:
    """Level and visible names of a draft under ``heading_path`` in a document at ``level``.

    The level is the document's raised by every section named on the path; the heading path,
    the locator's heading path and the title keep only names at or below that level.
    """
    if not source.section_levels:  # nothing named is more sensitive: every name stays
        return Labelled(
            Sensitivity(level), HEADING_SEPARATOR.join(heading_path), locator, source.title
        )
    levels = name_levels(source.section_levels)
    chunk_level = path_level(heading_path, level, levels)
    may_see = at_or_below(chunk_level)
    return Labelled(
        chunk_level,
        HEADING_SEPARATOR.join(screen_path(heading_path, levels, may_see)),
        screen_locator(locator, levels, may_see),
        screen_title(source.title, source.source, levels, may_see),
    )


Progress = Callable[[int, int | None, DocumentOutcome], None]

STREAM_ROWS = 50_000
"""In a library without vectors, the lexical indexes are brought up to the chunk store once this
many chunks were added or removed since they last were (and at the end of every ingest): an
ingest of any size holds at most this many rows for the index, and readers find its documents
well before it ends. A library with vectors applies both indexes once, at the end, so that the
documents are searchable lexically before the (much longer) embedding starts."""
WORKER_ROWS = 2_000
"""Chunks an ingest prepares before it hands their analysis to a worker process (fewer are
analyzed in process: starting the worker would cost more than it saves)."""
WORKER_DOCUMENTS = 1_000
"""An ingest announcing this many documents starts its worker at once, so that the worker's
start-up overlaps the chunking of the first batch."""
WAITING_ROWS = 8_192
"""Chunks prepared and waiting for the worker's analysis before the oldest waiting batch is
written anyway, taking back the jobs the worker has not started (bounds what an ingest holds)."""


def _digest(*parts: bytes | str) -> str:
    sha = hashlib.sha256()
    for part in parts:
        sha.update(part.encode("utf-8") if isinstance(part, str) else part)
        sha.update(b"\x00")
    return sha.hexdigest()


def text_digest(*parts: str) -> str:
    """The content hash of a document made from ``parts`` (for importers building sources)."""
    return _digest(*parts)


def read_sidecar(path: Path) -> dict[str, Any]:
    """Metadata from ``<file>.meta.json`` beside ``path`` (empty when there is none)."""
    sidecar = path.with_name(path.name + SIDECAR_SUFFIX)
    if not sidecar.exists():
        return {}
    try:
        data = json.loads(sidecar.read_text(encoding="utf-8"))
    except RecursionError:
        raise IngestError(f"{sidecar}: metadata sidecar nests too deeply; fix the JSON") from None
    except (OSError, ValueError) as exc:
        raise IngestError(f"{sidecar}: unreadable metadata sidecar ({exc}); fix the JSON") from None
    if not isinstance(data, dict):
        raise IngestError(f"{sidecar}: metadata sidecar must hold a JSON object")
    return data


def meta_value(raw: str) -> str | int | float:
    """A ``--meta`` value: a number when it reads back exactly (``2024``, ``3.5``), else text
    (``007`` and ``1e3`` stay text), so numeric filters work on command-line metadata."""
    for kind in (int, float):
        try:
            number = kind(raw)
        except ValueError:
            continue
        if str(number) == raw:
            return number
    return raw


def parse_meta_pairs(pairs: Iterable[str]) -> dict[str, str | int | float]:
    """Parse ``key=value`` strings (from ``--meta``); exact numbers become numbers."""
    result: dict[str, str | int | float] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise IngestError(f"--meta {quote_input(pair)}: expected key=value")
        result[key.strip()] = meta_value(value.strip())
    return result


def _landed_but(library_id: str, what: str, exc: Exception, remedy: str) -> None:
    """Warn that a one-transaction ingest landed although ``what`` failed after its commit,
    and what catches up (the traceback goes to the debug log)."""
    log.warning(
        "warning: the documents of library %r landed, but %s (%s); %s",
        library_id,
        what,
        exc,
        remedy,
    )
    log.debug("after the commit of library %r", library_id, exc_info=exc)


class Ingestor:
    """Writes documents into libraries and keeps the lexical indexes in step."""

    stream_rows = STREAM_ROWS
    worker_rows = WORKER_ROWS
    worker_documents = WORKER_DOCUMENTS
    waiting_rows = WAITING_ROWS

    def __init__(
        self,
        store: ChunkStore,
        indexes: LibraryIndexes,
        vectors: LibraryVectors | None = None,
        relations: RelationUpkeep | None = None,
    ) -> None:
        self._store = store
        self._indexes = indexes
        self._vectors = vectors
        self._relations = relations  # writes each document's edges in its transaction

    def _library(self, library_id: str, vectors: bool | None) -> tuple[Library, bool]:
        if library_id in self._store.library_names():
            library = self._store.library(library_id)
            if vectors is not None and vectors != library.vectors:
                library = self._store.set_vectors(library_id, vectors)
            return library, False
        return self._store.create_library(library_id, vectors=bool(vectors)), True

    def ingest_sources(
        self,
        library_id: str,
        sources: Iterable[DocumentSource | DocumentOutcome],
        *,
        options: ChunkingOptions = DEFAULT_CHUNKING,
        total: int | None = None,
        progress: Progress | None = None,
        batch_size: int = 1,
        vectors: bool | None = None,
        embed_progress: EmbedProgress | None = None,
        before_commit: Callable[[], None] | None = None,
    ) -> IngestReport:
        """Ingest prepared sources (an outcome in the stream is a failure found while loading).

        Each document is chunked in memory before anything is written; a document that fails
        becomes a failed outcome and the others go on. Writes are grouped ``batch_size``
        documents to a transaction; each document's old version is replaced in the same one.
        ``vectors`` turns the library's vector setting on or off (``None``: keep it; a new
        library starts without vectors). The lexical indexes are brought up to date before any
        embedding starts; ``embed_progress`` then follows the embedding of the chunks the
        cache lacks (an interrupted run resumes there).

        ``before_commit`` makes the whole ingest one transaction (a new library's creation
        included) that runs ``before_commit()`` last: what it writes through a store joining
        that transaction (an import's facts) lands with the documents or not at all. The
        indexes follow once it has committed, so memory holds every changed chunk until then.
        """
        existing = (
            self._store.library(library_id) if library_id in self._store.library_names() else None
        )
        keeps_vectors = vectors if vectors is not None else bool(existing and existing.vectors)
        if keeps_vectors:  # a missing model or a model change fails here, before any write
            if self._vectors is None:
                raise ConfigError(f"library {library_id!r} keeps vectors but no embedder is set up")
            self._vectors.check(library_id)
        committing = ExitStack()  # with before_commit: the ingest's one transaction
        outcomes: list[DocumentOutcome] = []
        try:
            return self._ingest(
                library_id, sources, options, total, progress, batch_size, vectors,
                embed_progress, before_commit, committing, outcomes,
            )  # fmt: skip
        except BaseException:
            if existing is None and before_commit is None:
                try:  # the failure, or the Ctrl-C, is what the caller hears of
                    if library_id in self._store.library_names():
                        self._forget_empty(library_id, outcomes)
                except Exception as cleanup:
                    log.warning(
                        "library %r this ingest created stays, empty: %s", library_id, cleanup
                    )
            raise

    def _forget_empty(self, library_id: str, outcomes: Sequence[DocumentOutcome]) -> bool:
        """Delete the library this run created when none of its documents landed (each
        failed, or the run was stopped first): a failed ingest leaves no empty library behind.
        Returns whether it was deleted."""
        if any(o.status in (IngestStatus.ADDED, IngestStatus.REPLACED) for o in outcomes):
            return False
        if self._store.has_chunks(library_id, int(Sensitivity.RESTRICTED)):
            return False  # written, but its outcome not yet reported
        with self._store.transaction():
            self._store.delete_library(library_id)
        self._indexes.drop(library_id)
        return True

    def _ingest(
        self,
        library_id: str,
        sources: Iterable[DocumentSource | DocumentOutcome],
        options: ChunkingOptions,
        total: int | None,
        progress: Progress | None,
        batch_size: int,
        vectors: bool | None,
        embed_progress: EmbedProgress | None,
        before_commit: Callable[[], None] | None,
        committing: ExitStack,
        outcomes: list[DocumentOutcome],
    ) -> IngestReport:
        """:meth:`ingest_sources` once its vectors are checked (``outcomes``: filled as each
        document ends, for the caller to read after a failure)."""
        with committing:
            if before_commit is not None:
                committing.enter_context(self._store.transaction())
            library, created = self._library(library_id, vectors)
            dense = self._vectors if library.vectors else None
            since = vector_since = self._store.generation(library_id)
            changes = _Changes(vectors=dense is not None)
            batch: list[_Prepared] = []
            reported = 0
            # Into an empty library, only a document id met earlier in this run can be stored
            # already: the others skip the look-up (writing checks again in any case).
            stored_before = self._store.has_chunks(library_id, int(Sensitivity.RESTRICTED))
            met: set[str] = set()
            # A long ingest hands its analysis to a worker process (see the module docstring).
            analysis = IngestAnalysis(
                self.worker_rows,
                start_now=total is not None and total >= self.worker_documents,
                relations=self._relations,
            )
            waiting: list[tuple[list[_Prepared], BatchJobs | None]] = []  # chunked, not written

            def apply_lexical() -> int:
                nonlocal since
                generation = self._store.generation(library_id)
                known = analysis.collect()
                try:
                    self._indexes.apply(
                        library_id,
                        changes.removed,
                        changes.added.values(),
                        since=since,
                        generation=generation,
                        known=known,
                    )
                finally:
                    if known is not None:
                        known.release()
                changes.lexical_applied()
                since = generation
                return generation

            def write(prepared: list[_Prepared], jobs: BatchJobs | None) -> None:
                results = analysis.results(jobs)
                with self._store.transaction():
                    written = self._write_batch(library, prepared, changes, analysis, results)
                outcomes.extend(written)
                if before_commit is None and (
                    len(changes.added) + len(changes.removed) >= self.stream_rows
                ):
                    # The lexical indexes follow every so many changed chunks, so memory stays
                    # bounded and what was written becomes searchable.
                    apply_lexical()

            def flush() -> None:
                """Queue the batch's analysis; write the batches whose analysis is ready (or the
                oldest ones, when too many chunks wait)."""
                waiting.append((list(batch), analysis.submit([p.new_document for p in batch])))
                batch.clear()
                rows = sum(len(p.new_document.chunks) for group, _ in waiting for p in group)
                while waiting and (analysis.ready(waiting[0][1]) or rows > self.waiting_rows):
                    group, jobs = waiting.pop(0)
                    rows -= sum(len(p.new_document.chunks) for p in group)
                    write(group, jobs)

            def drain() -> None:
                while waiting:
                    write(*waiting.pop(0))

            with analysis:
                for item in sources:
                    outcome = item if isinstance(item, DocumentOutcome) else None
                    if outcome is None:
                        assert isinstance(item, DocumentSource)
                        look_up = stored_before or item.doc_id in met
                        met.add(item.doc_id)
                        outcome, prepared = self._prepare(library, item, options, look_up=look_up)
                        if prepared is not None:
                            batch.append(prepared)
                            analysis.prepared(len(prepared.new_document.chunks))
                    if outcome is not None:
                        if batch:
                            flush()
                        drain()  # outcomes stay in input order
                        outcomes.append(outcome)
                    elif len(batch) >= batch_size:
                        flush()
                    reported = _report(progress, outcomes, reported, total)
                if batch:
                    flush()
                drain()
                _report(progress, outcomes, reported, total)
                if before_commit is None:
                    if created and self._forget_empty(library_id, outcomes):
                        return IngestReport(library_id, tuple(outcomes), 0, False)
                    generation = apply_lexical()
                else:
                    before_commit()
                    committing.close()  # commits; the indexes follow only what is committed
                    try:
                        generation = apply_lexical()
                    except Exception as exc:  # landed: what follows must not say otherwise
                        _landed_but(
                            library_id,
                            "its search index could not be updated",
                            exc,
                            "the next write to the library brings it up to date",
                        )
                        generation = self._store.generation(library_id)
        if dense is not None:
            give_back_free_memory()  # the embedding phase starts from this phase's rows freed
            try:
                dense.apply(
                    library_id,
                    changes.vector_removed,
                    sorted(changes.vector_added or ()),
                    since=vector_since,
                    generation=generation,
                    progress=embed_progress,
                )
            except Exception as exc:
                if before_commit is None:
                    raise
                _landed_but(
                    library_id,
                    "its new chunks could not be embedded",
                    exc,
                    f"'ragspine library vectors {library_id} on' or the next ingest embeds them",
                )
        return IngestReport(library_id, tuple(outcomes), generation, created)

    def _prepare(
        self,
        library: Library,
        source: DocumentSource,
        options: ChunkingOptions,
        *,
        look_up: bool = True,
    ) -> tuple[DocumentOutcome | None, _Prepared | None]:
        """Decide whether ``source`` changed and chunk it; nothing is written here.
        ``look_up=False`` skips reading the stored version (when there can be none)."""
        source, metadata_json = _without_nul(source, _METADATA_JSON(source.metadata))
        level = (
            source.sensitivity if source.sensitivity is not None else library.default_sensitivity
        )
        fingerprint = _digest(
            source.content_hash,
            metadata_json,
            str(int(level)),
            source.title,
            options.signature,
            json.dumps([(h, int(v)) for h, v in source.section_levels]),
            *((SECTION_RULE,) if source.section_levels else ()),
        )
        previous = self._store.document(library.library_id, source.doc_id) if look_up else None
        if previous is not None and previous.fingerprint == fingerprint:
            return DocumentOutcome(source.source, source.doc_id, IngestStatus.UNCHANGED), None
        try:
            if not any(p.text.strip() for sec in source.sections for p in sec.paragraphs):
                raise IngestError(f"{source.source}: no text to ingest")
            check_section_names(source)
            parents, chunks = chunk_sections(source.sections, source.source, options)
        except Exception as exc:  # any failure of one document must not stop the others
            reason = str(exc) if isinstance(exc, RagSpineError) else f"{type(exc).__name__}: {exc}"
            failed = DocumentOutcome(source.source, source.doc_id, IngestStatus.FAILED, 0, reason)
            return failed, None
        new = _new_document(
            library.library_id,
            source,
            level,
            fingerprint,
            [(p, label(p.heading_path, p.locator, source, level)) for p in parents],
            [(c, label(c.heading_path, c.locator, source, level)) for c in chunks],
        )
        return None, _Prepared(source, fingerprint, new)

    def _write_batch(
        self,
        library: Library,
        batch: Sequence[_Prepared],
        changes: _Changes,
        analysis: IngestAnalysis,
        results: BatchResults,
    ) -> list[DocumentOutcome]:
        """Replace the batch's documents inside the caller's transaction, inserting the new
        versions together; record index changes. Returns one outcome per document, in order.
        ``results`` is the worker's analysis of the batch (its routing counts are used when
        all of it is inserted at once)."""
        library_id = library.library_id
        previous = self._store.documents(library_id, [p.source.doc_id for p in batch])
        outcomes: list[DocumentOutcome] = []
        pending: list[_Prepared] = []
        pending_ids: set[str] = set()
        for prepared in batch:
            source = prepared.source
            if source.doc_id in pending_ids:  # a repeat in the batch: write the first one
                self._insert(library, pending, changes, analysis, results, counted=False)
                previous.update(self._store.documents(library_id, list(pending_ids)))
                pending, pending_ids = [], set()
            before = previous.get(source.doc_id)
            if before is not None and before.fingerprint == prepared.fingerprint:
                outcomes.append(
                    DocumentOutcome(source.source, source.doc_id, IngestStatus.UNCHANGED)
                )
                continue
            if before is not None:
                for key in self._store.delete_document(library_id, source.doc_id):
                    changes.drop(key)
            pending.append(prepared)
            pending_ids.add(source.doc_id)
            outcomes.append(_written(prepared, before))
        whole = len(pending) == len(batch)  # else the batch's counts do not fit what is inserted
        self._insert(library, pending, changes, analysis, results, counted=whole)
        return outcomes

    def _insert(
        self,
        library: Library,
        batch: Sequence[_Prepared],
        changes: _Changes,
        analysis: IngestAnalysis,
        results: BatchResults,
        *,
        counted: bool,
    ) -> None:
        """Insert new document versions (none stored) and record their index rows;
        ``counted``: the routing counts of ``results`` (when any) are exactly theirs."""
        if not batch:
            return
        news = [prepared.new_document for prepared in batch]
        counts = results.counts if counted else None
        inserted = self._store.insert_documents(news, term_counts=counts)
        analysis.inserted(results, news, inserted)
        for new, keys in zip(news, inserted, strict=True):
            for key, chunk in zip(keys, new.chunks, strict=True):
                changes.add(IndexRow(key, chunk.title, chunk.heading, chunk.text, int(chunk.level)))
        if self._relations is not None:
            self._relations.documents_written(news, extracted=results.extracted)
        self._store.bump_generation(library.library_id)


def _new_document(
    library_id: str,
    source: DocumentSource,
    level: Sensitivity,
    fingerprint: str,
    parents: Iterable[tuple[ParentDraft, Labelled]],
    chunks: Iterable[tuple[ChunkDraft, Labelled]],
) -> NewDocument:
    """The rows that store one prepared document."""
    prefix = f"{library_id}:{source.doc_id}"
    return NewDocument(
        StoredDocument(
            library_id, source.doc_id, label((), {}, source, level).title, source.content_hash,
            fingerprint, level,
        ),
        source=source.source,
        metadata=source.metadata,
        section_levels=[(name, int(lv)) for name, lv in source.section_levels],
        parents=[
            ParentRow(f"{prefix}#p{p.ordinal}", labels.heading, labels.locator, p.text)
            for p, labels in parents
        ],
        chunks=[
            ChunkRow(
                f"{prefix}#{c.ordinal}", c.ordinal, c.text, labels.heading, labels.title,
                labels.locator, f"{prefix}#p{c.parent_ordinal}", c.window_text,
                _digest(c.text)[:32], labels.level,
            )
            for c, labels in chunks
        ],
    )  # fmt: skip


def _written(prepared: _Prepared, previous: StoredDocument | None) -> DocumentOutcome:
    """The outcome of writing ``prepared`` over ``previous`` (None: a new document)."""
    source, chunks = prepared.source, len(prepared.new_document.chunks)
    if previous is None:
        return DocumentOutcome(source.source, source.doc_id, IngestStatus.ADDED, chunks)
    moved = (
        f"replaces the version read from {previous.source}"
        if previous.source and previous.source != source.source
        else ""
    )
    return DocumentOutcome(source.source, source.doc_id, IngestStatus.REPLACED, chunks, moved)


@dataclass(frozen=True, slots=True)
class _Prepared:
    """A changed document, chunked and ready to write."""

    source: DocumentSource
    fingerprint: str
    new_document: NewDocument


class _Changes:
    """Index changes an ingest committed and has not applied yet: for the lexical indexes
    (applied every :data:`STREAM_ROWS` changed chunks and at the end) and, in a library with
    vectors, for its vector index (applied once, after the lexical ones; keys only, since the
    texts are read back from the chunk store slice by slice when they are embedded)."""

    def __init__(self, *, vectors: bool) -> None:
        self.removed: list[int] = []
        self.added: dict[int, IndexRow] = {}
        self.vector_removed: list[int] = []
        self.vector_added: set[int] | None = set() if vectors else None

    def add(self, row: IndexRow) -> None:
        self.added[row.key] = row
        if self.vector_added is not None:
            self.vector_added.add(row.key)

    def drop(self, key: int) -> None:
        """A chunk deleted: forget it where it was added in this run, else remove it."""
        if self.added.pop(key, None) is None:
            self.removed.append(key)
        if self.vector_added is not None:
            if key in self.vector_added:
                self.vector_added.discard(key)
            else:
                self.vector_removed.append(key)

    def lexical_applied(self) -> None:
        self.removed.clear()
        self.added.clear()


def _report(
    progress: Progress | None, outcomes: list[DocumentOutcome], reported: int, total: int | None
) -> int:
    """Tell ``progress`` about outcomes not yet reported; return the new reported count."""
    if progress is not None:
        for index in range(reported, len(outcomes)):
            progress(index + 1, total, outcomes[index])
    return len(outcomes)


def file_sources(
    paths: Iterable[str | Path],
    *,
    metadata: Mapping[str, Any] | None = None,
    sensitivity: str | Sensitivity | None = None,
) -> Iterator[DocumentSource | DocumentOutcome]:
    """Load every supported file under ``paths``; a file that fails becomes a failed outcome
    and a file not ingested (see :func:`iter_document_files`) a skipped one.

    The document id is the path relative to the folder given (or the file name for a file
    given directly) unless the sidecar sets ``doc_id``. Files of one run that would share an id
    are all refused, so that none silently replaces another. Explicit ``sensitivity`` beats
    the sidecar's, which beats the library default; ``metadata`` overrides sidecar keys.
    """
    explicit = Sensitivity.parse(sensitivity) if sensitivity is not None else None
    planned: list[DocumentOutcome | tuple[Path, str, dict[str, Any]]] = []
    for root in map(Path, paths):
        if not root.exists() and not root.is_symlink():
            planned.append(
                DocumentOutcome(str(root), "", IngestStatus.FAILED, 0, "no such file or folder")
            )
            continue
        for found in iter_document_files(root):
            path = found.path
            if found.skipped is not None:
                planned.append(
                    DocumentOutcome(str(path), "", IngestStatus.SKIPPED, 0, found.skipped)
                )
                continue
            doc_id = path.name if not root.is_dir() else path.relative_to(root).as_posix()
            try:
                meta = {**read_sidecar(path), **(metadata or {})}
            except RagSpineError as exc:
                planned.append(DocumentOutcome(str(path), doc_id, IngestStatus.FAILED, 0, str(exc)))
                continue
            given = meta.pop("doc_id", doc_id)
            if not valid_doc_id(given):
                reason = f"{path}: sidecar doc_id {quote_input(given)} must be a non-empty string"
                planned.append(DocumentOutcome(str(path), "", IngestStatus.FAILED, 0, reason))
                continue
            planned.append((path, str(given), meta))
    sources: dict[str, list[str]] = {}
    for item in planned:
        if isinstance(item, tuple):
            sources.setdefault(item[1], []).append(str(item[0]))
    for item in planned:
        if isinstance(item, DocumentOutcome):
            yield item
            continue
        path, doc_id, meta = item
        if len(sources[doc_id]) > 1:
            others = ", ".join(p for p in sources[doc_id] if p != str(path))
            reason = (
                f"document id {doc_id!r} is also the id of {others} in this run: ingest the "
                "folder that holds both (ids are paths relative to it) or give each a "
                "distinct doc_id in its .meta.json sidecar"
            )
            yield DocumentOutcome(str(path), doc_id, IngestStatus.FAILED, 0, reason)
            continue
        try:
            title = meta.pop("title", None)
            shown_source = meta.pop("source", None)  # what locators name instead of the path
            if shown_source is not None and (
                not isinstance(shown_source, str) or not shown_source.strip()
            ):
                raise IngestError(
                    f"{path}: sidecar key 'source' must be a non-empty string (the name "
                    "locators show for this document)"
                )
            raw_level = meta.pop("sensitivity", None)
            section_levels = parse_section_levels(meta.pop("section_sensitivity", None), str(path))
            level = explicit
            if level is None and raw_level is not None:
                level = Sensitivity.parse(raw_level)
            loaded = load_document(path)
        except RagSpineError as exc:
            yield DocumentOutcome(str(path), doc_id, IngestStatus.FAILED, 0, str(exc))
            continue
        except Exception as exc:  # a third-party loader failed: report it, go on
            reason = f"{path}: loader failed ({type(exc).__name__}: {exc})"
            yield DocumentOutcome(str(path), doc_id, IngestStatus.FAILED, 0, reason)
            continue
        yield DocumentSource(
            doc_id=doc_id,
            title=str(title or loaded.title),
            source=shown_source or str(path),
            sections=loaded.sections,
            content_hash=_digest(loaded.content),
            metadata=meta,
            sensitivity=level,
            section_levels=section_levels,
        )


def valid_doc_id(value: object) -> bool:
    """Whether ``value`` can be a document id: a non-empty string without surrounding blanks
    (or an integer, as BEIR corpora often write them)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, str) and value.strip() == value and value != ""


def _record_id(record: object) -> str:
    """The ``_id`` of a BEIR record; ValueError/KeyError/TypeError when it has no valid one."""
    if not isinstance(record, dict):
        raise TypeError("not an object")
    value = record["_id"]
    if not valid_doc_id(value):
        raise ValueError(f"invalid _id {value!r}")
    return str(value)


def scan_beir_corpus(corpus: Path) -> int:
    """Check that every ``_id`` of a BEIR ``corpus.jsonl`` is unique (before anything is
    written); returns the number of non-blank lines (each becomes one outcome)."""
    first_line: dict[str, int] = {}
    records = 0
    try:
        with corpus.open(encoding="utf-8") as lines:
            for number, line in enumerate(lines, start=1):
                if not line.strip():
                    continue
                records += 1
                try:
                    doc_id = _record_id(json.loads(line))
                except (ValueError, KeyError, TypeError, RecursionError):
                    continue  # reported per line as a failed document
                if doc_id in first_line:
                    raise IngestError(
                        f"{corpus}: line {number} repeats the _id {quote_input(doc_id)} of line "
                        f"{first_line[doc_id]}; each document needs its own _id, nothing was "
                        "ingested"
                    )
                first_line[doc_id] = number
    except UnicodeDecodeError as exc:
        raise IngestError(
            f"{corpus}: not UTF-8 text ({exc.reason}); nothing was ingested"
        ) from None
    return records


def beir_corpus(folder: Path) -> Path:
    """The ``corpus.jsonl`` of a BEIR folder (or the file itself); an error when missing."""
    corpus = folder / "corpus.jsonl" if folder.is_dir() else folder
    if not corpus.is_file():
        raise IngestError(f"{corpus}: not found; pass a BEIR folder holding corpus.jsonl")
    return corpus


def beir_sources(corpus: Path) -> Iterator[DocumentSource | DocumentOutcome]:
    """Documents of a BEIR ``corpus.jsonl`` (``_id``, ``title``, ``text``)."""
    with corpus.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                doc_id = _record_id(record)
            except (ValueError, KeyError, TypeError, RecursionError):
                reason = (
                    f"{corpus}:{number}: not a JSON object with an _id (a non-empty string or "
                    "an integer)"
                )
                yield DocumentOutcome(f"{corpus}:{number}", "", IngestStatus.FAILED, 0, reason)
                continue
            wrong = [
                field
                for field in ("title", "text")
                if record.get(field) is not None and not isinstance(record[field], str)
            ]
            if wrong:  # a list or an object was stored as its Python repr ("['x']")
                kind = type(record[wrong[0]]).__name__
                reason = f"{corpus}:{number}: {wrong[0]} must be a string, not {kind}"
                yield DocumentOutcome(f"{corpus}:{number}", doc_id, IngestStatus.FAILED, 0, reason)
                continue
            title, text = record.get("title") or "", record.get("text") or ""
            metadata = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
            yield DocumentSource(
                doc_id=doc_id,
                title=title,
                source=corpus.name,
                sections=(Section((), (Paragraph(text.strip() or title),)),),
                content_hash=_digest(title, text),
                metadata=dict(metadata or {}),
            )
