"""Vector and hybrid search wired into the pipeline: ingest embeddings, modes, filters and
visibility inside the vector search, restricted chunks, the cache, model changes, ``auto``.

These tests use :class:`HashingEmbedder`, a small deterministic TEST embedder (feature hashing of
word tokens) implementing the ``Embedder`` protocol, so they run fast and without the ``onnx``
extra; ``test_hybrid_onnx.py`` runs the same pipeline with the real ONNX model.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest
from files import write_beir_corpus
from hashing_embedder import HashingEmbedder

from ragspine.errors import ConfigError, MissingExtraError, QueryError, StoreError
from ragspine.eval.retrieval import run_retrieval_eval
from ragspine.narrative.index.embed import model as embedding
from ragspine.narrative.index.embed.cache import content_hash
from ragspine.narrative.retrieve import retriever
from ragspine.security import Principal
from ragspine.workspace import Workspace

TOPICS = ["revenue growth", "supply chain", "board meeting", "cloud platform", "tax audit"]


def _open(path: Path, embedder: HashingEmbedder) -> Workspace:
    ws = Workspace.open(path)
    ws.vector_indexes.use_embedder(embedder)
    return ws


@pytest.fixture()
def filtered_ws(workspace_dir: Path, tmp_path: Path) -> tuple[Workspace, HashingEmbedder]:
    """500 one-chunk documents; 5 of them (1%) have region=rare and are weak matches."""
    docs = []
    for i in range(500):
        rare = i % 100 == 7
        topic = TOPICS[i % len(TOPICS)]
        text = (
            f"Note {i} mentions quarterly figures once."
            if rare
            else f"Quarterly figures on {topic}: quarterly figures rose, figures quarterly {i}."
        )
        docs.append(
            {
                "_id": f"d{i:03d}",
                "title": f"Memo {i}",
                "text": text,
                "metadata": {"region": "rare" if rare else "common"},
            }
        )
    embedder = HashingEmbedder()
    ws = _open(workspace_dir, embedder)
    ws.ingest_beir(write_beir_corpus(tmp_path / "corpus", docs), library="memos", vectors=True)
    return ws, embedder


@pytest.mark.parametrize("mode", ["hybrid", "vector"])
def test_filter_matching_one_percent_still_fills_top_k(
    filtered_ws: tuple[Workspace, HashingEmbedder], mode: str
) -> None:
    ws, _ = filtered_ws
    result = ws.search("quarterly figures", mode=mode, top_k=5, filters="region=rare")
    assert sorted(s.doc_id for s in result.snippets) == ["d007", "d107", "d207", "d307", "d407"]
    assert result.trace.stage("recheck").dropped_by_filter == 0  # pushed down, not post-filtered
    unfiltered = ws.search("quarterly figures", mode=mode, top_k=5)
    assert not {s.doc_id for s in unfiltered.snippets} & {"d007", "d107"}  # they rank low


def test_post_filtering_vector_search_would_come_back_short(
    filtered_ws: tuple[Workspace, HashingEmbedder], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A deliberately broken vector channel that ignores the filter loses the slots."""
    ws, _ = filtered_ws
    original = retriever._DenseChannel.search

    def leaky(self, library_id, depth, max_level, allowed):  # type: ignore[no-untyped-def]
        return original(self, library_id, depth, max_level, None)

    monkeypatch.setattr(retriever._DenseChannel, "search", leaky)
    result = ws.search("quarterly figures", mode="vector", top_k=5, filters="region=rare")
    assert len(result.snippets) < 5


def test_hybrid_channel_weights_select_each_channel(
    filtered_ws: tuple[Workspace, HashingEmbedder],
) -> None:
    ws, _ = filtered_ws
    question = "board meeting cloud"

    def ids(**options: object) -> list[str]:
        return [s.chunk_id for s in ws.search(question, top_k=5, **options).snippets]  # type: ignore[arg-type]

    assert ids(mode="hybrid", vector_weight=0.0) == ids(mode="lexical")
    assert ids(mode="hybrid", lexical_weight=0.0) == ids(mode="vector")
    with pytest.raises(QueryError, match="vector_weight"):
        ws.search(question, mode="hybrid", vector_weight=-1.0)


def _reports(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "open.txt").write_text("Revenue grew in Europe after new contracts.")
    (folder / "budget.txt").write_text("The budget for Europe grew modestly.")
    (folder / "secret.txt").write_text("Zanzibar merger revenue Europe plan.")
    (folder / "secret.txt.meta.json").write_text('{"sensitivity": "restricted"}')
    return folder


def test_restricted_chunks_never_reach_vectors_or_results(
    workspace_dir: Path, tmp_path: Path
) -> None:
    embedder = HashingEmbedder()
    ws = _open(workspace_dir, embedder)
    ws.ingest_documents([_reports(tmp_path)], library="r", vectors=True)
    assert not any("Zanzibar" in text for text in embedder.calls)  # never embedded
    restricted_key = ws.chunks.keys_of(["r:secret.txt#0"])["r:secret.txt#0"]
    folder = ws.vector_indexes.folder("r")
    stored_keys = np.concatenate([np.load(p) for p in folder.glob("keys-*.npy")])
    assert restricted_key not in stored_keys and len(stored_keys) == 2
    cache = ws.vector_indexes._embedding_cache()
    secret_text = "secret\nZanzibar merger revenue Europe plan."
    assert not cache.get_many([content_hash(secret_text)], embedder.model_id)
    assert len(cache) == 2
    for path in [*folder.iterdir(), ws.index_dir / "embedding-cache.sqlite"]:
        assert b"Zanzibar" not in path.read_bytes()
    top = Principal.of("restricted")
    for mode in ("vector", "hybrid", "auto"):
        found = ws.search("Zanzibar merger", mode=mode, top_k=5, principal=top).snippets
        assert "secret.txt" not in {s.doc_id for s in found}


def test_unchanged_reingest_does_not_embed_again(workspace_dir: Path, tmp_path: Path) -> None:
    embedder = HashingEmbedder()
    ws = _open(workspace_dir, embedder)
    docs = _reports(tmp_path)
    ws.ingest_documents([docs], library="r", vectors=True)
    assert len(embedder.calls) == 2
    report = ws.ingest_documents([docs], library="r")
    assert report.count(report.outcomes[0].status) == 3 and len(embedder.calls) == 2
    (docs / "budget.txt").write_text("The budget for Asia shrank.")
    ws.ingest_documents([docs], library="r")
    assert embedder.calls[2:] == ["budget\nThe budget for Asia shrank."]
    # A fresh workspace object, and an index rebuilt from scratch, reuse the cache.
    again = _open(workspace_dir, embedder)
    assert again.reembed("r") == len(again.vector_indexes.get("r"))
    assert "r/vectors" in again.vector_indexes.rebuilt
    assert len(embedder.calls) == 3  # every chunk came from the cache
    result = again.search("budget Asia", mode="hybrid", libraries=["r"])
    assert result.snippets[0].doc_id == "budget.txt"
    assert len(embedder.calls) == 3 + 1  # only the query was embedded


def test_embedding_failure_keeps_lexical_search_and_the_next_ingest_finishes_the_vectors(
    workspace_dir: Path, tmp_path: Path
) -> None:
    embedder = HashingEmbedder()
    ws = _open(workspace_dir, embedder)
    docs = _reports(tmp_path)
    ws.ingest_documents([docs], library="r", vectors=True)
    (docs / "budget.txt").write_text("A changed budget text.")
    embedder.fail = True
    with pytest.raises(RuntimeError, match="embedder broke"):
        ws.ingest_documents([docs], library="r")
    # Lexical first: the new version is written and searchable before it is embedded.
    assert ws.search("changed budget", libraries=["r"]).snippets[0].doc_id == "budget.txt"
    assert not ws.vector_indexes.complete("r")
    embedder.fail = False  # (for the queries; the vectors stay behind until the next ingest)
    # Searches use the last committed vectors: hybrid finds the new text lexically, and the
    # replaced version's vector points at a chunk that is gone, so it is never shown.
    hybrid = ws.search("changed budget", mode="hybrid", libraries=["r"])
    assert hybrid.snippets[0].text == "A changed budget text." and not hybrid.notices
    shown = [s.text for s in ws.search("budget", mode="vector", libraries=["r"]).snippets]
    assert shown == ["Revenue grew in Europe after new contracts."]  # the new text: no vector yet
    calls = len(embedder.calls)
    ws.ingest_documents([docs], library="r")  # nothing changed: only the vectors are finished
    assert embedder.calls[calls:] == ["budget\nA changed budget text."]
    assert ws.vector_indexes.complete("r")
    found = ws.search("changed budget", mode="vector", libraries=["r"]).snippets
    assert found[0].text == "A changed budget text."


def test_model_change_is_detected_and_reembed_fixes_it(workspace_dir: Path, tmp_path: Path) -> None:
    ws = _open(workspace_dir, HashingEmbedder(model_id="hash-a"))
    docs = _reports(tmp_path)
    ws.ingest_documents([docs], library="r", vectors=True)
    other = HashingEmbedder(model_id="hash-b", dim=32)
    ws.vector_indexes.use_embedder(other)
    with pytest.raises(StoreError, match=r"ragspine reembed --library r"):
        ws.search("revenue", mode="hybrid")
    chunks = ws.describe_library("r")["chunks"]
    (docs / "new.txt").write_text("A new document about revenue.")
    with pytest.raises(StoreError, match=r"ragspine reembed --library r"):
        ws.ingest_documents([docs], library="r")
    assert ws.describe_library("r")["chunks"] == chunks  # nothing written
    assert ws.reembed("r") == 2
    assert ws.search("revenue Europe", mode="hybrid").snippets


def test_auto_falls_back_to_lexical_without_the_extra(
    workspace_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = _open(workspace_dir, HashingEmbedder())
    ws.ingest_documents([_reports(tmp_path)], library="r", vectors=True)
    ws.ingest_documents([tmp_path / "docs" / "open.txt"], library="plain")
    ws.close()

    def missing(**settings: object) -> None:
        raise MissingExtraError("hybrid search", "onnx")

    monkeypatch.setattr(embedding, "load_embedder", missing)
    ws = Workspace.open(workspace_dir)
    result = ws.search("revenue Europe", mode="auto", libraries=["r"])
    lexical = ws.search("revenue Europe", mode="lexical", libraries=["r"])
    assert [s.chunk_id for s in result.snippets] == [s.chunk_id for s in lexical.snippets]
    (notice,) = result.notices
    assert "library r searched lexical" in notice and "pip install 'ragspine[onnx]'" in notice
    assert notice in result.trace.notes
    assert result.to_dict()["notices"] == [notice]
    assert result.trace.mode == "auto"
    plain = ws.search("revenue", mode="auto", libraries=["plain"])
    expected = (
        "auto: library plain keeps no vectors, searched lexical "
        "(turn them on with `ragspine library vectors plain on`)"
    )
    assert plain.notices == plain.trace.notes == (expected,)
    answer = ws.answer_narrative("revenue", mode="auto", libraries=["plain"])
    assert answer.notices == (expected,) and expected not in answer.text
    for mode in ("hybrid", "vector"):
        with pytest.raises(MissingExtraError, match=r"pip install 'ragspine\[onnx\]'"):
            ws.search("revenue", mode=mode, libraries=["r"])


def test_auto_uses_hybrid_when_available_and_vector_needs_vectors(
    workspace_dir: Path, tmp_path: Path
) -> None:
    ws = _open(workspace_dir, HashingEmbedder())
    ws.ingest_documents([_reports(tmp_path)], library="r", vectors=True)
    ws.ingest_documents([tmp_path / "docs" / "open.txt"], library="plain")
    result = ws.search("revenue", mode="auto", libraries=["r"])
    assert result.trace.notes == ("auto: r searched hybrid (lexical + vector)",)
    assert result.notices == ()
    for mode in ("vector", "hybrid"):
        with pytest.raises(ConfigError, match=f"mode '{mode}' needs vectors.*library 'plain'"):
            ws.search("revenue", mode=mode, libraries=["plain"])
        with pytest.raises(ConfigError, match="`ragspine library vectors plain on`"):
            ws.search("revenue", mode=mode)  # every library the asker sees is checked
    assert ws.search("revenue", mode="hybrid", libraries=["r"]).snippets
    ws.set_library_vectors("plain", True)
    assert ws.search("revenue", mode="vector", libraries=["plain"]).snippets


def test_postprocess_only_drops_and_reorders(workspace_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "dup"
    folder.mkdir()
    (folder / "a.md").write_text("# Results\n\nRevenue grew twelve percent in Europe this year.")
    (folder / "b.md").write_text("# Results\n\nRevenue grew twelve percent in Europe this year!")
    (folder / "c.md").write_text("# Outlook\n\nRevenue may grow in Asia next year.")
    ws = _open(workspace_dir, HashingEmbedder())
    ws.ingest_documents([folder], library="d", vectors=True)
    plain = ws.search("revenue grew Europe", mode="hybrid", top_k=3)
    assert len(plain.snippets) == 3
    deduped = ws.search("revenue grew Europe", mode="hybrid", top_k=3, near_duplicates=0.8)
    assert len(deduped.snippets) == 2
    diverse = ws.search("revenue grew Europe", mode="hybrid", top_k=3, diversity=0.9)
    assert [s.doc_id for s in diverse.snippets][1] == "c.md"
    originals = {s.chunk_id: s for s in plain.snippets}
    for snippet in (*deduped.snippets, *diverse.snippets):
        original = originals[snippet.chunk_id]
        assert snippet.text == original.text
        assert snippet.source_locator == original.source_locator
        assert snippet.prompt_text == original.prompt_text  # expansion still ran
    with pytest.raises(ConfigError, match="near_duplicates"):
        ws.search("revenue", near_duplicates=1.5)


def test_eval_retrieval_in_vector_and_hybrid_modes(
    filtered_ws: tuple[Workspace, HashingEmbedder],
) -> None:
    ws, _ = filtered_ws
    queries = {"q1": "Note 7 mentions", "q2": "supply chain 11"}
    qrels = {"q1": {"d007": 1}, "q2": {"d011": 1}}
    for mode in ("vector", "hybrid"):
        report = run_retrieval_eval(ws, library="memos", queries=queries, qrels=qrels, mode=mode)
        assert report.mode == mode and report.metrics["recall@100"] == 1.0


def test_turning_vectors_off_deletes_them(workspace_dir: Path, tmp_path: Path) -> None:
    ws = _open(workspace_dir, HashingEmbedder())
    ws.ingest_documents([_reports(tmp_path)], library="r", vectors=True)
    folder = ws.vector_indexes.folder("r")
    assert (folder / "meta.json").exists()
    assert ws.set_library_vectors("r", False).vectors is False
    assert not folder.exists()
    with pytest.raises(ConfigError, match="`ragspine library vectors r on`"):
        ws.search("revenue", mode="hybrid", libraries=["r"])
    assert ws.describe_library("r")["vectors"] is False


def test_hybrid_checks_only_libraries_the_asker_sees(workspace_dir: Path, tmp_path: Path) -> None:
    ws = _open(workspace_dir, HashingEmbedder())
    ws.ingest_documents([_reports(tmp_path)], library="r", vectors=True)
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / "plan.txt").write_text("Revenue plan for the hidden merger.")
    ws.create_library("board", default_sensitivity="confidential")
    ws.ingest_documents([hidden], library="board", sensitivity="confidential")
    assert ws.search("revenue", mode="hybrid").snippets  # 'board' is invisible: not checked
    with pytest.raises(QueryError, match="unknown library 'board'") as caught:
        ws.search("revenue", mode="hybrid", libraries=["board"])
    assert "vectors" not in str(caught.value)
    with pytest.raises(ConfigError, match="library 'board' keeps none"):
        ws.search("revenue", mode="hybrid", principal=Principal.of("confidential"))


def test_auto_never_fails_when_a_write_lands_between_its_check_and_the_vector_search(
    workspace_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = _open(workspace_dir, HashingEmbedder())
    ws.ingest_documents([_reports(tmp_path)], library="r", vectors=True)
    lexical = ws.lexical_indexes
    real_get = lexical.get

    def get_then_another_writer_commits(*args: object) -> object:
        # Runs after ``auto`` decided to search ``r`` by vector and before the vector search:
        # another process commits a chunk-store write, so the vector index is behind from now
        # on (until that writer has embedded its chunks).
        index = real_get(*args)  # type: ignore[arg-type]
        other = sqlite3.connect(ws.db_path)
        with other:
            other.execute("UPDATE narrative_libraries SET generation = generation + 1")
        other.close()
        return index

    monkeypatch.setattr(lexical, "get", get_then_another_writer_commits)
    result = ws.search("revenue Europe", mode="auto", libraries=["r"])  # never an error
    assert result.snippets
    assert result.trace.notes == ("auto: r searched hybrid (lexical + vector)",)
    again = ws.search("revenue Europe", mode="auto", libraries=["r"])  # behind now: no remark
    assert again.snippets and again.notices == ()
    assert again.trace.notes == result.trace.notes


def test_an_unfinished_confidential_ingest_changes_nothing_a_public_asker_sees(
    workspace_dir: Path, tmp_path: Path
) -> None:
    """Whether vectors are behind depends on writes of every level: a public search must not
    change (no error, no notice, same ranking) while confidential chunks wait for vectors."""
    embedder = HashingEmbedder()
    ws = _open(workspace_dir, embedder)
    ws.ingest_documents([_reports(tmp_path)], library="r", vectors=True)
    before = {
        mode: ws.search("revenue budget", mode=mode, libraries=["r"]).to_dict()
        for mode in ("hybrid", "vector", "auto")
    }
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "merger.txt").write_text("Revenue budget of the confidential merger.")
    embedder.fail = True
    with pytest.raises(RuntimeError, match="embedder broke"):
        ws.ingest_documents([secret], library="r", sensitivity="confidential")
    assert not ws.vector_indexes.complete("r")
    embedder.fail = False  # queries embed again; the confidential chunk stays unembedded
    for mode, shown in before.items():
        after = ws.search("revenue budget", mode=mode, libraries=["r"]).to_dict()
        assert after["snippets"] == shown["snippets"] and after["notices"] == shown["notices"]
        assert after["trace"]["notes"] == shown["trace"]["notes"]
