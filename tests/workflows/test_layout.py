"""Layered layout for exports without positions: deterministic and free of overlaps."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from wf_builders import dify_file, edge, export, node

from ragspine.workflows import PreviewNode, preview
from ragspine.workflows.layout import layered_positions


def overlaps(a: PreviewNode, b: PreviewNode) -> bool:
    return (
        a.x < b.x + b.width
        and b.x < a.x + a.width
        and a.y < b.y + b.height
        and b.y < a.y + a.height
    )


def assert_no_overlaps(nodes: tuple[PreviewNode, ...]) -> None:
    siblings = [(a, b) for i, a in enumerate(nodes) for b in nodes[i + 1 :]]
    clashes = [
        (a.id, b.id)
        for a, b in siblings
        if a.parent_id == b.parent_id and a.id != b.parent_id and overlaps(a, b)
    ]
    assert clashes == []


def test_no_positions_fixture_lays_out_left_to_right_without_overlaps() -> None:
    result = preview(dify_file("dify_knowledge_retrieval_v2_no_positions.yml"))
    xs = {n.id: n.x for n in result.nodes}
    assert xs["start"] < xs["retrieval-v2"] < xs["end"]
    assert_no_overlaps(result.nodes)
    assert all(n.width > 0 and n.height > 0 for n in result.nodes)


def test_branches_share_a_column_and_stack() -> None:
    nodes = [node("s", "start"), node("c", "if-else"), node("a", "end"), node("b", "end")]
    edges = [edge("s", "c"), edge("c", "a", "true"), edge("c", "b", "false")]
    result = {n.id: n for n in preview(export(nodes, edges)).nodes}
    assert result["a"].x == result["b"].x > result["c"].x > result["s"].x
    assert result["a"].y < result["b"].y
    assert_no_overlaps(tuple(result.values()))


def test_cycles_and_self_loops_still_lay_out() -> None:
    nodes = [node("a"), node("b"), node("c")]
    edges = [edge("a", "b"), edge("b", "c"), edge("c", "a"), edge("b", "b")]
    result = preview(export(nodes, edges))
    assert [n.x for n in result.nodes] == sorted(n.x for n in result.nodes)
    assert_no_overlaps(result.nodes)


def test_unpositioned_nodes_go_below_positioned_ones() -> None:
    nodes = [node("p", x=0, y=0), node("q", x=500, y=40), node("free")]
    by_id = {n.id: n for n in preview(export(nodes, [edge("p", "free")])).nodes}
    assert by_id["free"].y >= by_id["q"].y + by_id["q"].height
    assert (by_id["p"].x, by_id["p"].y) == (0, 0)


def test_containers_grow_around_laid_out_children() -> None:
    nodes = [
        node("it", "iteration"),
        node("it-start", "iteration-start", parent="it"),
        node("work", "llm", parent="it"),
        node("after", "end"),
    ]
    edges = [edge("it-start", "work"), edge("it", "after")]
    result = preview(export(nodes, edges))
    by_id = {n.id: n for n in result.nodes}
    for child in ("it-start", "work"):
        inner, outer = by_id[child], by_id["it"]
        assert outer.x < inner.x and inner.x + inner.width < outer.x + outer.width
        assert outer.y < inner.y and inner.y + inner.height < outer.y + outer.height
    assert by_id["after"].x >= by_id["it"].x + by_id["it"].width
    assert_no_overlaps(result.nodes)


def test_a_laid_out_child_goes_below_its_positioned_siblings() -> None:
    """A review: an unpositioned child of an iteration was placed at the container's padding,
    on top of a positioned sibling at (24, 68)."""
    nodes = [
        node("loop", "iteration", x=0, y=0),
        node("c1", "code", x=24, y=68, parent="loop"),
        node("c2", "code", parent="loop"),
    ]
    result = preview(export(nodes, []))
    by_id = {n.id: n for n in result.nodes}
    assert (by_id["c1"].x, by_id["c1"].y) == (24, 68)  # kept where the export put it
    assert by_id["c2"].y >= by_id["c1"].y + by_id["c1"].height
    assert by_id["c2"].y + by_id["c2"].height < by_id["loop"].y + by_id["loop"].height
    assert_no_overlaps(result.nodes)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(min_value=1, max_value=25).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=3 * n),
            st.lists(st.integers(20, 300), min_size=n, max_size=n),
        )
    )
)
def test_layered_positions_never_overlap(case: tuple[int, list, list]) -> None:
    count, pairs, heights = case
    ids = [f"n{i}" for i in range(count)]
    sizes = {
        node_id: (100.0 + 7 * i, float(h))
        for i, (node_id, h) in enumerate(zip(ids, heights, strict=True))
    }
    edges = [(ids[a], ids[b]) for a, b in pairs]
    placed = layered_positions(ids, sizes, edges)
    assert placed == layered_positions(ids, sizes, edges)
    boxes = [
        PreviewNode(i, "llm", "", placed[i][0], placed[i][1], sizes[i][0], sizes[i][1]) for i in ids
    ]
    assert_no_overlaps(tuple(boxes))
    dag = [(ids[min(a, b)], ids[max(a, b)]) for a, b in pairs if a != b]
    ordered = layered_positions(ids, sizes, dag)
    assert all(ordered[a][0] < ordered[b][0] for a, b in dag)
