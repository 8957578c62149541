from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cli.runner import run
from ragspine.cli import main


def test_demo_prints_three_statuses_with_sources(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "--workspace", str(tmp_path / "ws"), "demo")
    assert code == 0
    found = "[found] IP's Revenue in FY2006 was 2,455.0 million. Source: Double_IP/2006/page_32.pdf"
    assert found in out  # the table's "in millions", said
    assert "[not_found]" in out and "[unrecognized_param]" in out
    assert "source: Double_IP/2006/page_32.pdf" in out
    # Narrative channel: a cited extractive answer over the filings' text.
    narrative = out.split("== Narrative channel")[1]
    assert "library filings: 12 added" in narrative
    assert "[1]" in narrative and "Sources:" in narrative
    assert "filings:Double_IP/2006/page_32.pdf#" in narrative
    # the composite answer about IP is explained by IP's filing only (each text names its
    # company in its metadata): a HIG passage about "gross profits" once was cited
    composite = narrative.split("? Why did IP's operating profit change")[1].split("\n? ")[0]
    assert "Explanation:" in composite and "Double_HIG" not in composite
    again = main(["--workspace", str(tmp_path / "ws"), "demo"])
    assert again == 0 and "12 unchanged" in capsys.readouterr().out


def test_metric_json_fields(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = str(tmp_path / "ws")
    run(capsys, "--workspace", ws, "demo")
    ask = ["--workspace", ws, "metric", "--metric", "sales", "--entity", "ip", "--period", "FY06"]
    code, out, _ = run(capsys, *ask, "--json")
    data = json.loads(out)
    assert code == 0 and data["status"] == "found" and data["value"] == "2455.0"
    assert data["source_doc_id"] == "Double_IP/2006/page_32.pdf"
    _, out, _ = run(capsys, *ask, "--channel", "wholesale", "--json")
    data = json.loads(out)
    assert data["status"] == "unrecognized_param"
    assert (data["param"], data["raw"]) == ("channel", "wholesale")
    assert isinstance(data["suggestions"], list)


def test_errors_exit_2_and_name_the_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(
        capsys,
        "--workspace",
        str(tmp_path / "none"),
        "metric",
        "--metric",
        "x",
        "--entity",
        "y",
        "--period",
        "2024",
    )
    assert code == 2 and "ragspine --workspace" in err and "init" in err
    ws = str(tmp_path / "ws")
    run(capsys, "--workspace", ws, "init")
    code, _, err = run(capsys, "--workspace", ws, "ingest", "facts", str(tmp_path / "missing.csv"))
    assert code == 2 and "missing.csv does not exist" in err


def test_workspace_from_environment(tmp_path: Path) -> None:
    env = {"RAGSPINE_WORKSPACE": str(tmp_path / "envws"), "PATH": ""}
    proc = subprocess.run(
        [sys.executable, "-m", "ragspine.cli", "init"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "envws" / "glossary.toml").exists()


def test_public_api_is_pinned() -> None:
    import ragspine

    assert sorted(ragspine.__all__) == sorted(
        [
            "AnswerOptions",
            "Filter",
            "MetricResult",
            "MetricStatus",
            "NarrativeAnswer",
            "Principal",
            "RagSpineError",
            "SearchOptions",
            "Sensitivity",
            "Snippet",
            "Workspace",
            "parse_filter",
            "visible",
        ]
    )


def test_every_command_closes_the_workspace_it_opens(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragspine.workspace import Workspace

    opened: list[Workspace] = []
    closed: list[Workspace] = []
    real_init, real_close = Workspace.__init__, Workspace.close

    def tracking_init(self: Workspace, path: Path) -> None:
        real_init(self, path)
        opened.append(self)

    def tracking_close(self: Workspace) -> None:
        closed.append(self)
        real_close(self)

    monkeypatch.setattr(Workspace, "__init__", tracking_init)
    monkeypatch.setattr(Workspace, "close", tracking_close)
    ws = str(tmp_path / "ws")
    doc = tmp_path / "note.md"
    doc.write_text("# Note\n\nRevenue grew in Europe.\n", encoding="utf-8")
    beir = tmp_path / "beir"
    beir.mkdir()
    (beir / "corpus.jsonl").write_text('{"_id": "d1", "text": "revenue grew"}\n')
    (tmp_path / "q.jsonl").write_text('{"_id": "q1", "text": "revenue"}\n')
    (tmp_path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    facts = tmp_path / "facts.json"
    facts.write_text(
        '{"facts": [{"metric": "revenue", "entity": "acme", "period": "2024", "value": 1}]}'
    )
    commands = [
        ["init"],
        ["demo"],
        ["ingest", "facts", str(facts), "--quiet"],
        ["metric", "--metric", "revenue", "--entity", "acme", "--period", "FY2024"],
        ["library", "create", "notes", "--description", "notes"],
        ["ingest", "docs", str(doc), "--library", "notes", "--quiet"],
        ["ingest", "beir", str(beir), "--library", "corpus", "--quiet"],
        ["libraries"],
        ["library", "describe", "notes"],
        ["search", "revenue"],
        ["ask", "revenue"],
        [
            "eval",
            "retrieval",
            "--library",
            "corpus",
            "--queries",
            str(tmp_path / "q.jsonl"),
            "--qrels",
            str(tmp_path / "qrels.tsv"),
        ],
        ["document", "delete", "note.md", "--library", "notes"],
        ["library", "delete", "notes", "--yes"],
    ]
    for argv in commands:
        opened.clear()
        closed.clear()
        code, _, err = run(capsys, "--workspace", ws, *argv)
        assert code == 0, (argv, err)
        assert opened, argv
        assert all(any(c is w for c in closed) for w in opened), f"{argv} left a workspace open"
