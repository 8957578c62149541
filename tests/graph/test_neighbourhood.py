"""Reading the relation graph as one asker: nothing derived from hidden content shows."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graph.conftest import open_workspace
from ragspine.errors import QueryError
from ragspine.graph import neighbourhood
from ragspine.graph.neighbourhood import RelationGraph
from ragspine.graph.relations import EdgeKind, Lineage, NewEdge, Origin
from ragspine.security import Principal, Sensitivity
from ragspine.workspace import Workspace

PUBLIC = Principal()
INTERNAL = Principal.of("internal")
CONFIDENTIAL = Principal.of("confidential")
NODES = (
    "entity:acme", "entity:acme_cn", "entity:acme_group", "metric:revenue",
    "metric:operating_income", "metric:headcount", "metric:net_income", "channel:online",
    "channel:retail", "document:lib:a.txt", "document:lib:b.txt", "document:lib:c.txt",
    "document:lib:zzz", "x'); DROP TABLE graph_edges;--",
)  # fmt: skip


def view(graph: RelationGraph, principal: Principal) -> str:
    """Everything the graph tells ``principal``: edges, every neighbourhood, every error."""
    out: dict[str, Any] = {"edges": graph.edges(principal=principal).to_dict()}
    for kind in EdgeKind:
        out[kind.value] = graph.edges(principal=principal, kind=kind).to_dict()
    for node in NODES:
        for depth in (1, 2, 3):
            try:
                out[f"{node}/{depth}"] = graph.neighbours(
                    node, principal=principal, depth=depth
                ).to_dict()
            except QueryError as exc:
                out[f"{node}/{depth}"] = f"error: {exc}"
        try:
            out[f"{node}/edges"] = graph.edges(principal=principal, node=node).to_dict()
        except QueryError as exc:
            out[f"{node}/edges"] = f"error: {exc}"
    return json.dumps(out, sort_keys=True)


@pytest.fixture()
def without(tmp_path: Path, docs: dict[str, Path]) -> Iterator[Workspace]:
    """The same workspace as ``ws`` without the hidden documents."""
    with open_workspace(tmp_path / "without") as workspace:
        workspace.ingest_documents([docs["public"]], library="lib")
        yield workspace


@pytest.fixture(
    params=[False, pytest.param(True, marks=pytest.mark.xfail(strict=True, raises=AssertionError))]
)
def leaky(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """``True``: the graph passes every edge (the reverse proof; the test must fail)."""
    if request.param:
        monkeypatch.setattr(neighbourhood, "visible", lambda *args, **kwargs: True)
        monkeypatch.setattr(neighbourhood, "max_visible_level", lambda principal: 3)
    return bool(request.param)


@pytest.mark.parametrize("principal", [PUBLIC, INTERNAL], ids=["public", "internal"])
def test_hidden_documents_change_nothing_an_asker_sees(
    ws: Workspace, without: Workspace, principal: Principal, leaky: bool
) -> None:
    assert view(ws.relations, principal) == view(without.relations, principal)


def test_the_hidden_document_is_seen_with_clearance(ws: Workspace) -> None:
    graph = ws.relations
    with pytest.raises(QueryError, match=r"unknown node 'document:lib:b\.txt'"):
        graph.neighbours("document:lib:b.txt", principal=PUBLIC)
    seen = graph.neighbours("document:lib:b.txt", principal=CONFIDENTIAL)
    assert [n.node.id for n in seen.neighbours] == [
        "channel:retail", "entity:acme", "metric:operating_income", "metric:revenue",
    ]  # fmt: skip
    assert all(edge.sensitivity is Sensitivity.CONFIDENTIAL for edge in seen.edges)
    revenue = graph.neighbours("revenue", principal=CONFIDENTIAL)
    public = graph.neighbours("revenue", principal=PUBLIC)
    counts = {n.node.id: n.edges for n in revenue.neighbours}
    assert (
        counts["entity:acme"] == 2
        and {n.node.id: n.edges for n in public.neighbours}["entity:acme"] == 1
    )  # the sentence of the confidential document counts only with clearance


def test_restricted_content_gives_no_edge_to_anyone(ws: Workspace) -> None:
    assert all(
        edge.lineage.doc_id != "c.txt" for edge in ws.relations.edges(principal=CONFIDENTIAL).edges
    )
    assert (
        ws.relations.store.edges(
            neighbourhood.EdgeQuery(nodes=("document:lib:c.txt",)), max_level=3
        )
        == []
    )


def test_groups_are_checked_by_the_one_rule(ws: Workspace) -> None:
    store = ws.relations.store
    hr = NewEdge(
        "entity:acme", "metric:headcount", EdgeKind.CO_OCCURS, Origin.MODEL_DERIVED,
        Lineage("lib", "a.txt", "lib:a.txt#0", "run-hr", {"sentence": 9}),
        Sensitivity.PUBLIC, frozenset({"hr"}),
    )  # fmt: skip
    store.add_edges([hr])
    asked = ws.relations.edges(principal=PUBLIC, origin="model-derived")
    assert asked.total == 0 and asked.edges == ()
    member = Principal.of("public", ["hr"])
    assert [
        e.edge_id for e in ws.relations.edges(principal=member, origin="model-derived").edges
    ] == [hr.edge_id]


def test_filters_and_limit(ws: Workspace) -> None:
    graph = ws.relations
    everything = graph.edges(principal=PUBLIC)
    first = graph.edges(principal=PUBLIC, limit=2)
    assert first.total == everything.total and first.edges == everything.edges[:2]
    assert {e.kind for e in graph.edges(principal=PUBLIC, kind="parent_of").edges} == {
        EdgeKind.PARENT_OF
    }
    assert graph.edges(principal=PUBLIC, origin="model-derived").total == 0
    assert graph.edges(principal=PUBLIC, verified=False).total == 0
    mentions = graph.edges(principal=PUBLIC, node="ACME Corp", kind="mentions")
    assert [(e.source, e.target) for e in mentions.edges] == [("document:lib:a.txt", "entity:acme")]
    assert mentions.edges[0].lineage.chunk_id == "lib:a.txt#0"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda g: g.edges(principal=PUBLIC, kind="likes"), "unknown edge kind 'likes'"),
        (lambda g: g.edges(principal=PUBLIC, origin="oracle"), "unknown edge origin"),
        (lambda g: g.edges(principal=PUBLIC, limit=0), "limit must be"),
        (lambda g: g.neighbours("acme", principal=PUBLIC, depth=4), "depth must be 1 to 3"),
        (lambda g: g.neighbours("", principal=PUBLIC), "empty node name"),
        (lambda g: g.neighbours("entity:acmee", principal=PUBLIC), "closest glossary terms"),
        (lambda g: g.neighbours("document:lib", principal=PUBLIC), "document:LIBRARY:DOC_ID"),
        (lambda g: g.neighbours("o'brien\"; --", principal=PUBLIC), "unknown node"),
        (lambda g: g.edges(principal=PUBLIC, verified="yes"), "verified must be"),
    ],
)
def test_bad_input_is_a_clear_error(ws: Workspace, call: Any, message: str) -> None:
    with pytest.raises(QueryError, match=message):
        call(ws.relations)


def test_neighbours_at_depth(ws: Workspace) -> None:
    near = ws.relations.neighbours("entity:acme_group", principal=PUBLIC)
    assert [(n.node.id, n.distance) for n in near.neighbours] == [
        ("document:lib:a.txt", 1), ("entity:acme", 1), ("entity:acme_cn", 1),
        ("metric:headcount", 1),
    ]  # fmt: skip
    far = ws.relations.neighbours("entity:acme_group", principal=PUBLIC, depth=2)
    assert {n.node.id for n in far.neighbours} > {n.node.id for n in near.neighbours}
    assert far.nodes[0] == far.node and far.node.label == "ACME Group"
    only_hierarchy = ws.relations.neighbours("acme group", principal=PUBLIC, kind="parent_of")
    assert [n.node.id for n in only_hierarchy.neighbours] == ["entity:acme", "entity:acme_cn"]


def test_verify_edge_confirms_model_derived_edges_once(ws: Workspace) -> None:
    proposed = NewEdge(
        "entity:acme", "channel:online", EdgeKind.CO_OCCURS, Origin.MODEL_DERIVED,
        Lineage("lib", "a.txt", "lib:a.txt#0", "model-run", {"sentence": 1}), verified=True,
    )  # fmt: skip
    ws.relations.store.add_edges([proposed])
    graph = ws.relations
    listed = graph.edges(principal=PUBLIC, verified=False)
    assert [e.edge_id for e in listed.edges] == [proposed.edge_id]
    alice = Principal.of("public", name="alice")
    with pytest.raises(QueryError, match="say who confirms"):
        graph.verify_edge(proposed.edge_id, by=PUBLIC)
    done = graph.verify_edge(proposed.edge_id, by=alice)
    assert done.verified and done.verified_by == "alice" and done.verified_at
    again = graph.verify_edge(proposed.edge_id, by=Principal.of("public", name="bob"))
    assert again == done
    assert graph.edges(principal=PUBLIC, verified=False).total == 0


def test_an_edge_the_person_cannot_see_cannot_be_verified(ws: Workspace) -> None:
    hidden = next(
        e for e in ws.relations.edges(principal=CONFIDENTIAL).edges if e.lineage.doc_id == "b.txt"
    )
    bob = Principal.of("public", name="bob")
    with pytest.raises(QueryError) as hidden_error:
        ws.relations.verify_edge(hidden.edge_id, by=bob)
    with pytest.raises(QueryError) as missing_error:
        ws.relations.verify_edge("e00000000000000000000", by=bob)
    assert str(hidden_error.value).replace(hidden.edge_id, "ID") == str(
        missing_error.value
    ).replace("e00000000000000000000", "ID")


def test_a_hand_edited_glossary_is_followed_without_a_write(ws: Workspace) -> None:
    text = ws.glossary_path.read_text(encoding="utf-8")
    ws.glossary_path.write_text(
        text.replace('parent = "acme_group"\n', "", 1)
        + '\n[channels.shop]\nlabel = "Shop"\nparent = "retail"\n',
        encoding="utf-8",
    )
    fresh = Workspace.open(ws.path)
    try:
        before = fresh.relations.store.count()
        edges = fresh.relations.edges(principal=PUBLIC, kind="parent_of").edges
        assert [(e.source, e.target) for e in edges] == [
            ("channel:retail", "channel:shop"), ("entity:acme_group", "entity:acme_cn"),
        ]  # fmt: skip
        assert fresh.relations.store.count() == before  # a reader wrote nothing
        assert fresh.sync_relations() and not fresh.sync_relations()
        assert fresh.relations.edges(principal=PUBLIC, kind="parent_of").edges == edges
    finally:
        fresh.close()
