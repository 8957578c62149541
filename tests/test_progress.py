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
