"""Progress on stderr: bars with rate and ETA on a terminal, nothing off one or with --quiet."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from ragspine.cli import main


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    for n in range(3):
        (folder / f"d{n}.txt").write_text(f"Paragraph number {n} about revenue.", encoding="utf-8")
    return folder


def _ingest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *extra: str) -> str:
    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    ws = ["--workspace", str(tmp_path / "ws")]
    assert main([*ws, "ingest", "docs", str(_docs(tmp_path)), "--library", "r", *extra]) == 0
    return terminal.getvalue()


def test_document_ingest_shows_a_bar_on_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shown = _ingest(tmp_path, monkeypatch)
    assert "documents: 100%" in shown and "3/3" in shown and "doc/s" in shown


def test_quiet_shows_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shown = _ingest(tmp_path, monkeypatch, "--quiet")
    assert "documents" not in shown and "3/3" not in shown


def test_the_evaluations_show_a_bar_on_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A review: 'eval retrieval' (20 s on SciFact) and 'eval qa' printed nothing until their
    results."""
    from importlib import resources

    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    sample = Path(str(resources.files("ragspine").joinpath("data/convfinqa_sample.json")))
    argv = ["eval", "qa", "--dataset", "convfinqa", str(sample), "--limit", "3", "--json"]
    assert main(argv) == 0
    assert "asking: 100%" in terminal.getvalue() and "3/3" in terminal.getvalue()
    ws = ["--workspace", str(tmp_path / "ws")]
    assert main([*ws, "ingest", "docs", str(_docs(tmp_path)), "--library", "r", "--quiet"]) == 0
    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"_id": "q1", "text": "revenue"}\n', encoding="utf-8")
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\td1.txt\t1\n", encoding="utf-8")
    retrieval = ["eval", "retrieval", "--library", "r", "--queries", str(queries)]
    assert main([*ws, *retrieval, "--qrels", str(qrels), "--json"]) == 0
    assert "searching: 100%" in terminal.getvalue() and "1/1" in terminal.getvalue()
    quiet = _Terminal()
    monkeypatch.setattr("sys.stderr", quiet)
    assert main([*ws, *retrieval, "--qrels", str(qrels), "--json", "--quiet"]) == 0
    assert "searching" not in quiet.getvalue()
