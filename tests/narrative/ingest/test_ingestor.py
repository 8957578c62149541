"""Ingest is atomic per document, incremental, and keeps the lexical index consistent."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from ragspine.errors import IngestError, StoreError
from ragspine.narrative.ingest import ingestor as ingest
from ragspine.narrative.ingest.ingestor import IngestStatus
from ragspine.security import Principal
from ragspine.stores.sqlite import chunks as chunk_store
from ragspine.workspace import Workspace


def _snapshot(ws: Workspace) -> dict[str, list[tuple[object, ...]]]:
    db = sqlite3.connect(ws.db_path)
    tables = ["narrative_documents", "narrative_parents", "narrative_chunks"]
    result = {}
    for table in tables:
        rows = db.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()
        result[table] = [tuple(v for v in row if not str(v).startswith("20")) for row in rows]
    db.close()
    return result


@pytest.fixture()
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text(
        "# Report\n\n## Revenue\n\nRevenue grew 3.5% to $1,234.5 million.\n", encoding="utf-8"
    )
    (folder / "b.txt").write_text("Cash flow improved in the U.S. market.", encoding="utf-8")
    return folder


def test_reingest_unchanged_is_a_noop(workspace_dir: Path, docs: Path) -> None:
    ws = Workspace.open(workspace_dir)
    first = ws.ingest_documents([docs], library="reports")
    assert [o.status for o in first.outcomes] == [IngestStatus.ADDED, IngestStatus.ADDED]
    before = _snapshot(ws)
    second = ws.ingest_documents([docs], library="reports")
    assert [o.status for o in second.outcomes] == [IngestStatus.UNCHANGED] * 2
    assert second.generation == first.generation
    assert _snapshot(ws) == before


def test_changed_document_replaces_old_chunks(workspace_dir: Path, docs: Path) -> None:
    ws = Workspace.open(workspace_dir)
    ws.ingest_documents([docs], library="reports")
    (docs / "b.txt").write_text("Dividends were raised to 2.5 per share.", encoding="utf-8")
    report = ws.ingest_documents([docs], library="reports")
    assert [o.status for o in report.outcomes] == [IngestStatus.UNCHANGED, IngestStatus.REPLACED]
    assert ws.search("cash flow").snippets == ()
    hits = ws.search("dividends").snippets
    assert [(s.doc_id, s.text) for s in hits] == [
        ("b.txt", "Dividends were raised to 2.5 per share.")
    ]
    assert ws.describe_library("reports")["chunks"] == 2


def test_metadata_change_replaces_and_sensitivity_precedence(
    workspace_dir: Path, docs: Path
) -> None:
    ws = Workspace.open(workspace_dir)
    ws.create_library("reports", description="Annual reports", default_sensitivity="internal")
    (docs / "b.txt.meta.json").write_text('{"sensitivity": "confidential", "region": "EU"}')
    ws.ingest_documents([docs], library="reports")
    counts = ws.describe_library("reports", principal=Principal.of("confidential"))
    assert (counts["chunks_internal"], counts["chunks_confidential"]) == (1, 1)
    report = ws.ingest_documents([docs], library="reports", sensitivity="public")
    assert [o.status for o in report.outcomes] == [IngestStatus.REPLACED] * 2
    assert ws.describe_library("reports")["chunks_public"] == 2
    report = ws.ingest_documents(
        [docs], library="reports", sensitivity="public", metadata={"region": "US"}
    )
    assert [o.status for o in report.outcomes] == [IngestStatus.REPLACED] * 2
    (hit,) = ws.search("cash flow").snippets
    chunk = ws.chunks.chunks_by_key(ws.chunks.chunk_keys("reports", "b.txt"))
    assert next(iter(chunk.values())).metadata == {"region": "US"}
    assert hit.doc_id == "b.txt"


def test_failed_file_does_not_stop_others(workspace_dir: Path, docs: Path) -> None:
    (docs / "broken.pdf").write_bytes(b"garbage")
    ws = Workspace.open(workspace_dir)
    report = ws.ingest_documents([docs, docs / "missing.txt"], library="reports")
    statuses = {o.source.rsplit("/", 1)[-1]: o.status for o in report.outcomes}
    assert statuses == {
        "a.md": IngestStatus.ADDED,
        "b.txt": IngestStatus.ADDED,
        "broken.pdf": IngestStatus.FAILED,
        "missing.txt": IngestStatus.FAILED,
    }
    assert "broken.pdf" in report.summary() and "no such file" in report.summary()


def test_loader_error_after_chunks_leaves_previous_state(
    workspace_dir: Path, docs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = Workspace.open(workspace_dir)
    ws.ingest_documents([docs], library="reports")
    before = _snapshot(ws)
    (docs / "b.txt").write_text("A new version about dividends. " * 50, encoding="utf-8")
    real_chunk = ingest.chunk_sections

    def chunk_then_fail(*args, **kwargs):  # type: ignore[no-untyped-def]
        _, chunks = real_chunk(*args, **kwargs)
        assert chunks  # chunks were produced before the failure
        raise IngestError("loader failed midway")

    monkeypatch.setattr(ingest, "chunk_sections", chunk_then_fail)
    report = ws.ingest_documents([docs / "b.txt"], library="reports")
    assert [(o.status, o.reason) for o in report.outcomes] == [
        (IngestStatus.FAILED, "loader failed midway")
    ]
    assert _snapshot(ws) == before
    assert [s.doc_id for s in ws.search("cash flow").snippets] == ["b.txt"]


def test_store_failure_midway_rolls_back(
    workspace_dir: Path, docs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = Workspace.open(workspace_dir)
    ws.ingest_documents([docs], library="reports")
    before = _snapshot(ws)
    generation = ws.chunks.generation("reports")
    (docs / "b.txt").write_text("First new sentence. Second new sentence.", encoding="utf-8")
    real_insert = chunk_store.SQLiteChunkStore.insert_documents

    def insert_then_fail(self, documents, **kwargs):  # type: ignore[no-untyped-def]
        real_insert(self, documents, **kwargs)  # rows are written ...
        raise sqlite3.OperationalError("disk I/O error")  # ... then the write fails

    monkeypatch.setattr(chunk_store.SQLiteChunkStore, "insert_documents", insert_then_fail)
    with pytest.raises(StoreError, match=r"could not be written \(disk I/O error"):
        ws.ingest_documents([docs / "b.txt"], library="reports")
    assert _snapshot(ws) == before
    assert ws.chunks.generation("reports") == generation
    assert [s.doc_id for s in ws.search("cash flow").snippets] == ["b.txt"]


def _index_files(ws: Workspace) -> dict[str, bytes]:
    return {
        str(path.relative_to(ws.index_dir)): path.read_bytes()
        for path in sorted(ws.index_dir.rglob("*"))
        if path.is_file()
    }


def test_stale_index_is_built_in_memory_by_readers_and_rebuilt_by_the_next_writer(
    workspace_dir: Path, docs: Path
) -> None:
    from ragspine.locks import lock_path, write_lock

    ws = Workspace.open(workspace_dir)
    ws.ingest_documents([docs], library="reports")
    db = sqlite3.connect(ws.db_path)
    with db:  # simulate a crash after the store committed but before the index did
        db.execute("UPDATE narrative_libraries SET generation = generation + 5")
    db.close()
    files = _index_files(ws)
    with write_lock(lock_path(workspace_dir, "library-reports"), resource="library"):
        busy = Workspace.open(workspace_dir)  # a writer at work: the last committed index
        assert [s.doc_id for s in busy.search("revenue").snippets] == ["a.md"]
        assert busy.lexical_indexes.rebuilt == []
    reopened = Workspace.open(workspace_dir)
    for mode in ("bm25", "lexical"):  # no writer at work: a reader builds it in memory ...
        result = reopened.search("revenue", mode=mode)
        assert [s.doc_id for s in result.snippets] == ["a.md"]
    assert sorted(reopened.lexical_indexes.rebuilt) == [
        "reports/title_heading_text (in memory)",
        "reports/title_text (in memory)",
    ]
    assert _index_files(ws) == files  # ... and writes nothing
    report = reopened.ingest_documents([docs], library="reports")  # the next writer repairs
    assert report.count(IngestStatus.UNCHANGED) == 2
    assert sorted(reopened.lexical_indexes.rebuilt[2:]) == [
        "reports/title_heading_text",
        "reports/title_text",
    ]
    generation = reopened.chunks.generation("reports")
    for fields in ("title_text", "title_heading_text"):
        manifest = json.loads(
            (ws.index_dir / "reports" / f"lexical-{fields}" / "lexical.json").read_text()
        )
        assert manifest["generation"] == generation


def test_adding_a_document_does_not_rebuild(workspace_dir: Path, docs: Path) -> None:
    ws = Workspace.open(workspace_dir)
    ws.ingest_documents([docs / "a.md"], library="reports")
    ws.search("revenue")
    ws.ingest_documents([docs / "b.txt"], library="reports")
    result = ws.search("cash flow")
    assert ws.lexical_indexes.rebuilt == []
    assert [s.doc_id for s in result.snippets] == ["b.txt"]


def test_window_chunks(workspace_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "w.txt"
    path.write_text("One alpha. Two beta. Three gamma. Four delta.", encoding="utf-8")
    ws = Workspace.open(workspace_dir)
    ws.ingest_documents([path], library="w", window=1)
    store = ws.chunks
    chunks = sorted(
        store.chunks_by_key(store.chunk_keys("w", "w.txt")).values(), key=lambda c: c.key
    )
    assert [(c.text, c.window_text) for c in chunks] == [
        ("One alpha.", "One alpha. Two beta."),
        ("Two beta.", "One alpha. Two beta. Three gamma."),
        ("Three gamma.", "Two beta. Three gamma. Four delta."),
        ("Four delta.", "Three gamma. Four delta."),
    ]
    assert {c.parent_id for c in chunks} == {"w:w.txt#p0"}
    assert ws.describe_library("w")["parents"] == 1


def test_beir_ingest_and_missing_corpus(workspace_dir: Path, tmp_path: Path) -> None:
    corpus = tmp_path / "beir"
    corpus.mkdir()
    (corpus / "corpus.jsonl").write_text(
        '{"_id": "7", "title": "Photosynthesis", "text": "Plants convert light."}\n'
        "not json\n"
        '{"_id": "9", "title": "Only a title", "text": ""}\n',
        encoding="utf-8",
    )
    ws = Workspace.open(workspace_dir)
    seen: list[tuple[int, int | None]] = []
    report = ws.ingest_beir(corpus, library="b", progress=lambda i, t, o: seen.append((i, t)))
    assert [(o.doc_id, o.status) for o in report.outcomes] == [
        ("7", IngestStatus.ADDED),
        ("", IngestStatus.FAILED),
        ("9", IngestStatus.ADDED),
    ]
    assert seen == [(1, 3), (2, 3), (3, 3)]
    assert [s.doc_id for s in ws.search("photosynthesis").snippets] == ["7"]
    assert [s.doc_id for s in ws.search("title").snippets] == ["9"]
    with pytest.raises(IngestError, match=r"nowhere: not found; pass a BEIR folder"):
        ws.ingest_beir(tmp_path / "nowhere", library="b")


@pytest.mark.parametrize("batch_size", [1, 2, 100])
def test_a_document_met_twice_in_one_run_is_written_once_per_version(
    workspace_dir: Path, batch_size: int
) -> None:
    def source(doc_id: str, text: str) -> ingest.DocumentSource:
        return ingest.DocumentSource(
            doc_id=doc_id,
            title=doc_id,
            source=f"{doc_id}.txt",
            sections=(ingest.Section((), (ingest.Paragraph(text),)),),
            content_hash=ingest._digest(text),
        )

    ws = Workspace.open(workspace_dir)
    report = ws.library_writer.ingest_sources(
        "fresh",
        [
            source("a", "Cash flow rose."),
            source("b", "Margins fell."),
            source("a", "Cash flow rose."),
            source("b", "Margins recovered strongly."),
        ],
        batch_size=batch_size,
    )
    assert [o.status for o in report.outcomes] == [
        IngestStatus.ADDED,
        IngestStatus.ADDED,
        IngestStatus.UNCHANGED,
        IngestStatus.REPLACED,
    ]
    assert ws.describe_library("fresh")["documents"] == 2
    assert [s.doc_id for s in ws.search("margins recovered").snippets] == ["b"]
    assert all("fell" not in s.text for s in ws.search("margins fell", mode="bm25").snippets)


def test_a_long_lexical_ingest_applies_its_index_as_it_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every ``stream_rows`` changed chunks the index is brought up to the store: a reader finds
    the first documents before the ingest ends, and a document replaced after its first version
    was indexed leaves nothing stale (the index equals one rebuilt from the store)."""
    from files import write_beir_corpus

    monkeypatch.setattr(ingest.Ingestor, "stream_rows", 3)
    first = write_beir_corpus(
        tmp_path / "a",
        [{"_id": f"d{i}", "title": f"Memo {i}", "text": f"Quarterly memo {i}."} for i in range(8)],
    )
    second = write_beir_corpus(
        tmp_path / "b", [{"_id": "d1", "title": "Memo 1", "text": "Replaced wording entirely."}]
    )
    seen_midway: list[str] = []

    def sources() -> object:
        for number, item in enumerate(ingest.beir_sources(ingest.beir_corpus(first))):
            if number == 6:  # two applies behind us: another reader looks
                with Workspace.open(tmp_path / "ws", create=False) as reader:
                    found = reader.search("quarterly memo", libraries=["lib"], top_k=20)
                    seen_midway.extend(s.doc_id for s in found.snippets)
            yield item
        yield from ingest.beir_sources(ingest.beir_corpus(second))

    ws = Workspace.open(tmp_path / "ws")
    report = ws.library_writer.ingest_sources("lib", sources(), batch_size=1)  # type: ignore[arg-type]
    assert sorted(seen_midway) == [f"d{i}" for i in range(6)]
    assert report.count(IngestStatus.ADDED) == 8 and report.count(IngestStatus.REPLACED) == 1
    queries = ("quarterly memo", "replaced wording", "memo 1")
    streamed = {q: ws.search(q, libraries=["lib"], top_k=20).to_dict()["snippets"] for q in queries}
    assert all("Quarterly memo 1." not in s["text"] for s in streamed["quarterly memo"])
    ws.close()
    for folder in (tmp_path / "ws" / "indexes" / "lib").iterdir():  # rebuilt by the next reader
        shutil.rmtree(folder)
    with Workspace.open(tmp_path / "ws", create=False) as reader:
        rebuilt = {
            q: reader.search(q, libraries=["lib"], top_k=20).to_dict()["snippets"] for q in queries
        }
    assert rebuilt == streamed


def _worker_corpus(tmp_path: Path) -> Path:
    from files import write_beir_corpus

    records = json.loads(
        (Path(ingest.__file__).parents[2] / "data" / "convfinqa_sample.json").read_text(
            encoding="utf-8"
        )
    )["dev"]
    docs = [
        {
            "_id": f"r{i}",
            "title": r["id"],
            "text": r["doc"]["pre_text"] + "\n\n" + r["doc"]["post_text"],
        }
        for i, r in enumerate(records)
    ]
    docs.append({"_id": "r0", "title": "Replaced", "text": "A second version of the first report."})
    return write_beir_corpus(tmp_path / "corpus", docs)


def _searched(ws: Workspace) -> dict[str, object]:
    queries = ("income taxes", "stock repurchase program", "second version", "net revenue 2018")
    return {
        q: ws.search(q, libraries=["lib"], mode="bm25", top_k=10).to_dict()["snippets"]
        for q in queries
    }


def _profiles(ws: Workspace) -> list[dict[str, int]]:
    return [ws.chunks.term_counts("lib", level) for level in range(4)]


def _stored(ws: Workspace) -> dict[str, list[tuple[object, ...]]]:
    """Every row the ingest stored for ``lib`` (times of day left out), the relation graph's
    edges included."""
    with sqlite3.connect(ws.db_path) as db:
        return {
            "documents": db.execute(
                "SELECT doc_id, title, source, content_hash, fingerprint, metadata, sensitivity, "
                "section_levels FROM narrative_documents WHERE library_id = 'lib' ORDER BY doc_id"
            ).fetchall(),
            "parents": db.execute(
                "SELECT parent_id, doc_id, heading, parent_locator, text FROM narrative_parents "
                "WHERE library_id = 'lib' ORDER BY parent_id"
            ).fetchall(),
            "chunks": db.execute(
                "SELECT chunk_key, chunk_id, doc_id, ordinal, text, heading, source_locator, "
                "parent_id, window_text, sensitivity, content_hash, title FROM narrative_chunks "
                "WHERE library_id = 'lib' ORDER BY chunk_key"
            ).fetchall(),
            "edges": db.execute(
                "SELECT kind, source, target, origin, verified, sensitivity, groups, doc_id, "
                "chunk_id, run_id, locator, weight FROM graph_edges WHERE library_id = 'lib' "
                "ORDER BY chunk_id, kind, source, target, locator"
            ).fetchall(),
        }


def _ingest_with_glossary(path: Path, corpus: Path) -> Workspace:
    """A workspace whose glossary names the filings' metrics and companies (from their
    tables), with the corpus ingested into ``lib`` two documents to a batch."""
    ws = Workspace.open(path)
    ws.ingest_convfinqa(  # its tables for the glossary; its text is not this corpus
        Path(ingest.__file__).parents[2] / "data" / "convfinqa_sample.json", library=None
    )
    ws.library_writer.ingest_sources(
        "lib", ingest.beir_sources(ingest.beir_corpus(corpus)), batch_size=2
    )
    return ws


@pytest.mark.parametrize(
    "case",
    [
        "worker",
        "worker killed",
        "worker behind",
        pytest.param("wrong terms", marks=pytest.mark.xfail(strict=True, reason="reverse proof")),
        pytest.param("wrong counts", marks=pytest.mark.xfail(strict=True, reason="reverse proof")),
        pytest.param(
            "wrong relations", marks=pytest.mark.xfail(strict=True, reason="reverse proof")
        ),
    ],
)
def test_the_analysis_worker_gives_what_analyzing_in_process_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    """A long ingest hands its analysis (routing counts, index terms, the relation graph's
    relations) to a worker process; every row it stores (relation edges included), the
    routing profiles and the index it commits (streamed applies included) equal those of an
    ingest with the worker off, also when the worker dies midway or falls behind (its jobs
    then taken back and computed in process). A worker giving other terms, counts or
    relations would be caught (the reverse-proof cases)."""
    from ragspine.narrative.ingest.worker import AnalysisWorker

    corpus = _worker_corpus(tmp_path)
    monkeypatch.setattr(ingest.Ingestor, "stream_rows", 7)
    monkeypatch.setenv("RAGSPINE_INGEST_WORKER", "0")
    with _ingest_with_glossary(tmp_path / "plain", corpus) as ws:
        expected, profiles, stored = _searched(ws), _profiles(ws), _stored(ws)
    assert all(expected.values()), "every query finds something"
    assert sum(kind == "mentions" for kind, *_ in stored["edges"]) > 20
    monkeypatch.delenv("RAGSPINE_INGEST_WORKER")
    monkeypatch.setattr(ingest.Ingestor, "worker_rows", 3)
    if case == "worker behind":  # nothing is ever ready: each write takes its jobs back
        monkeypatch.setattr(ingest.Ingestor, "waiting_rows", 0)
        monkeypatch.setattr(AnalysisWorker, "ready", lambda self, ticket: False)
    started: list[AnalysisWorker] = []
    kinds: list[str] = []
    start, result = AnalysisWorker.start.__func__, AnalysisWorker.result  # type: ignore[attr-defined]

    def start_and_record(cls: type[AnalysisWorker]) -> AnalysisWorker | None:
        worker = start(cls)
        assert worker is not None
        started.append(worker)
        return worker

    def tampered(self: AnalysisWorker, ticket: int) -> object:
        found = result(self, ticket)
        kind = type(found).__name__
        if isinstance(found, list) and any(found):
            first = next(item for item in found if item)
            kind = "terms" if isinstance(first[0], str) else "relations"
        kinds.append(kind)
        if case == "worker killed" and len(kinds) == 5:
            self._process.kill()
        if case == "wrong terms" and kind == "terms":
            return [list(reversed(terms)) for terms in reversed(found)]
        if case == "wrong counts" and kind == "dict":
            return {level: counts + counts for level, counts in found.items()}
        if case == "wrong relations" and kind == "relations":
            return [relations[:-1] for relations in found]
        return found

    monkeypatch.setattr(AnalysisWorker, "start", classmethod(start_and_record))
    monkeypatch.setattr(AnalysisWorker, "result", tampered)
    with _ingest_with_glossary(tmp_path / "worker", corpus) as ws:
        assert len(started) == 1 and started[0]._process.wait(timeout=10) is not None  # closed
        if case == "worker killed":  # killed at its fifth result, whichever kind it was
            assert len(kinds) >= 5
        elif case != "worker behind":  # terms, counts and relations all came from the worker
            assert {"terms", "dict", "relations"} <= set(kinds)
        assert _stored(ws) == stored
        assert _profiles(ws) == profiles
        assert _searched(ws) == expected
