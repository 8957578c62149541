"""``ragspine graph rollup | compare | derive``, run through ``ragspine.cli.app``."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from cli.runner import fails_cleanly, run
from graph.builders import fact, make_workspace
from ragspine.security import Sensitivity
from ragspine.structured.facts import Fact, Scale


def workspace(tmp_path: Path, facts: list[Fact], name: str = "ws") -> str:
    make_workspace(tmp_path / name, facts).close()
    return str(tmp_path / name)


FACTS = [
    fact("revenue", "de", "0.1"),
    fact("revenue", "fr", "0.2"),
    fact("revenue", "it", "1", scale=Scale.THOUSAND),
    fact("revenue", "eu", "1000.3"),
    fact("revenue", "us", "4", period="FY2023"),
    fact("revenue", "us", "5"),
    fact("cogs", "us", "2"),
]


def test_rollup_text_tree_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = workspace(tmp_path, FACTS)
    ask = ["--workspace", ws, "graph", "rollup", "--metric", "revenue", "--entity", "eu"]
    code, out, _ = run(capsys, *ask, "--period", "FY2024", "--tree")
    assert code == 0
    assert out.startswith("[complete] ACME Europe's Revenue in FY2024, summed over 3 entities: ")
    assert "1,000.3 US dollars" in out and "eu: 1000.3 [complete] reported 1000.3 one" in out
    assert "  fr: 0.2 [complete]" in out
    code, out, _ = run(capsys, *ask, "--period", "FY2024", "--json")
    data = json.loads(out)
    assert data["value"] == "1000.3" and data["difference"] == "0.0"
    assert [f["locator"] for f in data["lineage"]] == [
        "report-de.csv row revenue",
        "report-fr.csv row revenue",
        "report-it.csv row revenue",
    ]


def test_rollup_hidden_child_prints_like_a_missing_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = fact("revenue", "it", "777.5", sensitivity=Sensitivity.CONFIDENTIAL)
    visible = [f for f in FACTS if f.entity != "it"]
    outputs = []
    for name, facts in (("hidden", [*visible, secret]), ("missing", visible)):
        ws = workspace(tmp_path, facts, name)
        for extra in ((), ("--json",), ("--tree",)):
            code, out, err = run(
                capsys,
                *("--workspace", ws, "graph", "rollup", "--metric", "revenue"),
                *("--entity", "eu", "--period", "FY2024", *extra),
            )
            assert code == 0 and err == ""
            outputs.append(out)
    assert outputs[:3] == outputs[3:]
    assert "777" not in "".join(outputs)
    assert (
        "[partial]" in outputs[0] and "Some children are not visible or missing: it" in outputs[0]
    )
    # The cleared asker sees it.
    code, out, _ = run(
        capsys,
        *("--workspace", str(tmp_path / "hidden"), "graph", "rollup", "--metric", "revenue"),
        *("--entity", "eu", "--period", "FY2024", "--clearance", "confidential"),
    )
    assert out.startswith("[complete]") and "777.8 US dollars" in out


def test_compare_periods_and_entities(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = workspace(tmp_path, FACTS)
    code, out, _ = run(
        capsys,
        *("--workspace", ws, "graph", "compare", "--metric", "revenue", "--entity", "us"),
        *("--period", "FY2023", "--period", "FY2024"),
    )
    assert code == 0 and out.startswith("[complete]\n")
    assert "difference 1 US dollars, change 25 %, ratio 1.25" in out
    assert "average 4.5" in out and "rounded half-even" in out
    code, out, _ = run(
        capsys,
        *("--workspace", ws, "graph", "compare", "--metric", "revenue", "--entity", "de"),
        *("--entity", "fr", "--entity", "us", "--period", "FY2024", "--json"),
    )
    data = json.loads(out)
    assert data["sum"] == "5.3" and data["average"]["fraction"] == "53/30"
    assert data["average"]["exact"] is False and data["steps"][0]["ratio"]["value"] == "2"


def test_derive_with_pictures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = workspace(tmp_path, FACTS)
    dot, svg = tmp_path / "tree.dot", tmp_path / "tree.svg"
    code, out, _ = run(
        capsys,
        *("--workspace", ws, "graph", "derive", "--metric", "gross_margin", "--entity", "us"),
        *("--period", "FY2024", "--dot", str(dot), "--svg", str(svg)),
    )
    assert code == 0 and out.startswith("[found] ACME US's Gross margin in FY2024")
    assert ": 60 percent." in out
    assert dot.read_text().startswith("digraph ragspine {")
    ET.fromstring(svg.read_text())
    code, out, _ = run(
        capsys,
        *("--workspace", ws, "graph", "derive", "--metric", "gross_margin", "--entity", "de"),
        *("--period", "FY2024", "--json"),
    )
    data = json.loads(out)
    assert data["status"] == "not_found" and data["value"] is None
    assert data["missing"] == [
        {"metric": "cogs", "entity": "de", "period": "FY2024", "channel": "total"}
    ]


def test_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = workspace(tmp_path, FACTS)
    base = ["--workspace", ws, "graph"]
    err = fails_cleanly(
        capsys, *base, "rollup", "--metric", "revenu", "--entity", "eu", "--period", "FY2024"
    )
    assert "unknown metric 'revenu'" in err and "revenue" in err
    err = fails_cleanly(
        capsys, *base, "derive", "--metric", "revenue", "--entity", "eu", "--period", "FY2024"
    )
    assert "has no derivation" in err
    err = fails_cleanly(
        capsys, *base, "compare", "--metric", "revenue", "--entity", "eu", "--period", "FY2024"
    )
    assert "two items or more" in err
    err = fails_cleanly(
        capsys,
        *base,
        *("derive", "--metric", "gross_margin", "--entity", "us", "--period", "FY2024"),
        *("--svg", str(tmp_path / "no" / "such" / "dir" / "x.svg")),
    )
    assert "--svg" in err
    assert not (tmp_path / "no").exists()


def test_a_missing_workspace_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fails_cleanly(
        capsys,
        *("--workspace", str(tmp_path / "nowhere"), "graph", "rollup", "--metric", "revenue"),
        *("--entity", "eu", "--period", "FY2024"),
    )
