"""Nodes and edges of the relation graph, and the edges the glossary declares.

A node is a glossary term (``metric:revenue``, ``entity:acme``, ``channel:online``) or a document
(``document:LIBRARY:DOC_ID``). An edge joins two nodes with a :class:`EdgeKind`, says where it
came from (:class:`Origin`: a deterministic rule or a model), whether a person confirmed it, the
lineage its caller supplied (library, document, chunk, run id, locator) and the sensitivity and
groups of the content it was derived from, which decide who may see it
(:func:`ragspine.security.visible`).

Model-derived edges are never stored verified: only :meth:`RelationStore.verify
<ragspine.stores.graph.RelationStore.verify>` (a person confirming one) sets the flag. An edge's
id is a digest of what it says and where it was found, so it does not depend on which other
(possibly hidden) edges exist.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypeVar

from ragspine.errors import QueryError, quote_input
from ragspine.glossary import Glossary, TermType
from ragspine.security import Sensitivity
from ragspine.text import closest

E = TypeVar("E", bound=StrEnum)


def _parse_enum(kind: type[E], raw: str | E, what: str) -> E:
    if isinstance(raw, kind):
        return raw
    try:
        return kind(str(raw).strip().lower())
    except ValueError:
        valid = ", ".join(member.value for member in kind)
        raise QueryError(f"unknown {what} {quote_input(raw)}: use one of {valid}") from None


class EdgeKind(StrEnum):
    """What an edge says about its two nodes."""

    PARENT_OF = "parent_of"
    """Glossary hierarchy: the source entity (or channel) is the target's parent."""
    MENTIONS = "mentions"
    """The source document mentions the target term in the chunk its lineage names."""
    CO_OCCURS = "co_occurs"
    """Two terms named in one sentence (source and target in code order)."""
    DERIVES_FROM = "derives_from"
    """The source metric is computed from the target metric (a glossary ``derivation``)."""

    @classmethod
    def parse(cls, raw: str | EdgeKind) -> EdgeKind:
        """Parse a kind name; the error lists the valid ones."""
        return _parse_enum(cls, raw, "edge kind")


class Origin(StrEnum):
    """Who made an edge: a deterministic rule, or a model (unverified until a person confirms)."""

    DETERMINISTIC = "deterministic"
    MODEL_DERIVED = "model-derived"

    @classmethod
    def parse(cls, raw: str | Origin) -> Origin:
        """Parse an origin name; the error lists the valid ones."""
        return _parse_enum(cls, raw, "edge origin")


class NodeKind(StrEnum):
    METRIC = "metric"
    ENTITY = "entity"
    CHANNEL = "channel"
    DOCUMENT = "document"


TERM_KINDS = {TermType.METRIC: NodeKind.METRIC, TermType.ENTITY: NodeKind.ENTITY}
TERM_KINDS[TermType.CHANNEL] = NodeKind.CHANNEL
GLOSSARY_LIBRARY = ""
"""The library field of edges the glossary declares (no library is named ``""``)."""
GLOSSARY_DOCUMENT = "glossary"


def term_node(term_type: TermType, code: str) -> str:
    """The node id of a glossary term, e.g. ``entity:acme``."""
    return f"{TERM_KINDS[term_type].value}:{code}"


def document_node(library_id: str, doc_id: str) -> str:
    """The node id of a document, ``document:LIBRARY:DOC_ID``."""
    return f"{NodeKind.DOCUMENT.value}:{library_id}:{doc_id}"


@dataclass(frozen=True, slots=True)
class Node:
    """A node of the relation graph: its id, kind and a label to show."""

    id: str
    kind: NodeKind
    label: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind.value, "label": self.label}


@dataclass(frozen=True, slots=True)
class Lineage:
    """Where an edge was found, as its caller says: library, document, chunk, run, locator."""

    library_id: str = ""
    doc_id: str = ""
    chunk_id: str = ""
    run_id: str = ""
    locator: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "library_id": self.library_id,
            "doc_id": self.doc_id,
            "chunk_id": self.chunk_id,
            "run_id": self.run_id,
            "locator": dict(self.locator),
        }


def locator_text(locator: Mapping[str, Any]) -> str:
    """A locator's stored form: JSON with sorted keys (the same locator, the same text)."""
    return json.dumps(dict(locator), sort_keys=True, ensure_ascii=False, default=str)


@dataclass(frozen=True, slots=True)
class NewEdge:
    """An edge to store. ``verified`` defaults to true for a deterministic edge (a rule made
    it) and is ignored for a model-derived one (stored unverified whatever it says)."""

    source: str
    target: str
    kind: EdgeKind
    origin: Origin = Origin.DETERMINISTIC
    lineage: Lineage = Lineage()
    sensitivity: Sensitivity = Sensitivity.PUBLIC
    groups: frozenset[str] = frozenset()
    weight: int = 1
    """How many times the relation was seen where the lineage points (mentions in a chunk)."""
    verified: bool | None = None

    @property
    def edge_id(self) -> str:
        """A digest of what the edge says and where it was found (not of who may see it)."""
        return edge_id_of(self)

    @property
    def stored_verified(self) -> bool:
        """The flag a store keeps: never true for a model-derived edge."""
        if self.origin is Origin.MODEL_DERIVED:
            return False
        return True if self.verified is None else self.verified


def edge_id_of(edge: NewEdge) -> str:
    parts = [
        edge.kind.value,
        edge.source,
        edge.target,
        edge.origin.value,
        edge.lineage.library_id,
        edge.lineage.doc_id,
        edge.lineage.chunk_id,
        locator_text(edge.lineage.locator),
    ]
    digest = hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode("utf-8"))
    return "e" + digest.hexdigest()[:20]


@dataclass(frozen=True, slots=True)
class Edge:
    """A stored edge."""

    edge_id: str
    source: str
    target: str
    kind: EdgeKind
    origin: Origin
    verified: bool
    lineage: Lineage
    sensitivity: Sensitivity
    groups: frozenset[str] = frozenset()
    weight: int = 1
    verified_by: str = ""
    verified_at: str = ""

    def other(self, node: str) -> str:
        """The node at the other end from ``node``."""
        return self.target if node == self.source else self.source

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.edge_id,
            "kind": self.kind.value,
            "source": self.source,
            "target": self.target,
            "origin": self.origin.value,
            "verified": self.verified,
            "verified_by": self.verified_by,
            "verified_at": self.verified_at,
            "weight": self.weight,
            "sensitivity": self.sensitivity.label,
            "groups": sorted(self.groups),
            "lineage": self.lineage.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class EdgeQuery:
    """Which edges to read: narrowed by kind, origin, verified flag and touching nodes."""

    kind: EdgeKind | None = None
    origin: Origin | None = None
    verified: bool | None = None
    nodes: tuple[str, ...] | None = None
    """Edges with one of these nodes at either end (``None``: any)."""

    def matches(self, edge: Edge) -> bool:
        """Whether ``edge`` is one this query reads (the same test a store makes in SQL)."""
        return (
            (self.kind is None or edge.kind is self.kind)
            and (self.origin is None or edge.origin is self.origin)
            and (self.verified is None or edge.verified is self.verified)
            and (self.nodes is None or edge.source in self.nodes or edge.target in self.nodes)
        )


def glossary_edges(
    glossary: Glossary, *, derivations: Mapping[str, Iterable[str]] | None = None
) -> list[NewEdge]:
    """The edges the glossary declares: ``parent_of`` for entities and channels naming a known
    parent, and ``derives_from`` from each metric in ``derivations`` (metric code -> the metric
    codes its derivation reads, parsed by the caller) to its inputs. Public, deterministic."""
    edges: list[NewEdge] = []
    for term_type, vocabulary in (
        (TermType.ENTITY, glossary.entities),
        (TermType.CHANNEL, glossary.channels),
    ):
        section = "entities" if term_type is TermType.ENTITY else "channels"
        for term in vocabulary.terms.values():
            if term.parent is None or term.parent not in vocabulary.terms:
                continue
            edges.append(
                NewEdge(
                    term_node(term_type, term.parent),
                    term_node(term_type, term.code),
                    EdgeKind.PARENT_OF,
                    lineage=_glossary_lineage(f"{section}.{term.code}.parent"),
                )
            )
    for metric, inputs in sorted((derivations or {}).items()):
        for code in sorted(set(inputs)):
            edges.append(
                NewEdge(
                    term_node(TermType.METRIC, metric),
                    term_node(TermType.METRIC, code),
                    EdgeKind.DERIVES_FROM,
                    lineage=_glossary_lineage(f"metrics.{metric}.derivation"),
                )
            )
    return sorted(edges, key=lambda e: (e.kind, e.source, e.target))


def _glossary_lineage(key: str) -> Lineage:
    return Lineage(GLOSSARY_LIBRARY, GLOSSARY_DOCUMENT, "", "glossary", {"key": key})


def glossary_fingerprint(edges: Iterable[NewEdge]) -> str:
    """What identifies a set of glossary edges (stored beside them to tell when they are stale)."""
    return hashlib.sha256("\n".join(sorted(e.edge_id for e in edges)).encode()).hexdigest()


def term_label(glossary: Glossary, node_id: str) -> Node | None:
    """The node of a glossary term id (``entity:acme``), or ``None`` when it names no term."""
    kind_text, _, code = node_id.partition(":")
    for term_type, kind in TERM_KINDS.items():
        if kind.value == kind_text:
            vocabulary = {
                TermType.METRIC: glossary.metrics,
                TermType.ENTITY: glossary.entities,
                TermType.CHANNEL: glossary.channels,
            }[term_type]
            term = vocabulary.terms.get(code)
            return Node(node_id, kind, term.label) if term is not None else None
    return None


def node_of(node_id: str, glossary: Glossary) -> Node:
    """The node an id names, labelled from the glossary (a document's label is its id)."""
    found = term_label(glossary, node_id)
    if found is not None:
        return found
    kind_text, _, rest = node_id.partition(":")
    if kind_text == NodeKind.DOCUMENT.value:
        return Node(node_id, NodeKind.DOCUMENT, rest)
    kinds = {kind.value: kind for kind in NodeKind}  # a term no longer in the glossary
    return Node(node_id, kinds.get(kind_text, NodeKind.DOCUMENT), rest or node_id)


def resolve_node(raw: str, glossary: Glossary) -> str:
    """The node id ``raw`` names: an id (``entity:acme``, ``document:LIB:DOC``) or a glossary
    spelling (``ACME Corp``). Whether a document node exists is for the caller to check; an
    unknown term is a :class:`QueryError` suggesting glossary terms only."""
    text = str(raw).strip()
    if not text:
        raise QueryError("empty node name: give a glossary term (e.g. entity:acme) or a document")
    kind_text, sep, rest = text.partition(":")
    if sep and kind_text.lower() == NodeKind.DOCUMENT.value:
        library, sep2, doc_id = rest.partition(":")
        if not sep2 or not library or not doc_id:
            raise QueryError(
                f"document node {quote_input(text)}: write it as document:LIBRARY:DOC_ID"
            )
        return document_node(library, doc_id)
    vocabularies = {
        TermType.METRIC: glossary.metrics,
        TermType.ENTITY: glossary.entities,
        TermType.CHANNEL: glossary.channels,
    }
    if sep and kind_text.lower() in {k.value for k in TERM_KINDS.values()}:
        term_type = TermType(kind_text.lower())
        code = vocabularies[term_type].resolve(rest)
        if code is not None:
            return term_node(term_type, code)
        candidates = [
            (spelling, term_node(term_type, code))
            for spelling, code in vocabularies[term_type].index.items()
        ]
        raise unknown_node(text, candidates)
    found = {
        term_node(term_type, code)
        for term_type, vocabulary in vocabularies.items()
        if (code := vocabulary.resolve(text)) is not None
    }
    if len(found) == 1:
        return found.pop()
    if found:
        raise QueryError(
            f"{quote_input(text)} names {len(found)} glossary terms: "
            f"{', '.join(sorted(found))}; give one of these ids"
        )
    candidates = [
        (spelling, term_node(term_type, code))
        for term_type, vocabulary in vocabularies.items()
        for spelling, code in vocabulary.index.items()
    ]
    raise unknown_node(text, candidates)


def unknown_node(text: str, candidates: Iterable[tuple[str, str]] = ()) -> QueryError:
    """The one error for a node that is not known to the asker (never says why)."""
    suggestions = closest(text, candidates)
    hint = f" (closest glossary terms: {', '.join(suggestions)})" if suggestions else ""
    return QueryError(
        f"unknown node {quote_input(text)}{hint}: give a glossary term such as entity:CODE or "
        "a document you can see as document:LIBRARY:DOC_ID; 'ragspine graph edges' lists edges"
    )
