"""PostgreSQL lexical search ranks exactly like the embedded engine (same keys, same scores, same
ties), for every level and with a key filter; its statistics count only what the asker may see;
a change is seen whole; and on SciFact both reach the same nDCG@10."""

from __future__ import annotations

import itertools
import json
import random
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import shared_data
from ragspine.analysis import Analyzer
from ragspine.errors import StoreError
from ragspine.eval.retrieval import evaluate_rankings, load_qrels, load_queries, rank_documents
from ragspine.narrative.filters.expr import parse_filter
from ragspine.narrative.index.lexical.library_indexes import (
    IndexFields,
    LibraryIndexes,
    searchable,
)
from ragspine.narrative.retrieve.options import RetrievalMode, SearchOptions
from ragspine.narrative.retrieve.retriever import Retriever
from ragspine.security import Principal, Sensitivity
from ragspine.stores.chunks import ChunkRow, ParentRow, StoredDocument
from ragspine.stores.postgres import lexical
from ragspine.stores.postgres.database import Database
from ragspine.stores.postgres.lexical import PostgresLexicalIndex, PostgresLexicalIndexes
from ragspine.stores.postgres.migrate import migrate
from ragspine.stores.sqlite.chunks import SQLiteChunkStore
from ragspine.workspace import Workspace

LIBRARY = "notes"
LEVELS = [int(level) for level in Sensitivity]
WORDS = [
    "revenue", "margin", "growth", "cash", "flow", "audit", "risk", "forecast", "churn",
    "pricing", "supply", "chain", "inventory", "debt", "equity", "dividend", "merger", "tariff",
    "export", "shipping", "warehouse", "retail", "online", "subscription", "café", "naïve",
    "résumé", "東京", "data",
]  # fmt: skip


@pytest.fixture()
def database(postgres_url: str) -> Iterator[Database]:
    db = Database(postgres_url)
    migrate(db)
    yield db
    db.close()


def _text(rng: random.Random) -> str:
    # Zipf-like word frequencies, so terms have very different document frequencies.
    weights = [1 / (rank + 1) for rank in range(len(WORDS))]
    return " ".join(rng.choices(WORDS, weights=weights, k=rng.randint(3, 40)))


def fill(store: SQLiteChunkStore, documents: int, seed: int = 7) -> None:
    """``documents`` documents of a few chunks each, at every level, some with the very same
    text (ties), in one library."""
    rng = random.Random(seed)
    if LIBRARY not in store.library_names():
        store.create_library(LIBRARY)
    repeated = _text(rng)
    for number in range(documents):
        level = Sensitivity(LEVELS[number % len(LEVELS)])
        doc_id = f"doc-{seed}-{number:03d}"
        chunks = [
            ChunkRow(
                chunk_id=f"{doc_id}-c{i}",
                ordinal=i,
                text=repeated if rng.random() < 0.1 else _text(rng),
                heading=rng.choice(["", "Risk factors", "Outlook"]),
                title=f"Report {number % 9}",
                locator={"page": i},
                parent_id=f"{doc_id}-p",
                window_text=None,
                content_hash=f"h{number}-{i}",
                level=level,
            )
            for i in range(rng.randint(1, 3))
        ]
        with store.transaction():
            store.insert_document(
                StoredDocument(LIBRARY, doc_id, f"Report {number}", f"c{number}", "f", level),
                source="test",
                metadata={},
                parents=[ParentRow(f"{doc_id}-p", "", {}, "")],
                chunks=chunks,
            )
            store.bump_generation(LIBRARY)


@pytest.fixture()
def store(tmp_path: Path) -> Iterator[SQLiteChunkStore]:
    chunk_store = SQLiteChunkStore(tmp_path / "workspace.sqlite")
    fill(chunk_store, 80)
    yield chunk_store
    chunk_store.close()


def both(
    store: SQLiteChunkStore, database: Database, tmp_path: Path
) -> tuple[LibraryIndexes, PostgresLexicalIndexes]:
    """The embedded and the PostgreSQL indexes of the store's library, both applied."""
    embedded = LibraryIndexes(store, tmp_path / "indexes")
    server = PostgresLexicalIndexes(database, store)
    rows = list(store.index_rows(LIBRARY))
    generation = store.generation(LIBRARY)
    for indexes in (embedded, server):
        indexes.apply(LIBRARY, [], rows, since=0, generation=generation)
    return embedded, server


QUERIES = [
    "revenue",
    "revenue growth",
    "cash flow forecast",
    "audit risk risk",
    "cafe naive resume",
    "東京 data",
    "report outlook",
    "merger tariff export shipping warehouse",
    "subscription churn pricing",
    "nothing matches this",
    "",
]


def differences(
    embedded: LibraryIndexes,
    server: PostgresLexicalIndexes,
    store: SQLiteChunkStore,
    fields: IndexFields,
    top_k: int = 10,
) -> list[str]:
    """Every (query, level, filter) whose PostgreSQL result differs from the embedded one."""
    rng = random.Random(3)
    keys = [row.key for row in store.index_rows(LIBRARY)]
    filters: list[list[int] | None] = [None, rng.sample(keys, len(keys) // 3), []]
    found = []
    reference = embedded.get(LIBRARY, fields)
    searched = server.get(LIBRARY, fields)
    assert isinstance(searched, PostgresLexicalIndex)
    for query in QUERIES:
        for level in LEVELS:
            for allowed in filters:
                want_stats: dict[str, int] = {}
                got_stats: dict[str, int] = {}
                want = reference.search(
                    query, top_k, max_level=level, allowed=allowed, stats=want_stats
                )
                got = searched.search(
                    query, top_k, max_level=level, allowed=allowed, stats=got_stats
                )
                same_keys = [k for k, _ in want] == [k for k, _ in got]
                close = all(
                    abs(a[1] - b[1]) <= 1e-9 * max(1.0, abs(a[1]))
                    for a, b in zip(want, got, strict=False)
                )
                if not (same_keys and close and want_stats == got_stats):
                    found.append(
                        f"{query!r} level={level} filter={allowed is not None}: {want} != {got}"
                    )
    return found


def test_rankings_and_scores_are_the_embedded_engines(
    store: SQLiteChunkStore, database: Database, tmp_path: Path
) -> None:
    embedded, server = both(store, database, tmp_path)
    for fields in (IndexFields.TITLE_TEXT, IndexFields.TITLE_HEADING_TEXT):
        assert differences(embedded, server, store, fields) == []
        assert differences(embedded, server, store, fields, top_k=1000) == []
    hits = server.get(LIBRARY, IndexFields.TITLE_TEXT).search("revenue", 5, max_level=3)
    assert len(hits) == 5 and hits[0][1] > 0


def test_ties_break_by_key_as_in_the_engine(
    store: SQLiteChunkStore, database: Database, tmp_path: Path
) -> None:
    _, server = both(store, database, tmp_path)
    hits = server.get(LIBRARY, IndexFields.TITLE_TEXT).search(
        "revenue margin growth", 1000, max_level=3
    )
    scores = [score for _, score in hits]
    tied = [k for (k, s), (_, t) in itertools.pairwise(hits) if s == t]
    assert tied, "the corpus repeats texts, so some scores tie"
    assert scores == sorted(scores, reverse=True)
    for (k1, s1), (k2, s2) in itertools.pairwise(hits):
        assert s1 > s2 or k1 < k2


class CountingEveryLevel(PostgresLexicalIndex):
    """Broken: the BM25 statistics count documents of every level (an oracle of hidden
    documents, and other scores)."""

    segments_sql = lexical.SEGMENTS.replace("WHERE level <= %(level)s", "")


def test_reverse_proof_statistics_over_every_level_differ(
    store: SQLiteChunkStore, database: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedded, server = both(store, database, tmp_path)
    monkeypatch.setattr(lexical, "PostgresLexicalIndex", CountingEveryLevel)
    assert differences(embedded, server, store, IndexFields.TITLE_TEXT)


class BlocksOfEveryLevel(PostgresLexicalIndex):
    """Broken: reads the query terms' blocks of every level (their postings would count in
    the document frequencies, and hidden documents would be scored)."""

    blocks_sql = lexical.BLOCKS.replace("AND s.level <= %(level)s", "")


def test_reverse_proof_blocks_of_every_level_are_refused(
    store: SQLiteChunkStore, database: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, server = both(store, database, tmp_path)
    monkeypatch.setattr(lexical, "PostgresLexicalIndex", BlocksOfEveryLevel)
    index = server.get(LIBRARY, IndexFields.TITLE_TEXT)
    assert index.search("revenue", 10, max_level=3)  # every segment is read: fine
    with pytest.raises(StoreError, match="outside the segments read"):
        index.search("revenue", 10, max_level=0)


def test_a_change_is_applied_whole_and_readers_see_the_last_commit(
    store: SQLiteChunkStore, database: Database, tmp_path: Path
) -> None:
    embedded, server = both(store, database, tmp_path)
    fields = IndexFields.TITLE_TEXT
    since = store.generation(LIBRARY)
    before = server.get(LIBRARY, fields).search("revenue", 1000, max_level=3)
    old_keys = store.chunk_keys(LIBRARY, "doc-7-000")
    with store.transaction():
        store.delete_document(LIBRARY, "doc-7-000")
        store.bump_generation(LIBRARY)
    fill(store, 5, seed=11)
    generation = store.generation(LIBRARY)
    # Not yet applied: the reader searches the last committed postings.
    assert server.get(LIBRARY, fields).search("revenue", 1000, max_level=3) == before
    assert server.get(LIBRARY, fields).generation == since
    new_rows = [row for row in store.index_rows(LIBRARY) if row.key > max(k for k, _ in before)]
    for indexes in (embedded, server):
        indexes.apply(LIBRARY, old_keys, new_rows, since=since, generation=generation)
    assert server.get(LIBRARY, fields).generation == generation
    assert differences(embedded, server, store, fields) == []


def test_many_small_changes_merge_segments_and_drop_removed_documents(
    store: SQLiteChunkStore, database: Database, tmp_path: Path
) -> None:
    """Changes of a few documents each (some removing earlier ones) add segments that merge in
    tiers and tombstones that are compacted away, and the rankings stay the engine's."""
    embedded, server = both(store, database, tmp_path)
    rng = random.Random(21)
    alive = [f"doc-7-{number:03d}" for number in range(80)]
    removed_docs: list[str] = []
    for change in range(24):
        since = store.generation(LIBRARY)
        newest = max(row.key for row in store.index_rows(LIBRARY))
        gone: list[int] = []
        for doc_id in rng.sample(alive, 3):
            gone += store.chunk_keys(LIBRARY, doc_id)
            with store.transaction():
                store.delete_document(LIBRARY, doc_id)
                store.bump_generation(LIBRARY)
            alive.remove(doc_id)
            removed_docs.append(doc_id)
        fill(store, 4, seed=100 + change)
        alive += [f"doc-{100 + change}-{number:03d}" for number in range(4)]
        added = [row for row in store.index_rows(LIBRARY) if row.key > newest]
        for indexes in (embedded, server):
            indexes.apply(LIBRARY, gone, added, since=since, generation=store.generation(LIBRARY))
    for fields in (IndexFields.TITLE_TEXT, IndexFields.TITLE_HEADING_TEXT):
        assert differences(embedded, server, store, fields) == []
    with database.connection() as conn:
        segments, dead = conn.execute(
            "SELECT count(*), sum(documents - live) FROM lexical_segments s JOIN lexical_indexes "
            "i ON i.id = s.index_id WHERE i.fields = 'title_text'"
        ).fetchone()
        documents = conn.execute(
            "SELECT count(*) FROM lexical_documents d JOIN lexical_indexes i "
            "ON i.id = d.index_id WHERE i.fields = 'title_text'"
        ).fetchone()[0]
    # 25 changes wrote up to 3 segments each (one per indexed level): merges keep a few per
    # level and tier, and rewrite segments whose removed documents pass the engine's fraction
    # (every removed document had a chunk: without that, as many tombstones would remain).
    assert segments < 30, segments
    assert dead < len(removed_docs)
    assert documents == len(searchable(store.index_rows(LIBRARY)))


def test_an_apply_that_fails_half_way_leaves_the_last_commit(
    store: SQLiteChunkStore, database: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, server = both(store, database, tmp_path)
    fields = IndexFields.TITLE_TEXT
    since = store.generation(LIBRARY)
    before = server.get(LIBRARY, fields).search("revenue growth", 1000, max_level=3)
    fill(store, 5, seed=12)
    rows = [row for row in store.index_rows(LIBRARY)][-5:]
    calls = []
    real = lexical._write_segment

    def write_then_fail(*args: Any) -> Any:
        calls.append(1)
        written = real(*args)
        if len(calls) == 2:  # the second segment: the first one is written already
            raise RuntimeError("connection lost")
        return written

    monkeypatch.setattr(lexical, "_write_segment", write_then_fail)
    with pytest.raises(RuntimeError):
        server.apply(LIBRARY, [], rows, since=since, generation=store.generation(LIBRARY))
    assert server.get(LIBRARY, fields).search("revenue growth", 1000, max_level=3) == before
    assert server.get(LIBRARY, fields).generation == since


def test_an_index_behind_the_chunk_store_is_rebuilt_by_the_next_writer(
    store: SQLiteChunkStore, database: Database, tmp_path: Path
) -> None:
    embedded, server = both(store, database, tmp_path)
    fill(store, 4, seed=13)  # a writer that died before applying its change
    missed = store.generation(LIBRARY)
    fill(store, 3, seed=14)
    rows = list(store.index_rows(LIBRARY))[-3:]
    for indexes in (embedded, server):
        indexes.apply(LIBRARY, [], rows, since=missed, generation=store.generation(LIBRARY))
    assert f"{LIBRARY}/{IndexFields.TITLE_TEXT.value}" in server.rebuilt
    assert differences(embedded, server, store, IndexFields.TITLE_TEXT) == []


def test_a_field_set_no_writer_keeps_is_searched_in_memory_and_dropping_forgets(
    store: SQLiteChunkStore, database: Database, tmp_path: Path
) -> None:
    embedded, server = both(store, database, tmp_path)
    text_only = server.get(LIBRARY, IndexFields.TEXT)
    assert not isinstance(text_only, PostgresLexicalIndex)
    assert server.rebuilt == [f"{LIBRARY}/text (in memory)"]
    assert text_only.search("revenue", 10, max_level=3) == embedded.get(
        LIBRARY, IndexFields.TEXT
    ).search("revenue", 10, max_level=3)
    server.drop(LIBRARY)
    with database.connection() as conn:
        assert all(
            conn.execute(f"SELECT count(*) FROM {table}").fetchone() == (0,)
            for table in ("lexical_blocks", "lexical_segments", "lexical_documents")
        )
    assert not isinstance(server.get(LIBRARY, IndexFields.TITLE_TEXT), PostgresLexicalIndex)


def test_readers_during_applies_see_whole_generations(
    store: SQLiteChunkStore, database: Database, tmp_path: Path
) -> None:
    """Readers searching while a writer applies changes only ever see the result of a whole
    commit: the hit count of a term every new document carries grows in steps of a batch."""
    _, server = both(store, database, tmp_path)
    fields = IndexFields.TITLE_TEXT
    stop = threading.Event()
    seen: set[int] = set()
    errors: list[BaseException] = []

    def read() -> None:
        try:
            while not stop.is_set():
                hits = server.get(LIBRARY, fields).search("zebra", 10_000, max_level=3)
                seen.add(len(hits))
        except BaseException as exc:  # reported below
            errors.append(exc)

    readers = [threading.Thread(target=read) for _ in range(4)]
    for reader in readers:
        reader.start()
    try:
        for batch in range(5):
            since = store.generation(LIBRARY)
            _zebras(store, batch)
            rows = list(store.index_rows(LIBRARY))[-20:]
            server.apply(LIBRARY, [], rows, since=since, generation=store.generation(LIBRARY))
    finally:
        stop.set()
        for reader in readers:
            reader.join()
    assert not errors
    assert seen <= {0, 20, 40, 60, 80, 100} and 100 in {
        len(server.get(LIBRARY, fields).search("zebra", 10_000, max_level=3))
    }


def _zebras(store: SQLiteChunkStore, batch: int) -> None:
    """One document of 20 chunks that all say ``zebra``."""
    doc_id = f"zebra-{batch}"
    with store.transaction():
        store.insert_document(
            StoredDocument(LIBRARY, doc_id, "Zoo", "c", "f", Sensitivity.PUBLIC),
            source="test",
            metadata={},
            parents=[ParentRow(f"{doc_id}-p", "", {}, "")],
            chunks=[
                ChunkRow(
                    f"{doc_id}-{i}",
                    i,
                    f"zebra {i}",
                    "",
                    "Zoo",
                    {},
                    f"{doc_id}-p",
                    None,
                    f"z{batch}-{i}",
                    Sensitivity.PUBLIC,
                )
                for i in range(20)
            ],
        )
        store.bump_generation(LIBRARY)


def test_arguments_are_checked_like_the_engine(
    store: SQLiteChunkStore, database: Database, tmp_path: Path
) -> None:
    _, server = both(store, database, tmp_path)
    index = server.get(LIBRARY, IndexFields.TITLE_TEXT)
    from ragspine.errors import QueryError

    for bad in ({"top_k": -1}, {"top_k": True}):
        with pytest.raises(QueryError, match="top_k"):
            index.search("revenue", bad["top_k"], max_level=3)  # type: ignore[arg-type]
    with pytest.raises(QueryError, match="max_level"):
        index.search("revenue", 3, max_level="3")  # type: ignore[arg-type]
    with pytest.raises(QueryError, match="allowed"):
        index.search("revenue", 3, max_level=3, allowed=["x"])  # type: ignore[list-item]
    assert index.search("revenue", 0, max_level=3) == []


def _rankings(
    search: Any, chunks: Any, queries: dict[str, str], qids: list[str]
) -> dict[str, list[str]]:
    """Documents ranked by their best chunk among each query's best 30 chunks (public asker)."""
    rankings = {}
    for qid in qids:
        hits = search(queries[qid], 30, max_level=0)
        ids = chunks.chunk_ids([key for key, _ in hits])
        rankings[qid] = rank_documents([(ids[key].doc_id, score) for key, score in hits])[:10]
    return rankings


def test_scifact_ndcg_is_the_embedded_engines(database: Database, tmp_path: Path) -> None:
    folder = shared_data("scifact")
    queries = load_queries(folder / "queries.jsonl")
    qrels = load_qrels(folder / "qrels" / "train.tsv")
    qids = [qid for qid in qrels if qid in queries]
    with Workspace.open(tmp_path / "ws") as ws:
        ws.ingest_beir(folder, library="scifact")
        chunks = ws.chunks
        server = PostgresLexicalIndexes(database, chunks)
        rows = list(chunks.index_rows("scifact"))
        server.apply("scifact", [], rows, since=0, generation=chunks.generation("scifact"))
        fields = IndexFields.TITLE_TEXT
        embedded = _rankings(
            ws.lexical_indexes.get("scifact", fields).search, chunks, queries, qids
        )
        postgres = _rankings(server.get("scifact", fields).search, chunks, queries, qids)
    want = evaluate_rankings(embedded, qrels)["ndcg@10"]
    got = evaluate_rankings(postgres, qrels)["ndcg@10"]
    assert want > 0.6
    assert abs(got - want) <= 0.005
    same = sum(embedded[qid] == postgres[qid] for qid in qids)
    assert same == len(qids)


def test_the_retriever_over_postgres_answers_like_the_embedded_workspace(
    database: Database, tmp_path: Path
) -> None:
    """Drop-in: the narrative pipeline (routing, filters as keys, levels, fusion of libraries)
    over the PostgreSQL indexes returns the embedded workspace's snippets and scores."""
    rng = random.Random(5)
    folder = tmp_path / "docs"
    with Workspace.open(tmp_path / "ws") as ws:
        for level in ("public", "internal", "confidential", "restricted"):
            for region in ("APAC", "EMEA"):
                files = []
                for number in range(6):
                    path = folder / level / region / f"memo-{level}-{number}.md"
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(
                        f"# Memo {number}\n\n{_text(rng)}\n\n## Outlook\n\n{_text(rng)}"
                    )
                    files.append(path)
                ws.ingest_documents(
                    files, library=f"lib-{region}", metadata={"region": region}, sensitivity=level
                )
        chunks = ws.chunks
        server = PostgresLexicalIndexes(database, chunks)
        for library in chunks.library_names():
            rows = list(chunks.index_rows(library))
            server.apply(library, [], rows, since=0, generation=chunks.generation(library))
        retriever = Retriever(chunks, server)  # type: ignore[arg-type]
        found = 0
        for mode in (RetrievalMode.BM25, RetrievalMode.LEXICAL):
            for clearance in ("public", "internal", "confidential", "restricted"):
                principal = Principal.of(clearance)
                for spec in (None, "region=APAC"):
                    options = SearchOptions(
                        mode=mode, top_k=15, filters=parse_filter(spec) if spec else None
                    )
                    for question in QUERIES[:8]:
                        want = ws.retriever.search(question, options, principal=principal)
                        got = retriever.search(question, options, principal=principal)
                        assert [(s.chunk_id, round(s.score, 9)) for s in got.snippets] == [
                            (s.chunk_id, round(s.score, 9)) for s in want.snippets
                        ], (mode, clearance, spec, question)
                        found += len(got.snippets)
        assert found > 500


def test_upgrading_from_row_postings_keeps_searches_right(
    postgres_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A database at schema version 4 (one row per posting) with a library in it: ``ragspine
    migrate`` drops the old postings and rebuilds the index, packed, from the chunk store, and
    searches answer as the embedded engine does."""
    from cli.runner import run
    from ragspine.stores.postgres.chunks import PostgresChunkStore
    from ragspine.stores.postgres.migrate import VERSION_TABLE, migrations

    db = Database(postgres_url)
    try:
        with db.transaction() as conn:  # what RAGSpine with schema version 4 left
            conn.execute(
                f"CREATE TABLE {VERSION_TABLE} (version integer PRIMARY KEY, name text NOT NULL, "
                "applied_at timestamptz NOT NULL DEFAULT now())"
            )
            for old in migrations()[:4]:
                conn.execute(old.sql)
                conn.execute(
                    f"INSERT INTO {VERSION_TABLE} (version, name) VALUES (%s, %s)",
                    (old.version, old.name),
                )
        fill(PostgresChunkStore(db), 12)  # type: ignore[arg-type]
        with db.transaction() as conn:
            index = conn.execute(
                "INSERT INTO lexical_indexes (library, fields, generation, analyzer) "
                "VALUES (%s, 'title_text', 12, '{}') RETURNING id",
                (LIBRARY,),
            ).fetchone()[0]
            conn.execute("INSERT INTO lexical_postings VALUES (%s, 'revenu', 1, 1, 0, 3)", (index,))
        code, out, _ = run(capsys, "--workspace", postgres_url, "migrate")
        assert code == 0 and "to 5" in out
        reference = SQLiteChunkStore(tmp_path / "reference.sqlite")
        fill(reference, 12)
        embedded = LibraryIndexes(reference, tmp_path / "indexes")
        rows = list(reference.index_rows(LIBRARY))
        embedded.apply(LIBRARY, [], rows, since=0, generation=reference.generation(LIBRARY))
        want = embedded.get(LIBRARY, IndexFields.TITLE_TEXT).search("revenue", 50, max_level=2)
        assert want
        with Workspace.open(postgres_url) as ws:  # migrate rebuilt the index in the database
            searched = ws.lexical_indexes.get(LIBRARY, IndexFields.TITLE_TEXT)
            assert isinstance(searched, PostgresLexicalIndex)
            assert searched.search("revenue", 50, max_level=2) == want
            assert searched.generation == reference.generation(LIBRARY)
        reference.close()
    finally:
        db.close()


def test_a_reader_follows_the_committed_index_row_not_what_it_read_before(
    store: SQLiteChunkStore, database: Database, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """``get`` remembers an index's analyzer and costs no round trip the next time; each search
    reads the index row with the postings, so a dropped index, a rebuilt one (another id) and
    another analyzer are all followed at once."""
    embedded, server = both(store, database, tmp_path)
    fields = IndexFields.TITLE_TEXT
    want = embedded.get(LIBRARY, fields).search("revenue growth", 20, max_level=2)
    held = server.get(LIBRARY, fields)
    assert (
        isinstance(held, PostgresLexicalIndex)
        and held.search("revenue growth", 20, max_level=2) == want
    )
    server.drop(LIBRARY)  # a reader still holding the index searches the chunk store's text
    assert held.search("revenue growth", 20, max_level=2) == want
    assert f"{LIBRARY}/{fields.value} (in memory)" in server.rebuilt
    generation = store.generation(LIBRARY)
    server.apply(LIBRARY, [], list(store.index_rows(LIBRARY)), since=0, generation=generation)
    assert held.search("revenue growth", 20, max_level=2) == want  # the new id, same answers
    plain = {**Analyzer().to_config(), "stem": False}
    with database.connection() as conn:
        conn.execute("UPDATE lexical_indexes SET analyzer = %s", (json.dumps(plain),))
    assert held.search("revenue", 20, max_level=2) == []  # analyzed as the index says: "revenue"
    assert held.analyzer.stem is False
    assert held.search("revenu", 20, max_level=2) == embedded.get(LIBRARY, fields).search(
        "revenue", 20, max_level=2
    )
    keeping = {**Analyzer().to_config(), "stopwords": False}
    with database.connection() as conn:
        conn.execute("UPDATE lexical_indexes SET analyzer = %s", (json.dumps(keeping),))
    # "the" gives no terms to the analyzer last read, but the index row is read all the same:
    # its analyzer keeps stopwords, so "the" is a term (that no posting holds here).
    assert held.search("the", 20, max_level=2) == []
    assert held.analyzer.stopwords is False
    for unusable in ('{"version": -1}', "[1, 2]"):
        with database.connection() as conn:
            conn.execute("UPDATE lexical_indexes SET analyzer = %s", (unusable,))
        caplog.clear()
        with caplog.at_level("WARNING", logger="ragspine.narrative"):
            assert held.search("revenue growth", 20, max_level=2) == want  # in memory
            assert not isinstance(server.get(LIBRARY, fields), PostgresLexicalIndex)
        assert "cannot be used" in caplog.text


def test_a_damaged_block_is_a_clear_error_and_deleting_the_index_row_recovers(
    store: SQLiteChunkStore, database: Database, tmp_path: Path
) -> None:
    embedded, server = both(store, database, tmp_path)
    fields = IndexFields.TITLE_TEXT
    want = embedded.get(LIBRARY, fields).search("revenue", 20, max_level=2)
    with database.connection() as conn:
        conn.execute("UPDATE lexical_blocks SET postings = '\\x0102' WHERE term = 'revenu'")
    with pytest.raises(StoreError, match=r"'revenu' of segment \d+ is damaged"):
        server.get(LIBRARY, fields).search("revenue", 20, max_level=2)
    with database.connection() as conn:  # what the message says to do
        conn.execute("DELETE FROM lexical_indexes WHERE library = %s", (LIBRARY,))
        assert conn.execute("SELECT count(*) FROM lexical_blocks").fetchone() == (0,)
    assert server.get(LIBRARY, fields).search("revenue", 20, max_level=2) == want  # in memory
    generation = store.generation(LIBRARY)
    server.apply(LIBRARY, [], [], since=generation, generation=generation)  # the next writer
    assert isinstance(server.get(LIBRARY, fields), PostgresLexicalIndex)
    assert server.get(LIBRARY, fields).search("revenue", 20, max_level=2) == want
