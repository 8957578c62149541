"""Model-derived relation extraction: a :class:`~ragspine.graph.extract.RelationExtractor` that
asks a generation provider.

The model sees one chunk's text and the glossary terms it names, and may propose ``parent_of``,
``derives_from`` or ``co_occurs`` relations between those terms as JSON. Only relations between
two different terms the chunk names, of one of those kinds, are kept: the model cannot add a
node. Its edges are ``model-derived`` and stored unverified (:func:`~ragspine.graph.extract.
edges_from`), with the caller's run id as lineage. A restricted chunk is never sent, whatever
the caller passes; :meth:`~ragspine.workspace.Workspace.extract_relations` also passes only the
chunks the caller may see. A chunk naming fewer than two terms is not sent either.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ragspine.glossary import DEFAULT_CHANNEL, Glossary, TermType
from ragspine.graph.extract import ChunkText, ExtractedRelation
from ragspine.graph.relations import EdgeKind, Origin, term_node
from ragspine.llm.provider import Message, Provider, Role
from ragspine.security import Sensitivity

MODEL_KINDS = (EdgeKind.PARENT_OF, EdgeKind.DERIVES_FROM, EdgeKind.CO_OCCURS)
"""What a model may propose (``mentions`` come from the glossary extractor only)."""

EXTRACT_PROMPT = (
    "You read one passage of a business report and list relations between the glossary terms "
    "it names. Use only the term ids given. Kinds: parent_of (the source entity contains the "
    "target), derives_from (the source metric is computed from the target metric), co_occurs "
    "(the passage relates the two terms). Reply with JSON only: "
    '{"relations": [{"source": "entity:a", "target": "metric:b", "kind": "co_occurs"}]}'
)

_OBJECT_RE = re.compile(r"\{.*\}", re.DOTALL)


class ModelExtractor:
    """Relations a model proposes between the glossary terms of one chunk."""

    origin = Origin.MODEL_DERIVED

    def __init__(self, provider: Provider, glossary: Glossary) -> None:
        self._provider = provider
        self._glossary = glossary

    def _named(self, text: str) -> dict[str, str]:
        """Term node -> label, for each glossary term ``text`` names (``total`` left out)."""
        named: dict[str, str] = {}
        vocabularies = {
            TermType.METRIC: self._glossary.metrics,
            TermType.ENTITY: self._glossary.entities,
            TermType.CHANNEL: self._glossary.channels,
        }
        for hit in self._glossary.find_terms(text):
            if hit.type is TermType.CHANNEL and hit.code == DEFAULT_CHANNEL:
                continue
            label = vocabularies[hit.type].terms[hit.code].label
            named.setdefault(term_node(hit.type, hit.code), label)
        return dict(sorted(named.items()))

    def messages(self, chunk: ChunkText, named: dict[str, str]) -> list[Message]:
        """The conversation sent for ``chunk``."""
        terms = "\n".join(f"- {node} ({label})" for node, label in named.items())
        return [
            Message(Role.SYSTEM, EXTRACT_PROMPT),
            Message(Role.USER, f"Terms:\n{terms}\n\nPassage:\n{chunk.text}"),
        ]

    def extract(self, chunk: ChunkText) -> list[ExtractedRelation]:
        """The relations the model proposes for ``chunk`` that pass the checks above, in
        (kind, source, target) order."""
        if chunk.sensitivity >= Sensitivity.RESTRICTED:
            return []
        named = self._named(chunk.text)
        if len(named) < 2:
            return []
        reply = self._provider.generate(self.messages(chunk, named))
        found: set[tuple[str, str, EdgeKind]] = set()
        for item in _relations(reply.text):
            kind = _kind(item.get("kind"))
            source, target = item.get("source"), item.get("target")
            if kind is None or source not in named or target not in named or source == target:
                continue
            assert isinstance(source, str) and isinstance(target, str)
            if kind is EdgeKind.CO_OCCURS and target < source:
                source, target = target, source  # co_occurs edges are stored in code order
            found.add((source, target, kind))
        return [
            ExtractedRelation(source, target, kind)
            for source, target, kind in sorted(found, key=lambda r: (r[2].value, r[0], r[1]))
        ]


def _relations(text: str) -> list[dict[str, Any]]:
    """The relation objects of a reply; anything malformed gives none."""
    match = _OBJECT_RE.search(text)
    if match is None:
        return []
    try:
        data = json.loads(match.group(0))
    except ValueError:
        return []
    items = data.get("relations") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return []
    return [item for item in items if isinstance(item, dict)]


def _kind(raw: object) -> EdgeKind | None:
    if not isinstance(raw, str):
        return None
    try:
        kind = EdgeKind(raw.strip().lower())
    except ValueError:
        return None
    return kind if kind in MODEL_KINDS else None
