"""Library routing: pick libraries from their descriptions, never silently search nothing.

:class:`LibraryRouter` scores each library's description (and its id's words) against the
question with BM25 and keeps those within a relative threshold of the best. :func:`route_libraries`
turns any router's answer into a :class:`RoutingDecision`, falling back to every registered
library when the router raises, returns nothing or names libraries that do not exist.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from ragspine.errors import ConfigError, QueryError
from ragspine.narrative.terms import terms


class Router(Protocol):
    """Anything that names the libraries worth searching for a question."""

    def route(self, question: str) -> Sequence[str]: ...


class RoutingCause(StrEnum):
    """Why a set of libraries was searched."""

    EXPLICIT = "explicit"
    ROUTED = "routed"
    NO_ROUTER = "no_router"
    ROUTER_FAILED = "router_failed"
    ROUTER_EMPTY = "router_empty"
    ROUTER_UNKNOWN = "router_unknown"
    NO_LIBRARIES = "no_libraries"


@dataclass(frozen=True, slots=True)
class RoutingDecision:
    """The libraries to search, in registered order, and why."""

    libraries: tuple[str, ...]
    reason: str
    fallback: bool
    cause: RoutingCause


@dataclass(frozen=True, slots=True)
class LibraryScore:
    """One library's routing score for a question."""

    library_id: str
    score: float


def id_words(library_id: str) -> str:
    """The words of a library id: ``clinical_trials`` and ``clinicalTrials`` give two words."""
    return re.sub(r"[_\-./:]+|(?<=[a-z])(?=[A-Z])", " ", library_id)


class LibraryRouter:
    """Deterministic lexical router over ``(library_id, description)`` pairs.

    A library is picked when its BM25 score is at least ``min_score`` and at least
    ``relative_threshold`` times the best score; ``max_libraries`` caps how many are picked.
    No overlap at all picks nothing, which :func:`route_libraries` turns into "search all".
    """

    def __init__(
        self,
        libraries: Iterable[tuple[str, str]] | Mapping[str, str],
        *,
        relative_threshold: float = 0.5,
        min_score: float = 0.0,
        max_libraries: int | None = None,
        k1: float = 1.2,
        b: float = 0.75,
    ) -> None:
        pairs = list(libraries.items() if isinstance(libraries, Mapping) else libraries)
        ids = [library_id for library_id, _ in pairs]
        if len(set(ids)) != len(ids):
            raise ConfigError(f"library ids must be unique, got {ids!r}")
        if not 0.0 <= relative_threshold <= 1.0:
            raise ConfigError(
                f"relative_threshold must be within [0, 1], got {relative_threshold!r}"
            )
        if min_score < 0:
            raise ConfigError(f"min_score must be non-negative, got {min_score!r}")
        if max_libraries is not None and max_libraries < 1:
            raise ConfigError(f"max_libraries must be at least 1, got {max_libraries!r}")
        if k1 < 0 or not 0.0 <= b <= 1.0:
            raise ConfigError(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={k1!r}, b={b!r}")
        self.library_ids = tuple(ids)
        self.relative_threshold = relative_threshold
        self.min_score = min_score
        self.max_libraries = max_libraries
        self._k1 = k1
        self._b = b
        self._docs = [
            Counter(terms(f"{id_words(library_id)} {description}"))
            for library_id, description in pairs
        ]
        self._lengths = [sum(doc.values()) for doc in self._docs]
        self._avg_length = (sum(self._lengths) / len(self._lengths)) if self._lengths else 0.0
        df: Counter[str] = Counter()
        for doc in self._docs:
            df.update(doc.keys())
        count = len(self._docs)
        self._idf = {t: math.log(1.0 + (count - n + 0.5) / (n + 0.5)) for t, n in df.items()}

    def scores(self, question: str) -> list[LibraryScore]:
        """Every library's score for ``question``, best first (ties by registered order)."""
        query = sorted(set(terms(question)))
        results: list[tuple[float, int]] = []
        for index, (doc, length) in enumerate(zip(self._docs, self._lengths, strict=True)):
            norm = self._k1 * (1 - self._b + self._b * length / (self._avg_length or 1.0))
            score = 0.0
            for term in query:
                tf = doc.get(term, 0)
                if tf:
                    score += self._idf[term] * tf * (self._k1 + 1) / (tf + norm)
            results.append((score, index))
        results.sort(key=lambda item: (-item[0], item[1]))
        return [LibraryScore(self.library_ids[i], s) for s, i in results]

    def route(self, question: str) -> list[str]:
        """The picked library ids, in registered order (empty when nothing overlaps)."""
        scored = self.scores(question)
        if not scored or scored[0].score <= 0:
            return []
        cutoff = max(self.min_score, self.relative_threshold * scored[0].score)
        picked = [s for s in scored if s.score > 0 and s.score >= cutoff]
        if self.max_libraries is not None:
            picked = picked[: self.max_libraries]
        chosen = {s.library_id for s in picked}
        return [library_id for library_id in self.library_ids if library_id in chosen]


def route_libraries(
    router: Router | None,
    question: str,
    registered: Sequence[str],
    *,
    explicit: Sequence[str] | None = None,
) -> RoutingDecision:
    """Decide which registered libraries to search; any router failure means all of them."""
    everything = tuple(dict.fromkeys(registered))
    if explicit is not None:
        unknown = sorted(set(explicit) - set(everything))
        if unknown or not explicit:
            raise QueryError(
                f"unknown or missing libraries {unknown!r}: name one or more of "
                f"{list(everything)!r}"
            )
        chosen = [lib for lib in everything if lib in set(explicit)]
        return RoutingDecision(
            tuple(chosen), "libraries named by the caller", False, RoutingCause.EXPLICIT
        )
    if not everything:
        return RoutingDecision((), "no libraries are registered", True, RoutingCause.NO_LIBRARIES)
    if router is None:
        return RoutingDecision(
            everything,
            "no router configured: searching every library",
            False,
            RoutingCause.NO_ROUTER,
        )
    try:
        named = list(router.route(question) or ())
    except Exception as exc:  # a failing router must never stop the search
        return RoutingDecision(
            everything,
            f"router raised {type(exc).__name__}: searching every library",
            True,
            RoutingCause.ROUTER_FAILED,
        )
    if not named:
        return RoutingDecision(
            everything,
            "router picked no library: searching every library",
            True,
            RoutingCause.ROUTER_EMPTY,
        )
    unknown = sorted({str(n) for n in named if n not in everything})
    if unknown:
        return RoutingDecision(
            everything,
            f"router named unknown libraries {unknown!r}: searching every library",
            True,
            RoutingCause.ROUTER_UNKNOWN,
        )
    chosen_set = set(named)
    routed = tuple(lib for lib in everything if lib in chosen_set)
    return RoutingDecision(
        routed,
        f"router picked {len(routed)} of {len(everything)} libraries",
        False,
        RoutingCause.ROUTED,
    )
