"""The narrative CLI: libraries, ingest with progress and summary, search output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragspine.cli import main


def test_cli_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = ["--workspace", str(tmp_path / "ws")]
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "q3.md").write_text("# Q3\n\n## Revenue\n\nRevenue grew 3.5% in the U.S. market.\n")
    (docs / "bad.pdf").write_bytes(b"not a pdf")
    create = ["library", "create", "reports", "--description", "Quarterly reports"]
    assert main([*ws, *create]) == 2  # not a workspace yet
    assert "run 'ragspine --workspace" in capsys.readouterr().err
    assert main([*ws, "init"]) == 0
    assert main([*ws, *create, "--sensitivity", "internal"]) == 0
    assert main([*ws, "library", "create", "reports"]) == 2
    assert "already exists" in capsys.readouterr().err
    ingest = ["ingest", "docs", str(docs), "--library", "reports", "--meta", "year=2024"]
    assert main([*ws, *ingest, "--sensitivity", "public"]) == 1  # one file failed
    out, err = capsys.readouterr()
    assert err == ""  # progress bars only on a terminal
    assert "1 added, 0 unchanged, 0 replaced, 1 failed" in out and "bad.pdf" in out
    assert main([*ws, "libraries"]) == 0
    assert capsys.readouterr().out.startswith("reports\t1 documents\t1 chunks\tinternal")
    assert main([*ws, "library", "describe", "reports"]) == 0
    public = json.loads(capsys.readouterr().out)  # the description is at the library's level
    assert (public["description"], public["chunks"], public["chunks_public"]) == ("", 1, 1)
    assert "chunks_internal" not in public
    assert main([*ws, "library", "describe", "reports", "--clearance", "internal"]) == 0
    internal = json.loads(capsys.readouterr().out)
    assert (internal["description"], internal["chunks_internal"]) == ("Quarterly reports", 0)
    assert main([*ws, "search", "revenue growth", "--library", "reports", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    (snippet,) = payload["snippets"]
    assert snippet["chunk_id"] == "reports:q3.md#0"
    assert snippet["source_locator"]["heading_path"] == ["Q3", "Revenue"]
    assert payload["trace"]["mode"] == "bm25"
    assert main([*ws, "search", "revenue", "--mode", "semantic"]) == 2
    assert "use one of economy, bm25, lexical, hybrid, vector, auto" in capsys.readouterr().err


def test_modes_without_vectors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = ["--workspace", str(tmp_path / "ws")]
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "q3.md").write_text("# Q3\n\nRevenue grew in the U.S. market.\n")
    assert main([*ws, "init"]) == 0
    assert main([*ws, "ingest", "docs", str(docs), "--library", "reports"]) == 0
    capsys.readouterr()
    for mode in ("hybrid", "vector"):
        assert main([*ws, "search", "revenue", "--mode", mode]) == 2
        err = capsys.readouterr().err
        assert f"mode '{mode}' needs vectors" in err
        assert "`ragspine library vectors reports on`" in err
    note = "note: auto: library reports keeps no vectors, searched lexical"
    assert main([*ws, "search", "revenue", "--mode", "auto"]) == 0
    out, err = capsys.readouterr()
    assert note in err and "reports/q3.md" in out
    assert main([*ws, "ask", "How did revenue grow?", "--mode", "auto", "--json"]) == 0
    out, err = capsys.readouterr()
    assert note in err and json.loads(out)["notices"][0] in err


def test_embedding_flags_are_checked_and_accepted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = ["--workspace", str(tmp_path / "ws")]
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Revenue grew in Europe.")
    ingest = ["ingest", "docs", str(docs), "--library", "r"]
    assert main([*ws, *ingest, "--embed-batch", "0"]) == 2
    assert "embed batch size 0 is out of range" in capsys.readouterr().err
    assert main([*ws, *ingest, "--threads", "0"]) == 2
    assert "threads=0 is out of range" in capsys.readouterr().err
    assert main([*ws, *ingest, "--embed-batch", "8", "--threads", "1"]) == 0
    assert "1 added" in capsys.readouterr().out
    for command in (["reembed", "--library", "r"], ["library", "vectors", "r", "on"]):
        assert main([*ws, *command, "--embed-batch", "2000"]) == 2
        assert "out of range" in capsys.readouterr().err
