"""Lexical first, vectors after: an ingest or a re-embed stopped while embedding keeps what it
embedded, leaves the library searchable lexically, refuses stale vector search, and the next
run embeds only the rest and ends with the same vector index as an uninterrupted one."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest
from files import write_beir_corpus
from hashing_embedder import HashingEmbedder

from ragspine.errors import ConfigError
from ragspine.narrative.index.embed.cache import CACHE_SLICE
from ragspine.workspace import Workspace

DOCS = 150  # more than two cache slices of chunks


class StopsAfter(HashingEmbedder):
    """Raises ``KeyboardInterrupt`` (Ctrl-C) once it has embedded ``limit`` texts."""

    def __init__(self, limit: int, **options: object) -> None:
        super().__init__(**options)  # type: ignore[arg-type]
        self.limit = limit

    def embed(
        self,
        texts: Sequence[str],
        *,
        batch_size: int = 32,
        progress: Callable[[int, int], None] | None = None,
    ) -> np.ndarray:
        if len(self.calls) >= self.limit:
            raise KeyboardInterrupt
        return super().embed(texts, batch_size=batch_size, progress=progress)


def _corpus(tmp_path: Path) -> Path:
    docs = [
        {"_id": f"d{i:03d}", "title": f"Memo {i}", "text": f"Quarterly note {i} on topic {i % 7}."}
        for i in range(DOCS)
    ]
    return write_beir_corpus(tmp_path / "corpus", docs)


def _vectors(ws: Workspace) -> dict[int, bytes]:
    index = ws.vector_indexes.get("m")
    hits = index.search(np.ones(index.dim, dtype=np.float32), DOCS, max_level=2)
    return {key: round(score, 5).hex().encode() for key, score in hits}


def test_an_ingest_stopped_while_embedding_resumes_where_it_stopped(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path)
    with Workspace.open(tmp_path / "whole") as ws:
        ws.vector_indexes.use_embedder(HashingEmbedder())
        ws.ingest_beir(corpus, library="m", vectors=True)
        expected = _vectors(ws)
    assert len(expected) == DOCS

    stopping = StopsAfter(CACHE_SLICE + 10)
    ws = Workspace.open(tmp_path / "ws")
    ws.vector_indexes.use_embedder(stopping)
    with pytest.raises(KeyboardInterrupt):
        ws.ingest_beir(corpus, library="m", vectors=True)
    embedded_before = len(stopping.calls)
    assert embedded_before == 2 * CACHE_SLICE < DOCS
    # Every document is stored and searchable lexically, also through hybrid search, which
    # uses the vectors committed so far.
    assert ws.describe_library("m")["documents"] == DOCS
    assert ws.search("quarterly note 42", libraries=["m"]).snippets[0].doc_id == "d042"
    stopping.limit = len(stopping.calls) + 1  # the query's embedding goes through
    hybrid = ws.search("quarterly note 42", mode="hybrid", libraries=["m"])  # lexical half
    assert hybrid.snippets[0].doc_id == "d042" and not hybrid.notices
    ws.close()

    resumed = HashingEmbedder()
    reports: list[tuple[int, int]] = []
    with Workspace.open(tmp_path / "ws") as ws:
        ws.vector_indexes.use_embedder(resumed)
        report = ws.ingest_beir(
            corpus, library="m", embed_progress=lambda done, total: reports.append((done, total))
        )
        assert report.count(report.outcomes[0].status) == DOCS  # all unchanged
        # Only what the stopped run had not embedded: each slice it finished was cached.
        assert len(resumed.calls) == DOCS - embedded_before
        assert set(resumed.calls).isdisjoint(stopping.calls)
        assert reports[0] == (embedded_before, DOCS) and reports[-1] == (DOCS, DOCS)
        assert ws.vector_indexes.complete("m")
        assert _vectors(ws) == expected
        assert ws.search("quarterly note 42", mode="hybrid", libraries=["m"]).snippets


def test_reembed_reports_progress_and_resumes(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path)
    with Workspace.open(tmp_path / "ws") as ws:
        ws.vector_indexes.use_embedder(HashingEmbedder(model_id="old"))
        ws.ingest_beir(corpus, library="m", vectors=True)
        stopping = StopsAfter(CACHE_SLICE, model_id="new")
        ws.vector_indexes.use_embedder(stopping)
        with pytest.raises(KeyboardInterrupt):
            ws.reembed("m")
        assert not ws.vector_indexes.complete("m")
        finishing = HashingEmbedder(model_id="new")
        ws.vector_indexes.use_embedder(finishing)
        reports: list[tuple[int, int]] = []
        assert ws.reembed("m", progress=lambda *r: reports.append(r)) == DOCS
        assert len(finishing.calls) == DOCS - CACHE_SLICE
        assert reports[0] == (CACHE_SLICE, DOCS) and reports[-1] == (DOCS, DOCS)
        assert ws.vector_indexes.complete("m")


def test_a_long_ingest_with_vectors_streams_its_lexical_applies_and_embeds_what_is_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a library with vectors the lexical indexes too follow every ``stream_rows`` changed
    chunks; the vector index then embeds exactly the chunks the run left (a document replaced
    after its first version was applied lexically is embedded once, in its last version), as
    a build from scratch would, and reads their texts back from the chunk store."""
    from ragspine.narrative.ingest import ingestor as ingest

    corpus = _corpus(tmp_path)
    replaced = write_beir_corpus(
        tmp_path / "again",
        [{"_id": "d003", "title": "Memo 3", "text": "An entirely different third memo."}],
    )

    def sources() -> object:
        yield from ingest.beir_sources(ingest.beir_corpus(corpus))
        yield from ingest.beir_sources(ingest.beir_corpus(replaced))

    with Workspace.open(tmp_path / "whole") as ws:
        ws.vector_indexes.use_embedder(HashingEmbedder())
        ws.ingest_beir(corpus, library="m", vectors=True)
        ws.ingest_beir(replaced, library="m")
        expected = _vectors(ws)
        lexical = ws.search("different third memo", libraries=["m"]).to_dict()["snippets"]

    monkeypatch.setattr(ingest.Ingestor, "stream_rows", 25)
    applies: list[int] = []
    from ragspine.narrative.index.lexical.library_indexes import LibraryIndexes

    real_apply = LibraryIndexes.apply

    def counting_apply(self, library_id, removed, added, **kwargs):  # type: ignore[no-untyped-def]
        applies.append(len(list(added)))
        return real_apply(self, library_id, removed, added, **kwargs)

    monkeypatch.setattr(LibraryIndexes, "apply", counting_apply)
    embedder = HashingEmbedder()
    with Workspace.open(tmp_path / "ws") as ws:
        ws.vector_indexes.use_embedder(embedder)
        ws.library_writer.ingest_sources("m", sources(), batch_size=5, vectors=True)  # type: ignore[arg-type]
        assert len(applies) > DOCS // 25  # streamed
        assert ws.vector_indexes.complete("m")
        assert _vectors(ws) == expected
        assert ws.search("different third memo", libraries=["m"]).to_dict()["snippets"] == lexical
    assert len(embedder.calls) == DOCS  # the replaced first version of d003 was never embedded


def test_the_model_is_loaded_after_the_lexical_phase(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A writer checks the default model before writing anything, without loading it: the
    lexical phase runs without the model's memory, which is taken only to embed."""
    pytest.importorskip("onnxruntime")
    from ragspine.narrative.index.embed import model as embedding
    from ragspine.narrative.index.lexical.library_indexes import LibraryIndexes

    events: list[str] = []

    def load(**kwargs: object) -> HashingEmbedder:
        events.append("model loaded")
        return HashingEmbedder(model_id=embedding.MINILM_MODEL_ID, dim=embedding.MINILM_DIM)

    real_apply = LibraryIndexes.apply

    def apply(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        events.append("lexical apply")
        return real_apply(self, *args, **kwargs)

    monkeypatch.setattr(embedding, "load_embedder", load)
    monkeypatch.setattr(LibraryIndexes, "apply", apply)
    with Workspace.open(tmp_path / "ws") as ws:
        ws.ingest_beir(_corpus(tmp_path), library="m", vectors=True)
        assert events == ["lexical apply", "model loaded"]
        assert ws.vector_indexes.complete("m")
    monkeypatch.setenv("RAGSPINE_EMBEDDING_MODEL_PATH", str(tmp_path / "missing.onnx"))
    with Workspace.open(tmp_path / "ws2") as ws, pytest.raises(ConfigError, match=r"missing\.onnx"):
        ws.ingest_beir(_corpus(tmp_path), library="m", vectors=True)  # fails before writing
    with Workspace.open(tmp_path / "ws2") as ws:
        assert "m" not in [library.library_id for library in ws.libraries()]
