"""Our BM25 against a reference implementation, and incremental updates against a fresh build."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import shared_data
from ragspine.analysis import Analyzer
from ragspine.narrative.index.lexical.engine import LexicalIndex


def read_jsonl(path: Path, limit: int) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for _, line in zip(range(limit), lines, strict=False)]


@pytest.mark.parametrize(("k1", "b"), [(0.9, 0.4), (1.5, 0.75)])
def test_scores_agree_with_bm25s_lucene_on_scifact(tmp_path: Path, k1: float, b: float) -> None:
    bm25s = pytest.importorskip("bm25s")
    docs = read_jsonl(shared_data("scifact", "corpus.jsonl"), 300)
    queries = read_jsonl(shared_data("scifact", "queries.jsonl"), 60)
    analyzer = Analyzer()
    texts = [f"{d['title']} {d['text']}" for d in docs]
    reference = bm25s.BM25(method="lucene", k1=k1, b=b)
    reference.index([analyzer.tokens(t) for t in texts], show_progress=False)
    index = LexicalIndex.open(tmp_path, k1=k1, b=b, analyzer=analyzer)
    index.add(list(range(len(texts))), texts, [0] * len(texts))
    index.commit(1)
    index = LexicalIndex.open(tmp_path, k1=k1, b=b)
    vocabulary = set(reference.vocab_dict)
    compared = 0
    for query in queries:
        tokens = [t for t in analyzer.tokens(query["text"]) if t in vocabulary]
        if not tokens:
            continue
        expected = np.asarray(reference.get_scores(tokens), dtype=np.float64)
        got = np.zeros(len(texts))
        for key, score in index.search(query["text"], len(texts), max_level=0):
            got[key] = score
        np.testing.assert_allclose(got, expected, rtol=2e-6, atol=2e-6)
        compared += int(np.count_nonzero(expected))
    assert compared > 1000


WORDS = ["alpha", "beta", "gamma", "delta", "omega", "sigma"]
texts = st.lists(st.sampled_from(WORDS), min_size=0, max_size=8).map(" ".join)
steps = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.lists(st.tuples(texts, st.integers(0, 3)), max_size=4)),
        st.tuples(st.just("remove"), st.lists(st.integers(0, 40), max_size=4)),
        st.tuples(st.just("commit"), st.none()),
    ),
    max_size=25,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=steps)
def test_incremental_updates_score_exactly_like_a_fresh_build(steps: list[tuple]) -> None:
    analyzer = Analyzer(language=None)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        index = LexicalIndex.open(folder / "inc", analyzer=analyzer)
        live: dict[int, tuple[str, int]] = {}
        next_key, generation = 0, 0
        for kind, payload in steps:
            if kind == "add" and payload:
                keys = list(range(next_key, next_key + len(payload)))
                next_key += len(payload)
                index.add(keys, [t for t, _ in payload], [lvl for _, lvl in payload])
                live.update(zip(keys, payload, strict=True))
            elif kind == "remove":
                index.remove(payload)
                for key in payload:
                    live.pop(key, None)
            elif kind == "commit":
                generation += 1
                index.commit(generation)
        fresh = LexicalIndex.open(folder / "fresh", analyzer=analyzer)
        fresh.add(list(live), [t for t, _ in live.values()], [lvl for _, lvl in live.values()])
        assert_same_results(index, fresh)
        index.commit(generation + 1)
        reopened = LexicalIndex.open(folder / "inc")
        assert len(index) == len(reopened) == len(live)
        assert_same_results(reopened, fresh)


def assert_same_results(index: LexicalIndex, fresh: LexicalIndex) -> None:
    for query in ["alpha", "beta gamma", "omega omega sigma", "delta alpha beta"]:
        for level in (0, 2, 3):
            expected = fresh.search(query, 5, max_level=level)
            assert index.search(query, 5, max_level=level) == expected
