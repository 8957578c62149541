"""Index persistence in folders of the file system: the contract, and broken storages that
must fail it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ragspine.stores.indexes import IndexFolders, index_storage
from stores.contracts.index_storage import (
    IndexDropContract,
    IndexLayoutContract,
    IndexStorageContract,
)


class TestIndexFolders(IndexStorageContract):
    @pytest.fixture
    def storage(self, tmp_path: Path) -> IndexFolders:
        return IndexFolders(tmp_path / "indexes")


class _DropsTooMuch(IndexFolders):
    """Broken: dropping one index removes the library's whole folder."""

    def drop(self, library_id: str, name: str | None = None) -> None:
        shutil.rmtree(self.root / library_id, ignore_errors=True)


class _SharedFolders(IndexFolders):
    """Broken: every library writes into the same folder."""

    def folder(self, library_id: str, name: str) -> Path:
        return self.root / name


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="drops the whole library")
class TestContractCatchesADropOfTooMuch(IndexDropContract):
    @pytest.fixture
    def storage(self, tmp_path: Path) -> IndexFolders:
        return _DropsTooMuch(tmp_path / "indexes")

    # dropping a whole library or nothing at all is right even for this store
    test_dropping_a_library_keeps_the_others = None  # type: ignore[assignment]
    test_dropping_what_is_missing_is_not_an_error = None  # type: ignore[assignment]


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="libraries share one folder")
class TestContractCatchesSharedFolders(IndexLayoutContract):
    @pytest.fixture
    def storage(self, tmp_path: Path) -> IndexFolders:
        return _SharedFolders(tmp_path / "indexes")

    test_asking_where_writes_nothing = None  # type: ignore[assignment]
    test_a_shared_file_is_in_no_index_folder = None  # type: ignore[assignment]


def test_index_folders_live_under_the_root_per_library(tmp_path: Path) -> None:
    storage = IndexFolders(tmp_path / "indexes")
    assert storage.folder("lib", "vectors") == tmp_path / "indexes" / "lib" / "vectors"
    assert storage.shared_file("cache.sqlite") == tmp_path / "indexes" / "cache.sqlite"


def test_a_path_means_folders_under_it(tmp_path: Path) -> None:
    storage = index_storage(tmp_path)
    assert isinstance(storage, IndexFolders) and storage.root == tmp_path
    assert index_storage(storage) is storage
