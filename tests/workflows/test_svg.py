"""SVG rendering: escaped text, well-formed, deterministic, self-contained, children inside."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from wf_builders import SHARED_DIFY_FILES, dify_file, edge, export, node

from ragspine.workflows import preview
from ragspine.workflows.svg import escape_xml, fit_text

NS = "{http://www.w3.org/2000/svg}"


def test_script_title_renders_as_text() -> None:
    title = "<script>alert('x')</script> & \"quotes\""
    svg = preview(export([node("a", title=title)], [], name="<b>app</b>")).to_svg()
    assert "<script" not in svg and "<b>" not in svg
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in svg
    root = ET.fromstring(svg)
    texts = [t.text for t in root.iter(f"{NS}text")]
    assert any(t and t.startswith("<script>") for t in texts)
    assert not list(root.iter(f"{NS}script"))


def test_broken_escaping_would_be_caught() -> None:
    # What an unescaped renderer emits must not parse as plain text: the check above is real.
    assert escape_xml("<script>") != "<script>"
    with pytest.raises(ET.ParseError):
        ET.fromstring("<svg><text><script>alert(1)</text></svg>")


def test_control_characters_and_attributes_are_neutralised() -> None:
    svg = preview(export([node('a"><script>', title="bell\x07 nul\x0b")], [])).to_svg()
    ET.fromstring(svg)
    assert 'data-id="a&quot;&gt;&lt;script&gt;"' in svg


@pytest.mark.parametrize("name", SHARED_DIFY_FILES)
def test_shared_exports_render_well_formed_and_deterministic(name: str) -> None:
    result = preview(dify_file(name))
    svg = result.to_svg()
    assert svg == preview(dify_file(name)).to_svg()
    root = ET.fromstring(svg)
    assert len(root.findall(f"{NS}g[@class='node']")) == len(result.nodes)
    assert len(root.findall(f"{NS}g[@class='link']")) == len(result.edges)
    assert (
        "href" not in svg
        and "<script" not in svg
        and "http://" not in svg.replace('xmlns="http://www.w3.org/2000/svg"', "")
    )


def test_boxes_show_type_and_title_and_edges_show_labels() -> None:
    nodes = [node("c", "if-else", "Decide"), node("y", "end", "Yes"), node("n", "end", "No")]
    edges = [edge("c", "y", "true"), edge("c", "n", "false")]
    root = ET.fromstring(preview(export(nodes, edges)).to_svg())
    texts = [t.text for t in root.iter(f"{NS}text")]
    assert {"if-else", "Decide", "end", "Yes", "No", "IF", "ELSE"} <= set(texts)


def test_children_are_drawn_after_and_inside_their_parent() -> None:
    nodes = [node("loop", "iteration", "Loop"), node("step", "code", "Step", parent="loop")]
    result = preview(export(nodes, []))
    loop, step = result.nodes
    assert loop.x < step.x and step.x + step.width < loop.x + loop.width
    assert loop.y < step.y and step.y + step.height < loop.y + loop.height
    svg = result.to_svg()
    assert svg.index('data-id="loop"') < svg.index('data-id="step"')


def test_fit_text_shortens_wide_text() -> None:
    assert fit_text("short", 200) == "short"
    assert fit_text("x" * 100, 70).endswith("…") and len(fit_text("x" * 100, 70)) <= 10
    assert len(fit_text("条件分支" * 10, 70)) <= 5
