"""The chunk-store contract run against SQLite, and against broken SQLite stores that must fail it.

Each broken store below carries one realistic bug; the contract tests named with it must catch
that bug (``xfail(strict=True)``: a test that passes against a broken store fails the run).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from ragspine.narrative.filters.expr import Condition, Filter, Group, GroupMode, Op
from ragspine.stores.chunks import ChunkStore, NewDocument, VisibleCounts
from ragspine.stores.sqlite.chunks import SQLiteChunkStore
from ragspine.stores.sqlite.filter_sql import filter_to_sql
from stores.contracts.chunk_store import ChunkStoreContract

HIGHEST = 3


def _open(factory: Callable[[Path], SQLiteChunkStore], tmp_path: Path) -> Iterator[ChunkStore]:
    store = factory(tmp_path / "workspace.sqlite")
    yield store
    store.close()


class TestSQLiteChunkStore(ChunkStoreContract):
    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[ChunkStore]:
        yield from _open(SQLiteChunkStore, tmp_path)


# ---- broken stores: each contract test listed must fail against them -----------------------


def _nin_forgetting_missing_fields(flt: Filter, column: str) -> tuple[str, list[object]]:
    """A compiler bug: ``nin`` compiled as ``NOT in``, so rows without the field match."""
    if isinstance(flt, Condition) and flt.op is Op.NIN:
        sql, params = filter_to_sql(Condition(flt.field, Op.IN, flt.value), column)
        return f"NOT {sql}", params
    if isinstance(flt, Group):
        parts = [_nin_forgetting_missing_fields(m, column) for m in flt.members]
        joiner = " AND " if flt.mode is GroupMode.AND else " OR "
        return "(" + joiner.join(p for p, _ in parts) + ")", [x for _, p in parts for x in p]
    return filter_to_sql(flt, column)


class FilterIgnoringMissingFields(SQLiteChunkStore):
    def filtered_keys(self, library_id: str, flt: Filter) -> list[int]:
        where, params = _nin_forgetting_missing_fields(flt, "d.metadata")
        rows = self._db.execute(
            "SELECT c.chunk_key FROM narrative_chunks c JOIN narrative_documents d "
            "ON d.library_id = c.library_id AND d.doc_id = c.doc_id "
            f"WHERE c.library_id = ? AND ({where})",
            [library_id, *params],
        )
        return [row[0] for row in rows]


class DeleteLeavingChunks(SQLiteChunkStore):
    def delete_document(self, library_id: str, doc_id: str) -> list[int]:
        keys = self.chunk_keys(library_id, doc_id)
        self._db.execute(
            "DELETE FROM narrative_documents WHERE library_id = ? AND doc_id = ?",
            (library_id, doc_id),
        )
        return keys


class VisibilityIgnoringLevel(SQLiteChunkStore):
    def has_chunks(self, library_id: str, max_level: int) -> bool:
        return super().has_chunks(library_id, HIGHEST)

    def visible_counts(self, library_id: str, max_level: int) -> VisibleCounts:
        return super().visible_counts(library_id, HIGHEST)

    def term_counts(self, library_id: str, max_level: int) -> dict[str, int]:
        return super().term_counts(library_id, HIGHEST)


class GenerationPerLibrary(SQLiteChunkStore):
    """Counts each library on its own, so a re-created library repeats old numbers."""

    def bump_generation(self, library_id: str) -> int:
        generation = self.generation(library_id) + 1
        self._db.execute(
            "UPDATE narrative_libraries SET generation = ? WHERE library_id = ?",
            (generation, library_id),
        )
        return generation


class KeysFromHighestInUse(SQLiteChunkStore):
    """Numbers new chunks after the highest key still in use, forgetting deleted ones."""

    def insert_documents(
        self, documents: Sequence[NewDocument], *, term_counts: Any = None
    ) -> list[list[int]]:
        self._db.execute("DELETE FROM sqlite_sequence WHERE name = 'narrative_chunks'")
        return super().insert_documents(documents, term_counts=term_counts)


class TransactionWithoutRollback(SQLiteChunkStore):
    @contextmanager
    def transaction(self) -> Iterator[None]:
        yield  # every statement commits on its own


def _broken(factory: Callable[[Path], SQLiteChunkStore]) -> Callable[..., Iterator[ChunkStore]]:
    @pytest.fixture
    def store(self: object, tmp_path: Path) -> Iterator[ChunkStore]:
        yield from _open(factory, tmp_path)

    return store


@pytest.mark.xfail(strict=True, reason="nin matches documents without the field")
class TestFilterIgnoringMissingFields:
    store = _broken(FilterIgnoringMissingFields)
    test_filtered_keys_are_exactly_the_matching_documents_chunks = (
        ChunkStoreContract.test_filtered_keys_are_exactly_the_matching_documents_chunks
    )
    test_filtered_keys_agree_with_matches = ChunkStoreContract.test_filtered_keys_agree_with_matches


@pytest.mark.xfail(strict=True, reason="delete_document leaves the chunks behind")
class TestDeleteLeavingChunks:
    store = _broken(DeleteLeavingChunks)
    test_a_deleted_document_leaves_nothing_behind = (
        ChunkStoreContract.test_a_deleted_document_leaves_nothing_behind
    )
    test_keys_are_never_reused = ChunkStoreContract.test_keys_are_never_reused


@pytest.mark.xfail(strict=True, reason="keys of deleted chunks are given again")
class TestKeysFromHighestInUse:
    store = _broken(KeysFromHighestInUse)
    test_keys_are_never_reused = ChunkStoreContract.test_keys_are_never_reused
    test_keys_inserted_together_are_never_reused = (
        ChunkStoreContract.test_keys_inserted_together_are_never_reused
    )


@pytest.mark.xfail(strict=True, reason="visibility ignores the reader's level")
class TestVisibilityIgnoringLevel:
    store = _broken(VisibilityIgnoringLevel)
    test_has_chunks_sees_only_levels_at_or_below = (
        ChunkStoreContract.test_has_chunks_sees_only_levels_at_or_below
    )
    test_visible_counts_count_only_what_a_level_sees = (
        ChunkStoreContract.test_visible_counts_count_only_what_a_level_sees
    )
    test_term_counts_follow_the_reader_level = (
        ChunkStoreContract.test_term_counts_follow_the_reader_level
    )


@pytest.mark.xfail(strict=True, reason="a re-created library repeats generation numbers")
class TestGenerationPerLibrary:
    store = _broken(GenerationPerLibrary)
    test_generations_are_never_given_twice = (
        ChunkStoreContract.test_generations_are_never_given_twice
    )


@pytest.mark.xfail(strict=True, reason="a failed transaction keeps its writes")
class TestTransactionWithoutRollback:
    store = _broken(TransactionWithoutRollback)
    test_a_failed_transaction_writes_nothing = (
        ChunkStoreContract.test_a_failed_transaction_writes_nothing
    )
