"""Hostile and careless inputs to document ingest, and undoing an ingest."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ragspine.cli import main
from ragspine.errors import ConfigError, IngestError, QueryError
from ragspine.narrative.ingest.ingestor import IngestStatus
from ragspine.workspace import Workspace


def _outcomes(report: object) -> dict[str, tuple[IngestStatus, str]]:
    return {Path(o.source).name: (o.status, o.reason) for o in report.outcomes}  # type: ignore[attr-defined]


def test_symlinks_leaving_the_folder_are_not_followed(tmp_path: Path, workspace_dir: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.txt"
    secret.write_text("root:x:0:0 zanzibar password line", encoding="utf-8")
    (outside / "notes").mkdir()
    (outside / "notes" / "n.txt").write_text("zanzibar in a linked folder", encoding="utf-8")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "real.txt").write_text("Revenue grew.", encoding="utf-8")
    (docs / "inside.txt").symlink_to(docs / "real.txt")
    (docs / "passwd.txt").symlink_to(secret)
    (docs / "linked").symlink_to(outside / "notes", target_is_directory=True)
    (docs / "dangling.txt").symlink_to(tmp_path / "missing.txt")
    (docs / "image.png").write_bytes(b"\x89PNG")
    (docs / ".hidden.txt").write_text("zanzibar hidden", encoding="utf-8")
    (docs / ".git").mkdir()
    (docs / ".git" / "HEAD.txt").write_text("zanzibar in git", encoding="utf-8")
    ws = Workspace.open(workspace_dir)
    report = ws.ingest_documents([docs], library="d")
    outcomes = _outcomes(report)
    assert outcomes["real.txt"][0] is IngestStatus.ADDED
    assert outcomes["inside.txt"][0] is IngestStatus.ADDED  # a link inside the folder is fine
    for name in ("passwd.txt", "dangling.txt"):
        assert outcomes[name] == (
            IngestStatus.SKIPPED,
            "symbolic link leading outside the folder, not followed",
        )
    assert outcomes["linked"][0] is IngestStatus.SKIPPED
    assert outcomes["image.png"][0] is IngestStatus.SKIPPED
    assert "unsupported file type" in outcomes["image.png"][1]
    assert outcomes[".hidden.txt"] == (IngestStatus.SKIPPED, "hidden file, not ingested")
    assert outcomes[".git"] == (IngestStatus.SKIPPED, "hidden folder, not ingested")
    assert "HEAD.txt" not in outcomes
    assert ws.search("zanzibar", route=False).snippets == ()
    summary = report.summary()
    assert "6 skipped" in summary and "skipped " + str(docs / "passwd.txt") in summary


def test_two_files_with_one_document_id_are_both_refused(
    tmp_path: Path, workspace_dir: Path
) -> None:
    for quarter, text in (("q1", "First quarter revenue."), ("q2", "Second quarter revenue.")):
        (tmp_path / quarter).mkdir()
        (tmp_path / quarter / "report.md").write_text(text, encoding="utf-8")
    ws = Workspace.open(workspace_dir)
    report = ws.ingest_documents(
        [tmp_path / "q1" / "report.md", tmp_path / "q2" / "report.md"], library="r"
    )
    assert [o.status for o in report.outcomes] == [IngestStatus.FAILED] * 2
    assert "document id 'report.md' is also the id of" in report.outcomes[0].reason
    assert str(tmp_path / "q2" / "report.md") in report.outcomes[0].reason
    # The folder that holds both gives distinct ids (paths relative to it).
    report = ws.ingest_documents([tmp_path / "q1", tmp_path / "q2"], library="r")
    assert report.count(IngestStatus.FAILED) == 2  # each folder alone gives "report.md" again
    parent = tmp_path / "quarters"
    parent.mkdir()
    for quarter in ("q1", "q2"):
        (tmp_path / quarter).rename(parent / quarter)
    report = ws.ingest_documents([parent], library="r")
    assert {o.doc_id for o in report.outcomes} == {"q1/report.md", "q2/report.md"}
    # A later run that maps another file to a stored id replaces it and says so.
    report = ws.ingest_documents([parent / "q2" / "report.md"], library="other")
    report = ws.ingest_documents([parent / "q1" / "report.md"], library="other")
    (outcome,) = report.outcomes
    assert outcome.status is IngestStatus.REPLACED
    assert outcome.reason == f"replaces the version read from {parent / 'q2' / 'report.md'}"


def test_a_beir_corpus_with_a_repeated_id_is_rejected_whole(
    tmp_path: Path, workspace_dir: Path
) -> None:
    (tmp_path / "corpus.jsonl").write_text(
        '{"_id": "1", "title": "A", "text": "alpha"}\n'
        '{"_id": "2", "title": "B", "text": "beta"}\n'
        '{"_id": "1", "title": "C", "text": "gamma"}\n',
        encoding="utf-8",
    )
    ws = Workspace.open(workspace_dir)
    with pytest.raises(IngestError, match="line 3 repeats the _id '1' of line 1"):
        ws.ingest_beir(tmp_path, library="b")
    assert ws.libraries() == []


def test_delete_documents_and_libraries(tmp_path: Path, workspace_dir: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Alpha revenue grew.", encoding="utf-8")
    (docs / "b.txt").write_text("Beta revenue fell.", encoding="utf-8")
    ws = Workspace.open(workspace_dir)
    ws.ingest_documents([docs], library="r")
    ws.ingest_documents([docs], library="keep")
    with pytest.raises(QueryError, match=r"has no document 'nope\.txt'"):
        ws.delete_documents("r", ["a.txt", "nope.txt"])
    assert ws.describe_library("r")["documents"] == 2  # nothing deleted
    assert ws.delete_documents("r", ["a.txt"]) == ["a.txt"]
    assert [s.doc_id for s in ws.search("revenue", libraries=["r"]).snippets] == ["b.txt"]
    fresh = Workspace.open(workspace_dir, create=False)  # the committed index agrees
    assert [s.doc_id for s in fresh.search("revenue", libraries=["r"]).snippets] == ["b.txt"]
    assert ws.delete_library("r") == 1
    assert [lib.library_id for lib in ws.libraries()] == ["keep"]
    assert not (ws.index_dir / "r").exists()
    # A new library of the same name starts empty: no old index or cached copy shows through.
    (docs / "c.txt").write_text("Gamma revenue.", encoding="utf-8")
    ws.ingest_documents([docs / "c.txt"], library="r")
    assert [s.doc_id for s in fresh.search("revenue", libraries=["r"]).snippets] == ["c.txt"]
    with pytest.raises(QueryError, match="unknown library 'gone'"):
        ws.delete_library("gone")
    with pytest.raises(ConfigError, match="invalid library name"):
        ws.delete_library("../../etc")


def test_delete_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = ["--workspace", str(tmp_path / "ws")]
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Alpha revenue grew.", encoding="utf-8")
    assert main([*ws, "ingest", "docs", str(docs), "--library", "r"]) == 0
    assert main([*ws, "document", "delete", "a.txt", "--library", "r"]) == 0
    assert "deleted r/a.txt" in capsys.readouterr().out
    assert main([*ws, "library", "delete", "r"]) == 2  # stdin is no terminal: needs --yes
    assert "pass --yes" in capsys.readouterr().err
    assert main([*ws, "library", "delete", "r", "--yes"]) == 0
    assert "deleted library r (0 documents)" in capsys.readouterr().out


@pytest.mark.parametrize(
    "command",
    [
        ["libraries"],
        ["library", "describe", "r"],
        ["library", "create", "r"],
        ["search", "revenue"],
        ["ask", "why did revenue grow?"],
        ["metric", "--metric", "sales", "--entity", "IP", "--period", "FY2006"],
        ["document", "delete", "a.txt", "--library", "r"],
        ["library", "delete", "r", "--yes"],
    ],
)
def test_reading_commands_need_a_workspace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    folder = tmp_path / "not-a-workspace"
    assert main(["--workspace", str(folder), *command]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ragspine: error: no RAGSpine workspace at")
    assert "init' first" in err
    assert not folder.exists()  # nothing was created


def test_store_errors_at_any_point_are_translated(
    workspace_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import sqlite3

    from ragspine.errors import StoreError
    from ragspine.locks import write_lock

    ws = Workspace.init(workspace_dir)
    ws.create_library("busy")
    blocker = sqlite3.connect(ws.db_path)
    blocker.execute("BEGIN IMMEDIATE")  # another process mid-transaction
    monkeypatch.setattr("ragspine.stores.sqlite.connect.BUSY_TIMEOUT", 0.1)
    other = Workspace.open(workspace_dir, create=False)
    (tmp_path / "a.txt").write_text("text", encoding="utf-8")
    lock = workspace_dir / "locks" / "library-busy.lock"
    expected = (
        rf"stayed locked by another writer \(writing now: library-busy: process {os.getpid()}"
    )
    with (
        write_lock(lock, resource="library 'busy'"),
        pytest.raises(StoreError, match=expected),
    ):
        other.ingest_documents([tmp_path / "a.txt"], library="fresh")
    blocker.rollback()
    blocker.close()


def test_a_reader_stuck_on_a_locked_database_is_told_no_library_name(
    workspace_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import sqlite3

    from ragspine.errors import StoreError
    from ragspine.locks import write_lock
    from ragspine.stores.sqlite import errors

    Workspace.init(workspace_dir).create_library("secret-merger")
    lock = workspace_dir / "locks" / "library-secret-merger.lock"
    with write_lock(lock, resource="library 'secret-merger'"):
        locked = sqlite3.OperationalError("database is locked")
        writing = errors.sqlite_error(locked, workspace_dir)
        reading = errors.sqlite_error(locked, workspace_dir, name_writers=False)
    assert "secret-merger" in str(writing)
    assert "secret-merger" not in str(reading) and "locked" in str(reading)

    def locked_search(*args: object, **kwargs: object) -> None:
        raise locked

    ws = Workspace.open(workspace_dir, create=False)
    monkeypatch.setattr(ws.retriever, "search", locked_search)
    with (
        write_lock(lock, resource="library 'secret-merger'"),
        pytest.raises(StoreError) as caught,
    ):
        ws.search("merger")
    assert "secret-merger" not in str(caught.value)


def test_pipes_bad_ids_and_deep_json_fail_cleanly(
    tmp_path: Path, workspace_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ok.txt").write_text("Revenue grew.", encoding="utf-8")
    os.mkfifo(docs / "pipe.md")  # reading it would block forever, holding the write lock
    (docs / "deep.txt").write_text("Deep sidecar.", encoding="utf-8")
    (docs / "deep.txt.meta.json").write_text("[" * 100_000, encoding="utf-8")
    (docs / "blank.txt").write_text("Blank id.", encoding="utf-8")
    (docs / "blank.txt.meta.json").write_text('{"doc_id": ""}', encoding="utf-8")
    ws = Workspace.open(workspace_dir)
    outcomes = _outcomes(ws.ingest_documents([docs], library="d"))
    assert outcomes["ok.txt"][0] is IngestStatus.ADDED
    assert outcomes["pipe.md"] == (
        IngestStatus.SKIPPED,
        "not a regular file (a pipe, socket or device), not read",
    )
    assert outcomes["deep.txt"][0] is IngestStatus.FAILED
    assert "nests too deeply" in outcomes["deep.txt"][1]
    assert outcomes["blank.txt"][0] is IngestStatus.FAILED
    assert "must be a non-empty string" in outcomes["blank.txt"][1]
    (tmp_path / "beir").mkdir()
    (tmp_path / "beir" / "corpus.jsonl").write_text(
        '{"_id": null, "text": "a"}\n{"_id": "", "text": "b"}\n'
        + "[" * 100_000
        + '\n{"_id": 7, "text": "seven"}\n',
        encoding="utf-8",
    )
    assert (
        main(
            [
                "--workspace",
                str(workspace_dir),
                "ingest",
                "beir",
                str(tmp_path / "beir"),
                "--library",
                "b",
            ]
        )
        == 1
    )
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "internal error" not in err
    assert "1 added" in out and "3 failed" in out
