"""``ragspine workflow preview FILE [--json | --svg OUT]``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from wf_builders import dify_file, export, node

import ragspine
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


# ---- the SVG output never harms the input and is never half-written ----------------------------


def _export_file(tmp_path: Path, name: str = "flow.yml", **kwargs: object) -> Path:
    path = tmp_path / name
    nodes = [node(f"n{i}", title=f"Step {i}") for i in range(6)]
    path.write_text(export(nodes, [], **kwargs), encoding="utf-8")  # type: ignore[arg-type]
    return path


@pytest.mark.parametrize("alias", ["same", "relative", "symlink", "hardlink", "dotted"])
def test_svg_refuses_to_overwrite_the_input_under_any_name(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    alias: str,
) -> None:
    source = _export_file(tmp_path)
    before = source.read_bytes()
    monkeypatch.chdir(tmp_path)
    out = {
        "same": str(source),
        "relative": "flow.yml",
        "dotted": "./sub/../flow.yml",
        "symlink": str(tmp_path / "link.svg"),
        "hardlink": str(tmp_path / "hard.svg"),
    }[alias]
    (tmp_path / "sub").mkdir()
    (tmp_path / "link.svg").symlink_to(source)
    (tmp_path / "hard.svg").hardlink_to(source)
    assert main(["workflow", "preview", str(source), "--svg", out]) == 2
    captured = capsys.readouterr()
    assert "refusing to write the output" in captured.err and "Traceback" not in captured.err
    assert captured.out == ""
    assert source.read_bytes() == before


def test_svg_to_another_file_replaces_it_whole(tmp_path: Path) -> None:
    source = _export_file(tmp_path)
    out = tmp_path / "out.svg"
    out.write_text("old drawing", encoding="utf-8")
    out.chmod(0o640)
    assert main(["workflow", "preview", str(source), "--svg", str(out)]) == 0
    assert out.read_text("utf-8").startswith("<svg") and out.read_text("utf-8").endswith("</svg>\n")
    assert out.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["flow.yml", "out.svg"]


def test_svg_to_a_folder_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _export_file(tmp_path)
    assert main(["workflow", "preview", str(source), "--svg", str(tmp_path)]) == 2
    assert "it is a folder" in capsys.readouterr().err


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs POSIX resource limits")
def test_a_failed_svg_write_leaves_the_old_file_as_it_was(tmp_path: Path) -> None:
    """A write that fails midway (here: a file-size limit, as a full disk would) changes nothing."""
    import resource

    source = _export_file(tmp_path)
    out = tmp_path / "out.svg"
    out.write_text("old drawing\n", encoding="utf-8")

    def limit_file_size() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (512, 512))

    package_root = str(Path(ragspine.__file__).resolve().parents[1])
    env = {
        **os.environ,
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONPATH": os.pathsep.join([package_root, os.environ.get("PYTHONPATH", "")]),
    }
    command = ["workflow", "preview", str(source), "--svg", str(out)]
    done = subprocess.run(
        [sys.executable, "-m", "ragspine.cli", *command],
        capture_output=True,
        text=True,
        env=env,
        preexec_fn=limit_file_size,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert out.read_text("utf-8") == "old drawing\n"
    assert "left as it was" in done.stderr and "Traceback" not in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["flow.yml", "out.svg"]


@pytest.mark.parametrize("mode", [[], ["--json"], ["--svg", "out.svg"]])
def test_a_version_warning_is_reported_once_on_stderr_only(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    mode: list[str],
) -> None:
    source = _export_file(tmp_path, version="0.9.0")
    monkeypatch.chdir(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["workflow", "preview", str(source), *mode]) == 0
    captured = capsys.readouterr()
    assert captured.err.count("newer than 0.6.0") == 1
    assert "newer than 0.6.0" not in captured.out
    assert caught == []
