"""Reading the relation graph as one asker: ``edges``, ``neighbours`` and ``verify_edge``.

Every edge an answer holds passed :func:`ragspine.security.visible` for the asker (the store
applies their level in its query first), so nothing here (an edge, a node, a label, a count, an
error) depends on content they may not see: a document node exists for an asker only through an
edge they see, and a node they cannot see gets the same error as one that does not exist. The
glossary's terms are public, so a term node exists for everyone.

Edges the glossary declares are read from the store when it holds the current glossary's (the
writers keep them); after a hand edit of the glossary, before the next write, they are computed
from the glossary here instead, so answers follow the glossary without a reader writing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragspine.errors import QueryError, quote_input
from ragspine.glossary import Glossary
from ragspine.graph.relations import (
    GLOSSARY_LIBRARY,
    Edge,
    EdgeKind,
    EdgeQuery,
    NewEdge,
    Node,
    NodeKind,
    Origin,
    node_of,
    resolve_node,
    unknown_node,
)
from ragspine.graph.render import Picture, PictureEdge, PictureNode
from ragspine.security import Principal, max_visible_level, visible
from ragspine.stores.graph import RelationStore
from ragspine.stores.sqlite.errors import translate_read_errors, translate_store_errors

MAX_DEPTH = 3
MAX_EDGES = 20_000
"""A neighbourhood holding more visible edges than this is refused (narrow it)."""


@dataclass(frozen=True, slots=True)
class EdgeList:
    """Edges one asker may see, and how many matched before ``limit``."""

    edges: tuple[Edge, ...]
    total: int

    def to_dict(self) -> dict[str, Any]:
        return {"total": self.total, "edges": [edge.to_dict() for edge in self.edges]}


@dataclass(frozen=True, slots=True)
class Neighbour:
    """A node reached from the centre: how far, and the visible edges of the answer it has."""

    node: Node
    distance: int
    edges: int
    kinds: tuple[EdgeKind, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.node.to_dict(),
            "distance": self.distance,
            "edges": self.edges,
            "kinds": [kind.value for kind in self.kinds],
        }


@dataclass(frozen=True, slots=True)
class Neighbourhood:
    """The nodes within ``depth`` edges of ``node`` and the edges that reach them."""

    node: Node
    depth: int
    neighbours: tuple[Neighbour, ...]
    edges: tuple[Edge, ...]

    @property
    def nodes(self) -> tuple[Node, ...]:
        """The centre, then the neighbours (for rendering nodes and edges)."""
        return (self.node, *(n.node for n in self.neighbours))

    def picture(self) -> Picture:
        """The neighbourhood as a generic picture (``to_dot`` / ``to_svg`` in
        :mod:`ragspine.graph.render`): one box per node, one arrow per edge labelled by kind
        (and ``(unverified)`` for a model-derived edge no one has confirmed)."""
        return Picture(
            tuple(PictureNode(n.id, n.label, n.kind.value, n.id) for n in self.nodes),
            tuple(  # a model's unconfirmed edge says so, as in ``graph edges``
                PictureEdge(
                    e.source, e.target, e.kind.value + ("" if e.verified else " (unverified)")
                )
                for e in self.edges
            ),
            f"Neighbourhood of {self.node.label} (depth {self.depth})",
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "node": self.node.to_dict(),
            "depth": self.depth,
            "neighbours": [n.to_dict() for n in self.neighbours],
            "edges": [edge.to_dict() for edge in self.edges],
        }


def _parsed_filters(
    kind: str | EdgeKind | None, origin: str | Origin | None, verified: bool | None
) -> tuple[EdgeKind | None, Origin | None, bool | None]:
    if verified is not None and not isinstance(verified, bool):
        raise QueryError(f"verified must be true, false or None, not {quote_input(verified)}")
    return (
        EdgeKind.parse(kind) if kind is not None else None,
        Origin.parse(origin) if origin is not None else None,
        verified,
    )


class RelationGraph:
    """The relation graph of one workspace, read as a given principal; storage errors leave
    its methods as :class:`~ragspine.errors.StoreError` naming the workspace ``path``."""

    def __init__(
        self,
        store: RelationStore,
        glossary: Callable[[], Glossary],
        declared: Callable[[Glossary], tuple[list[NewEdge], str]],
        *,
        path: Path = Path("."),
    ) -> None:
        self.store = store
        self.path = path
        self._glossary = glossary
        self._declared = declared

    def _visible(self, query: EdgeQuery, principal: Principal) -> list[Edge]:
        """The edges ``query`` matches that ``principal`` may see."""
        level = max_visible_level(principal)
        if level < 0:
            return []
        stored = self.store.edges(query, max_level=level)
        declared, fingerprint = self._declared(self._glossary())
        if self.store.glossary_fingerprint() != fingerprint:
            current = [_as_edge(edge) for edge in declared]
            stored = [e for e in stored if e.lineage.library_id != GLOSSARY_LIBRARY]
            stored += [e for e in current if query.matches(e)]
            stored.sort(key=lambda e: (e.kind, e.source, e.target, e.edge_id))
        return [e for e in stored if visible(principal, e.sensitivity, e.groups or None)]

    def _node(self, raw: str, principal: Principal) -> Node:
        """The node ``raw`` names, if ``principal`` may know it exists."""
        glossary = self._glossary()
        node_id = resolve_node(raw, glossary)
        node = node_of(node_id, glossary)
        seen = node.kind is not NodeKind.DOCUMENT or self._visible(
            EdgeQuery(nodes=(node_id,)), principal
        )
        if not seen:
            raise unknown_node(str(raw))
        return node

    @translate_read_errors
    def edges(
        self,
        *,
        principal: Principal,
        kind: str | EdgeKind | None = None,
        origin: str | Origin | None = None,
        verified: bool | None = None,
        node: str | None = None,
        limit: int | None = None,
    ) -> EdgeList:
        """Edges ``principal`` may see, narrowed by kind, origin, verified flag and a node at
        either end; the first ``limit`` (by kind, source, target, id) and how many matched."""
        kinds, origins, flag = _parsed_filters(kind, origin, verified)
        if limit is not None and (type(limit) is not int or limit < 1):
            raise QueryError(f"limit must be a positive whole number, not {quote_input(limit)}")
        nodes = (self._node(node, principal).id,) if node is not None else None
        found = self._visible(EdgeQuery(kinds, origins, flag, nodes), principal)
        shown = found if limit is None else found[:limit]
        return EdgeList(tuple(shown), len(found))

    @translate_read_errors
    def neighbours(
        self,
        node: str,
        *,
        principal: Principal,
        depth: int = 1,
        kind: str | EdgeKind | None = None,
        origin: str | Origin | None = None,
        verified: bool | None = None,
    ) -> Neighbourhood:
        """The nodes within ``depth`` (1 to 3) visible edges of ``node``, nearest first."""
        if type(depth) is not int or not 1 <= depth <= MAX_DEPTH:
            raise QueryError(f"depth must be 1 to {MAX_DEPTH}, not {quote_input(depth)}")
        kinds, origins, flag = _parsed_filters(kind, origin, verified)
        centre = self._node(node, principal)
        distance = {centre.id: 0}
        found: dict[str, Edge] = {}
        frontier = [centre.id]
        for step in range(1, depth + 1):
            reached: list[str] = []
            query = EdgeQuery(kinds, origins, flag, tuple(frontier))
            for edge in self._visible(query, principal):
                found[edge.edge_id] = edge
                for end in (edge.source, edge.target):
                    if end not in distance:
                        distance[end] = step
                        reached.append(end)
            if len(found) > MAX_EDGES:
                raise QueryError(
                    f"the neighbourhood of {quote_input(centre.id)} holds more than {MAX_EDGES} "
                    "edges: lower the depth or narrow it by kind, origin or verified"
                )
            frontier = reached
            if not frontier:
                break
        edges = sorted(found.values(), key=lambda e: (e.kind, e.source, e.target, e.edge_id))
        touching: dict[str, list[Edge]] = {}
        for edge in edges:
            touching.setdefault(edge.source, []).append(edge)
            if edge.target != edge.source:
                touching.setdefault(edge.target, []).append(edge)
        glossary = self._glossary()
        neighbours = []
        for node_id, hops in sorted(distance.items(), key=lambda item: (item[1], item[0])):
            if hops == 0:
                continue
            own = touching.get(node_id, [])
            kinds_seen = tuple(sorted({e.kind for e in own}))
            neighbours.append(Neighbour(node_of(node_id, glossary), hops, len(own), kinds_seen))
        return Neighbourhood(centre, depth, tuple(neighbours), tuple(edges))

    @translate_store_errors
    def verify_edge(self, edge_id: str, *, by: Principal) -> Edge:
        """A person (``by``, named) confirms an edge they may see; confirming it again changes
        nothing. An edge they cannot see is unknown to them."""
        if not by.name or by.name == "anonymous":
            raise QueryError(
                "say who confirms the edge: a named principal, e.g. "
                "Principal.of('internal', name='alice') (the CLI's --by NAME)"
            )
        level = max_visible_level(by)
        edge = self.store.edge(str(edge_id), max_level=level) if level >= 0 else None
        if edge is None or not visible(by, edge.sensitivity, edge.groups or None):
            raise QueryError(
                f"unknown edge {quote_input(edge_id)}: 'ragspine graph edges' lists the edges "
                "you can see with their ids"
            )
        if edge.verified:
            return edge
        confirmed = self.store.verify(edge.edge_id, by=by.name, at=_now())
        if confirmed is None:  # deleted meanwhile (its document was re-ingested)
            raise QueryError(
                f"edge {quote_input(edge_id)} was deleted meanwhile (its document changed): "
                "list the edges again"
            )
        return confirmed


def _as_edge(edge: NewEdge) -> Edge:
    return Edge(
        edge.edge_id, edge.source, edge.target, edge.kind, edge.origin, edge.stored_verified,
        edge.lineage, edge.sensitivity, edge.groups, edge.weight,
    )  # fmt: skip


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
