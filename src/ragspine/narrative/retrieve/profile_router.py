"""Library profiles from content, for routing that knows what each library holds.

:func:`distinctive_terms` ranks each library's terms by how much more often its documents use
them than the others do (good words for a description). :class:`LibraryProfile` keeps a library's
term counts (JSON-serialisable), and :class:`ProfileRouter` routes by smoothed query likelihood
over those counts plus the descriptions (a :class:`~ragspine.narrative.retrieve.routing.Router`).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ragspine.analysis import routing_terms
from ragspine.errors import ConfigError
from ragspine.narrative.retrieve.routing import LibraryScore
from ragspine.stores.chunks import ChunkStore


def id_words(library_id: str) -> str:
    """The words of a library id: ``clinical_trials`` and ``clinicalTrials`` give two words."""
    return re.sub(r"[_\-./:]+|(?<=[a-z])(?=[A-Z])", " ", library_id)


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
            counts.update(set(routing_terms(text)))
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
            if n < min_documents or term.isdigit() or len(term) < 2:
                continue
            share = n / own - (total[term] - n) / others
            if share > 0:
                weighted.append((-share * math.log1p(n), term))
        weighted.sort()
        result[library_id] = tuple(term for _, term in weighted[:top_n])
    return result


@dataclass(frozen=True, slots=True)
class LibraryProfile:
    """A library's term statistics: how often each (stemmed) term occurs in its chunks."""

    library_id: str
    term_counts: Mapping[str, int]

    @classmethod
    def from_texts(cls, library_id: str, texts: Iterable[str]) -> LibraryProfile:
        """Count the terms of a library's chunk texts."""
        counts: Counter[str] = Counter()
        for text in texts:
            counts.update(routing_terms(text))
        return cls(library_id, dict(sorted(counts.items())))

    @classmethod
    def stored(cls, store: ChunkStore, library_id: str, max_level: int) -> LibraryProfile:
        """The profile of the chunks a reader at ``max_level`` may see, from the store's counts."""
        return cls(library_id, store.term_counts(library_id, max_level))

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready form (terms sorted)."""
        return {
            "library_id": self.library_id,
            "term_counts": dict(sorted(self.term_counts.items())),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> LibraryProfile:
        """Read :meth:`to_dict` output back."""
        counts = data.get("term_counts")
        if not isinstance(data.get("library_id"), str) or not isinstance(counts, Mapping):
            raise ConfigError("a library profile needs 'library_id' and 'term_counts'")
        return cls(str(data["library_id"]), {str(t): int(n) for t, n in counts.items()})


class ProfileRouter:
    """Routes by how likely each library's content makes the question (smoothed query likelihood).

    Each library's score is the log-likelihood ratio of the question's terms under the library's
    term distribution (Dirichlet-smoothed with ``mu``, by default 2000 or the mean library length
    when smaller) against all libraries together; a
    description, when given, adds each of its terms ``description_weight`` times. Libraries
    within ``margin`` of the best score are picked; a question sharing no term with any library
    picks none (so :func:`~ragspine.narrative.retrieve.routing.route_libraries` searches all).
    """

    def __init__(
        self,
        profiles: Iterable[LibraryProfile],
        *,
        descriptions: Mapping[str, str] | None = None,
        margin: float = 2.0,
        mu: float | None = None,
        description_weight: int = 5,
        max_libraries: int | None = None,
    ) -> None:
        profiles = list(profiles)
        ids = [p.library_id for p in profiles]
        if len(set(ids)) != len(ids):
            raise ConfigError(f"library ids must be unique, got {ids!r}")
        unknown = sorted(set(descriptions or {}) - set(ids))
        if unknown:
            raise ConfigError(f"descriptions name libraries without a profile: {unknown!r}")
        if margin < 0 or (mu is not None and mu <= 0) or description_weight < 0:
            raise ConfigError(
                f"need margin >= 0, mu > 0, description_weight >= 0; got {margin!r}, {mu!r}, "
                f"{description_weight!r}"
            )
        if max_libraries is not None and max_libraries < 1:
            raise ConfigError(f"max_libraries must be at least 1, got {max_libraries!r}")
        self.library_ids = tuple(ids)
        self.margin = margin
        self.max_libraries = max_libraries
        self._counts: list[Counter[str]] = []
        for profile in profiles:
            counts = Counter(profile.term_counts)
            text = (descriptions or {}).get(profile.library_id, "")
            for term in routing_terms(f"{id_words(profile.library_id)} {text}"):
                counts[term] += description_weight
            self._counts.append(counts)
        self._lengths = [sum(c.values()) for c in self._counts]
        self._background: Counter[str] = Counter()
        for counts in self._counts:
            self._background.update(counts)
        self._total = sum(self._background.values())
        mean_length = self._total / len(self._counts) if self._counts else 1.0
        self.mu = mu if mu is not None else max(1.0, min(2000.0, mean_length))

    def scores(self, question: str) -> list[LibraryScore]:
        """Every library's score for ``question``, best first (ties by registered order)."""
        query = [t for t in routing_terms(question) if self._background.get(t)]
        results: list[tuple[float, int]] = []
        for index, (counts, length) in enumerate(zip(self._counts, self._lengths, strict=True)):
            score = 0.0
            for term in query:
                p_background = self._background[term] / self._total
                p_library = (counts.get(term, 0) + self.mu * p_background) / (length + self.mu)
                score += math.log(p_library / p_background)
            results.append((score, index))
        results.sort(key=lambda item: (-item[0], item[1]))
        return [LibraryScore(self.library_ids[i], s) for s, i in results]

    def route(self, question: str) -> list[str]:
        """The picked library ids, in registered order (empty when no term is known)."""
        if not any(self._background.get(t) for t in routing_terms(question)):
            return []
        scored = self.scores(question)
        best = scored[0].score
        picked = [s for s in scored if s.score >= best - self.margin]
        if self.max_libraries is not None:
            picked = picked[: self.max_libraries]
        chosen = {s.library_id for s in picked}
        return [library_id for library_id in self.library_ids if library_id in chosen]
