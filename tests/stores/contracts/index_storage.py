"""The contract of :class:`~ragspine.stores.indexes.IndexStorage`, written once for every backend.

A backend's test module subclasses :class:`IndexStorageContract` (grouped by behaviour:
:class:`IndexLayoutContract`, :class:`IndexDropContract`) and provides one fixture,
``storage``, returning an empty storage (a PostgreSQL backend that keeps index files on local
disk reuses :class:`~ragspine.stores.indexes.IndexFolders` and this suite as is). Expected results
come from what the test itself created, never from a fixed layout.
"""

from __future__ import annotations

from ragspine.stores.indexes import IndexStorage

LIBRARIES = ("alpha", "beta")
NAMES = ("lexical-text", "vectors")


def fill(storage: IndexStorage) -> None:
    """Create every (library, index) folder with one data file naming its owner."""
    for library in LIBRARIES:
        for name in NAMES:
            folder = storage.folder(library, name)
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "data").write_text(f"{library}/{name}")


def survivors(storage: IndexStorage) -> set[tuple[str, str]]:
    """The (library, index) pairs whose data file is still there and still their own."""
    found = set()
    for library in LIBRARIES:
        for name in NAMES:
            data = storage.folder(library, name) / "data"
            if data.is_file() and data.read_text() == f"{library}/{name}":
                found.add((library, name))
    return found


ALL = {(library, name) for library in LIBRARIES for name in NAMES}


class IndexLayoutContract:
    """Every (library, index) pair has a folder of its own; asking writes nothing."""

    def test_asking_where_writes_nothing(self, storage: IndexStorage) -> None:
        folder = storage.folder("alpha", "vectors")
        shared = storage.shared_file("embedding-cache.sqlite")
        assert not folder.exists() and not shared.exists()

    def test_every_library_and_index_has_its_own_folder(self, storage: IndexStorage) -> None:
        folders = [storage.folder(lib, name) for lib in LIBRARIES for name in NAMES]
        assert len(set(folders)) == len(folders)
        for a in folders:  # no index folder lies inside another one
            assert not any(a != b and b in a.parents for b in folders)
        fill(storage)
        assert survivors(storage) == ALL

    def test_a_shared_file_is_in_no_index_folder(self, storage: IndexStorage) -> None:
        shared = storage.shared_file("embedding-cache.sqlite")
        for library in LIBRARIES:
            for name in NAMES:
                assert storage.folder(library, name) not in shared.parents


class IndexDropContract:
    """Dropping removes exactly what was named."""

    def test_dropping_one_index_keeps_every_other(self, storage: IndexStorage) -> None:
        fill(storage)
        storage.drop("alpha", "vectors")
        assert survivors(storage) == ALL - {("alpha", "vectors")}

    def test_dropping_a_library_keeps_the_others(self, storage: IndexStorage) -> None:
        fill(storage)
        shared = storage.shared_file("embedding-cache.sqlite")
        shared.parent.mkdir(parents=True, exist_ok=True)
        shared.write_text("cache")
        storage.drop("alpha")
        assert survivors(storage) == {("beta", name) for name in NAMES}
        assert shared.read_text() == "cache"

    def test_dropping_what_is_missing_is_not_an_error(self, storage: IndexStorage) -> None:
        storage.drop("alpha")
        storage.drop("nothing", "vectors")
        fill(storage)
        storage.drop("alpha", "no-such-index")
        assert survivors(storage) == ALL


class IndexStorageContract(IndexLayoutContract, IndexDropContract):
    """The whole contract: what a backend's test class subclasses."""
