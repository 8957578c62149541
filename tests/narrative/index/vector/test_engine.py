"""Vector indexes: exact correctness, filters before top-k, persistence, restricted never stored."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from ragspine.errors import IngestError, QueryError, StoreError
from ragspine.narrative.index.vector.engine import (
    ExactVectorIndex,
    HnswVectorIndex,
    open_vector_index,
)

DIM = 16


pytestmark = pytest.mark.usefixtures("private_xdg_cache")


def reference_search(
    vectors: np.ndarray,
    keys: np.ndarray,
    levels: np.ndarray,
    query: np.ndarray,
    top_k: int,
    max_level: int,
    allowed: set[int] | None = None,
) -> list[tuple[int, float]]:
    """Plain-Python ranking: every permitted row, sorted by score desc then key asc."""
    scored = [
        (int(k), float(v @ query))
        for k, v, lvl in zip(keys, vectors, levels, strict=True)
        if lvl <= max_level and lvl < 3 and (allowed is None or int(k) in allowed)
    ]
    scored.sort(key=lambda hit: (-hit[1], hit[0]))
    return scored[:top_k]


def random_data(seed: int, n: int, dim: int = DIM) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((n, dim)).astype(np.float32)
    keys = rng.choice(10 * n, size=n, replace=False).astype(np.int64)
    levels = rng.integers(0, 4, size=n)
    return vectors, keys, levels


def assert_same_hits(got: list[tuple[int, float]], want: list[tuple[int, float]]) -> None:
    assert [k for k, _ in got] == [k for k, _ in want]
    np.testing.assert_allclose([s for _, s in got], [s for _, s in want], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("seed", range(6))
def test_exact_matches_plain_numpy_reference(tmp_path: Path, seed: int) -> None:
    vectors, keys, levels = random_data(seed, 700)
    index = ExactVectorIndex(tmp_path, model_id="m", dim=DIM)
    index.add(keys, vectors, levels)
    rng = np.random.default_rng(100 + seed)
    for max_level in (0, 1, 2, 3):
        query = rng.standard_normal(DIM).astype(np.float32)
        allowed = set(rng.choice(keys, size=200, replace=False).tolist()) if seed % 2 else None
        top_k = int(rng.integers(1, 40))
        got = index.search(query, top_k, max_level=max_level, allowed=allowed)
        want = reference_search(vectors, keys, levels, query, top_k, max_level, allowed)
        assert_same_hits(got, want)


def test_ties_break_by_key(tmp_path: Path) -> None:
    scores = np.array([0.5, 0.9, 0.5, 0.5, 0.1], dtype=np.float32)
    keys = np.array([40, 7, 30, 10, 1], dtype=np.int64)
    vectors = np.zeros((len(keys), DIM), dtype=np.float32)
    vectors[:, 0] = scores  # the query below picks out this column, so these are the scores
    query = np.zeros(DIM, dtype=np.float32)
    query[0] = 1.0
    index = ExactVectorIndex(tmp_path, model_id="m", dim=DIM)
    index.add(keys, vectors, np.zeros(len(keys), dtype=int))
    hits = index.search(query, 3, max_level=0)
    assert hits == [(7, pytest.approx(0.9)), (10, 0.5), (30, 0.5)]


def test_filter_matching_one_percent_still_fills_top_k(tmp_path: Path) -> None:
    vectors, keys, _ = random_data(1, 5000)
    index = ExactVectorIndex(tmp_path, model_id="m", dim=DIM)
    index.add(keys, vectors, np.zeros(5000, dtype=int))
    allowed = set(keys[::100].tolist())  # 50 keys, 1%
    query = np.random.default_rng(5).standard_normal(DIM).astype(np.float32)
    hits = index.search(query, 10, max_level=0, allowed=allowed)
    assert len(hits) == 10
    assert {k for k, _ in hits} <= allowed
    assert_same_hits(hits, reference_search(vectors, keys, np.zeros(5000), query, 10, 0, allowed))


class _FilterAfterTopK(ExactVectorIndex):
    """A deliberately broken index that ranks first and filters afterwards."""

    def search(self, query, top_k, *, max_level, allowed=None):  # type: ignore[no-untyped-def]
        hits = super().search(query, top_k, max_level=3)
        return [(k, s) for k, s in hits if allowed is None or k in allowed]


def test_broken_post_filtering_index_fails_the_top_k_check(tmp_path: Path) -> None:
    vectors, keys, _ = random_data(1, 5000)
    index = _FilterAfterTopK(tmp_path, model_id="m", dim=DIM)
    index.add(keys, vectors, np.zeros(5000, dtype=int))
    query = np.random.default_rng(5).standard_normal(DIM).astype(np.float32)
    assert len(index.search(query, 10, max_level=0, allowed=set(keys[::100].tolist()))) < 10


def test_levels_above_clearance_are_never_returned(tmp_path: Path) -> None:
    vectors, keys, levels = random_data(2, 400)
    index = ExactVectorIndex(tmp_path, model_id="m", dim=DIM)
    index.add(keys, vectors, levels)
    by_key = dict(zip(keys.tolist(), levels.tolist(), strict=True))
    query = vectors[0]
    for max_level in (0, 1, 2):
        hits = index.search(query, 400, max_level=max_level)
        assert hits and all(by_key[k] <= max_level for k, _ in hits)
        assert len(hits) == int((levels <= max_level).sum())


def test_add_replaces_and_remove_forgets(tmp_path: Path) -> None:
    index = ExactVectorIndex(tmp_path, model_id="m", dim=2)
    index.add([1, 2, 3], np.array([[1, 0], [0, 1], [1, 1]], dtype=np.float32), [0, 0, 0])
    index.add([2], np.array([[5, 0]], dtype=np.float32), [1])
    assert index.search(np.array([1, 0]), 1, max_level=1) == [(2, 5.0)]
    assert index.search(np.array([1, 0]), 3, max_level=0) == [(1, 1.0), (3, 1.0)]
    index.remove([1, 99])
    assert sorted(index.keys().tolist()) == [2, 3]


def test_bad_input_is_rejected(tmp_path: Path) -> None:
    index = ExactVectorIndex(tmp_path, model_id="m", dim=2)
    with pytest.raises(IngestError, match="shape"):
        index.add([1], np.zeros((1, 3)), [0])
    with pytest.raises(IngestError, match="same key twice"):
        index.add([1, 1], np.zeros((2, 2)), [0, 0])
    with pytest.raises(IngestError, match="NaN"):
        index.add([1], np.array([[np.nan, 0]]), [0])
    with pytest.raises(QueryError, match="dimensions"):
        index.search(np.zeros(3), 1, max_level=0)


def test_commit_persists_and_reopens_memory_mapped(tmp_path: Path) -> None:
    vectors, keys, levels = random_data(3, 300)
    index = ExactVectorIndex(tmp_path, model_id="m", dim=DIM)
    index.add(keys, vectors, levels)
    query = vectors[5]
    before = index.search(query, 10, max_level=2)
    assert ExactVectorIndex(tmp_path, model_id="m", dim=DIM).search(query, 10, max_level=2) == []
    index.commit(7)
    reopened = ExactVectorIndex(tmp_path, model_id="m", dim=DIM)
    assert reopened.generation == 7
    assert isinstance(reopened._vectors, np.memmap)
    assert reopened.search(query, 10, max_level=2) == before
    meta = json.loads((tmp_path / "meta.json").read_text())
    assert (meta["model_id"], meta["dim"], meta["version"], meta["generation"]) == ("m", DIM, 1, 7)
    index.remove(keys[:10])
    index.commit(8)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert len(names) == 4 and all("-8-" in n for n in names if n != "meta.json")


def test_interrupted_commit_leaves_previous_generation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vectors, keys, levels = random_data(4, 200)
    index = ExactVectorIndex(tmp_path, model_id="m", dim=DIM)
    index.add(keys[:100], vectors[:100], levels[:100])
    index.commit(1)
    before = index.search(vectors[0], 20, max_level=2)
    index.add(keys[100:], vectors[100:], levels[100:])

    def crash(src: object, dst: object) -> None:
        raise OSError("disk went away")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError):
        index.commit(2)
    monkeypatch.undo()
    reopened = ExactVectorIndex(tmp_path, model_id="m", dim=DIM)
    assert reopened.generation == 1 and len(reopened) == int((levels[:100] < 3).sum())
    assert reopened.search(vectors[0], 20, max_level=2) == before
    reopened.commit(3)  # the next commit sweeps the orphaned files
    assert all("-3-" in p.name for p in tmp_path.iterdir() if p.name != "meta.json")


def test_model_change_is_detected_with_reembed_hint(tmp_path: Path) -> None:
    index = ExactVectorIndex(tmp_path, model_id="old-model", dim=2, library="reports")
    index.add([1], np.ones((1, 2)), [0])
    index.commit(1)
    with pytest.raises(StoreError, match=r"old-model.*ragspine reembed --library reports"):
        ExactVectorIndex(tmp_path, model_id="new-model", dim=2, library="reports")
    with pytest.raises(StoreError, match="reembed"):
        open_vector_index(tmp_path, model_id="old-model", dim=3)


MARKER = np.float32(0.123456789)


def _folder_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.iterdir()))


def _add_with_restricted(index: ExactVectorIndex) -> None:
    public = np.full((2, DIM), 0.5, dtype=np.float32)
    secret = np.full((1, DIM), MARKER, dtype=np.float32)
    index.add([10, 11], public, [0, 2])
    index.add([666], secret, [3])


def test_restricted_vectors_never_reach_disk(tmp_path: Path) -> None:
    index = ExactVectorIndex(tmp_path, model_id="m", dim=DIM)
    _add_with_restricted(index)
    assert 666 not in index.keys().tolist()
    index.commit(1)
    raw = _folder_bytes(tmp_path)
    assert MARKER.tobytes() * 4 not in raw
    assert np.int64(666).tobytes() not in raw
    assert 666 not in np.load(next(tmp_path.glob("keys-*.npy")))


def test_chunk_that_becomes_restricted_is_purged(tmp_path: Path) -> None:
    index = ExactVectorIndex(tmp_path, model_id="m", dim=DIM)
    index.add([5], np.full((1, DIM), MARKER, dtype=np.float32), [1])
    index.commit(1)
    assert MARKER.tobytes() * 4 in _folder_bytes(tmp_path)
    index.add([5], np.full((1, DIM), MARKER, dtype=np.float32), [3])
    index.commit(2)
    assert MARKER.tobytes() * 4 not in _folder_bytes(tmp_path)
    assert index.search(np.ones(DIM), 5, max_level=3) == []


class _KeepsEverything(ExactVectorIndex):
    """A deliberately broken index that stores restricted vectors too."""

    def add(self, keys, vectors, levels):  # type: ignore[no-untyped-def]
        self._append(np.asarray(keys), np.asarray(vectors, np.float32), np.asarray(levels, np.int8))


def test_broken_index_storing_restricted_fails_the_disk_check(tmp_path: Path) -> None:
    index = _KeepsEverything(tmp_path, model_id="m", dim=DIM)
    _add_with_restricted(index)
    index.commit(1)
    assert MARKER.tobytes() * 4 in _folder_bytes(tmp_path)


def test_open_chooses_exact_below_threshold(tmp_path: Path) -> None:
    vectors, keys, levels = random_data(5, 50)
    index = open_vector_index(tmp_path, model_id="m", dim=DIM, ann_threshold=100)
    assert index.kind == "exact"
    index.add(keys, vectors, levels)
    index.commit(1)
    assert open_vector_index(tmp_path, model_id="m", dim=DIM, ann_threshold=100).kind == "exact"


# -- HNSW (needs the `ann` extra) --------------------------------------------------------------


@pytest.fixture()
def faiss_module() -> object:
    return pytest.importorskip(
        "faiss", reason="HNSW needs the ann extra: pip install 'ragspine[ann]'"
    )


@pytest.mark.onnx
def test_open_chooses_hnsw_above_threshold(tmp_path: Path, faiss_module: object) -> None:
    vectors, keys, levels = random_data(5, 150)
    index = open_vector_index(tmp_path, model_id="m", dim=DIM, ann_threshold=100)
    index.add(keys, vectors, levels)
    index.commit(1)
    reopened = open_vector_index(tmp_path, model_id="m", dim=DIM, ann_threshold=100)
    assert isinstance(reopened, HnswVectorIndex)
    query = vectors[3]
    assert [k for k, _ in reopened.search(query, 5, max_level=2)] == [
        k for k, _ in index.search(query, 5, max_level=2)
    ]


@pytest.mark.onnx
def test_hnsw_filtered_query_returns_full_top_k(tmp_path: Path, faiss_module: object) -> None:
    vectors, keys, levels = random_data(6, 5000, dim=32)
    index = HnswVectorIndex(tmp_path, model_id="m", dim=32, exact_below=0)
    index.add(keys, vectors, levels)
    rng = np.random.default_rng(9)
    for fraction in (0.01, 0.3, 1.0):
        allowed = set(rng.choice(keys, size=int(5000 * fraction), replace=False).tolist())
        query = rng.standard_normal(32).astype(np.float32)
        hits = index.search(query, 10, max_level=1, allowed=allowed)
        permitted = {int(k) for k, lv in zip(keys, levels, strict=True) if lv <= 1} & allowed
        assert len(hits) == min(10, len(permitted))
        assert {k for k, _ in hits} <= permitted


@pytest.mark.onnx
def test_hnsw_persists_graph_and_rebuilds_after_removal(
    tmp_path: Path, faiss_module: object
) -> None:
    vectors, keys, _ = random_data(7, 800, dim=32)
    levels = np.zeros(800, dtype=int)
    index = HnswVectorIndex(tmp_path, model_id="m", dim=32, exact_below=0)
    index.add(keys, vectors, levels)
    index.commit(1)
    reopened = HnswVectorIndex(tmp_path, model_id="m", dim=32, exact_below=0)
    assert reopened._graph is not None and reopened._graph.ntotal == 800
    reopened.remove(keys[:400])
    reopened.commit(2)
    again = HnswVectorIndex(tmp_path, model_id="m", dim=32, exact_below=0)
    assert again._graph.ntotal == 400
    hits = again.search(vectors[500], 10, max_level=0)
    assert hits[0][0] == int(keys[500])
    assert not {k for k, _ in hits} & set(keys[:400].tolist())


@pytest.mark.slow
@pytest.mark.onnx
def test_hnsw_recall_at_10_on_real_embeddings(tmp_path: Path, faiss_module: object) -> None:
    """HNSW recall@10 >= 0.95 against exact search, on 2,000 embedded SciFact abstracts."""
    pytest.importorskip("onnxruntime", reason="embeddings need the onnx extra")
    from conftest import shared_data
    from ragspine.narrative.index.embed.model import load_embedder

    corpus = shared_data("scifact", "corpus.jsonl")
    queries = shared_data("scifact", "queries.jsonl")
    with corpus.open(encoding="utf-8") as handle:
        docs = [json.loads(line) for _, line in zip(range(2000), handle, strict=False)]
    with queries.open(encoding="utf-8") as handle:
        claims = [json.loads(line)["text"] for _, line in zip(range(200), handle, strict=False)]
    embedder = load_embedder()
    doc_vectors = embedder.embed([f"{d['title']}\n{d['text']}" for d in docs], batch_size=32)
    query_vectors = embedder.embed(claims)
    keys = np.arange(len(docs), dtype=np.int64)
    levels = np.zeros(len(docs), dtype=int)
    exact = ExactVectorIndex(tmp_path / "exact", model_id=embedder.model_id, dim=embedder.dim)
    ann = HnswVectorIndex(
        tmp_path / "ann", model_id=embedder.model_id, dim=embedder.dim, exact_below=0
    )
    exact.add(keys, doc_vectors, levels)
    ann.add(keys, doc_vectors, levels)
    overlap = 0
    for q in query_vectors:
        truth = {k for k, _ in exact.search(q, 10, max_level=0)}
        overlap += len(truth & {k for k, _ in ann.search(q, 10, max_level=0)})
    recall = overlap / (10 * len(query_vectors))
    print(f"HNSW recall@10 on 2,000 SciFact abstracts: {recall:.3f}")
    assert recall >= 0.95


@pytest.mark.onnx
def test_hnsw_applies_the_filter_inside_the_graph_search(
    tmp_path: Path, faiss_module: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    vectors, keys, levels = random_data(8, 3000, dim=32)
    index = HnswVectorIndex(tmp_path, model_id="m", dim=32, exact_below=0)
    index.add(keys, vectors, np.minimum(levels, 1))  # an asker at level 1 sees every vector

    def no_fallback(*args: object) -> list[tuple[int, float]]:
        raise AssertionError("the graph search should have answered on its own")

    monkeypatch.setattr(index, "_exact", no_fallback)
    allowed = set(keys[::2].tolist())
    rng = np.random.default_rng(3)
    for _ in range(20):
        query = rng.standard_normal(32).astype(np.float32)
        hits = index.search(query, 10, max_level=1, allowed=allowed)
        assert len(hits) == 10 and {k for k, _ in hits} <= allowed


@pytest.mark.onnx
def test_hnsw_answers_exactly_when_the_asker_may_not_see_every_vector(
    tmp_path: Path, faiss_module: object
) -> None:
    """The graph's paths run through hidden vectors, so an approximate answer would depend on
    them: a query that may not see every vector gets the exact answer over what it may see."""
    vectors, keys, levels = random_data(8, 3000, dim=32)
    index = HnswVectorIndex(  # a coarse graph, so approximate answers differ from exact ones
        tmp_path / "hnsw", model_id="m", dim=32, exact_below=0, m=4, ef_construction=16
    )
    index.ef_search = 10
    index.add(keys, vectors, levels)
    visible = levels <= 1
    exact = ExactVectorIndex(tmp_path / "exact", model_id="m", dim=32)
    exact.add(keys[visible], vectors[visible], levels[visible])
    rng = np.random.default_rng(3)
    for _ in range(20):
        query = rng.standard_normal(32).astype(np.float32)
        assert_same_hits(index.search(query, 10, max_level=1), exact.search(query, 10, max_level=1))


def test_added_vectors_wait_on_disk_and_commit_what_np_save_writes(tmp_path: Path) -> None:
    """Vectors added slice by slice are searchable before the commit, and the committed file
    is byte for byte the ``np.save`` of all of them (so existing indexes read the same)."""
    import io

    vectors, keys, levels = random_data(11, 900)
    levels = np.minimum(levels, 2)
    index = ExactVectorIndex(tmp_path, model_id="m", dim=DIM)
    index.add(keys[:300], vectors[:300], levels[:300])
    index.commit(1)
    for start in range(300, 900, 200):  # on top of a committed generation
        index.add(
            keys[start : start + 200], vectors[start : start + 200], levels[start : start + 200]
        )
        assert_same_hits(
            index.search(vectors[0], 10, max_level=2),
            reference_search(
                vectors[: start + 200],
                keys[: start + 200],
                levels[: start + 200],
                vectors[0],
                10,
                2,
            ),
        )
    assert any(p.name.startswith(".staging-") for p in tmp_path.iterdir())
    index.commit(2)
    expected = io.BytesIO()
    np.save(expected, vectors)
    meta = json.loads((tmp_path / "meta.json").read_text())
    assert (tmp_path / meta["files"]["vectors"]).read_bytes() == expected.getvalue()
    assert not any(p.name.startswith(".staging-") for p in tmp_path.iterdir())
    reopened = ExactVectorIndex(tmp_path, model_id="m", dim=DIM)
    assert reopened.search(vectors[5], 10, max_level=2) == index.search(vectors[5], 10, max_level=2)


def test_adding_vectors_does_not_hold_them_in_memory(tmp_path: Path) -> None:
    """30 MB of vectors added 1.5 MB at a time: the memory allocated at the peak stays a few
    slices' worth (an index growing an in-memory matrix needs all of it, and more)."""
    import tracemalloc

    rng = np.random.default_rng(3)
    slices = [rng.standard_normal((1000, 384)).astype(np.float32) for _ in range(3)]
    index = ExactVectorIndex(tmp_path, model_id="m", dim=384)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        for number in range(20):
            index.add(np.arange(number * 1000, (number + 1) * 1000), slices[number % 3], [0] * 1000)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert len(index) == 20_000
    assert peak < 8_000_000, f"{peak / 1e6:.1f} MB allocated while adding 30.7 MB of vectors"
    index.commit(1)
    assert index.search(slices[1][5], 1, max_level=0)[0][0] == 1005


def test_a_staging_file_left_by_a_stopped_writer_is_never_read_and_goes_at_the_next_commit(
    tmp_path: Path,
) -> None:
    vectors, keys, levels = random_data(12, 200)
    levels = np.minimum(levels, 2)
    index = ExactVectorIndex(tmp_path, model_id="m", dim=DIM)
    index.add(keys[:100], vectors[:100], levels[:100])
    index.commit(1)
    before = index.search(vectors[0], 20, max_level=2)
    stopped = ExactVectorIndex(tmp_path, model_id="m", dim=DIM)
    stopped.add(keys[100:], vectors[100:], levels[100:])  # the writer stops here
    staged = [p for p in tmp_path.iterdir() if p.name.startswith(".staging-")]
    assert len(staged) == 1
    reader = ExactVectorIndex(tmp_path, model_id="m", dim=DIM)
    assert reader.generation == 1 and reader.search(vectors[0], 20, max_level=2) == before
    reader.add(keys[100:110], vectors[100:110], levels[100:110])
    reader.commit(2)
    assert not any(p.name.startswith(".staging-") for p in tmp_path.iterdir())
