"""Per-library vector indexes kept in a folder: exact (numpy, memory-mapped) and HNSW (faiss).

A folder holds ``meta.json`` (format version, model id, dimension, generation and the names of
the data files) and, per committed generation, ``vectors-*.npy`` (float32, one row per key),
``keys-*.npy`` (int64) and ``levels-*.npy`` (int8 sensitivity), plus ``hnsw-*.faiss`` for the
ANN index. Replacing ``meta.json`` is the commit point, so a reader sees either the old or the
new generation, never a mix. Restricted vectors (level 3) are never stored.

Vectors added to an index wait on disk until it commits, in a staging file of its own
(``.staging-*.f32``, raw float32 rows, never named by ``meta.json``; one left by a stopped
writer is deleted at the next commit): a writer's memory does not grow with the vectors it
adds.

Scores are inner products; with the L2-normalised rows an :class:`Embedder` returns, they are
cosine similarities. Results sort by score descending, then key ascending.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ragspine.errors import IngestError, QueryError, StoreError
from ragspine.files import fsync_dir, write_atomically, write_text_atomically
from ragspine.narrative.index.lexical import bm25
from ragspine.security import Sensitivity

FORMAT_NAME = "ragspine-vector-index"
FORMAT_VERSION = 1
META_FILE = "meta.json"
RESTRICTED = int(Sensitivity.RESTRICTED)
STAGING_PREFIX = ".staging-"
COPY_ROWS = 4096
"""Rows copied at a time from an in-memory matrix to the staging file."""
COPY_BYTES = 1 << 22
"""Bytes copied at a time between a committed file, the staging file and the next commit."""
DEFAULT_ANN_THRESHOLD = 50_000

ScoredKey = tuple[int, float]
KeySet = Collection[int] | np.ndarray


class VectorIndex(Protocol):
    """The seam the retriever uses; both index kinds implement it."""

    kind: str
    model_id: str
    dim: int
    generation: int

    def __len__(self) -> int: ...

    def add(self, keys: Sequence[int] | np.ndarray, vectors: np.ndarray, levels: Any) -> None:
        """Insert or replace vectors; level-3 (restricted) items are removed, never stored."""
        ...

    def remove(self, keys: KeySet) -> None:
        """Forget ``keys`` (unknown keys are ignored)."""
        ...

    def commit(self, generation: int) -> None:
        """Persist the current state atomically under ``generation``."""
        ...

    def search(
        self, query: np.ndarray, top_k: int, *, max_level: int, allowed: KeySet | None = None
    ) -> list[ScoredKey]:
        """The ``top_k`` best keys with level <= ``max_level`` and, if given, in ``allowed``."""
        ...


def _best_hits(scores: np.ndarray, keys: np.ndarray, top_k: int) -> list[ScoredKey]:
    """The ``top_k`` (key, score) pairs, by score descending then key ascending (ties by key)."""
    chosen = bm25.top_k(scores, keys, top_k)
    return [(int(k), float(s)) for k, s in zip(keys[chosen], scores[chosen], strict=True)]


def _as_key_array(keys: KeySet) -> np.ndarray:
    if isinstance(keys, np.ndarray):
        return keys.astype(np.int64, copy=False).ravel()
    return np.fromiter((int(k) for k in keys), dtype=np.int64, count=len(keys))


def _save_npy(path: Path, array: np.ndarray) -> None:
    write_atomically(
        path, lambda out: np.save(out, np.ascontiguousarray(array), allow_pickle=False)
    )


def read_meta(folder: Path) -> dict[str, Any] | None:
    """The committed ``meta.json`` of ``folder``, or None when nothing was committed yet."""
    path = Path(folder) / META_FILE
    if not path.exists():
        return None
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise StoreError(f"vector index metadata {path} is unreadable: {exc}") from exc
    if not isinstance(meta, dict) or meta.get("format") != FORMAT_NAME:
        raise StoreError(f"{path} is not a RAGSpine vector index")
    return meta


def _reembed_hint(library: str | None) -> str:
    target = f"--library {library}" if library else "--library LIBRARY"
    return f"re-embed it with `ragspine reembed {target}`"


class ExactVectorIndex:
    """Brute-force inner-product search over a memory-mapped float32 matrix.

    Filters (``max_level``, ``allowed``) are applied before ranking, so a query returns a full
    ``top_k`` whenever that many permitted keys exist.
    """

    kind = "exact"

    def __init__(
        self, folder: str | Path, *, model_id: str, dim: int, library: str | None = None
    ) -> None:
        if dim < 1:
            raise StoreError(f"vector dimension must be positive, got {dim}")
        self.folder = Path(folder)
        self.model_id = model_id
        self.dim = dim
        self.library = library
        self.generation = 0
        self._meta: dict[str, Any] = {}
        self._vectors: np.ndarray = np.zeros((0, dim), dtype=np.float32)
        self._keys: np.ndarray = np.zeros(0, dtype=np.int64)
        self._levels: np.ndarray = np.zeros(0, dtype=np.int8)
        self._sorted: tuple[np.ndarray, np.ndarray] | None = None
        self._staging: Path | None = None  # holds exactly the rows of _vectors, when set
        self._mapped = False  # _vectors is the whole committed vectors file, memory-mapped
        self._load()

    # -- persistence -------------------------------------------------------------------------

    def _load(self) -> None:
        # A writer may commit (and delete the files we were about to open) meanwhile: retry.
        for _attempt in range(2):
            meta = read_meta(self.folder)
            if meta is None:
                return
            try:
                self._load_generation(meta)
                return
            except FileNotFoundError:
                continue
        meta = read_meta(self.folder)
        if meta is not None:
            self._load_generation(meta, missing_is_damage=True)

    def _load_generation(self, meta: dict[str, Any], *, missing_is_damage: bool = False) -> None:
        where = self.folder
        if meta.get("version") != FORMAT_VERSION:
            raise StoreError(
                f"vector index {where} has format version {meta.get('version')}, this RAGSpine "
                f"reads version {FORMAT_VERSION}: {_reembed_hint(self.library)}"
            )
        if meta.get("model_id") != self.model_id:
            raise StoreError(
                f"vector index {where} was built with embedding model {meta.get('model_id')!r} "
                f"but the configured model is {self.model_id!r}: {_reembed_hint(self.library)}"
            )
        if meta.get("dim") != self.dim:
            raise StoreError(
                f"vector index {where} holds {meta.get('dim')}-d vectors, the model gives "
                f"{self.dim}-d: {_reembed_hint(self.library)}"
            )
        files = meta["files"]
        try:
            vectors = np.load(where / files["vectors"], mmap_mode="r", allow_pickle=False)
            keys = np.load(where / files["keys"], allow_pickle=False)
            levels = np.load(where / files["levels"], allow_pickle=False)
        except FileNotFoundError:
            if not missing_is_damage:
                raise
            raise StoreError(
                f"vector index {where} lost a data file: {_reembed_hint(self.library)}"
            ) from None
        except (OSError, ValueError, KeyError) as exc:
            raise StoreError(
                f"vector index {where} is damaged ({exc}): {_reembed_hint(self.library)}"
            ) from exc
        if vectors.shape != (len(keys), self.dim) or len(levels) != len(keys):
            raise StoreError(
                f"vector index {where} has inconsistent files: {_reembed_hint(self.library)}"
            )
        self._meta = meta
        self._vectors, self._keys, self._levels = vectors, keys, levels
        self._mapped = isinstance(vectors, np.memmap)
        self.generation = int(meta["generation"])
        self._sorted = None

    def commit(self, generation: int) -> None:
        """Write the current state as ``generation``; ``meta.json`` is replaced last."""
        self.folder.mkdir(parents=True, exist_ok=True)
        tag = f"{int(generation)}-{uuid.uuid4().hex[:8]}"
        files = {
            "vectors": f"vectors-{tag}.npy",
            "keys": f"keys-{tag}.npy",
            "levels": f"levels-{tag}.npy",
        }
        staging = self._staging
        if staging is not None:
            shape = (len(self._keys), self.dim)
            write_atomically(
                self.folder / files["vectors"], lambda out: _write_staged(out, staging, shape)
            )
        else:
            _save_npy(self.folder / files["vectors"], self._vectors.astype(np.float32, copy=False))
        _save_npy(self.folder / files["keys"], self._keys)
        _save_npy(self.folder / files["levels"], self._levels)
        files.update(self._write_extra_files(tag))
        meta = {
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "kind": self.kind,
            "model_id": self.model_id,
            "dim": self.dim,
            "generation": int(generation),
            "count": len(self._keys),
            "files": files,
        }
        write_text_atomically(self.folder / META_FILE, json.dumps(meta, indent=1, sort_keys=True))
        fsync_dir(self.folder)
        self._meta = meta
        self.generation = int(generation)
        self._staging = None  # its rows are in the committed file now
        self._remove_unreferenced(set(files.values()))
        self._reopen_committed()

    def _write_extra_files(self, tag: str) -> dict[str, str]:
        return {}

    def _reopen_committed(self) -> None:
        # Swap the in-memory matrix for a memory map of the file just written.
        self._vectors = np.load(
            self.folder / self._meta["files"]["vectors"], mmap_mode="r", allow_pickle=False
        )
        self._mapped = isinstance(self._vectors, np.memmap)

    def _remove_unreferenced(self, keep: set[str]) -> None:
        for path in self.folder.iterdir():
            stale_data = path.suffix in {".npy", ".faiss"} and path.name not in keep
            stale_meta = path.name.startswith(f".{META_FILE}.") and path.suffix == ".tmp"
            if stale_data or stale_meta or path.name.startswith(STAGING_PREFIX):
                path.unlink(missing_ok=True)

    # -- mutation ----------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._keys)

    def keys(self) -> np.ndarray:
        """The stored keys (int64), in row order."""
        return self._keys.copy()

    def add(self, keys: Sequence[int] | np.ndarray, vectors: np.ndarray, levels: Any) -> None:
        """Insert or replace ``keys``; restricted ones are removed and never stored."""
        key_arr = _as_key_array(keys)
        level_arr = np.asarray(levels, dtype=np.int64).ravel()
        matrix = np.asarray(vectors, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[1] != self.dim:
            raise IngestError(f"vectors must have shape (n, {self.dim}), got {matrix.shape}")
        if not len(key_arr) == len(level_arr) == matrix.shape[0]:
            raise IngestError(
                f"add() got {len(key_arr)} keys, {matrix.shape[0]} vectors and "
                f"{len(level_arr)} levels: pass one of each per item"
            )
        if len(np.unique(key_arr)) != len(key_arr):
            raise IngestError("add() got the same key twice in one call: pass each key once")
        if level_arr.size and (level_arr.min() < 0 or level_arr.max() > RESTRICTED):
            raise IngestError(f"sensitivity levels must be 0..{RESTRICTED}")
        if not np.isfinite(matrix).all():
            raise IngestError("vectors contain NaN or infinity: re-embed the affected chunks")
        self.remove(key_arr)  # replaces old rows, and purges keys that became restricted
        keep = level_arr < RESTRICTED
        if not keep.any():
            return
        self._append(key_arr[keep], matrix[keep], level_arr[keep].astype(np.int8))

    def _append(self, keys: np.ndarray, vectors: np.ndarray, levels: np.ndarray) -> None:
        self._stage(np.ascontiguousarray(vectors, dtype=np.float32))
        self._keys = np.concatenate([self._keys, keys])
        self._levels = np.concatenate([self._levels, levels])
        self._sorted = None

    def _stage(self, vectors: np.ndarray) -> None:
        """Append ``vectors`` to the staging file (made first with the rows held so far) and
        map it as the matrix: added rows wait on disk, not in memory."""
        staging = self._staging
        if staging is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            staging = self.folder / f"{STAGING_PREFIX}{uuid.uuid4().hex}.f32"
            with staging.open("wb") as out:
                self._copy_rows(out)
            self._staging = staging
        with staging.open("ab") as out:
            vectors.tofile(out)
        rows = len(self._keys) + len(vectors)
        self._vectors = np.memmap(staging, dtype=np.float32, mode="r", shape=(rows, self.dim))
        self._mapped = False

    def _copy_rows(self, out: Any) -> None:
        """Write the rows of the matrix to ``out`` (raw float32), a few thousand at a time;
        from the committed file itself when the matrix is its memory map, so that its pages
        are read, never mapped into this process."""
        matrix = self._vectors
        if self._mapped and isinstance(matrix, np.memmap) and len(matrix):
            with Path(str(matrix.filename)).open("rb") as source:
                source.seek(int(matrix.offset))
                _copy_bytes(source, out, matrix.size * matrix.itemsize)
            return
        for start in range(0, len(matrix), COPY_ROWS):
            block = np.asarray(matrix[start : start + COPY_ROWS], dtype=np.float32)
            np.ascontiguousarray(block).tofile(out)

    def _drop_staging(self) -> None:
        if self._staging is not None:
            self._staging.unlink(missing_ok=True)
            self._staging = None

    def remove(self, keys: KeySet) -> None:
        """Forget ``keys``; unknown keys are ignored."""
        rows = self._rows_of(_as_key_array(keys))
        if len(rows) == 0:
            return
        keep = np.ones(len(self._keys), dtype=bool)
        keep[rows] = False
        if len(rows) == len(self._keys):
            self._vectors = np.zeros((0, self.dim), dtype=np.float32)  # nothing read
        else:
            self._vectors = np.asarray(self._vectors)[keep]
        self._mapped = False
        self._drop_staging()  # the rows kept are in memory now
        self._keys = self._keys[keep]
        self._levels = self._levels[keep]
        self._sorted = None
        self._rows_removed()

    def _rows_removed(self) -> None:
        """Hook for subclasses whose auxiliary structures use row positions."""

    def _rows_of(self, keys: np.ndarray) -> np.ndarray:
        """Row positions of those ``keys`` that are stored (sorted, unique)."""
        if len(keys) == 0 or len(self._keys) == 0:
            return np.zeros(0, dtype=np.int64)
        sorted_index = self._sorted
        if sorted_index is None:  # built whole, then stored: searches of a shared index may race
            order = np.argsort(self._keys, kind="stable")
            sorted_index = self._sorted = (self._keys[order], order)
        sorted_keys, order = sorted_index
        pos = np.searchsorted(sorted_keys, keys)
        pos = np.minimum(pos, len(sorted_keys) - 1)
        found = sorted_keys[pos] == keys
        return np.unique(order[pos[found]])

    # -- search ------------------------------------------------------------------------------

    def _check_query(self, query: np.ndarray, top_k: int) -> np.ndarray:
        q = np.asarray(query, dtype=np.float32).ravel()
        if q.shape[0] != self.dim:
            raise QueryError(f"query vector has {q.shape[0]} dimensions, the index {self.dim}")
        if top_k < 1:
            raise QueryError(f"top_k must be at least 1, got {top_k}")
        return q

    def candidate_rows(self, max_level: int, allowed: KeySet | None) -> np.ndarray | None:
        """Rows a query may see, or None for every row."""
        max_level = min(int(max_level), RESTRICTED - 1)
        if allowed is None:
            if len(self._levels) == 0 or int(self._levels.max()) <= max_level:
                return None
            return np.flatnonzero(self._levels <= max_level)
        rows = self._rows_of(_as_key_array(allowed))
        return rows[self._levels[rows] <= max_level]

    def search(
        self, query: np.ndarray, top_k: int, *, max_level: int, allowed: KeySet | None = None
    ) -> list[ScoredKey]:
        """Exact top-k among keys with level <= ``max_level`` (and in ``allowed`` if given)."""
        q = self._check_query(query, top_k)
        return self._exact(q, top_k, self.candidate_rows(max_level, allowed))

    def _exact(self, q: np.ndarray, top_k: int, rows: np.ndarray | None) -> list[ScoredKey]:
        if rows is None:
            return _best_hits(self._vectors @ q, self._keys, top_k)
        if len(rows) == 0:
            return []
        if len(rows) * 3 > len(self._keys):
            scores = (self._vectors @ q)[rows]  # one pass beats a large gather
        else:
            scores = self._vectors[rows] @ q
        return _best_hits(scores, self._keys[rows], top_k)


class HnswVectorIndex(ExactVectorIndex):
    """Exact storage plus a faiss HNSW graph over its rows, for large libraries.

    Filtered queries run the graph search restricted to permitted rows (a faiss ``IDSelector``);
    when few rows are permitted, or the graph finds fewer than ``top_k`` of them, the exact
    search answers instead, so a filtered query still returns a full top-k. A query that may not
    see every stored vector is answered exactly too: the graph's paths run through every vector,
    so which neighbours it finds would depend on vectors the asker may not see (contract 11).
    Appends extend the graph; any removal rebuilds it at the next search or commit, so no removed
    vector lingers on disk.
    """

    kind = "hnsw"

    def __init__(
        self,
        folder: str | Path,
        *,
        model_id: str,
        dim: int,
        library: str | None = None,
        m: int = 32,
        ef_construction: int = 80,
        ef_search: int = 96,
        exact_below: int = 20_000,
    ) -> None:
        self._faiss = _import_faiss()
        self.m = m
        self.ef_construction = ef_construction
        self.ef_search = ef_search
        self.exact_below = exact_below
        self._graph: Any = None
        self._graph_lock = threading.Lock()
        super().__init__(folder, model_id=model_id, dim=dim, library=library)
        name = self._meta.get("files", {}).get("hnsw")
        if name:
            try:
                graph = self._faiss.read_index(str(self.folder / name))
            except RuntimeError as exc:
                raise StoreError(
                    f"HNSW graph {self.folder / name} is damaged ({exc}): {_reembed_hint(library)}"
                ) from exc
            if graph.ntotal == len(self._keys):
                self._graph = graph

    def _build_graph(self) -> Any:
        # Searches of a shared index may get here together: one extends the graph at a time.
        with self._graph_lock:
            if self._graph is None:
                graph = self._faiss.IndexHNSWFlat(
                    self.dim, self.m, self._faiss.METRIC_INNER_PRODUCT
                )
                graph.hnsw.efConstruction = self.ef_construction
                self._graph = graph
            missing = len(self._keys) - self._graph.ntotal
            if missing > 0:
                tail = np.ascontiguousarray(self._vectors[self._graph.ntotal :], dtype=np.float32)
                self._graph.add(tail)
            return self._graph

    def _rows_removed(self) -> None:
        self._graph = None

    def _hides_some(self, max_level: int) -> bool:
        """Whether a query at ``max_level`` may not see some stored vector."""
        return bool(len(self._levels)) and int(self._levels.max()) > int(max_level)

    def _write_extra_files(self, tag: str) -> dict[str, str]:
        name = f"hnsw-{tag}.faiss"
        self._faiss.write_index(self._build_graph(), str(self.folder / name))
        return {"hnsw": name}

    def search(
        self, query: np.ndarray, top_k: int, *, max_level: int, allowed: KeySet | None = None
    ) -> list[ScoredKey]:
        """Approximate top-k among permitted keys; exact when the permitted set is small."""
        q = self._check_query(query, top_k)
        rows = self.candidate_rows(max_level, allowed)
        permitted = len(self._keys) if rows is None else len(rows)
        if permitted <= max(self.exact_below, top_k) or self._hides_some(max_level):
            return self._exact(q, top_k, rows)
        graph = self._build_graph()
        fraction = permitted / len(self._keys)
        ef = min(max(self.ef_search, 2 * top_k, int(self.ef_search / fraction)), 1024)
        kwargs: dict[str, Any] = {"efSearch": ef}
        bitmap = None
        if rows is not None:
            mask = np.zeros(len(self._keys), dtype=bool)
            mask[rows] = True
            bitmap = np.packbits(mask, bitorder="little")
            kwargs["sel"] = self._faiss.IDSelectorBitmap(
                len(self._keys), self._faiss.swig_ptr(bitmap)
            )
        params = self._faiss.SearchParametersHNSW(**kwargs)
        scores, labels = graph.search(q[None, :], top_k, params=params)
        del bitmap  # the selector points into it until the search returns
        found = labels[0] >= 0
        if int(found.sum()) < min(top_k, permitted):
            return self._exact(q, top_k, rows)
        hit_rows = labels[0][found]
        return _best_hits(scores[0][found], self._keys[hit_rows], top_k)


def _copy_bytes(source: Any, out: Any, count: int) -> None:
    """Copy ``count`` bytes from ``source`` to ``out`` a block at a time."""
    while count > 0:
        data = source.read(min(COPY_BYTES, count))
        if not data:
            raise StoreError(f"vector data ended {count} bytes early: the file is damaged")
        out.write(data)
        count -= len(data)


def _write_staged(out: Any, staging: Path, shape: tuple[int, int]) -> None:
    """Write the ``.npy`` file of the staged float32 rows: the header ``np.save`` writes,
    then the rows, copied a block at a time."""
    header: dict[str, Any] = {
        "descr": np.lib.format.dtype_to_descr(np.dtype(np.float32)),
        "fortran_order": False,
        "shape": shape,
    }
    np.lib.format.write_array_header_1_0(out, header)
    with staging.open("rb") as source:
        _copy_bytes(source, out, shape[0] * shape[1] * 4)


def _import_faiss() -> Any:
    try:
        import faiss
    except ImportError as exc:
        from ragspine.errors import MissingExtraError

        raise MissingExtraError("approximate vector search", "ann") from exc
    return faiss


def ann_available() -> bool:
    """Whether faiss (the ``ann`` extra) is importable, without importing it."""
    from importlib.util import find_spec

    return find_spec("faiss") is not None


def open_vector_index(
    folder: str | Path,
    *,
    model_id: str,
    dim: int,
    library: str | None = None,
    ann_threshold: int = DEFAULT_ANN_THRESHOLD,
) -> ExactVectorIndex:
    """The index for ``folder``: HNSW when it holds ``ann_threshold`` vectors or more and the
    ``ann`` extra is installed, exact otherwise.

    Raises :class:`StoreError` when the folder was built with another model or dimension.
    """
    meta = read_meta(Path(folder))
    count = int(meta.get("count", 0)) if meta else 0
    if count >= ann_threshold and ann_available():
        return HnswVectorIndex(folder, model_id=model_id, dim=dim, library=library)
    return ExactVectorIndex(folder, model_id=model_id, dim=dim, library=library)
