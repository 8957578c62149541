"""Index terms claimed from the analysis worker while the lexical apply asks for them."""

from __future__ import annotations

from typing import Any

from ragspine.narrative.ingest.offload import (
    INGEST_ANALYZER,
    BatchJobs,
    CollectedTerms,
    IngestAnalysis,
)
from ragspine.security import Sensitivity
from ragspine.stores.chunks import ChunkRow, NewDocument, StoredDocument

TEXTS = [
    ["Revenue grew 12% in the fourth quarter.", "Operating margins narrowed."],
    ["Cash flows from operations were stable.", "Debt was refinanced in 2019."],
    ["Dividends per share increased.", "Capital expenditures fell sharply."],
]


class FakeWorker:
    """Token jobs by ticket: ``under_way`` ones cannot be taken back; a result is ready once
    ``ready_after`` tickets have been taken back (or at once when that is 0)."""

    def __init__(self, results: dict[int, Any], under_way: set[int], ready_after: int) -> None:
        self.results = results
        self.under_way = under_way
        self.ready_after = ready_after
        self.taken: list[int] = []
        self.claimed: list[int] = []

    def ready(self, ticket: int) -> bool:
        return len(self.taken) >= self.ready_after

    def withdraw(self, ticket: int) -> bool:
        if ticket in self.under_way or ticket in self.taken:
            return False
        self.taken.append(ticket)
        return True

    def result(self, ticket: int) -> Any:
        self.claimed.append(ticket)
        return self.results[ticket]


def _batches() -> tuple[list[tuple[BatchJobs, list[tuple[NewDocument, list[int]]]]], dict]:
    """Three written batches of one document each, their token jobs' results (what the worker
    gives) and every key's terms analyzed in process."""
    inserted, results, expected = [], {}, {}
    for ticket, texts in enumerate(TEXTS):
        title = f"Report {ticket}"
        chunks = [
            ChunkRow(
                f"lib:d{ticket}#{n}", n, text, "Results", title, {}, f"lib:d{ticket}#p0", None,
                "hash", Sensitivity.PUBLIC,
            )
            for n, text in enumerate(texts)
        ]  # fmt: skip
        document = StoredDocument("lib", f"d{ticket}", title, "c", "f", Sensitivity.PUBLIC)
        new = NewDocument(document, "src", {}, [], chunks)
        names = [title, "Results"]
        keys = [100 * ticket + n for n in range(len(texts))]
        jobs = BatchJobs(0, None, [], None, ticket, names, {id(new): 0})
        inserted.append((jobs, [(new, keys)]))
        results[ticket] = INGEST_ANALYZER.tokens_many(names + texts)
        for key, text in zip(keys, texts, strict=True):
            expected[key] = tuple(INGEST_ANALYZER.tokens_many([title, "Results", text]))
    return inserted, results, expected


def _collected(worker: FakeWorker) -> tuple[CollectedTerms, dict]:
    inserted, _, expected = _batches()
    analysis = IngestAnalysis(None)
    analysis._worker = worker  # type: ignore[assignment]
    return CollectedTerms(analysis, inserted), expected


def test_while_the_oldest_terms_are_not_in_the_newest_job_is_analyzed_here() -> None:
    """The worker is on jobs 0 and 1; asked for job 0's rows before it is done, this process
    takes back job 2 and analyzes it, then takes job 0's terms from the worker."""
    _, results, _ = _batches()
    worker = FakeWorker(results, under_way={0, 1}, ready_after=1)
    collected, expected = _collected(worker)
    terms = collected.terms_of([0, 1])
    assert worker.taken == [2] and worker.claimed == [0]
    assert {key: tuple(parts) for key, parts in terms.items()} == {
        key: expected[key] for key in (0, 1, 200, 201)
    }
    terms = collected.terms_of([100, 101, 200])
    assert worker.claimed == [0, 1]
    assert {key: tuple(parts) for key, parts in terms.items()} == expected


def test_terms_that_are_in_are_taken_without_analyzing_anything_here() -> None:
    _, results, _ = _batches()
    worker = FakeWorker(results, under_way=set(), ready_after=0)
    collected, expected = _collected(worker)
    terms = collected.terms_of([0])
    assert {key: tuple(parts) for key, parts in terms.items()} == {k: expected[k] for k in (0, 1)}
    assert worker.taken == [] and worker.claimed == [0]
    collected.release()  # the jobs no row asked for go back
    assert worker.taken == [1, 2]
    assert collected.terms_of([100]) == collected.terms_of([])  # nothing more is claimed
    assert worker.claimed == [0]
