"""Preview v1 over the shared Dify exports and small crafted graphs."""

from __future__ import annotations

import json
import warnings
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
import yaml
from wf_builders import SHARED_DIFY_FILES, dify_file, edge, export, node

from ragspine.errors import WorkflowError
from ragspine.workflows import PreviewLimits, preview, preview_schema

VALIDATOR = jsonschema.Draft202012Validator(preview_schema())


def test_schema_ships_as_package_data_and_is_valid() -> None:
    shipped = resources.files("ragspine.workflows").joinpath("preview_v1.schema.json")
    schema = json.loads(shipped.read_text("utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema == preview_schema()


@pytest.mark.parametrize("name", SHARED_DIFY_FILES)
def test_every_shared_export_previews_with_source_counts(name: str) -> None:
    path = dify_file(name)
    graph = yaml.safe_load(path.read_text("utf-8"))["workflow"]["graph"]
    result = preview(path)
    assert len(result.nodes) == len(graph["nodes"])
    assert len(result.edges) == len(graph["edges"])
    document = json.loads(result.to_json())
    VALIDATOR.validate(document)
    assert preview(path).to_json() == result.to_json()
    assert [n["id"] for n in document["nodes"]] == [str(n["id"]) for n in graph["nodes"]]


def test_schema_rejects_an_extra_field() -> None:
    document = json.loads(preview(dify_file("artifact.yml")).to_json())
    document["nodes"][0]["prompt"] = "leak"
    with pytest.raises(jsonschema.ValidationError):
        VALIDATOR.validate(document)


def test_if_else_labels_in_the_shared_branching_export() -> None:
    result = preview(dify_file("dify_conditional_branching.yml"))
    assert {(e.source, e.target): e.label for e in result.edges} == {
        ("1754154032319", "1754217359748"): None,
        ("1754217359748", "1754154034161"): "IF",
        ("1754217359748", "1754217363584"): "ELSE",
    }


def test_multi_case_if_else_and_classifier_labels() -> None:
    deep = preview(dify_file("deep_researcher.yml"))
    labels = [e.label for e in deep.edges if e.source == "1739087643444"]
    assert sorted(filter(None, labels)) == ["CASE 2", "CASE 3", "CASE 4"] + ["CASE 5"] * 5 + ["IF"]
    chat = preview(dify_file("document_chat_template.yml"))
    assert sorted(e.label for e in chat.edges if e.label and e.label.startswith("CLASS")) == [
        "CLASS 1",
        "CLASS 2",
        "CLASS 3",
        "CLASS 4",
    ]


def test_positions_resolve_through_parent_chains() -> None:
    nodes = [
        node("loop", "loop", x=100, y=50),
        node("inner", "iteration", x=20, y=30, parent="loop"),
        node("leaf", "code", x=5, y=7, parent="inner"),
    ]
    result = preview(export(nodes, [edge("loop", "loop")]))
    boxes = {n.id: (n.x, n.y, n.parent_id) for n in result.nodes}
    assert boxes == {
        "loop": (100, 50, None),
        "inner": (120, 80, "loop"),
        "leaf": (125, 87, "inner"),
    }


def test_position_absolute_wins_and_sizes_default() -> None:
    item = node("a", x=1, y=2)
    item["positionAbsolute"] = {"x": 300, "y": 400}
    item["width"] = 120
    (result,) = preview(export([item], [])).nodes
    assert (result.x, result.y, result.width, result.height) == (300, 400, 120, 90)


def test_deep_researcher_children_sit_inside_their_iteration() -> None:
    result = preview(dify_file("deep_researcher.yml"))
    by_id = {n.id: n for n in result.nodes}
    children = [n for n in result.nodes if n.parent_id]
    assert len(children) == 8
    for child in children:
        parent = by_id[child.parent_id]
        assert parent.x <= child.x and child.x + child.width <= parent.x + parent.width + 1
        assert parent.y <= child.y and child.y + child.height <= parent.y + parent.height + 1


def test_missing_edge_ids_are_generated_deterministically() -> None:
    nodes = [node("a"), node("b")]
    edges = [edge("a", "b"), edge("a", "b"), edge("b", "a", edge_id="edge-b-a")]
    result = preview(export(nodes, edges))
    assert [e.id for e in result.edges] == ["edge-a-b", "edge-a-b-2", "edge-b-a"]
    assert preview(export(nodes, edges)) == result


@pytest.mark.parametrize(
    ("nodes", "edges", "message"),
    [
        ([node("a"), node("a")], [], "duplicate node id 'a'"),
        (
            [node("a"), node("b")],
            [edge("a", "b", edge_id="e"), edge("b", "a", edge_id="e")],
            "duplicate edge id 'e'",
        ),
        (
            [node("a")],
            [edge("a", "ghost", edge_id="e1")],
            "edge 'e1' is dangling: its target node 'ghost'",
        ),
        ([node("a")], [edge("nobody", "a")], "edge #1 is dangling: its source node 'nobody'"),
        ([node("a", parent="b"), node("b", parent="a")], [], "node '[ab]' is its own ancestor"),
        ([node("a", parent="zzz")], [], "node 'a' names a parent that does not exist"),
        ([{"data": {"type": "llm"}}], [], "node #1 has no id"),
        ([node("a", x=float("nan"), y=0)], [], "node 'a' has a position x that is not finite"),
        ([{**node("a"), "width": -3}], [], "node 'a' has a width that is not positive"),
        ([{**node("a"), "position": [1, 2]}], [], "node 'a' has a position without numeric"),
    ],
)
def test_inconsistent_graphs_name_the_offending_id(nodes, edges, message) -> None:
    with pytest.raises(WorkflowError, match=message):
        preview(export(nodes, edges))


def test_node_and_edge_count_limits() -> None:
    text = export([node(f"n{i}") for i in range(5)], [edge("n0", "n1"), edge("n1", "n2")])
    with pytest.raises(WorkflowError, match="5 nodes, over the limit 4"):
        preview(text, limits=PreviewLimits(max_nodes=4))
    with pytest.raises(WorkflowError, match="2 edges, over the limit 1"):
        preview(text, limits=PreviewLimits(max_edges=1))


def test_string_length_limits() -> None:
    long_id = "n" * 300
    with pytest.raises(WorkflowError, match="longer than 256 characters"):
        preview(export([node(long_id)], []))
    (result,) = preview(export([node("a", title="word " * 100)], [])).nodes
    assert len(result.title) == 200 and result.title.endswith("…")


def test_note_nodes_are_counted_but_their_text_is_not_read() -> None:
    note = {
        "id": "n1",
        "type": "custom-note",
        "data": {"type": "", "title": "", "text": "hello"},
        "position": {"x": 0, "y": 0},
    }
    (result,) = preview(export([note], [])).nodes
    assert (result.type, result.title) == ("note", "")
    assert "hello" not in preview(export([note], [])).to_json()


def test_app_name_and_mode_are_reported() -> None:
    result = preview(dify_file("payment_demo.yml"))
    assert json.loads(result.to_json())["app"] == {"name": "小支付-DEMO", "mode": "advanced-chat"}


def test_shared_dir_files_are_all_listed() -> None:
    folder: Path = dify_file("artifact.yml").parent
    assert sorted(p.name for p in folder.glob("*.yml")) == sorted(SHARED_DIFY_FILES)


# ---- titles and the app name are shown as plain, visible text ---------------------------------

SPOOFING = {
    "Safe\u202eexe.txt": "Safeexe.txt",
    "\x1b[31mred": "[31mred",
    "a\u2066b\u2069c\u200fd\u061ce": "abcde",
    "zero\u200bwidth\ufeff": "zerowidth",
    "Cafe\u0301": "Caf\u00e9",
}
HIDDEN = "\x1b\x07\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c\u200b"


def _spoofed_preview() -> tuple[str, str]:
    nodes = [node(f"n{i}", title=title) for i, title in enumerate(SPOOFING)]
    doc = yaml.safe_load(export(nodes, [], name="Pay\u202eroll\x1b]0;x\x07"))
    return json.dumps(doc), "Payroll]0;x"


def test_titles_and_app_name_lose_control_and_bidi_characters_in_every_output() -> None:
    source, app_name = _spoofed_preview()
    result = preview(source)
    assert [n.title for n in result.nodes] == list(SPOOFING.values())
    assert result.app_name == app_name
    outputs = [result.to_json(), result.to_svg(), result.summary()]
    for output in outputs:
        assert not set(output) & set(HIDDEN)
    assert '"title": "Safeexe.txt"' in outputs[0] and "Safeexe.txt" in outputs[1]
    assert f"app: {app_name}" in outputs[2]


def test_a_lone_surrogate_title_becomes_valid_utf8() -> None:
    doc = yaml.safe_load(export([node("a", title="x")], [], name="app"))
    text = json.dumps(doc).replace('"title": "x"', '"title": "bad \\ud800 title"')
    result = preview(text)
    assert result.nodes[0].title == "bad  title"
    for output in (result.to_json(), result.to_svg(), result.summary()):
        output.encode("utf-8")  # strict: a lone surrogate would raise here


def test_a_credential_split_by_invisible_characters_is_still_masked() -> None:
    key = "sk-proj-" + "\u200b".join(["Ab3dEf6hIj9kLm2nOp5qRs8t", "Uv1wXy4z"])
    result = preview(export([node("a", title=f"uses {key}")], [], name=f"app {key}"))
    assert result.nodes[0].title == "uses [masked]"
    assert result.app_name == "app [masked]"


def test_ids_with_hidden_characters_get_stand_ins() -> None:
    result = preview(
        export([node("a\u202eb"), node("c")], [edge("a\u202eb", "c", edge_id="e\u2066")])
    )
    assert [n.id for n in result.nodes] == ["masked-id-1", "c"]
    assert [(e.id, e.source) for e in result.edges] == [("masked-id-2", "masked-id-1")]


def test_warn_false_leaves_the_version_warning_to_the_caller() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = preview(export([node("a")], [], version="0.9.0"), warn=False)
    assert caught == [] and len(result.warnings) == 1


def test_error_messages_quote_at_most_80_characters_of_an_id() -> None:
    long_id = "n" * 256
    with pytest.raises(WorkflowError) as err:
        preview(export([node("a")], [edge("a", long_id)]))
    message = str(err.value)
    assert "n" * 80 + "…' (256 characters)" in message and "n" * 81 not in message
