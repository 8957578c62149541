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
from ragspine.narrative.index.lexical.library_indexes import TermParts
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
            self.failed(exc)
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

    def collect(self) -> CollectedTerms | None:
        """The index terms of the rows inserted since the last call (``None`` when there are
        none), claimed as the indexes ask for them: see :class:`CollectedTerms`."""
        inserted, self._inserted = self._inserted, []
        if self._worker is None or not inserted:
            return None
        return CollectedTerms(self, inserted)

    @property
    def worker(self) -> AnalysisWorker | None:
        """The running worker (``None``: none, or it failed)."""
        return self._worker

    def failed(self, exc: Exception) -> None:
        """Stop using the worker after it failed: everything is analyzed in process."""
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


class CollectedTerms:
    """The index terms of inserted rows, given to the indexes group by group (oldest rows
    first) while the worker is still analyzing the newer ones, so that adding terms to the
    indexes overlaps the worker's last jobs. Whenever the terms asked for are not in yet, this
    process takes back the newest job the worker has not started and analyzes it itself;
    when none is left to take back, it waits. Rows whose terms never come (the worker failed)
    are left to the caller."""

    analyzer = INGEST_ANALYZER

    def __init__(
        self,
        analysis: IngestAnalysis,
        inserted: list[tuple[BatchJobs, list[tuple[NewDocument, list[int]]]]],
    ) -> None:
        self._analysis = analysis
        self._parts: dict[int, list[tuple[BatchJobs, list[tuple[NewDocument, list[int]]]]]] = {}
        for jobs, documents in inserted:  # a batch written in two parts is one job
            self._parts.setdefault(jobs.tokens, []).append((jobs, documents))
        self._open = list(self._parts)  # tickets not claimed yet, oldest first
        self._ticket_of = {
            key: jobs.tokens
            for jobs, documents in inserted
            for _, keys in documents
            for key in keys
        }
        self._known: dict[int, TermParts] = {}

    def terms_of(self, keys: Sequence[int]) -> dict[int, TermParts]:
        """The terms of ``keys`` (and of every row claimed so far)."""
        wanted = {self._ticket_of[key] for key in keys if key in self._ticket_of}
        for ticket in [t for t in self._open if t in wanted]:
            while ticket in self._open:
                worker = self._analysis.worker
                if worker is None:
                    return self._known
                if not worker.ready(ticket) and self._take_back_newest(worker):
                    continue
                self._claim(worker, ticket)
        return self._known

    def release(self) -> None:
        """Take back the jobs no row asked for (their rows were not indexed this way)."""
        worker = self._analysis.worker
        if worker is not None:
            for ticket in self._open:
                worker.withdraw(ticket)
        self._open = []

    def _take_back_newest(self, worker: AnalysisWorker) -> bool:
        """Analyze the newest open job in process if the worker has not started it."""
        ticket = self._open[-1]
        if not worker.withdraw(ticket):
            return False  # under way or done, and so is every older job
        self._open.pop()
        for _, documents in self._parts[ticket]:
            self._known.update(_analyzed(documents))
        return True

    def _claim(self, worker: AnalysisWorker, ticket: int) -> None:
        """The worker's terms of ``ticket`` (waiting for them)."""
        self._open.remove(ticket)
        try:
            tokens: list[list[str]] = worker.result(ticket)
        except (WorkerGone, ValueError) as exc:
            self._analysis.failed(exc)
            return
        for jobs, documents in self._parts[ticket]:
            named = dict(zip(jobs.names, tokens[: len(jobs.names)], strict=True))
            texts = tokens[len(jobs.names) :]
            for new, doc_keys in documents:
                start = jobs.starts[id(new)]
                for offset, (key, chunk) in enumerate(zip(doc_keys, new.chunks, strict=True)):
                    self._known[key] = (
                        named[chunk.title],
                        named[chunk.heading],
                        texts[start + offset],
                    )


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
