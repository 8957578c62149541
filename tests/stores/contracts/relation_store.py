"""The relation-store contract, written once: what every :class:`RelationStore` backend must do.

A backend runs the suite by subclassing each contract class and supplying one fixture, ``store``,
that yields an empty store and closes it afterwards (``tests/stores/sqlite/test_graph.py``).
Expected results are computed in plain Python from the edges a test writes
(:meth:`EdgeQuery.matches`, the level), never hard-coded per backend. Each behaviour is its own
class so that a deliberately broken store can run the one class it breaks under
``xfail(strict=True)``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ragspine.graph.relations import (
    Edge,
    EdgeKind,
    EdgeQuery,
    Lineage,
    NewEdge,
    Origin,
    glossary_fingerprint,
)
from ragspine.security import Principal, Sensitivity, max_visible_level
from ragspine.stores.graph import RelationStore

EVERYTHING = int(Sensitivity.RESTRICTED)
LEVELS = (-1, *sorted({max_visible_level(Principal(level)) for level in Sensitivity}), EVERYTHING)


def an_edge(
    source: str = "document:lib:a",
    target: str = "entity:acme",
    kind: EdgeKind = EdgeKind.MENTIONS,
    *,
    doc: str = "a",
    chunk: int = 0,
    level: Sensitivity = Sensitivity.PUBLIC,
    origin: Origin = Origin.DETERMINISTIC,
    verified: bool | None = None,
    library: str = "lib",
    weight: int = 1,
    groups: frozenset[str] = frozenset(),
    sentence: int | None = None,
) -> NewEdge:
    locator: dict[str, object] = {"file": f"{doc}.txt", "paragraph": chunk}
    if sentence is not None:
        locator["sentence"] = sentence
    return NewEdge(
        source,
        target,
        kind,
        origin,
        Lineage(library, doc, f"{library}:{doc}#{chunk}", "run-1", locator),
        level,
        groups,
        weight,
        verified,
    )


def sample_edges() -> list[NewEdge]:
    """Edges of every kind, origin and level, in two libraries and three documents."""
    return [
        an_edge(),
        an_edge(target="metric:revenue", weight=3),
        an_edge("entity:acme", "metric:revenue", EdgeKind.CO_OCCURS, sentence=1),
        an_edge("document:lib:b", "entity:acme", doc="b", level=Sensitivity.INTERNAL),
        an_edge("document:lib:c", "entity:acme", doc="c", level=Sensitivity.CONFIDENTIAL),
        an_edge(
            "entity:acme", "metric:net_income", EdgeKind.CO_OCCURS, doc="c",
            level=Sensitivity.CONFIDENTIAL, sentence=2,
        ),
        an_edge("entity:acme", "entity:acme_cn", EdgeKind.CO_OCCURS, origin=Origin.MODEL_DERIVED),
        an_edge("document:other:a", "channel:online", library="other", groups=frozenset({"hr"})),
        an_edge("entity:group", "entity:acme", EdgeKind.PARENT_OF, library="", doc="glossary"),
    ]  # fmt: skip


def expected(edges: list[NewEdge], query: EdgeQuery, max_level: int) -> list[str]:
    """Ids of the stored edges ``query`` reads at ``max_level``, in the contract's order."""
    kept = [
        e
        for e in edges
        if e.sensitivity < Sensitivity.RESTRICTED
        and e.sensitivity <= max_level
        and query.matches(_as_stored(e))
    ]
    return [e.edge_id for e in sorted(kept, key=lambda e: (e.kind, e.source, e.target, e.edge_id))]


def _as_stored(edge: NewEdge) -> Edge:
    return Edge(
        edge.edge_id, edge.source, edge.target, edge.kind, edge.origin, edge.stored_verified,
        edge.lineage, edge.sensitivity, edge.groups, edge.weight,
    )  # fmt: skip


def ids(edges: list[Edge]) -> list[str]:
    return [e.edge_id for e in edges]


class _Store:
    @pytest.fixture
    def store(self) -> Iterator[RelationStore]:
        raise NotImplementedError("a backend's test class provides the 'store' fixture")


class RelationStoreContract(_Store):
    """Writing, reading back and narrowing edges."""

    def test_edges_read_back_exactly(self, store: RelationStore) -> None:
        edges = sample_edges()
        assert store.add_edges(edges) == len(edges)
        got = {e.edge_id: e for e in store.edges(EdgeQuery(), max_level=EVERYTHING)}
        assert sorted(got) == sorted(e.edge_id for e in edges)
        for edge in edges:
            assert got[edge.edge_id] == _as_stored(edge)
        assert store.count() == len(edges)

    def test_an_edge_stored_again_is_kept_once(self, store: RelationStore) -> None:
        edges = sample_edges()
        store.add_edges(edges)
        assert store.add_edges([*edges, edges[0]]) == 0
        assert store.count() == len(edges)
        assert store.add_edges([]) == 0

    @pytest.mark.parametrize(
        "query",
        [
            EdgeQuery(),
            EdgeQuery(kind=EdgeKind.CO_OCCURS),
            EdgeQuery(origin=Origin.MODEL_DERIVED),
            EdgeQuery(verified=False),
            EdgeQuery(verified=True, kind=EdgeKind.MENTIONS),
            EdgeQuery(nodes=("entity:acme",)),
            EdgeQuery(nodes=("metric:revenue", "channel:online")),
            EdgeQuery(nodes=("document:lib:a",), kind=EdgeKind.MENTIONS),
            EdgeQuery(nodes=("nobody",)),
            EdgeQuery(nodes=()),
        ],
        ids=repr,
    )
    def test_queries_narrow_by_kind_origin_flag_and_either_end(
        self, store: RelationStore, query: EdgeQuery
    ) -> None:
        edges = sample_edges()
        store.add_edges(edges)
        assert ids(store.edges(query, max_level=EVERYTHING)) == expected(edges, query, EVERYTHING)

    def test_many_nodes_at_once(self, store: RelationStore) -> None:
        edges = [an_edge(f"document:lib:d{i}", f"entity:e{i}", doc=f"d{i}") for i in range(1200)]
        store.add_edges(edges)
        nodes = tuple(f"entity:e{i}" for i in range(0, 1200, 2)) + tuple(
            f"document:lib:d{i}" for i in range(1, 1200, 2)
        )
        query = EdgeQuery(nodes=nodes)
        assert ids(store.edges(query, max_level=0)) == expected(edges, query, 0)
        assert len(store.edges(query, max_level=0)) == 1200

    def test_hostile_names_are_data(self, store: RelationStore) -> None:
        names = ["entity:o'brien", 'metric:"x"', "entity:x'); DROP TABLE graph_edges;--", "é:%_"]
        edges = [an_edge(f"document:lib:{n}", n, doc=n) for n in names]
        store.add_edges(edges)
        for name in names:
            found = store.edges(EdgeQuery(nodes=(name,)), max_level=0)
            assert [e.target for e in found] == [name]
        assert store.edges(EdgeQuery(nodes=("%",)), max_level=0) == []
        assert store.count() == len(names)


class RelationVisibilityContract(_Store):
    """An edge above the asker's level is never read; restricted edges are never stored."""

    def test_edges_above_the_level_are_never_read(self, store: RelationStore) -> None:
        edges = sample_edges()
        store.add_edges(edges)
        for level in LEVELS:
            for query in (EdgeQuery(), EdgeQuery(nodes=("entity:acme",))):
                assert ids(store.edges(query, max_level=level)) == expected(edges, query, level)
            for edge in edges:
                found = store.edge(edge.edge_id, max_level=level)
                assert (found is not None) == (edge.sensitivity <= level), (level, edge)

    def test_restricted_edges_are_never_stored(self, store: RelationStore) -> None:
        secret = an_edge(target="entity:secret", level=Sensitivity.RESTRICTED)
        assert store.add_edges([secret, an_edge()]) == 1
        assert store.count() == 1
        assert store.edge(secret.edge_id, max_level=EVERYTHING) is None


class RelationVerificationContract(_Store):
    """Model-derived edges are stored unverified; only ``verify`` sets the flag, once."""

    def test_model_derived_edges_are_stored_unverified(self, store: RelationStore) -> None:
        claimed = an_edge(origin=Origin.MODEL_DERIVED, verified=True)
        ruled = an_edge(target="metric:x", verified=None)
        store.add_edges([claimed, ruled])
        got = store.edge(claimed.edge_id, max_level=EVERYTHING)
        assert got is not None and got.verified is False and got.verified_by == ""
        assert store.edges(EdgeQuery(verified=True), max_level=EVERYTHING)[0].edge_id == (
            ruled.edge_id
        )

    def test_verify_sets_the_flag_once(self, store: RelationStore) -> None:
        edge = an_edge(origin=Origin.MODEL_DERIVED)
        store.add_edges([edge])
        first = store.verify(edge.edge_id, by="alice", at="2026-01-01T00:00:00+00:00")
        assert first is not None and first.verified and first.verified_by == "alice"
        again = store.verify(edge.edge_id, by="bob", at="2026-02-01T00:00:00+00:00")
        assert again == first
        assert store.add_edges([edge]) == 0  # storing it again keeps it verified
        stored = store.edge(edge.edge_id, max_level=EVERYTHING)
        assert stored is not None and stored.verified and stored.verified_by == "alice"
        assert store.verify("e-unknown", by="alice", at="x") is None


class RelationDeletionContract(_Store):
    """Deleting documents or a library deletes exactly the edges derived from them."""

    def test_deleting_documents_deletes_their_edges_of_any_origin(
        self, store: RelationStore
    ) -> None:
        edges = sample_edges()
        store.add_edges(edges)
        gone = store.delete_documents("lib", ["a", "zzz"])
        kept = [e for e in edges if not (e.lineage.library_id == "lib" and e.lineage.doc_id == "a")]
        assert gone == len(edges) - len(kept)
        assert sorted(ids(store.edges(EdgeQuery(), max_level=EVERYTHING))) == sorted(
            e.edge_id for e in kept
        )

    def test_deleting_a_library_keeps_the_others_and_the_glossary(
        self, store: RelationStore
    ) -> None:
        edges = sample_edges()
        store.add_edges(edges)
        assert store.delete_library("lib") == sum(1 for e in edges if e.lineage.library_id == "lib")
        left = {e.lineage.library_id for e in store.edges(EdgeQuery(), max_level=EVERYTHING)}
        assert left == {"other", ""}
        assert store.delete_library("lib") == 0


class RelationGlossaryContract(_Store):
    """The glossary's edges are replaced whole, and only when their fingerprint changed."""

    def test_glossary_edges_are_replaced_when_changed(self, store: RelationStore) -> None:
        store.add_edges([an_edge()])
        first = [an_edge("entity:g", "entity:a", EdgeKind.PARENT_OF, library="", doc="glossary")]
        second = [an_edge("entity:g", "entity:b", EdgeKind.PARENT_OF, library="", doc="glossary")]
        assert store.glossary_fingerprint() == ""
        assert store.replace_glossary_edges(first, glossary_fingerprint(first))
        assert not store.replace_glossary_edges(first, glossary_fingerprint(first))
        assert store.glossary_fingerprint() == glossary_fingerprint(first)
        assert store.replace_glossary_edges(second, glossary_fingerprint(second))
        targets = sorted(e.target for e in store.edges(EdgeQuery(), max_level=0))
        assert targets == ["entity:acme", "entity:b"]


class RelationAtomicityContract(_Store):
    """A transaction lands whole or not at all; a nested one joins it."""

    def test_a_failed_transaction_writes_nothing(self, store: RelationStore) -> None:
        store.add_edges([an_edge()])
        with pytest.raises(RuntimeError), store.transaction():
            store.add_edges([an_edge(target="metric:x")])
            with store.transaction():  # joins the outer one
                store.delete_documents("lib", ["a"])
            raise RuntimeError("stop")
        assert ids(store.edges(EdgeQuery(), max_level=0)) == [an_edge().edge_id]
