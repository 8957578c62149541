"""Postprocess: near-duplicate removal and MMR only drop or reorder the very items passed in."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragspine.analysis import word_set
from ragspine.errors import ConfigError
from ragspine.narrative.retrieve.postprocess import (
    mmr_order,
    remove_near_duplicates,
    similarity_matrix,
)


@dataclass(frozen=True, slots=True)
class Snip:
    chunk_id: str
    text: str
    source_locator: str


SNIPS = [
    Snip("c1", "Revenue grew 12% in 2024 driven by cloud sales.", "p1"),
    Snip("c2", "Revenue grew 12% in 2024, driven by cloud sales!", "p2"),
    Snip("c3", "Headcount fell to 4,100 after the restructuring.", "p3"),
    Snip("c4", "The board approved a dividend of 40 cents.", "p4"),
    Snip("c5", "Revenue grew 12 % in 2024 driven by cloud sales.", "p5"),
]


def test_near_duplicates_by_tokens_keep_the_better_ranked_object() -> None:
    kept = remove_near_duplicates(SNIPS, token_sets=[word_set(s.text) for s in SNIPS])
    assert [s.chunk_id for s in kept] == ["c1", "c3", "c4"]
    assert all(any(k is s for s in SNIPS) for k in kept)


def test_near_duplicates_by_vectors() -> None:
    vectors = np.array([[1, 0, 0], [0.999, 0.04, 0], [0, 1, 0], [0, 0, 1], [0.7, 0.7, 0]])
    kept = remove_near_duplicates(SNIPS, vectors=vectors)
    assert [s.chunk_id for s in kept] == ["c1", "c3", "c4", "c5"]
    assert remove_near_duplicates(SNIPS, vectors=vectors, threshold=0.7)[-1] is SNIPS[3]


def test_mmr_without_diversity_keeps_relevance_order() -> None:
    vectors = np.random.default_rng(0).standard_normal((5, 8))
    assert mmr_order(SNIPS, vectors=vectors, diversity=0.0) == SNIPS
    by_score = mmr_order(SNIPS, vectors=vectors, relevance=[0.1, 0.5, 0.3, 0.9, 0.2], diversity=0)
    assert [s.chunk_id for s in by_score] == ["c4", "c2", "c3", "c5", "c1"]


def test_mmr_pushes_a_near_copy_of_the_top_item_down() -> None:
    vectors = np.array([[1, 0, 0], [0.99, 0.1, 0], [0, 1, 0], [0, 0, 1], [0.1, 0.1, 1]])
    ordered = mmr_order(SNIPS, vectors=vectors, diversity=0.5)
    assert ordered[0] is SNIPS[0]
    assert [s.chunk_id for s in ordered].index("c2") > 2
    assert mmr_order(SNIPS, vectors=vectors, diversity=0.5, top_k=2) == ordered[:2]


def test_mismatched_or_ambiguous_inputs_are_errors() -> None:
    with pytest.raises(ConfigError, match="exactly one"):
        remove_near_duplicates(SNIPS)
    with pytest.raises(ConfigError, match="exactly one"):
        mmr_order(SNIPS, vectors=np.eye(5), token_sets=[set()] * 5)
    with pytest.raises(ConfigError, match="5 items but 3"):
        mmr_order(SNIPS, vectors=np.eye(3))
    with pytest.raises(ConfigError, match="diversity"):
        mmr_order(SNIPS, vectors=np.eye(5), diversity=1.5)


def test_jaccard_similarity() -> None:
    sims = similarity_matrix(token_sets=[{"a", "b"}, {"b", "c"}, set(), set()])
    assert sims[0, 1] == pytest.approx(1 / 3)
    assert sims[2, 3] == 1.0 and sims[0, 2] == 0.0


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(0, 12),
    seed=st.integers(0, 2**16),
    diversity=st.floats(0, 1),
    threshold=st.floats(0.05, 1.0),
)
def test_items_come_back_identical_objects_in_a_subsequence(
    n: int, seed: int, diversity: float, threshold: float
) -> None:
    items = [Snip(f"c{i}", f"text {i}", f"loc{i}") for i in range(n)]
    snapshot = [(s.chunk_id, s.text, s.source_locator) for s in items]
    vectors = np.random.default_rng(seed).standard_normal((n, 4))
    deduped = remove_near_duplicates(items, vectors=vectors, threshold=threshold)
    positions = [next(i for i, s in enumerate(items) if s is d) for d in deduped]
    assert positions == sorted(positions) and (n == 0 or positions[0] == 0)
    ordered = mmr_order(items, vectors=vectors, diversity=diversity)
    assert len(ordered) == n and {id(s) for s in ordered} == {id(s) for s in items}
    assert [(s.chunk_id, s.text, s.source_locator) for s in items] == snapshot
