"""``ragspine graph edges | neighbours | verify``, run through ``ragspine.cli.app``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli.runner import fails_cleanly, run
from ragspine.graph.relations import EdgeKind, Lineage, NewEdge, Origin
from ragspine.workspace import Workspace


@pytest.fixture()
def ws(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    workspace = str(tmp_path / "ws")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("ACME Corp sales grew online.", encoding="utf-8")
    (docs / "b.txt").write_text("ACME China EBIT fell.", encoding="utf-8")
    (docs / "b.txt.meta.json").write_text('{"sensitivity": "internal"}', encoding="utf-8")
    assert run(capsys, "--workspace", workspace, "init")[0] == 0
    assert (
        run(capsys, "--workspace", workspace, "ingest", "docs", str(docs), "--library", "lib")[0]
        == 0
    )
    return workspace


def test_edges_as_text_and_json(ws: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--workspace", ws, "graph", "edges", "--kind", "mentions")
    assert code == 0
    assert "document:lib:a.txt -mentions-> entity:acme" in out and "b.txt" not in out
    assert out.rstrip().endswith("3 edges")
    code, out, _ = run(
        capsys, "--workspace", ws, "graph", "edges", "--json", "--clearance", "internal",
        "--node", "ACME China",
    )  # fmt: skip
    data = json.loads(out)
    assert code == 0 and data["total"] == 3
    assert {e["target"] for e in data["edges"]} >= {"entity:acme_cn"}
    code, out, _ = run(capsys, "--workspace", ws, "graph", "edges", "--limit", "1")
    assert "raise --limit" in out


def test_neighbours(ws: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--workspace", ws, "graph", "neighbours", "ACME", "--depth", "2")
    assert code == 0 and out.startswith("entity:acme (ACME Corp)")
    assert "document:lib:a.txt" in out and "acme_cn" in out  # through the group, not b.txt
    code, out, _ = run(
        capsys, "--workspace", ws, "graph", "neighbours", "entity:acme_cn", "--json",
    )  # fmt: skip
    assert [n["id"] for n in json.loads(out)["neighbours"]] == ["entity:acme_group"]


def test_verify_and_the_unverified_filter(ws: str, capsys: pytest.CaptureFixture[str]) -> None:
    with Workspace.open(ws) as workspace:
        edge = NewEdge(
            "entity:acme", "channel:online", EdgeKind.CO_OCCURS, Origin.MODEL_DERIVED,
            Lineage("lib", "a.txt", "lib:a.txt#0", "model-1", {"sentence": 1}), verified=True,
        )  # fmt: skip
        workspace.relations.store.add_edges([edge])
    code, out, _ = run(capsys, "--workspace", ws, "graph", "edges", "--unverified", "--json")
    assert [e["id"] for e in json.loads(out)["edges"]] == [edge.edge_id]
    code, out, _ = run(capsys, "--workspace", ws, "graph", "verify", edge.edge_id, "--by", "ann")
    assert code == 0 and "verified by ann" in out
    code, out, _ = run(capsys, "--workspace", ws, "graph", "edges", "--unverified")
    assert out.strip() == "0 edges"
    code, out, _ = run(
        capsys, "--workspace", ws, "graph", "edges", "--origin", "model-derived", "--verified",
        "--json",
    )  # fmt: skip
    assert json.loads(out)["edges"][0]["verified_by"] == "ann"


def test_neighbours_mark_a_models_unconfirmed_edge(
    ws: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A review: 'graph neighbours' and its --dot picture drew a model-derived, unverified
    edge exactly like the glossary's own."""
    with Workspace.open(ws) as workspace:
        edge = NewEdge(
            "entity:acme", "channel:online", EdgeKind.CO_OCCURS, Origin.MODEL_DERIVED,
            Lineage("lib", "a.txt", "lib:a.txt#0", "model-1", {"sentence": 1}),
        )  # fmt: skip
        workspace.relations.store.add_edges([edge])
    dot = tmp_path / "n.dot"
    code, out, _ = run(
        capsys, "--workspace", ws, "graph", "neighbours", "channel:online", "--dot", str(dot)
    )
    assert code == 0 and "1 unverified (model-derived)" in out, out
    assert 'label="co_occurs (unverified)"' in dot.read_text(encoding="utf-8")


def test_verifying_a_deterministic_edge_says_it_needs_no_one(
    ws: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A review: it printed 'verified by  at ' with both fields blank."""
    code, out, _ = run(capsys, "--workspace", ws, "graph", "edges", "--kind", "mentions", "--json")
    edge_id = json.loads(out)["edges"][0]["id"]
    code, out, _ = run(capsys, "--workspace", ws, "graph", "verify", edge_id, "--by", "ann")
    assert code == 0 and "already verified: a deterministic edge" in out
    assert "verified by " not in out


@pytest.mark.parametrize(
    "argv",
    [
        ("graph", "neighbours", "x'); DROP TABLE graph_edges;--"),
        ("graph", "neighbours", "document:lib:b.txt"),
        ("graph", "neighbours", "acme", "--depth", "0"),
        ("graph", "edges", "--node", "nobody"),
        ("graph", "edges", "--limit", "0"),
        ("graph", "verify", "e123", "--by", "ann"),
    ],
)
def test_bad_input_is_one_error_line(
    ws: str, capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]
) -> None:
    fails_cleanly(capsys, "--workspace", ws, *argv)


def test_a_hidden_document_and_a_missing_one_fail_alike(
    ws: str, capsys: pytest.CaptureFixture[str]
) -> None:
    hidden = fails_cleanly(capsys, "--workspace", ws, "graph", "neighbours", "document:lib:b.txt")
    missing = fails_cleanly(capsys, "--workspace", ws, "graph", "neighbours", "document:lib:c.txt")
    assert hidden.replace("b.txt", "X") == missing.replace("c.txt", "X")


def test_rebuild(ws: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--workspace", ws, "graph", "rebuild", "lib")
    assert code == 0 and out.startswith("library lib: ") and "deterministic edges stored" in out
    fails_cleanly(capsys, "--workspace", ws, "graph", "rebuild", "nope")


def test_a_neighbourhood_picture_shows_only_what_the_asker_may_see(
    ws: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--dot`` / ``--svg`` draw the visible neighbourhood; the internal document b.txt (three
    edges away, through ACME China) appears only for an internal asker."""
    drawn = {}
    for clearance in ("public", "internal"):
        dot, svg = tmp_path / f"{clearance}.dot", tmp_path / f"{clearance}.svg"
        code, _, err = run(
            capsys, "--workspace", ws, "graph", "neighbours", "ACME", "--depth", "3",
            "--clearance", clearance, "--dot", str(dot), "--svg", str(svg),
        )  # fmt: skip
        assert code == 0, err
        drawn[clearance] = dot.read_text(encoding="utf-8") + svg.read_text(encoding="utf-8")
        assert drawn[clearance].count("digraph") == 1 and "<svg" in drawn[clearance]
        assert "a.txt" in drawn[clearance]
    assert "b.txt" not in drawn["public"] and "b.txt" in drawn["internal"]
    err = fails_cleanly(
        capsys,
        "--workspace",
        ws,
        "graph",
        "neighbours",
        "ACME",
        "--svg",
        str(tmp_path / "no" / "x" / "y.svg"),
    )
    assert "--svg" in err
