"""Reciprocal-rank fusion of ranked hit lists (one list per library or per retriever)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ragspine.errors import QueryError
from ragspine.narrative.retrieve.snippets import LibraryHit

DEFAULT_RRF_K = 60


@dataclass(frozen=True, slots=True)
class FusedHit:
    """A chunk after fusion of several ranked lists: its RRF score, the ranks it held in each
    list it appeared in, and the :class:`LibraryHit` it first appeared as."""

    chunk_id: str
    library_id: str
    score: float
    hit: LibraryHit
    ranks: tuple[tuple[int, int], ...]
    """``(list index, rank from 1)`` for every list the chunk appeared in."""


def check_rrf_k(k: object) -> None:
    """Check the RRF constant: a finite number > 0 (a :class:`QueryError` otherwise)."""
    if isinstance(k, bool) or not isinstance(k, int | float) or not math.isfinite(k) or k <= 0:
        raise QueryError(f"RRF k must be a positive number, got {k!r}; the usual value is 60")


def reciprocal_rank_fusion(
    ranked_lists: Sequence[Sequence[LibraryHit]],
    *,
    k: float = DEFAULT_RRF_K,
    weights: Sequence[float] | None = None,
    list_order: Sequence[str] | None = None,
) -> list[FusedHit]:
    """Fuse ranked lists: score = sum of ``w / (k + rank)`` over the lists, rank from 1.

    ``list_order`` names the library of each list (hits are tagged with it; without it each hit's
    own ``library_id`` is kept). A chunk is identified by ``(library_id, chunk_id)``; within one
    list only its first occurrence counts. Ties break by library order (first appearance in
    ``list_order``, else in the lists), then chunk id.
    """
    check_rrf_k(k)
    count = len(ranked_lists)
    if weights is None:
        weights = [1.0] * count
    elif len(weights) != count:
        raise QueryError(
            f"RRF got {len(weights)} weights for {count} ranked lists: pass one weight per list"
        )
    for weight in weights:
        if isinstance(weight, bool) or not math.isfinite(weight) or weight < 0:
            raise QueryError(f"RRF weights must be finite and non-negative, got {list(weights)!r}")
    if list_order is not None and len(list_order) != count:
        raise QueryError(
            f"RRF got {len(list_order)} library names for {count} ranked lists: "
            "name the library of every list"
        )

    library_rank: dict[str, int] = {}
    if list_order is not None:
        for library in list_order:
            library_rank.setdefault(library, len(library_rank))
    scores: dict[tuple[str, str], float] = {}
    first_hit: dict[tuple[str, str], LibraryHit] = {}
    ranks: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for index, (hits, weight) in enumerate(zip(ranked_lists, weights, strict=True)):
        seen: set[tuple[str, str]] = set()
        for rank, hit in enumerate(hits, start=1):
            library = list_order[index] if list_order is not None else hit.library_id
            key = (library, hit.chunk_id)
            if key in seen:
                continue
            seen.add(key)
            library_rank.setdefault(library, len(library_rank))
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
            first_hit.setdefault(key, hit)
            ranks.setdefault(key, []).append((index, rank))

    ordered = sorted(scores, key=lambda key: (-scores[key], library_rank[key[0]], key[1]))
    return [
        FusedHit(
            chunk_id=chunk_id,
            library_id=library,
            score=scores[(library, chunk_id)],
            hit=first_hit[(library, chunk_id)],
            ranks=tuple(ranks[(library, chunk_id)]),
        )
        for library, chunk_id in ordered
    ]


def fuse_keyed(
    ranked_lists: Sequence[Sequence[tuple[int, float]]],
    *,
    k: float = DEFAULT_RRF_K,
    weights: Sequence[float] | None = None,
) -> list[tuple[int, float]]:
    """RRF over ranked ``(key, score)`` lists of one library (e.g. lexical and vector channels):
    ``(key, fused score)`` best first, ties by key."""
    hits = [[LibraryHit(str(key), score, "", "") for key, score in pairs] for pairs in ranked_lists]
    fused = reciprocal_rank_fusion(hits, k=k, weights=weights, list_order=[""] * len(hits))
    return sorted(((int(f.chunk_id), f.score) for f in fused), key=lambda pair: (-pair[1], pair[0]))
