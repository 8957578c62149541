"""Index persistence: where a library's index folders live, and dropping them."""

from __future__ import annotations

from pathlib import Path

from ragspine.stores.indexes import IndexFolders, IndexStorage, index_storage


def test_index_folders_live_under_the_root_per_library(tmp_path: Path) -> None:
    storage: IndexStorage = IndexFolders(tmp_path / "indexes")
    assert storage.folder("lib", "vectors") == tmp_path / "indexes" / "lib" / "vectors"
    assert storage.shared_file("cache.sqlite") == tmp_path / "indexes" / "cache.sqlite"
    assert not (tmp_path / "indexes").exists()  # asking where writes nothing


def test_drop_one_index_or_all_of_a_library(tmp_path: Path) -> None:
    storage = IndexFolders(tmp_path)
    names = ("lexical-text", "vectors")
    for library in ("a", "b"):
        for name in names:
            storage.folder(library, name).mkdir(parents=True)
            (storage.folder(library, name) / "data").write_text("x")
    storage.drop("a", "vectors")
    assert storage.folder("a", "lexical-text").exists()
    assert not storage.folder("a", "vectors").exists()
    storage.drop("a")
    assert not (tmp_path / "a").exists()
    assert all(storage.folder("b", name).exists() for name in names)
    storage.drop("a")  # already gone: not an error
    storage.drop("nothing", "vectors")


def test_a_path_means_folders_under_it(tmp_path: Path) -> None:
    storage = index_storage(tmp_path)
    assert isinstance(storage, IndexFolders) and storage.root == tmp_path
    assert index_storage(storage) is storage
