"""``ragspine workflow preview FILE [--json | --svg OUT]``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from wf_builders import dify_file, export, node

from ragspine.cli import main


def test_summary_json_and_svg(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = dify_file("dify_conditional_branching.yml")
    assert main(["workflow", "preview", str(path)]) == 0
    out = capsys.readouterr().out
    assert "mode: workflow" in out and "nodes: 4" in out and "edges: 3" in out

    assert main(["workflow", "preview", str(path), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["preview_version"] == 1 and len(document["nodes"]) == 4

    target = tmp_path / "graph.svg"
    assert main(["workflow", "preview", str(path), "--svg", str(target)]) == 0
    assert target.read_text("utf-8").startswith("<svg")
    assert "4 nodes, 3 edges" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("just: a mapping\n", "kind 'app'"),
        ("a: [unclosed\n", "not valid YAML"),
        (export([node("a")], [], mode="chat"), "app.mode must be one of"),
    ],
)
def test_bad_file_exits_2_with_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    path = tmp_path / "bad.yml"
    path.write_text(content)
    assert main(["workflow", "preview", str(path)]) == 2
    assert message in capsys.readouterr().err


def test_missing_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["workflow", "preview", str(tmp_path / "nope.yml")]) == 2
    assert "not found" in capsys.readouterr().err


def test_newer_version_warns_on_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "new.yml"
    path.write_text(export([node("a")], [], version="0.9.0"))
    assert main(["workflow", "preview", str(path), "--json"]) == 0
    assert "newer than 0.6.0" in capsys.readouterr().err


def test_json_and_svg_are_exclusive(tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        main(["workflow", "preview", "x.yml", "--json", "--svg", str(tmp_path / "o.svg")])
