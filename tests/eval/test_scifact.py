"""SciFact (train qrels) reaches the BM25 target through the full ingest and search path."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import shared_data
from ragspine.eval.retrieval import load_qrels, load_queries, run_retrieval_eval
from ragspine.workspace import Workspace

SCIFACT_TARGET = 0.66


@pytest.mark.slow
def test_scifact_train_ndcg_reaches_target(tmp_path: Path) -> None:
    folder = shared_data("scifact")
    ws = Workspace.open(tmp_path / "ws")
    report = ws.ingest_beir(folder, library="scifact")
    assert report.count(report.outcomes[0].status) == 5183
    result = run_retrieval_eval(
        ws,
        library="scifact",
        queries=load_queries(folder / "queries.jsonl"),
        qrels=load_qrels(folder / "qrels" / "train.tsv"),
        mode="bm25",
    )
    assert result.queries == 809
    assert result.metrics["ndcg@10"] >= SCIFACT_TARGET
