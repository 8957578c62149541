"""Pure BM25 functions: idf, length norms, top-k selection."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragspine.errors import ConfigError
from ragspine.narrative.index.lexical import bm25


def test_idf_is_lucene_and_stays_positive_for_terms_in_every_document() -> None:
    assert bm25.idf(1, 10) == pytest.approx(math.log(1 + 9.5 / 1.5))
    assert bm25.idf(10, 10) == pytest.approx(math.log(1 + 0.5 / 10.5))
    assert bm25.idf(10, 10) > 0
    assert bm25.idf(2, 100) > bm25.idf(3, 100)


def test_length_norms_follow_b() -> None:
    lengths = np.array([5, 10, 20])
    assert bm25.length_norms(lengths, 10.0, 1.0, 0.0).tolist() == [1.0, 1.0, 1.0]
    assert bm25.length_norms(lengths, 10.0, 1.0, 1.0).tolist() == [0.5, 1.0, 2.0]
    assert bm25.length_norms(lengths, 0.0, 1.2, 0.75).tolist() == pytest.approx([0.3] * 3)


def test_parameters_are_validated() -> None:
    assert bm25.validate_params(1, 0) == (1.0, 0.0)
    with pytest.raises(ConfigError, match="k1"):
        bm25.validate_params(float("inf"), 0.4)
    with pytest.raises(ConfigError, match="b must be between 0 and 1"):
        bm25.validate_params(0.9, -0.1)
    with pytest.raises(ConfigError, match="number"):
        bm25.validate_params(True, 0.4)


@given(
    scores=st.lists(st.sampled_from([0.5, 1.0, 1.5, 2.0, 3.25]), max_size=60),
    k=st.integers(0, 70),
)
def test_top_k_matches_a_full_sort_by_score_then_key(scores: list[float], k: int) -> None:
    rng = np.random.default_rng(len(scores))
    keys = rng.permutation(len(scores)).astype(np.int64) * 3
    values = np.asarray(scores, dtype=np.float64)
    picked = bm25.top_k(values, keys, k)
    expected = sorted(zip(keys.tolist(), scores, strict=True), key=lambda ks: (-ks[1], ks[0]))[:k]
    assert list(zip(keys[picked].tolist(), values[picked].tolist(), strict=True)) == expected
