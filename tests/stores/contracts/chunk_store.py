"""The contract every :class:`~ragspine.stores.chunks.ChunkStore` backend keeps, written once.

A backend's test module subclasses :class:`ChunkStoreContract` and adds one fixture, ``store``,
that yields a fresh, empty store (and closes it). ``tests/stores/sqlite/test_chunks.py`` does it
for SQLite; a future PostgreSQL backend reuses the whole suite the same way::

    class TestPostgresChunkStore(ChunkStoreContract):
        @pytest.fixture
        def store(self, postgres_url: str) -> Iterator[ChunkStore]:
            ...

Every expected result is computed in plain Python from what the test wrote (visibility from the
levels written, filters with :meth:`Filter.matches`, term counts with
:func:`ragspine.analysis.routing_terms`),
never hard-coded. The backend modules also run chosen tests against deliberately broken
subclasses, marked ``xfail(strict=True)``, so a test that stops catching its bug fails.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from narrative.filters.strategies import filters, metadata
from ragspine.analysis import routing_terms as terms
from ragspine.errors import ConfigError, QueryError, StoreError
from ragspine.narrative.filters.expr import Filter, parse_filter
from ragspine.security import Sensitivity
from ragspine.stores.chunks import (
    ChunkIdentity,
    ChunkRow,
    ChunkStore,
    Library,
    NewDocument,
    ParentRow,
    StoredChunk,
    StoredDocument,
    count_terms,
    profile_rows,
)

LEVELS = tuple(Sensitivity)


@dataclass(frozen=True)
class ChunkSpec:
    """A chunk the test writes: its text, level and section."""

    text: str
    level: Sensitivity = Sensitivity.PUBLIC
    section: int = 0


@dataclass(frozen=True)
class Written:
    """What the test wrote for one document, and the keys the store gave its chunks."""

    library_id: str
    doc_id: str
    title: str
    level: Sensitivity
    metadata: dict[str, Any]
    chunks: tuple[ChunkSpec, ...]
    keys: tuple[int, ...]
    section_levels: tuple[tuple[str, int], ...] = ()
    rows: tuple[ChunkRow, ...] = field(default=(), repr=False)

    def stored_level(self, chunk: ChunkSpec) -> Sensitivity:
        """The level a chunk must be stored at: at least its document's."""
        return max(self.level, chunk.level)


def parent_id(library_id: str, doc_id: str, section: int) -> str:
    return f"{library_id}:{doc_id}#s{section}"


def write(
    store: ChunkStore,
    library_id: str,
    doc_id: str,
    chunks: Sequence[ChunkSpec],
    *,
    title: str = "",
    level: Sensitivity = Sensitivity.PUBLIC,
    metadata: Mapping[str, Any] | None = None,
    section_levels: Sequence[tuple[str, int]] = (),
    source: str = "",
    together: bool = False,
) -> Any:
    """Insert a document with its sections and chunks (in a transaction that also bumps the
    library's generation); with ``together``, return the :class:`NewDocument` and its chunk rows
    instead, for :meth:`ChunkStore.insert_documents`."""
    sections = sorted({c.section for c in chunks})
    parents = [
        ParentRow(
            parent_id(library_id, doc_id, s),
            f"Section {s}",
            {"section": s},
            "\n".join(c.text for c in chunks if c.section == s),
        )
        for s in sections
    ]
    rows = tuple(
        ChunkRow(
            chunk_id=f"{library_id}:{doc_id}#{i}",
            ordinal=i,
            text=c.text,
            heading=f"Section {c.section}",
            title=title,
            locator={"chunk": i},
            parent_id=parent_id(library_id, doc_id, c.section),
            window_text=f"around {c.text}" if i % 2 == 0 else None,
            content_hash=f"h-{doc_id}-{i}",
            level=c.level,
        )
        for i, c in enumerate(chunks)
    )
    document = StoredDocument(
        library_id, doc_id, title, f"hash-{doc_id}", f"fp-{doc_id}", level, source
    )
    if together:
        return NewDocument(
            document, source, dict(metadata or {}), parents, rows, section_levels
        ), rows
    with store.transaction():
        keys = store.insert_document(
            document,
            source=source,
            metadata=dict(metadata or {}),
            parents=parents,
            chunks=rows,
            section_levels=section_levels,
        )
        store.bump_generation(library_id)
    return Written(
        library_id,
        doc_id,
        title,
        level,
        dict(metadata or {}),
        tuple(chunks),
        tuple(keys),
        tuple(section_levels),
        rows,
    )


def expected_term_counts(documents: Sequence[Written], max_level: int) -> dict[str, int]:
    """Term counts of the chunks (title and text) a reader at ``max_level`` sees."""
    counts: Counter[str] = Counter()
    for doc in documents:
        for chunk in doc.chunks:
            if doc.stored_level(chunk) <= max_level:
                counts.update(terms(f"{doc.title}\n{chunk.text}"))
    return dict(counts)


MIXED = (
    ChunkSpec("Alpha revenue grew in EMEA", Sensitivity.PUBLIC, 0),
    ChunkSpec("Beta margin fell sharply", Sensitivity.INTERNAL, 0),
    ChunkSpec("Gamma merger talks with Acme", Sensitivity.CONFIDENTIAL, 1),
    ChunkSpec("Delta payroll of every employee", Sensitivity.RESTRICTED, 1),
    ChunkSpec("Epsilon outlook remains stable", Sensitivity.PUBLIC, 2),
)

FILTER_ROWS: tuple[dict[str, Any], ...] = (
    {"year": 2019, "region": "EMEA", "status": "final", "date": "2019-03-31"},
    {"year": 2020, "region": "APAC", "status": "draft", "date": "2020-06-30T12:00:00Z"},
    {"year": 2021.0, "region": "AMER", "status": "final", "date": "2021-12-31"},
    {"year": "2022", "region": "EMEA", "date": "not a date"},
    {"region": None, "status": "final", "flag": True},
    {"city": "Zu\u0308rich", "flag": False},
    {},
)
FILTER_SPECS = (
    "year>=2020",
    "year = 2021",
    "year between [2019,2020]",
    "region in [EMEA,APAC]",
    "region nin [EMEA]",
    "status!=draft",
    "status ne final",
    "date between [2020-01-01,2021-12-31]",
    "date lte 2020-06-30T23:59:59",
    'year = "2022"',
    "flag = true",
    "city = Z\u00fcrich",
    {"or": [{"field": "year", "op": "lt", "value": 2020}, {"status": {"nin": ["draft"]}}]},
    {"and": [{"region": {"in": ["EMEA", "AMER"]}}, {"year": {"gte": 2019}}]},
)

_LIBRARY_NUMBERS = itertools.count()


def filter_library(
    store: ChunkStore, rows: Sequence[Mapping[str, Any]]
) -> tuple[str, list[Written]]:
    """A new library with one document (of two chunks) per metadata row."""
    library_id = f"f{next(_LIBRARY_NUMBERS)}"
    store.create_library(library_id)
    docs = [
        write(store, library_id, f"d{i}", MIXED[:2], metadata=row) for i, row in enumerate(rows)
    ]
    return library_id, docs


def expected_keys(docs: Sequence[Written], flt: Filter) -> list[int]:
    """Keys of the chunks of the documents whose metadata ``flt`` matches, in Python."""
    return sorted(key for doc in docs if flt.matches(doc.metadata) for key in doc.keys)


class ChunkStoreContract:
    """Tests every chunk-store backend must pass; subclasses provide the ``store`` fixture."""

    @pytest.fixture
    def store(self) -> Iterator[ChunkStore]:
        raise NotImplementedError("a backend's test class provides the 'store' fixture")

    # libraries ---------------------------------------------------------------------------------

    def test_a_created_library_reads_back(self, store: ChunkStore) -> None:
        made = store.create_library(
            "reports", description="Annual reports", default_sensitivity="internal", vectors=True
        )
        store.create_library("memos")
        assert made == store.library("reports")
        assert (made.library_id, made.description) == ("reports", "Annual reports")
        assert made.default_sensitivity is Sensitivity.INTERNAL and made.vectors is True
        assert made.generation == store.generation("reports")
        assert store.library_names() == sorted(["reports", "memos"])
        assert [lib.library_id for lib in store.all_libraries()] == store.library_names()
        assert all(isinstance(lib, Library) for lib in store.all_libraries())

    def test_library_names_are_checked_and_unique(self, store: ChunkStore) -> None:
        store.create_library("reports")
        for bad in ("", "-x", "a/b", "x" * 65, "..", "a b"):
            with pytest.raises(ConfigError):
                store.create_library(bad)
        with pytest.raises(ConfigError, match="already exists"):
            store.create_library("reports")
        assert store.library_names() == ["reports"]

    def test_an_unknown_library_error_lists_the_known_ones(self, store: ChunkStore) -> None:
        store.create_library("reports")
        with pytest.raises(QueryError, match="reports"):
            store.library("nope")
        assert store.generation("nope") == 0

    def test_vectors_setting_changes_only_that(self, store: ChunkStore) -> None:
        before = store.create_library("reports", description="d")
        after = store.set_vectors("reports", True)
        assert after.vectors is True and store.library("reports").vectors is True
        assert (after.description, after.default_sensitivity) == (
            before.description,
            before.default_sensitivity,
        )
        assert store.set_vectors("reports", False).vectors is False

    def test_generations_are_never_given_twice(self, store: ChunkStore) -> None:
        store.create_library("a")
        store.create_library("b")
        seen = [store.generation("a")]
        for name in ("a", "b", "a"):
            with store.transaction():
                seen.append(store.bump_generation(name))
            assert store.generation(name) == seen[-1]
        store.delete_library("a")
        store.create_library("a")
        with store.transaction():
            seen.append(store.bump_generation("a"))
        assert seen[1:] == sorted(set(seen[1:]))  # strictly increasing, never repeated
        assert store.generation("a") not in seen[:-1]

    def test_deleting_a_library_removes_everything_it_holds(self, store: ChunkStore) -> None:
        store.create_library("gone")
        store.create_library("kept")
        docs = [write(store, "gone", f"d{i}", MIXED[i : i + 2]) for i in range(3)]
        kept = write(store, "kept", "k", MIXED)
        generation = store.generation("gone")
        assert store.delete_library("gone") == len(docs)
        assert "gone" not in store.library_names()
        with pytest.raises(QueryError):
            store.library("gone")
        gone_keys = [key for doc in docs for key in doc.keys]
        assert store.chunks_by_key(gone_keys) == {}
        assert store.chunk_ids(gone_keys) == {}
        assert list(store.index_rows("gone")) == []
        assert store.term_counts("gone", int(Sensitivity.RESTRICTED)) == {}
        assert all(store.document("gone", doc.doc_id) is None for doc in docs)
        assert sorted(store.chunks_by_key(kept.keys)) == sorted(kept.keys)
        store.create_library("gone")  # the name is free again; its next change moves on
        with store.transaction():
            assert store.bump_generation("gone") > generation

    # documents ---------------------------------------------------------------------------------

    def test_a_document_reads_back_as_written(self, store: ChunkStore) -> None:
        store.create_library("r")
        assert store.document("r", "d") is None
        doc = write(
            store, "r", "d", MIXED, title="Report", level=Sensitivity.INTERNAL, source="d.txt"
        )
        assert store.document("r", "d") == StoredDocument(
            "r", "d", "Report", "hash-d", "fp-d", Sensitivity.INTERNAL, "d.txt"
        )
        assert store.chunk_keys("r", "d") == sorted(doc.keys)

    def test_inserted_chunks_get_new_keys_in_chunk_order(self, store: ChunkStore) -> None:
        store.create_library("r")
        first = write(store, "r", "a", MIXED)
        second = write(store, "r", "b", MIXED[:2])
        assert len(set(first.keys + second.keys)) == len(first.keys) + len(second.keys)
        found = store.chunks_by_key(first.keys)
        assert [found[key].chunk_id for key in first.keys] == [r.chunk_id for r in first.rows]
        ids = [r.chunk_id for r in first.rows + second.rows]
        assert store.keys_of([*ids, "r:missing#0"]) == dict(
            zip(ids, first.keys + second.keys, strict=True)
        )

    def test_documents_inserted_together_read_back_as_one_by_one(self, store: ChunkStore) -> None:
        specs: list[dict[str, Any]] = [
            {"doc_id": "a", "chunks": MIXED, "title": "Quarterly Report", "metadata": {"y": 1}},
            {"doc_id": "b", "chunks": MIXED[:3], "level": Sensitivity.CONFIDENTIAL},
            {"doc_id": "c", "chunks": MIXED[1:2], "section_levels": (("Pay", 2),)},
        ]
        store.create_library("one")
        singles = [write(store, "one", **spec) for spec in specs]
        store.create_library("all")
        made = [write(store, "all", together=True, **spec) for spec in specs]
        with store.transaction():
            keys = store.insert_documents([new for new, _ in made])
            store.bump_generation("all")
        flat = [key for group in keys for key in group]
        assert [len(group) for group in keys] == [len(rows) for _, rows in made]
        assert len(set(flat)) == len(flat)
        assert not set(flat) & {key for doc in singles for key in doc.keys}
        assert flat == sorted(flat) and min(flat) > max(k for d in singles for k in d.keys)
        found = store.chunks_by_key(flat)
        for group, (new, rows) in zip(keys, made, strict=True):
            assert [found[key].chunk_id for key in group] == [row.chunk_id for row in rows]
            assert store.document("all", new.document.doc_id) == new.document
        assert store.documents("all", ["c", "a", "missing"]) == {
            new.document.doc_id: new.document for new, _ in made if new.document.doc_id != "b"
        }
        for level in LEVELS:
            assert store.term_counts("all", level) == store.term_counts("one", level)
            assert store.visible_counts("all", level) == store.visible_counts("one", level)

        def stored(library: str) -> list[tuple[Any, ...]]:
            rows = store.index_rows(library)
            return [(r.title, r.heading, r.text, r.sensitivity) for r in rows]

        assert stored("all") == stored("one")

    def test_term_counts_given_by_the_caller_are_the_ones_the_store_would_count(
        self, store: ChunkStore
    ) -> None:
        specs: list[dict[str, Any]] = [
            {"doc_id": "a", "chunks": MIXED, "title": "Quarterly Report"},
            {"doc_id": "b", "chunks": MIXED[:3], "level": Sensitivity.CONFIDENTIAL},
        ]
        for library, by_caller in (("counted", False), ("given", True)):
            store.create_library(library)
            made = [write(store, library, together=True, **spec) for spec in specs]
            news = [new for new, _ in made]
            counts = count_terms(profile_rows(news)) if by_caller else None
            with store.transaction():
                store.insert_documents(news, term_counts=counts)
                store.bump_generation(library)
        for level in LEVELS:
            assert store.term_counts("given", level) == store.term_counts("counted", level)
        assert store.term_counts("given", max(LEVELS))  # something was counted
        store.create_library("other")
        other, _ = write(store, "other", "x", MIXED[:1], together=True)
        mine, _ = write(store, "given", "y", MIXED[:1], together=True)
        with pytest.raises(StoreError, match="one library"), store.transaction():
            store.insert_documents([other, mine], term_counts={})

    def test_keys_inserted_together_are_never_reused(self, store: ChunkStore) -> None:
        store.create_library("r")
        old = write(store, "r", "d", MIXED)
        with store.transaction():
            store.delete_document("r", "d")
        new, _ = write(store, "r", "d", MIXED, together=True)
        with store.transaction():
            (keys,) = store.insert_documents([new])
        assert not set(old.keys) & set(keys)

    def test_keys_are_never_reused(self, store: ChunkStore) -> None:
        store.create_library("r")
        old = write(store, "r", "d", MIXED)
        with store.transaction():
            assert sorted(store.delete_document("r", "d")) == sorted(old.keys)
        new = write(store, "r", "d", MIXED)
        assert not set(old.keys) & set(new.keys)

    def test_a_deleted_document_leaves_nothing_behind(self, store: ChunkStore) -> None:
        store.create_library("r")
        kept = write(store, "r", "kept", MIXED[:2], title="Kept")
        gone = write(store, "r", "gone", MIXED, title="Gone", metadata={"year": 2020})
        with store.transaction():
            removed = store.delete_document("r", "gone")
            store.bump_generation("r")
        assert sorted(removed) == sorted(gone.keys)
        assert store.document("r", "gone") is None
        assert store.chunk_keys("r", "gone") == []
        assert store.chunks_by_key(gone.keys) == {}
        assert store.chunk_ids(gone.keys) == {}
        assert store.keys_of([r.chunk_id for r in gone.rows]) == {}
        assert store.chunks_where("doc_id", ["gone"]) == []
        assert store.chunks_where("parent_id", [r.parent_id for r in gone.rows]) == []
        assert [row.key for row in store.index_rows("r")] == sorted(kept.keys)
        assert store.filtered_keys("r", parse_filter("year = 2020")) == []
        for level in LEVELS:
            assert store.term_counts("r", level) == expected_term_counts([kept], level)
            assert store.visible_counts("r", level).chunks == sum(
                kept.stored_level(c) <= level for c in kept.chunks
            )

    def test_a_failed_transaction_writes_nothing(self, store: ChunkStore) -> None:
        store.create_library("r")
        kept = write(store, "r", "kept", MIXED[:2])
        generation = store.generation("r")
        counts = {level: store.term_counts("r", level) for level in LEVELS}
        with pytest.raises(RuntimeError, match="ingest failed"), store.transaction():
            store.delete_document("r", "kept")
            store.insert_document(
                StoredDocument("r", "new", "", "h", "f", Sensitivity.PUBLIC),
                source="",
                metadata={},
                parents=[ParentRow(parent_id("r", "new", 0), "", {}, "Zeta text")],
                chunks=[
                    ChunkRow(
                        "r:new#0",
                        0,
                        "Zeta text",
                        "",
                        "",
                        {},
                        parent_id("r", "new", 0),
                        None,
                        "h0",
                        Sensitivity.PUBLIC,
                    )
                ],
            )
            store.bump_generation("r")
            raise RuntimeError("ingest failed")
        assert store.generation("r") == generation
        assert store.document("r", "new") is None and store.keys_of(["r:new#0"]) == {}
        assert store.document("r", "kept") is not None
        assert sorted(store.chunks_by_key(kept.keys)) == sorted(kept.keys)
        assert {level: store.term_counts("r", level) for level in LEVELS} == counts

    # reading chunks ----------------------------------------------------------------------------

    def test_a_chunk_reads_back_with_its_document_and_parent(self, store: ChunkStore) -> None:
        store.create_library("r")
        meta = {"year": 2021, "region": "EMEA", "tags": ["a", "b"]}
        levels = (("Secret plans", 2), ("Intro", 0))
        doc = write(
            store,
            "r",
            "d",
            MIXED,
            title="Report",
            level=Sensitivity.INTERNAL,
            metadata=meta,
            section_levels=levels,
        )
        found = store.chunks_by_key([*doc.keys, max(doc.keys) + 1000])
        assert sorted(found) == sorted(doc.keys)
        for key, row, spec in zip(doc.keys, doc.rows, doc.chunks, strict=True):
            chunk = found[key]
            assert isinstance(chunk, StoredChunk)
            assert chunk == StoredChunk(
                key=key,
                chunk_id=row.chunk_id,
                doc_id="d",
                library_id="r",
                text=row.text,
                heading=row.heading,
                title=row.title,
                source_locator=row.locator,
                parent_id=row.parent_id,
                parent_locator={"section": spec.section},
                window_text=row.window_text,
                metadata=meta,
                sensitivity=doc.stored_level(spec),
                content_hash=row.content_hash,
                section_levels=levels,
            )
        assert store.chunk_ids(doc.keys) == {
            key: ChunkIdentity("r", row.chunk_id, "d")
            for key, row in zip(doc.keys, doc.rows, strict=True)
        }
        assert store.chunks_by_key([]) == {} and store.chunk_ids([]) == {}

    def test_chunks_by_parent_or_document_come_in_document_order(self, store: ChunkStore) -> None:
        store.create_library("r")
        a = write(store, "r", "a", MIXED)
        b = write(store, "r", "b", MIXED[:3])
        by_doc = store.chunks_where("doc_id", ["b", "a"])
        assert [c.chunk_id for c in by_doc] == [r.chunk_id for r in a.rows + b.rows]
        section = parent_id("r", "a", 1)
        by_parent = store.chunks_where("parent_id", [section])
        assert [c.chunk_id for c in by_parent] == [
            r.chunk_id for r in a.rows if r.parent_id == section
        ]
        assert store.chunks_where("doc_id", []) == []

    def test_index_rows_hold_every_chunk_in_key_order(self, store: ChunkStore) -> None:
        store.create_library("r")
        store.create_library("other")
        docs = [write(store, "r", "a", MIXED, title="A"), write(store, "r", "b", MIXED[1:])]
        write(store, "other", "x", MIXED)
        expected = sorted(
            (key, doc.title, row.heading, row.text, int(doc.stored_level(spec)))
            for doc in docs
            for key, row, spec in zip(doc.keys, doc.rows, doc.chunks, strict=True)
        )
        got = [(r.key, r.title, r.heading, r.text, r.sensitivity) for r in store.index_rows("r")]
        assert got == expected

    # visibility --------------------------------------------------------------------------------

    def test_a_chunk_is_stored_at_least_at_its_documents_level(self, store: ChunkStore) -> None:
        store.create_library("r")
        for doc_level in LEVELS:
            doc = write(store, "r", f"d{int(doc_level)}", MIXED, level=doc_level)
            found = store.chunks_by_key(doc.keys)
            for key, spec in zip(doc.keys, doc.chunks, strict=True):
                assert found[key].sensitivity == max(doc_level, spec.level)

    def test_has_chunks_sees_only_levels_at_or_below(self, store: ChunkStore) -> None:
        store.create_library("r")
        doc = write(store, "r", "d", MIXED[1:4])  # internal, confidential, restricted
        for level in LEVELS:
            expected = any(doc.stored_level(c) <= level for c in doc.chunks)
            assert store.has_chunks("r", level) is expected
        store.create_library("empty")
        assert not store.has_chunks("empty", int(Sensitivity.RESTRICTED))

    def test_visible_counts_count_only_what_a_level_sees(self, store: ChunkStore) -> None:
        store.create_library("r")
        docs = [
            write(store, "r", "a", MIXED),
            write(store, "r", "b", MIXED[2:4], level=Sensitivity.INTERNAL),
            write(store, "r", "c", MIXED[3:4]),
        ]
        for level in LEVELS:
            seen = [
                (doc.doc_id, parent_id("r", doc.doc_id, c.section), doc.stored_level(c))
                for doc in docs
                for c in doc.chunks
                if doc.stored_level(c) <= level
            ]
            counts = store.visible_counts("r", level)
            assert counts.documents == len({d for d, _, _ in seen})
            assert counts.parents == len({p for _, p, _ in seen})
            assert counts.chunks == len(seen)
            assert dict(counts.chunks_by_level) == dict(Counter(lv for _, _, lv in seen))

    def test_term_counts_follow_the_reader_level(self, store: ChunkStore) -> None:
        store.create_library("r")
        docs = [
            write(store, "r", "a", MIXED, title="Quarterly Report"),
            write(store, "r", "b", MIXED[:3], title="Memo", level=Sensitivity.CONFIDENTIAL),
        ]
        for level in LEVELS:
            assert store.term_counts("r", level) == expected_term_counts(docs, level)

    # filters -----------------------------------------------------------------------------------

    def test_filtered_keys_are_exactly_the_matching_documents_chunks(
        self, store: ChunkStore
    ) -> None:
        library_id, docs = filter_library(store, FILTER_ROWS)
        filter_library(store, FILTER_ROWS)  # another library's chunks never come back
        for spec in FILTER_SPECS:
            flt = parse_filter(spec)
            got = sorted(store.filtered_keys(library_id, flt))
            assert got == expected_keys(docs, flt), flt.describe()

    @settings(
        max_examples=300,
        deadline=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.function_scoped_fixture,
            HealthCheck.differing_executors,  # one test, run by every backend's class
        ],
    )
    @given(rows=st.lists(metadata, min_size=1, max_size=10), flt=filters)
    def test_filtered_keys_agree_with_matches(
        self, store: ChunkStore, rows: list[dict[str, Any]], flt: Filter
    ) -> None:
        library_id, docs = filter_library(store, rows)
        assert sorted(store.filtered_keys(library_id, flt)) == expected_keys(docs, flt)
