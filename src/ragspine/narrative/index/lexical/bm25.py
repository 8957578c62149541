"""BM25 scoring as pure functions over numpy arrays.

The score of document ``d`` for query terms ``t`` is the sum over ``t`` of
``qtf(t) * idf(t) * tf / (tf + k1 * (1 - b + b * dl / avgdl))`` with the Lucene idf
``log(1 + (N - df + 0.5) / (df + 0.5))``. This is Lucene's BM25 (since Lucene 8), which drops the
constant factor ``k1 + 1`` of the textbook formula: rankings are identical, scores are smaller.
``N``, ``df`` and ``avgdl`` count live documents only.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from ragspine.errors import ConfigError

DEFAULT_K1 = 0.9
DEFAULT_B = 0.4

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def validate_params(k1: float, b: float) -> tuple[float, float]:
    """Check BM25 parameters: ``k1`` finite and >= 0, ``b`` within [0, 1]."""
    for name, value in (("k1", k1), ("b", b)):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"BM25 {name} must be a number, got {value!r}")
    if not math.isfinite(k1) or k1 < 0:
        raise ConfigError(f"BM25 k1 must be a finite number >= 0 (typical 0.9 to 2.0), got {k1!r}")
    if not math.isfinite(b) or not 0 <= b <= 1:
        raise ConfigError(f"BM25 b must be between 0 and 1 (typical 0.4 to 0.75), got {b!r}")
    return float(k1), float(b)


def idf(df: int | npt.NDArray[np.integer], n_docs: int) -> float | FloatArray:
    """Lucene's inverse document frequency; always positive."""
    return np.log1p((n_docs - df + 0.5) / (df + 0.5))


def length_norms(lengths: npt.NDArray[np.integer], avgdl: float, k1: float, b: float) -> FloatArray:
    """Per-document denominator term ``k1 * (1 - b + b * dl / avgdl)``."""
    if avgdl <= 0:
        return np.full(len(lengths), k1 * (1 - b), dtype=np.float64)
    return k1 * (1 - b + b * (lengths.astype(np.float64) / avgdl))


def term_scores(tf: npt.NDArray[np.integer], norms: FloatArray, weight: float) -> FloatArray:
    """Score contributions of one term: ``weight * tf / (tf + norm)``, element by element."""
    tf64 = tf.astype(np.float64)
    return weight * tf64 / (tf64 + norms)


def top_k(scores: npt.NDArray[np.floating[Any]], keys: IntArray, k: int) -> IntArray:
    """Positions of the best ``k`` entries: score descending, then key ascending.

    Ties at the cut-off are resolved by key, so the result never depends on storage order. The
    lexical and the vector indexes both cut their results with it.
    """
    n = len(scores)
    if k <= 0 or n == 0:
        return np.empty(0, dtype=np.int64)
    if n > k:
        part = np.argpartition(-scores, k - 1)[:k]
        threshold = scores[part].min()
        candidates = np.flatnonzero(scores >= threshold)
    else:
        candidates = np.arange(n)
    order = np.lexsort((keys[candidates], -scores[candidates]))
    return candidates[order[:k]]
