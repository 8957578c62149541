"""Retrieval modes and what each one builds.

``economy``, ``bm25`` and ``lexical`` are purely lexical: they never construct (or import) an
embedder or a vector index. ``vector`` searches the vector index alone, ``hybrid`` fuses lexical
and vector search per library by RRF, and ``auto`` runs ``hybrid`` for a library that keeps
vectors when the embedder is installed, else ``lexical``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from ragspine.errors import ConfigError
from ragspine.narrative.index.lexical.library_indexes import IndexFields


class RetrievalMode(StrEnum):
    """How the narrative channel retrieves chunks."""

    ECONOMY = "economy"
    """BM25 over the child text alone, a candidate pool of exactly ``top_k`` per library."""
    BM25 = "bm25"
    """BM25 over document title + child text (the classic BEIR setup), pool ``max(top_k, 50)``."""
    LEXICAL = "lexical"
    """BM25 over title + heading path + child text, pool ``max(top_k, 100)``."""
    HYBRID = "hybrid"
    """``lexical`` + ``vector`` per library, fused by RRF (needs ``ragspine[onnx]``)."""
    VECTOR = "vector"
    """Dense search alone over title + heading path + child embeddings (needs the extra)."""
    AUTO = "auto"
    """``hybrid`` for libraries with vectors when the embedder is installed, else ``lexical``."""


@dataclass(frozen=True, slots=True)
class ModePlan:
    """The stages a mode runs: which index fields and how many candidates per library."""

    mode: RetrievalMode
    fields: IndexFields
    min_pool: int
    exact_pool: bool = False
    lexical: bool = True
    dense: bool = False

    def pool(self, top_k: int) -> int:
        """Candidates fetched from each library for a request of ``top_k``."""
        return top_k if self.exact_pool else max(top_k, self.min_pool)


PLANS: dict[RetrievalMode, ModePlan] = {
    RetrievalMode.ECONOMY: ModePlan(RetrievalMode.ECONOMY, IndexFields.TEXT, 0, exact_pool=True),
    RetrievalMode.BM25: ModePlan(RetrievalMode.BM25, IndexFields.TITLE_TEXT, 50),
    RetrievalMode.LEXICAL: ModePlan(RetrievalMode.LEXICAL, IndexFields.TITLE_HEADING_TEXT, 100),
    RetrievalMode.HYBRID: ModePlan(
        RetrievalMode.HYBRID, IndexFields.TITLE_HEADING_TEXT, 100, dense=True
    ),
    RetrievalMode.VECTOR: ModePlan(
        RetrievalMode.VECTOR, IndexFields.TITLE_HEADING_TEXT, 100, lexical=False, dense=True
    ),
    RetrievalMode.AUTO: ModePlan(
        RetrievalMode.AUTO, IndexFields.TITLE_HEADING_TEXT, 100, dense=True
    ),
}


def parse_mode(raw: str | RetrievalMode) -> RetrievalMode:
    """Parse a mode name; an unknown name is an error that lists the modes."""
    try:
        return RetrievalMode(str(raw).strip().lower())
    except ValueError:
        names = ", ".join(mode.value for mode in RetrievalMode)
        raise ConfigError(f"unknown retrieval mode {raw!r}: use one of {names}") from None


def plan_for(raw: str | RetrievalMode) -> ModePlan:
    """The plan of a mode (an unknown name is a :class:`ConfigError` listing the modes)."""
    return PLANS[parse_mode(raw)]
