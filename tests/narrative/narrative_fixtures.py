"""Small in-memory narrative corpus with mixed sensitivities, and a deliberately leaky backend."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ragspine.narrative.retrieve.expansion import ParentSection, Passage, SentenceWindow
from ragspine.narrative.retrieve.snippets import ChunkRecord, LibraryHit
from ragspine.security import Sensitivity

SECRET = "SECRET-MERGER-ALPHA"
CONFIDENTIAL = "Margins internally reached 41 percent"


@dataclass(frozen=True, slots=True)
class Chunk:
    chunk_id: str
    doc_id: str
    library_id: str
    text: str
    source_locator: str
    parent_id: str | None
    parent_locator: str | None
    metadata: Mapping[str, object] = field(default_factory=dict)
    sensitivity: int = 0
    allowed_groups: frozenset[str] = frozenset()


PUB, INT, CONF, RES = (int(s) for s in Sensitivity)

CHUNKS = [
    Chunk(
        "c1",
        "d1",
        "reports",
        "Revenue grew 12% in EMEA during 2023.",
        "ar.pdf#p1",
        "p1",
        "ar.pdf#s1",
        {"year": 2023, "region": "EMEA"},
        PUB,
    ),
    Chunk(
        "c2",
        "d1",
        "reports",
        f"{SECRET} revenue plans target 2025.",
        "ar.pdf#p2",
        "p1",
        "ar.pdf#s1",
        {"year": 2023, "region": "EMEA"},
        RES,
    ),
    Chunk(
        "c3",
        "d1",
        "reports",
        f"{CONFIDENTIAL} on revenue.",
        "ar.pdf#p3",
        "p1",
        "ar.pdf#s1",
        {"year": 2023, "region": "EMEA"},
        CONF,
    ),
    Chunk(
        "c4",
        "d2",
        "reports",
        "APAC revenue was flat in 2022.",
        "q.pdf#p1",
        "p2",
        "q.pdf#s9",
        {"year": 2022, "region": "APAC"},
        PUB,
    ),
    Chunk(
        "c5",
        "d3",
        "policies",
        "Revenue recognition follows the group policy.",
        "pol.md#l4",
        "p3",
        "pol.md#h2",
        {"year": 2021, "region": "EMEA"},
        INT,
        frozenset({"finance"}),
    ),
]
BY_KEY = {(c.library_id, c.chunk_id): c for c in CHUNKS}

PARENTS = {
    "p1": ParentSection(
        "p1",
        "ar.pdf#s1",
        (
            Passage("Revenue grew 12% in EMEA during 2023.", PUB),
            Passage(f"{SECRET} revenue plans target 2025.", RES),
            Passage(f"{CONFIDENTIAL} on revenue.", CONF),
            Passage("Revenue in the prior year was 900 million.", PUB),
        ),
        PUB,
    ),
    # a restricted section holding a public child: the section must never be expanded
    "p2": ParentSection(
        "p2",
        "q.pdf#s9",
        (
            Passage("APAC revenue was flat in 2022.", PUB),
            Passage(f"{SECRET} APAC revenue carve-out.", PUB),
        ),
        RES,
    ),
    "p3": ParentSection(
        "p3", "pol.md#h2", (Passage("Revenue recognition follows the group policy.", INT),), INT
    ),
}

WINDOWS = {
    "c1": SentenceWindow(
        "c1",
        (
            Passage("Overview of revenue.", PUB),
            Passage("Revenue grew 12% in EMEA during 2023.", PUB),
            Passage(f"{SECRET} revenue plans target 2025.", RES),
        ),
    ),
}


class LeakySource:
    """Returns whatever is asked for, restricted items included."""

    def get_chunks(self, keys: Sequence[tuple[str, str]]) -> Mapping[tuple[str, str], ChunkRecord]:
        return {k: BY_KEY[k] for k in keys if k in BY_KEY}

    def get_parents(self, parent_ids: Sequence[str]) -> Mapping[str, ParentSection]:
        return {p: PARENTS[p] for p in parent_ids if p in PARENTS}

    def get_windows(self, chunk_ids: Sequence[str]) -> Mapping[str, SentenceWindow]:
        return {c: WINDOWS[c] for c in chunk_ids if c in WINDOWS}


def leaky_search(library_id: str, question: str, top_k: int) -> list[LibraryHit]:
    """Ignores visibility and filters: returns every chunk of the library."""
    return [LibraryHit(c.chunk_id, 1.0, library_id) for c in CHUNKS if c.library_id == library_id][
        :top_k
    ]
