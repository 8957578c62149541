"""A careless user's mistakes end in one clear line naming the input, and leave nothing behind
(found by a review acting as one; each test fails on the code before it)."""

from __future__ import annotations

import json
import socket
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from cli.runner import fails_cleanly, run
from ragspine import Workspace
from ragspine.cli import app as cli
from ragspine.errors import ConfigError
from ragspine.eval.retrieval import load_qrels, load_queries
from ragspine.narrative.ingest.ingestor import DocumentSource, IngestStatus

Capsys = pytest.CaptureFixture[str]


@pytest.fixture()
def ws(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    Workspace.init(folder).close()
    return folder


def test_a_glossary_saved_in_latin_1_is_an_error_naming_it(ws: Path, capsys: Capsys) -> None:
    """It was 'internal error: UnicodeDecodeError' on nearly every command."""
    (ws / "glossary.toml").write_bytes('[metrics.cafe]\nlabel = "Café"\n'.encode("latin-1"))
    err = fails_cleanly(
        capsys, "--workspace", str(ws), "metric", "--metric", "revenue", "--entity", "ACME",
        "--period", "FY2024",
    )  # fmt: skip
    assert f"glossary file {ws / 'glossary.toml'} is not UTF-8 text" in err
    (ws / "glossary.toml").write_text('[metrics.cafe]\nlabel = "Cafe"\n', encoding="utf-8")
    (ws / "glossary.d").mkdir(exist_ok=True)
    (ws / "glossary.d" / "x.toml").write_bytes(b"\xff\xfe\x00garbage")
    err = fails_cleanly(capsys, "--workspace", str(ws), "ask", "What was revenue in 2024?")
    assert "x.toml is not UTF-8 text" in err


def test_glossary_set_names_the_file_given(ws: Path, tmp_path: Path, capsys: Capsys) -> None:
    """'glossary file the new glossary is not valid TOML' named no file; a missing or Latin-1
    file gave Python's own words."""
    bad = tmp_path / "bad syntax.toml"
    bad.write_text("[metrics.x\n", encoding="utf-8")
    err = fails_cleanly(capsys, "--workspace", str(ws), "glossary", "set", str(bad))
    assert f"glossary file {bad} is not valid TOML" in err
    latin = tmp_path / "latin.toml"
    latin.write_bytes('[metrics.x]\nlabel = "Café"\n'.encode("latin-1"))
    err = fails_cleanly(capsys, "--workspace", str(ws), "glossary", "set", str(latin))
    assert f"glossary file {latin} is not UTF-8 text" in err
    err = fails_cleanly(capsys, "--workspace", str(ws), "glossary", "set", str(tmp_path / "no"))
    assert "does not exist" in err and "Errno" not in err
    err = fails_cleanly(capsys, "--workspace", str(ws), "glossary", "set", str(tmp_path))
    assert "is a folder" in err


def test_a_workspace_without_a_hand_edited_glossary_says_so_as_an_error(
    ws: Path, capsys: Capsys
) -> None:
    (ws / "glossary.toml").unlink()
    err = fails_cleanly(capsys, "--workspace", str(ws), "glossary", "show")
    assert "no hand-edited glossary" in err and "glossary set FILE" in err


def test_queries_and_qrels_that_are_not_utf8_are_errors_naming_them(tmp_path: Path) -> None:
    """'eval retrieval' ended in 'internal error: UnicodeDecodeError'."""
    queries = tmp_path / "queries.jsonl"
    queries.write_bytes('{"_id": "1", "text": "café"}\n'.encode("latin-1"))
    with pytest.raises(ConfigError, match=f"queries file {queries} is not UTF-8 text"):
        load_queries(queries)
    qrels = tmp_path / "qrels.tsv"
    qrels.write_bytes("query-id\tcorpus-id\tscore\n1\tcafé\t1\n".encode("utf-16"))
    with pytest.raises(ConfigError, match=f"qrels file {qrels} is not UTF-8 text"):
        load_qrels(qrels)
    listed = tmp_path / "listed.jsonl"
    listed.write_text('{"_id": "1", "text": ["a list"]}\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="expected a JSON object with _id and text"):
        load_queries(listed)


@pytest.mark.parametrize(
    ("options", "named"),
    [
        (["--port", "99999"], "--port must be 0-65535"),  # a 35-line uvicorn traceback
        (["--port", "-1"], "--port must be 0-65535"),
        (["--host", "999.1.1.1"], "--host '999.1.1.1' is not an address"),
        (["--rate-limit", "-5"], "--rate-limit must be 0"),  # the server started
        (["--rate-limit", "nan"], "--rate-limit must be 0"),
        (["--max-upload-mb", "0"], "--max-upload-mb must be 1"),
    ],
)
def test_serve_refuses_what_it_cannot_listen_with(
    ws: Path, capsys: Capsys, options: list[str], named: str
) -> None:
    pytest.importorskip("uvicorn", reason="the server extra is not installed")
    assert named in fails_cleanly(capsys, "--workspace", str(ws), "serve", *options)


def test_serve_says_a_taken_port_before_it_starts(ws: Path, capsys: Capsys) -> None:
    """It printed 'serving ...' and then uvicorn's log line, exit 3."""
    pytest.importorskip("uvicorn", reason="the server extra is not installed")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        err = fails_cleanly(capsys, "--workspace", str(ws), "serve", "--port", port)
    assert f"cannot listen on 127.0.0.1:{port}" in err and "serving" not in err


def test_migrate_makes_no_workspace_at_a_mistyped_path(
    ws: Path, tmp_path: Path, capsys: Capsys
) -> None:
    """It printed 'schema is current' and made the folders, a database and a glossary; an
    existing folder workspace's tables are still brought up to date."""
    typo = tmp_path / "no" / "such" / "ws"
    assert "no RAGSpine workspace" in fails_cleanly(capsys, "--workspace", str(typo), "migrate")
    assert not (tmp_path / "no").exists()
    with closing(sqlite3.connect(ws / "workspace.sqlite")) as db:  # an older chunk schema
        db.execute("UPDATE narrative_meta SET value = '1' WHERE key = 'schema_version'")
        db.commit()
    assert run(capsys, "--workspace", str(ws), "migrate")[0] == 0
    with closing(sqlite3.connect(ws / "workspace.sqlite")) as db:
        query = "SELECT value FROM narrative_meta WHERE key = 'schema_version'"
        assert db.execute(query).fetchone() != ("1",)


def test_a_beir_record_whose_text_is_no_string_fails_naming_it(
    ws: Path, tmp_path: Path, capsys: Capsys
) -> None:
    """A list or an object was stored as its Python repr ("['x']") and found by search."""
    corpus = tmp_path / "beir" / "corpus.jsonl"
    corpus.parent.mkdir()
    corpus.write_text(
        json.dumps({"_id": 5, "text": ["listed words"]})
        + "\n"
        + json.dumps({"_id": "ok", "title": "Fine", "text": "plain words"})
        + "\n",
        encoding="utf-8",
    )
    with Workspace.open(ws) as workspace:
        report = workspace.ingest_beir(corpus.parent, library="b")
        assert [o.status for o in report.outcomes] == [IngestStatus.FAILED, IngestStatus.ADDED]
        assert "text must be a string, not list" in report.outcomes[0].reason
        hits = workspace.search("listed words", libraries=["b"]).snippets
        assert all("[" not in s.text for s in hits)


def test_a_folder_or_an_empty_file_of_facts_is_said_as_such(
    ws: Path, tmp_path: Path, capsys: Capsys
) -> None:
    folder = tmp_path / "dir.csv"
    folder.mkdir()
    err = fails_cleanly(capsys, "--workspace", str(ws), "ingest", "facts", str(folder))
    assert "is a folder" in err  # was "does not exist"
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    err = fails_cleanly(capsys, "--workspace", str(ws), "ingest", "facts", str(empty))
    assert "is empty" in err  # was "facts: 0 added", exit 0


def test_a_failed_ingest_leaves_no_new_library(ws: Path, tmp_path: Path, capsys: Capsys) -> None:
    """'0 added ... 1 failed' still said 'created library d1' and left it, empty; pypdf's
    repair notes were printed beside the summary."""
    garbage = tmp_path / "garbage.pdf"
    garbage.write_bytes(b"\x04\x17 not a pdf at all" * 20)
    empty = tmp_path / "empty.md"
    empty.write_text("", encoding="utf-8")
    code, out, err = run(
        capsys, "--workspace", str(ws), "ingest", "docs", str(garbage), str(empty),
        "--library", "d1",
    )  # fmt: skip
    assert code == 1 and "2 failed" in out
    assert "created library" not in err and "invalid pdf header" not in err, err
    assert "OCR" not in out.split("empty.md", 1)[1]  # a Markdown file needs no OCR
    with Workspace.open(ws) as workspace:
        assert "d1" not in workspace.chunks.library_names()
    good = tmp_path / "good.md"
    good.write_text("# Good\n\nReal words here.\n", encoding="utf-8")
    code, out, err = run(
        capsys, "--workspace", str(ws), "ingest", "docs", str(garbage), str(good),
        "--library", "d2",
    )  # fmt: skip
    assert code == 1 and "1 added" in out and "created library d2" in err
    with Workspace.open(ws) as workspace:
        assert "d2" in workspace.chunks.library_names()


def _stopped() -> Iterator[DocumentSource]:
    """Documents of a run stopped (Ctrl-C) before its first one."""
    raise KeyboardInterrupt
    yield


def test_an_ingest_stopped_before_anything_landed_leaves_no_new_library(ws: Path) -> None:
    with Workspace.open(ws) as workspace:
        with pytest.raises(KeyboardInterrupt):
            workspace.library_writer.ingest_sources("d3", _stopped())
        assert "d3" not in workspace.chunks.library_names()
        workspace.create_library("kept")
        with pytest.raises(KeyboardInterrupt):
            workspace.library_writer.ingest_sources("kept", _stopped())
        assert "kept" in workspace.chunks.library_names()  # not this run's to delete


def test_a_failing_cleanup_never_hides_why_the_ingest_stopped(
    ws: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A review: a cleanup that failed (the database locked by another writer) replaced the
    Ctrl-C with its own StoreError."""
    from ragspine.errors import StoreError
    from ragspine.narrative.ingest.ingestor import Ingestor

    def locked(*args: object) -> bool:
        raise StoreError("database is locked")

    monkeypatch.setattr(Ingestor, "_forget_empty", locked)
    with Workspace.open(ws) as workspace, pytest.raises(KeyboardInterrupt):
        workspace.library_writer.ingest_sources("d4", _stopped())
    assert "'d4' this ingest created stays, empty: database is locked" in caplog.text


@pytest.mark.parametrize(
    "argv",
    [["search", ""], ["ask", "   "], ["search", "x", "--clearance", "restricted"]],
)
def test_an_empty_question_or_a_clearance_for_no_one_is_refused(
    ws: Path, capsys: Capsys, argv: list[str]
) -> None:
    """An empty search said 'no matching chunks', exit 0; 'restricted' was taken."""
    fails_cleanly(capsys, "--workspace", str(ws), *argv)


def test_a_missing_document_points_at_a_way_to_find_its_id(
    ws: Path, tmp_path: Path, capsys: Capsys
) -> None:
    """The hint named 'library describe', which lists no document."""
    doc = tmp_path / "a.md"
    doc.write_text("# A\n\nWords.\n", encoding="utf-8")
    run(capsys, "--workspace", str(ws), "ingest", "docs", str(doc), "--library", "r")
    err = fails_cleanly(
        capsys, "--workspace", str(ws), "document", "delete", "zz.md", "--library", "r"
    )
    assert "describe" not in err and "ragspine search" in err


def test_interrupting_a_vectors_run_says_how_to_finish_it(
    ws: Path, capsys: Capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C printed only 'interrupted' (and, for documents, words about facts)."""

    def stopped(*args: object, **kwargs: object) -> object:
        raise KeyboardInterrupt

    build = cli.build_parser
    for argv, said in (
        (["library", "vectors", "r", "on"], "'ragspine library vectors r on' again"),
        (["ingest", "docs", str(ws), "--library", "r"], "the documents written so far stay"),
    ):
        parser = build()
        args = parser.parse_args(["--workspace", str(ws), *argv])
        args.func = stopped
        monkeypatch.setattr(cli, "build_parser", lambda parser=parser: parser)
        monkeypatch.setattr(parser, "parse_args", lambda argv=None, args=args: args)
        assert cli.main([]) == 130
        err = capsys.readouterr().err
        assert said in err and "facts" not in err, err
