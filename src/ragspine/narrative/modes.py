"""Retrieval modes and what each one builds.

``economy``, ``bm25`` and ``lexical`` are purely lexical: they never construct (or import) an
embedder or a vector index. ``hybrid`` and ``auto`` are reserved for vector search.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from ragspine.errors import ConfigError
from ragspine.narrative.indexes import IndexFields


class RetrievalMode(StrEnum):
    """How the narrative channel retrieves chunks."""

    ECONOMY = "economy"
    """BM25 over the child text alone, a candidate pool of exactly ``top_k`` per library."""
    BM25 = "bm25"
    """BM25 over document title + child text (the classic BEIR setup), pool ``max(top_k, 50)``."""
    LEXICAL = "lexical"
    """BM25 over title + heading path + child text, pool ``max(top_k, 100)``."""
    HYBRID = "hybrid"
    """Lexical + vector search fused by RRF (needs the vector issue; not available yet)."""
    AUTO = "auto"
    """``hybrid`` when an embedder is installed, else ``bm25`` (not available yet)."""


@dataclass(frozen=True, slots=True)
class ModePlan:
    """The stages a mode runs: which index fields and how many candidates per library."""

    mode: RetrievalMode
    fields: IndexFields
    min_pool: int
    exact_pool: bool = False

    def pool(self, top_k: int) -> int:
        """Candidates fetched from each library for a request of ``top_k``."""
        return top_k if self.exact_pool else max(top_k, self.min_pool)


PLANS: dict[RetrievalMode, ModePlan] = {
    RetrievalMode.ECONOMY: ModePlan(RetrievalMode.ECONOMY, IndexFields.TEXT, 0, exact_pool=True),
    RetrievalMode.BM25: ModePlan(RetrievalMode.BM25, IndexFields.TITLE_TEXT, 50),
    RetrievalMode.LEXICAL: ModePlan(RetrievalMode.LEXICAL, IndexFields.TITLE_HEADING_TEXT, 100),
}


def parse_mode(raw: str | RetrievalMode) -> RetrievalMode:
    """Parse a mode name; an unknown name is an error that lists the modes."""
    try:
        return RetrievalMode(str(raw).strip().lower())
    except ValueError:
        names = ", ".join(mode.value for mode in RetrievalMode)
        raise ConfigError(f"unknown retrieval mode {raw!r}: use one of {names}") from None


def plan_for(raw: str | RetrievalMode) -> ModePlan:
    """The plan of a lexical mode; vector modes raise a :class:`ConfigError` for now."""
    mode = parse_mode(raw)
    plan = PLANS.get(mode)
    if plan is None:
        available = ", ".join(m.value for m in PLANS)
        raise ConfigError(
            f"retrieval mode {mode.value!r} needs vector search, which is not available yet: "
            f"use one of {available}"
        )
    return plan
