"""The top-k floor: cutting at a score the k-th best row reaches gives the results of ranking
every matching row, to the last bit and with ties at the cut-off resolved the same way."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from conftest import shared_data
from ragspine.narrative.index.lexical import engine
from ragspine.narrative.index.lexical.engine import LexicalIndex


def _zipf_texts(count: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    vocabulary = [f"w{i}" for i in range(3000)]
    weights = 1 / np.arange(1, len(vocabulary) + 1)
    weights /= weights.sum()
    return [
        " ".join(rng.choice(vocabulary, size=int(rng.integers(5, 60)), p=weights))
        for _ in range(count)
    ]


def _compare(index: LexicalIndex, queries: list[str], monkeypatch: pytest.MonkeyPatch) -> int:
    """Search every query with the floor and with every match ranked; return how many
    searches used a floor above zero."""
    floors = 0
    real = engine._floor

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        nonlocal floors
        found = real(*args, **kwargs)
        floors += found > 0
        return found

    monkeypatch.setattr(engine, "FLOOR_SAMPLE", 64)  # small samples: floors well below the cut
    for top_k in (1, 10, 37):
        for level in (0, 1):
            monkeypatch.setattr(engine, "_floor", counting)
            cut = [index.search(q, top_k, max_level=level) for q in queries]
            monkeypatch.setattr(engine, "_floor", lambda *args: 0.0)
            ranked = [index.search(q, top_k, max_level=level) for q in queries]
            assert cut == ranked  # same keys, same order, scores equal to the last bit
    return floors


def test_the_floor_gives_the_ranked_results_on_a_zipfian_corpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = _zipf_texts(4000, seed=7)
    index = LexicalIndex.open(tmp_path)
    for start in range(0, len(texts), 1000):  # several segments, two levels
        keys = list(range(start, start + 1000))
        index.add(keys, texts[start : start + 1000], [start // 1000 % 2] * 1000)
        index.commit(start // 1000 + 1)
    index.remove(list(range(0, 4000, 17)))
    rng = np.random.default_rng(3)
    queries = [" ".join(rng.choice([f"w{i}" for i in range(400)], size=6)) for _ in range(60)]
    queries += ["w0 w1 w2 w3", "w2999 w0", "w5 w5 w5 w1200", "w0", "w0 w1"]
    assert _compare(index, queries, monkeypatch) > 100, "the floor must be exercised"


def test_the_floor_gives_the_ranked_results_on_scifact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = shared_data("scifact", "corpus.jsonl")
    with corpus.open(encoding="utf-8") as lines:
        docs = [json.loads(line) for _, line in zip(range(2000), lines, strict=False)]
    with shared_data("scifact", "queries.jsonl").open(encoding="utf-8") as lines:
        queries = [json.loads(line)["text"] for _, line in zip(range(150), lines, strict=False)]
    index = LexicalIndex.open(tmp_path)
    texts = [f"{d['title']} {d['text']}" for d in docs]
    index.add(list(range(len(texts))), texts, [i % 2 for i in range(len(texts))])
    index.commit(1)
    assert _compare(index, queries, monkeypatch) > 100


def test_a_floor_above_the_cut_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reverse proof: a floor the k-th best row does not reach changes results, and the
    comparison above would see it."""
    texts = _zipf_texts(3000, seed=11)
    index = LexicalIndex.open(tmp_path)
    index.add(list(range(len(texts))), texts, [0] * len(texts))
    rng = np.random.default_rng(5)
    queries = [" ".join(rng.choice([f"w{i}" for i in range(300)], size=5)) for _ in range(40)]
    real = engine._at_least
    monkeypatch.setattr(engine, "_at_least", lambda scores, floor: real(scores, floor * 1.3))
    with pytest.raises(AssertionError):
        _compare(index, queries, monkeypatch)
