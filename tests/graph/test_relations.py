"""Nodes, edges, their ids and the edges the glossary declares."""

from __future__ import annotations

import tomllib

import pytest

from ragspine.errors import QueryError
from ragspine.glossary import Glossary, parse_glossary
from ragspine.graph.relations import (
    EdgeKind,
    Lineage,
    NewEdge,
    NodeKind,
    Origin,
    glossary_edges,
    glossary_fingerprint,
    node_of,
    resolve_node,
)
from ragspine.security import Sensitivity
from ragspine.workspace import example_glossary_text

GLOSSARY = """
[metrics.revenue]
label = "Revenue"
aliases = ["sales"]
[metrics.acme]
label = "ACME index"
[entities.group]
label = "Group"
[entities.acme]
label = "ACME Corp"
parent = "group"
[channels.retail]
label = "Retail"
[channels.shop]
label = "Shop"
parent = "retail"
"""


@pytest.fixture(scope="module")
def glossary() -> Glossary:
    return parse_glossary(tomllib.loads(GLOSSARY))


def test_the_glossary_declares_entity_and_channel_hierarchies(glossary: Glossary) -> None:
    edges = glossary_edges(glossary)
    assert [(e.kind, e.source, e.target) for e in edges] == [
        (EdgeKind.PARENT_OF, "channel:retail", "channel:shop"),
        (EdgeKind.PARENT_OF, "entity:group", "entity:acme"),
    ]
    assert all(e.stored_verified and e.sensitivity is Sensitivity.PUBLIC for e in edges)
    assert edges[1].lineage.locator == {"key": "entities.acme.parent"}
    derived = glossary_edges(glossary, derivations={"revenue": ["acme", "acme"]})
    assert next((e.kind, e.source, e.target) for e in derived) == (
        EdgeKind.DERIVES_FROM, "metric:revenue", "metric:acme",
    )  # fmt: skip
    assert glossary_fingerprint(edges) != glossary_fingerprint(derived)
    assert glossary_fingerprint(edges) == glossary_fingerprint(list(reversed(edges)))


@pytest.mark.parametrize(
    ("raw", "node"),
    [
        ("entity:acme", "entity:acme"),
        ("ENTITY:ACME Corp", "entity:acme"),
        ("sales", "metric:revenue"),
        ("  Shop ", "channel:shop"),
        ("document:lib:reports/2024 q3.pdf", "document:lib:reports/2024 q3.pdf"),
        ("document:lib:a:b", "document:lib:a:b"),
    ],
)
def test_nodes_are_named_by_id_or_glossary_spelling(
    glossary: Glossary, raw: str, node: str
) -> None:
    assert resolve_node(raw, glossary) == node


def test_a_spelling_of_two_terms_asks_which(glossary: Glossary) -> None:
    with pytest.raises(QueryError, match="names 2 glossary terms: entity:acme, metric:acme"):
        resolve_node("acme", glossary)


@pytest.mark.parametrize(
    "raw", ["nobody", "entity:nobody", "x'); DROP TABLE graph_edges;--", "metric:\x00\u202e", "é"]
)
def test_unknown_names_are_a_clear_error(glossary: Glossary, raw: str) -> None:
    with pytest.raises(QueryError, match="unknown node"):
        resolve_node(raw, glossary)


def test_labels_come_from_the_glossary(glossary: Glossary) -> None:
    assert node_of("entity:acme", glossary).label == "ACME Corp"
    doc = node_of("document:lib:a.txt", glossary)
    assert doc.kind is NodeKind.DOCUMENT and doc.label == "lib:a.txt"


def test_edge_ids_depend_on_content_and_place_only() -> None:
    lineage = Lineage("lib", "a", "lib:a#0", "run-1", {"b": 1, "a": 2})
    edge = NewEdge("document:lib:a", "entity:acme", EdgeKind.MENTIONS, lineage=lineage)
    same = NewEdge(
        "document:lib:a", "entity:acme", EdgeKind.MENTIONS,
        lineage=Lineage("lib", "a", "lib:a#0", "run-2", {"a": 2, "b": 1}),
        sensitivity=Sensitivity.INTERNAL, weight=4,
    )  # fmt: skip
    assert edge.edge_id == same.edge_id and edge.edge_id.startswith("e")
    moved = NewEdge(
        "document:lib:a", "entity:acme", EdgeKind.MENTIONS,
        lineage=Lineage("lib", "a", "lib:a#1", "run-1", {"a": 2, "b": 1}),
    )  # fmt: skip
    assert moved.edge_id != edge.edge_id
    model = NewEdge(
        "document:lib:a", "entity:acme", EdgeKind.MENTIONS, Origin.MODEL_DERIVED, lineage,
        verified=True,
    )  # fmt: skip
    assert model.edge_id != edge.edge_id and not model.stored_verified


def test_kinds_and_origins_parse_with_the_valid_names() -> None:
    assert EdgeKind.parse(" Mentions ") is EdgeKind.MENTIONS
    assert Origin.parse("MODEL-DERIVED") is Origin.MODEL_DERIVED
    with pytest.raises(QueryError, match="parent_of, mentions, co_occurs, derives_from"):
        EdgeKind.parse("likes")


def test_the_example_glossary_hierarchy() -> None:
    glossary = parse_glossary(tomllib.loads(example_glossary_text()))
    assert {e.target for e in glossary_edges(glossary)} == {"entity:acme", "entity:acme_cn"}
