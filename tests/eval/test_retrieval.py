"""Retrieval metrics against hand-computed values, and the eval runner end to end."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from ragspine.cli import main
from ragspine.errors import ConfigError
from ragspine.eval.retrieval import (
    evaluate_rankings,
    load_qrels,
    mrr_at_k,
    ndcg_at_k,
    rank_documents,
    recall_at_k,
)


def test_ndcg_hand_computed() -> None:
    judgments = {"a": 2, "b": 1, "x": 0, "n": -1}
    # ranked: x, a, n, b -> DCG = 2/log2(3) + 1/log2(5); IDCG = 2/log2(2) + 1/log2(3)
    expected = (2 / math.log2(3) + 1 / math.log2(5)) / (2 + 1 / math.log2(3))
    assert ndcg_at_k(["x", "a", "n", "b"], judgments) == pytest.approx(expected)
    assert ndcg_at_k(["a", "b"], judgments) == pytest.approx(1.0)
    assert ndcg_at_k(["x", "a"], judgments, k=1) == 0.0
    assert ndcg_at_k(["a"], {"a": 0}) == 0.0


def test_recall_and_mrr_hand_computed() -> None:
    judgments = {"a": 1, "b": 1, "c": 1, "z": 0}
    ranked = ["z", "q", "b", "a"]
    assert recall_at_k(ranked, judgments, k=100) == pytest.approx(2 / 3)
    assert recall_at_k(ranked, judgments, k=3) == pytest.approx(1 / 3)
    assert mrr_at_k(ranked, judgments) == pytest.approx(1 / 3)
    assert mrr_at_k(ranked, judgments, k=2) == 0.0


def test_documents_rank_by_best_chunk() -> None:
    hits = [("d1", 1.0), ("d2", 3.0), ("d1", 5.0), ("d3", 3.0)]
    assert rank_documents(hits) == ["d1", "d2", "d3"]


def test_mean_over_judged_queries() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    metrics = evaluate_rankings({"q1": ["a"], "q2": ["x", "b"]}, qrels)
    assert metrics["mrr@10"] == pytest.approx(0.75)
    assert metrics["recall@100"] == pytest.approx(1.0)


def test_qrels_header_is_checked(tmp_path: Path) -> None:
    (tmp_path / "bad.tsv").write_text("q\td\ts\n1\t2\t1\n")
    with pytest.raises(ConfigError, match="query-id"):
        load_qrels(tmp_path / "bad.tsv")


def test_eval_cli_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "beir"
    corpus.mkdir()
    docs = [
        ("d1", "Solar power", "Solar panels convert sunlight into electricity."),
        ("d2", "Wind power", "Wind turbines convert wind into electricity."),
        ("d3", "Coffee", "Coffee beans are roasted before brewing."),
    ]
    (corpus / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": i, "title": t, "text": x}) + "\n" for i, t, x in docs)
    )
    (tmp_path / "queries.jsonl").write_text(
        json.dumps({"_id": "q1", "text": "sunlight panels"})
        + "\n"
        + json.dumps({"_id": "q2", "text": "roasted coffee"})
        + "\n"
    )
    (tmp_path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td3\t1\n")
    ws = str(tmp_path / "ws")
    assert main(["--workspace", ws, "ingest", "beir", str(corpus), "--library", "toy"]) == 0
    capsys.readouterr()
    args = ["--workspace", ws, "eval", "retrieval", "--library", "toy"]
    args += ["--queries", str(tmp_path / "queries.jsonl"), "--qrels", str(tmp_path / "qrels.tsv")]
    assert main([*args, "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert set(payload["metrics"]) == {"ndcg@10", "recall@100", "mrr@10", "qps"}
    assert payload["metrics"]["ndcg@10"] == 1.0 and payload["metrics"]["mrr@10"] == 1.0
    assert main(args) == 0
    assert "ndcg@10" in capsys.readouterr().out
