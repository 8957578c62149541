"""Pictures: DOT and SVG of any nodes and edges, escaped, deterministic, laid out as a tree."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from graph.builders import PUBLIC, fact, make_workspace
from ragspine.graph.render import (
    FILLS,
    Picture,
    PictureEdge,
    PictureNode,
    layout,
    to_dot,
    to_svg,
)

SVG = "{http://www.w3.org/2000/svg}"


def tree_picture() -> Picture:
    return Picture(
        (
            PictureNode("root", "gross_margin = 25", "derived"),
            PictureNode("a", "revenue = 8", "fact", "report.csv row 2"),
            PictureNode("b", "cogs: no visible fact", "missing"),
            PictureNode("c", "100", "constant"),
        ),
        (PictureEdge("root", "a", "÷"), PictureEdge("root", "b"), PictureEdge("a", "c")),
        "a tree",
    )


def test_layout_puts_parents_between_their_children() -> None:
    boxes = layout(tree_picture())
    assert boxes["root"].x < boxes["a"].x < boxes["c"].x
    assert boxes["a"].x == boxes["b"].x
    assert boxes["root"].y == (boxes["a"].y + boxes["b"].y) / 2


def test_layout_survives_cycles_and_unknown_ids() -> None:
    picture = Picture(
        (PictureNode("x", "x"), PictureNode("y", "y")),
        (PictureEdge("x", "y"), PictureEdge("y", "x"), PictureEdge("x", "ghost")),
    )
    boxes = layout(picture)
    assert set(boxes) == {"x", "y"} and boxes["x"].x < boxes["y"].x
    ET.fromstring(to_svg(picture))
    assert "ghost" not in to_dot(picture)
    empty = to_svg(Picture((), ()))
    assert ET.fromstring(empty).tag == f"{SVG}svg"


def test_svg_is_well_formed_escaped_and_self_contained() -> None:
    hostile = Picture(
        (
            PictureNode("n<1>", '<script>alert("x")</script> & more', "fact", "row 'a'\x00"),
            PictureNode("n2", "利润率 = 3", "weird-kind"),
        ),
        (PictureEdge("n<1>", "n2", "<b>"),),
        'title "quoted" & <tagged>',
    )
    svg = to_svg(hostile)
    root = ET.fromstring(svg)  # well-formed XML despite the markup in the labels
    assert "<script" not in svg and "&lt;script&gt;" in svg
    assert "\x00" not in svg
    assert "href" not in svg and "http://" not in svg.replace("http://www.w3.org/2000/svg", "")
    assert root.find(f"{SVG}title") is not None
    assert svg == to_svg(hostile)  # byte-stable
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert any(t and "利润率" in t for t in texts)


def test_svg_colours_by_kind() -> None:
    svg = to_svg(tree_picture())
    for kind in ("derived", "fact", "missing", "constant"):
        assert FILLS[kind] in svg


def test_dot_escapes_quotes_backslashes_and_line_breaks() -> None:
    picture = Picture(
        (PictureNode('a"b', 'say "hi"\\n', "fact", "line1\nline2"), PictureNode("c", "c")),
        (PictureEdge('a"b', "c", 'label "x"'),),
        "t",
    )
    dot = to_dot(picture)
    assert '"a\\"b" [label="fact\\nsay \\"hi\\"\\\\n\\nline1\\nline2"' in dot
    assert '"a\\"b" -> "c" [label="label \\"x\\""];' in dot
    assert dot.startswith("digraph ragspine {") and dot.endswith("}\n")
    assert "\n  \n" not in dot


def test_a_derivation_tree_renders(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws", [fact("revenue", "us", "3"), fact("cogs", "us", "1")])
    result = ws.graph.derive("gross_margin", "us", "FY2024", principal=PUBLIC)
    picture = result.picture()
    assert [n.kind for n in picture.nodes] == [
        "derived",
        "operator",
        "operator",
        "derived",
        "operator",
        "fact",
        "fact",
        "fact",
        "constant",
    ]
    assert picture.nodes[0].label == "gross_margin ≈ 66.67"
    assert picture.nodes[5].detail == "report-us.csv row revenue"
    assert len(picture.edges) == len(picture.nodes) - 1
    ET.fromstring(to_svg(picture))
    assert "gross_margin ≈ 66.67" in to_dot(picture)
