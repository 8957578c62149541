"""The analysis an ingest offloads to its worker process, one batch of documents at a time.

Before a batch is written, its routing-term counts, the index terms of its chunks and (with a
glossary naming terms) the relation graph's relations of its chunks are queued to the
:class:`~ragspine.narrative.ingest.worker.AnalysisWorker`; the ingest goes on chunking while the
worker computes them and writes the batch once they are ready. Whatever the worker does not
give (not started yet, switched off, failed) is computed in process by the store, the indexes
and the relation upkeep, with the same results.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragspine.analysis import Analyzer
from ragspine.narrative.index.lexical.library_indexes import KnownTerms
from ragspine.narrative.ingest.worker import AnalysisWorker, WorkerGone
from ragspine.security import Sensitivity
from ragspine.stores.chunks import ChunkRow, NewDocument, profile_rows

if TYPE_CHECKING:
    from ragspine.glossary import Glossary
    from ragspine.graph.upkeep import Extracted, RelationUpkeep

log = logging.getLogger("ragspine.narrative")

INGEST_ANALYZER = Analyzer()
"""The analyzer new indexes use: the worker analyzes with it (an index with another analyzer
analyzes its rows in process)."""
TermParts = tuple[list[str], list[str], list[str]]


@dataclass(frozen=True, slots=True)
class BatchJobs:
    """The worker's tickets for one batch, and where each document's chunks start in it."""

    routing: int
    relations: int | None
    relation_keys: list[tuple[str, str, str]]
    glossary: Glossary | None
    tokens: int
    names: list[str]
    starts: dict[int, int]  # id(NewDocument) -> its first chunk's place in the batch


@dataclass(frozen=True, slots=True)
class BatchResults:
    """What a batch's write uses of the worker's analysis (``None``: compute it in process);
    its index terms are claimed later, when the indexes are applied."""

    jobs: BatchJobs | None = None
    counts: dict[int, Counter[str]] | None = None
    extracted: Extracted | None = None


class IngestAnalysis:
    """An ingest's analysis, handed to a worker process once ``min_rows`` chunks are prepared
    (``None``: never) or at once with ``start_now``."""

    def __init__(
        self,
        min_rows: int | None,
        *,
        start_now: bool = False,
        relations: RelationUpkeep | None = None,
    ) -> None:
        self._min_rows = min_rows
        self._prepared = 0
        self._relations = relations
        self._worker: AnalysisWorker | None = None
        self._inserted: list[tuple[BatchJobs, list[tuple[NewDocument, list[int]]]]] = []
        if start_now:
            self._start()

    @property
    def running(self) -> bool:
        return self._worker is not None

    def prepared(self, rows: int) -> None:
        """Count ``rows`` chunks prepared; the worker starts once there are enough (its
        start-up then overlaps the chunking of the rest)."""
        self._prepared += rows
        if self._worker is None and self._min_rows is not None and self._prepared >= self._min_rows:
            self._start()

    def _start(self) -> None:
        self._worker = AnalysisWorker.start()
        if self._worker is None:
            self._min_rows = None  # switched off or cannot start: in process from now on

    def submit(self, batch: Sequence[NewDocument]) -> BatchJobs | None:
        """Queue the analysis of ``batch`` (``None``: no worker, analyze in process)."""
        worker = self._worker
        if worker is None or not batch:
            return None
        starts: dict[int, int] = {}
        chunks: list[ChunkRow] = []
        for new in batch:
            starts[id(new)] = len(chunks)
            chunks += new.chunks
        routing = worker.routing_counts(profile_rows(batch))
        glossary = self._relations.extraction_glossary() if self._relations else None
        keys = [
            (new.document.library_id, new.document.doc_id, chunk.text)
            for new in batch
            for chunk in new.chunks
            if chunk.level < Sensitivity.RESTRICTED
        ]
        relations = worker.relations(glossary, keys) if glossary is not None else None
        names = list(dict.fromkeys([c.title for c in chunks] + [c.heading for c in chunks]))
        tokens = worker.tokens(INGEST_ANALYZER, names + [c.text for c in chunks], later=True)
        return BatchJobs(routing, relations, keys, glossary, tokens, names, starts)

    def ready(self, jobs: BatchJobs | None) -> bool:
        """Whether what the batch's write needs of ``jobs`` is in (or will not come)."""
        worker = self._worker
        if jobs is None or worker is None:
            return True
        return worker.ready(jobs.routing) and (
            jobs.relations is None or worker.ready(jobs.relations)
        )

    def results(self, jobs: BatchJobs | None) -> BatchResults:
        """What the batch's write needs of ``jobs``: a job the worker has not started is
        taken back (it is computed in process, so neither side waits for the other), one
        under way is waited for. Empty when the worker failed."""
        worker = self._worker
        if jobs is None or worker is None:
            return BatchResults()
        from ragspine.graph.upkeep import Extracted

        try:
            # Taken back newest first: the worker works through them oldest first.
            found = _claimed(worker, jobs.relations)
            counts = _claimed(worker, jobs.routing)
        except (WorkerGone, ValueError) as exc:
            self._failed(exc)
            return BatchResults()
        extracted = None
        if found is not None and jobs.glossary is not None:
            extracted = Extracted(jobs.glossary, dict(zip(jobs.relation_keys, found, strict=True)))
        return BatchResults(jobs, counts, extracted)

    def inserted(
        self, results: BatchResults, documents: Sequence[NewDocument], keys: Sequence[list[int]]
    ) -> None:
        """Note that ``documents`` of the batch were inserted with chunk ``keys``: their
        index terms are claimed when the indexes are applied (:meth:`collect`)."""
        if results.jobs is not None:
            self._inserted.append((results.jobs, list(zip(documents, keys, strict=True))))

    def collect(self) -> KnownTerms | None:
        """The index terms of the rows inserted since the last call (``None`` when there are
        none). Both sides work on what is left: this process takes back and analyzes the
        newest jobs the worker has not started, while the worker finishes the oldest."""
        inserted, self._inserted = self._inserted, []
        worker = self._worker
        if worker is None or not inserted:
            return None
        known: dict[int, TermParts] = {}
        taken: set[int] = set()
        for jobs, documents in reversed(inserted):
            if jobs.tokens not in taken and not worker.withdraw(jobs.tokens):
                break  # under way or done, and so is every older job
            taken.add(jobs.tokens)
            known.update(_analyzed(documents))
        claimed: dict[int, list[list[str]]] = {}
        try:
            for jobs, documents in inserted:
                if jobs.tokens in taken:
                    continue
                if jobs.tokens not in claimed:  # a batch written in two parts is claimed once
                    claimed[jobs.tokens] = worker.result(jobs.tokens)
                tokens = claimed[jobs.tokens]
                named = dict(zip(jobs.names, tokens[: len(jobs.names)], strict=True))
                texts = tokens[len(jobs.names) :]
                for new, doc_keys in documents:
                    start = jobs.starts[id(new)]
                    for offset, (key, chunk) in enumerate(zip(doc_keys, new.chunks, strict=True)):
                        known[key] = (
                            named[chunk.title],
                            named[chunk.heading],
                            texts[start + offset],
                        )
        except (WorkerGone, ValueError) as exc:
            self._failed(exc)
        return KnownTerms(INGEST_ANALYZER, known) if known else None

    def _failed(self, exc: Exception) -> None:
        log.warning("analysis worker failed (%s): analyzing in process", exc)
        self.close()
        self._min_rows = None

    def close(self) -> None:
        if self._worker is not None:
            self._worker.close()
            self._worker = None

    def __enter__(self) -> IngestAnalysis:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _claimed(worker: AnalysisWorker, ticket: int | None) -> Any:
    """The result of ``ticket`` (``None``: no job, or taken back to compute in process)."""
    if ticket is None or worker.withdraw(ticket):
        return None
    return worker.result(ticket)


def _analyzed(documents: Sequence[tuple[NewDocument, list[int]]]) -> dict[int, TermParts]:
    """The index terms of inserted documents' chunks, analyzed in process (what the worker's
    job gives: a text's terms do not depend on the texts analyzed with it)."""
    chunks = [
        (key, chunk) for new, keys in documents for key, chunk in zip(keys, new.chunks, strict=True)
    ]
    names = list(dict.fromkeys([c.title for _, c in chunks] + [c.heading for _, c in chunks]))
    named = dict(zip(names, INGEST_ANALYZER.tokens_many(names), strict=True))
    texts = INGEST_ANALYZER.tokens_many([chunk.text for _, chunk in chunks])
    return {
        key: (named[chunk.title], named[chunk.heading], text_terms)
        for (key, chunk), text_terms in zip(chunks, texts, strict=True)
    }
