"""Library descriptions from content: the terms that set one library apart from the others.

Routing works from descriptions; when a library has no hand-written one (or a thin one), its
most distinctive terms make a good addition: :func:`distinctive_terms` ranks each library's terms
by how much more often its documents use them than the other libraries' documents do.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping

from ragspine.errors import ConfigError
from ragspine.narrative.terms import terms


def distinctive_terms(
    texts_by_library: Mapping[str, Iterable[str]], *, top_n: int = 30, min_documents: int = 3
) -> dict[str, tuple[str, ...]]:
    """Each library's ``top_n`` most distinctive (stemmed) terms, best first, ties by term.

    A term's weight is the share of the library's documents using it minus the share among the
    other libraries' documents, times ``log(1 + documents using it here)``; terms used by fewer than
    ``min_documents`` of the library's documents are ignored.
    """
    if top_n < 1:
        raise ConfigError(f"top_n must be at least 1, got {top_n!r}")
    df: dict[str, Counter[str]] = {}
    sizes: dict[str, int] = {}
    for library_id, texts in texts_by_library.items():
        counts: Counter[str] = Counter()
        size = 0
        for text in texts:
            counts.update(set(terms(text)))
            size += 1
        df[library_id] = counts
        sizes[library_id] = size
    total: Counter[str] = Counter()
    for counts in df.values():
        total.update(counts)
    all_docs = sum(sizes.values())
    result: dict[str, tuple[str, ...]] = {}
    for library_id, counts in df.items():
        own = sizes[library_id] or 1
        others = (all_docs - sizes[library_id]) or 1
        weighted = []
        for term, n in counts.items():
            if n < min_documents or term.isdigit():
                continue
            share = n / own - (total[term] - n) / others
            if share > 0:
                weighted.append((-share * math.log1p(n), term))
        weighted.sort()
        result[library_id] = tuple(term for _, term in weighted[:top_n])
    return result
