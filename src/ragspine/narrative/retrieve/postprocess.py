"""Post-fusion snippet clean-up: near-duplicate removal and MMR diversity.

Pure functions over already screened items. They only drop or reorder: every returned item is
the very object that was passed in, so ``text``, ``chunk_id`` and ``source_locator`` (and
anything expansion needs later) are untouched. Similarity comes either from vectors (cosine) or
from token sets (Jaccard); pass exactly one.
"""

from __future__ import annotations

from collections.abc import Sequence, Set
from typing import TypeVar

import numpy as np

from ragspine.analysis import word_set
from ragspine.errors import ConfigError
from ragspine.narrative.retrieve.expansion import Postprocessor, PostprocessStep, deduplicate
from ragspine.narrative.retrieve.snippets import Snippet

T = TypeVar("T")

DEFAULT_VECTOR_DUPLICATE = 0.95
DEFAULT_TOKEN_DUPLICATE = 0.9


def similarity_matrix(
    *,
    vectors: np.ndarray | Sequence[Sequence[float]] | None = None,
    token_sets: Sequence[Set[str]] | None = None,
) -> np.ndarray:
    """Pairwise similarity: cosine of ``vectors`` or Jaccard of ``token_sets``."""
    if (vectors is None) == (token_sets is None):
        raise ConfigError("pass exactly one of vectors= or token_sets= for similarity")
    if vectors is not None:
        matrix = np.asarray(vectors, dtype=np.float64)
        if matrix.ndim != 2:
            raise ConfigError(f"vectors must be a 2-d array, got shape {matrix.shape}")
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        unit = matrix / np.maximum(norms, 1e-12)
        return unit @ unit.T
    assert token_sets is not None
    n = len(token_sets)
    sims = np.eye(n)
    for i in range(n):
        for j in range(i + 1, n):
            a, b = token_sets[i], token_sets[j]
            union = len(a | b)
            sims[i, j] = sims[j, i] = (len(a & b) / union) if union else 1.0
    return sims


def _checked_matrix(
    count: int,
    vectors: np.ndarray | Sequence[Sequence[float]] | None,
    token_sets: Sequence[Set[str]] | None,
) -> np.ndarray:
    sims = similarity_matrix(vectors=vectors, token_sets=token_sets)
    if sims.shape[0] != count:
        raise ConfigError(f"got {count} items but {sims.shape[0]} vectors/token sets")
    return sims


def remove_near_duplicates(
    items: Sequence[T],
    *,
    vectors: np.ndarray | Sequence[Sequence[float]] | None = None,
    token_sets: Sequence[Set[str]] | None = None,
    threshold: float | None = None,
) -> list[T]:
    """Keep each item unless an earlier kept item is at least ``threshold`` similar to it.

    Order is preserved, so the better-ranked of two near-duplicates survives. The default
    threshold is 0.95 for cosine and 0.9 for Jaccard.
    """
    if threshold is None:
        threshold = DEFAULT_VECTOR_DUPLICATE if vectors is not None else DEFAULT_TOKEN_DUPLICATE
    if not 0.0 < threshold <= 1.0:
        raise ConfigError(f"duplicate threshold must be in (0, 1], got {threshold}")
    if not items:
        return []
    sims = _checked_matrix(len(items), vectors, token_sets)
    kept: list[int] = []
    for i in range(len(items)):
        if not kept or sims[i, kept].max() < threshold:
            kept.append(i)
    return [items[i] for i in kept]


def mmr_order(
    items: Sequence[T],
    *,
    vectors: np.ndarray | Sequence[Sequence[float]] | None = None,
    token_sets: Sequence[Set[str]] | None = None,
    relevance: Sequence[float] | None = None,
    diversity: float = 0.3,
    top_k: int | None = None,
) -> list[T]:
    """Reorder by maximal marginal relevance; keep the first ``top_k`` (all by default).

    Each step picks the item maximising ``(1 - diversity) * relevance - diversity * max
    similarity to the items already picked``. ``relevance`` defaults to the given order (first
    is most relevant) and is rescaled to [0, 1]; ties go to the earlier item. ``diversity=0``
    returns the relevance order.
    """
    if not 0.0 <= diversity <= 1.0:
        raise ConfigError(f"diversity must be between 0 and 1, got {diversity}")
    if top_k is not None and top_k < 0:
        raise ConfigError(f"top_k must not be negative, got {top_k}")
    n = len(items)
    limit = n if top_k is None else min(top_k, n)
    if limit == 0:
        return []
    sims = _checked_matrix(n, vectors, token_sets)
    if relevance is None:
        rel = np.linspace(1.0, 0.0, n) if n > 1 else np.ones(1)
    else:
        rel = np.asarray(relevance, dtype=np.float64)
        if rel.shape != (n,):
            raise ConfigError(f"got {n} items but {rel.shape[0]} relevance scores")
        span = rel.max() - rel.min()
        rel = (rel - rel.min()) / span if span > 0 else np.ones(n)
    chosen: list[int] = []
    remaining = np.ones(n, dtype=bool)
    max_sim = np.zeros(n)
    for _ in range(limit):
        gain = (1.0 - diversity) * rel - diversity * max_sim
        gain[~remaining] = -np.inf
        pick = int(np.argmax(gain))  # argmax returns the first maximum: ties to earlier items
        chosen.append(pick)
        remaining[pick] = False
        max_sim = np.maximum(max_sim, sims[pick])
    return [items[i] for i in chosen]


def check_postprocess_options(near_duplicates: float | None, diversity: float | None) -> None:
    """Check the options of :func:`snippet_postprocessor` (a :class:`ConfigError` names the bad
    one)."""
    if near_duplicates is not None and not _number_in(near_duplicates, 0.0, 1.0, open_low=True):
        raise ConfigError(f"near_duplicates must be in (0, 1], got {near_duplicates}")
    if diversity is not None and not _number_in(diversity, 0.0, 1.0):
        raise ConfigError(f"diversity must be between 0 and 1, got {diversity}")


def _number_in(value: object, low: float, high: float, *, open_low: bool = False) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return (low < value if open_low else low <= value) and value <= high


def snippet_postprocessor(
    *, near_duplicates: float | None = None, diversity: float | None = None
) -> Postprocessor:
    """The post-fusion stage over snippets: de-duplication, then (if given) near-duplicate
    removal at Jaccard ``near_duplicates`` and MMR reordering with ``diversity``, both over the
    snippets' word sets. The stage only drops or reorders (the :class:`Postprocessor` checks)."""
    check_postprocess_options(near_duplicates, diversity)
    steps: list[PostprocessStep] = [deduplicate]
    if near_duplicates is not None:
        threshold = near_duplicates

        def drop_near_duplicates(snippets: Sequence[Snippet]) -> list[Snippet]:
            sets = [word_set(s.text) for s in snippets]
            return remove_near_duplicates(snippets, token_sets=sets, threshold=threshold)

        steps.append(drop_near_duplicates)
    if diversity is not None:
        weight = diversity

        def diversify(snippets: Sequence[Snippet]) -> list[Snippet]:
            sets = [word_set(s.text) for s in snippets]
            relevance = [s.score for s in snippets]
            return mmr_order(snippets, token_sets=sets, relevance=relevance, diversity=weight)

        steps.append(diversify)
    return Postprocessor(tuple(steps))
