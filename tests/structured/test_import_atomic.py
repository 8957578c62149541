"""A dataset import (``ingest tatqa`` / ``ingest convfinqa``) fully lands or leaves the workspace
as it was (contract 9): its documents, facts and generated glossary commit in one transaction,
whether it fails, is interrupted or is killed, on a folder workspace and on PostgreSQL."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from ragspine import Principal, Workspace
from ragspine.narrative.ingest.ingestor import IngestStatus
from ragspine.security import Sensitivity
from ragspine.stores.sqlite.staged import StagedTexts
from ragspine.structured.facts import Fact, Scale

SRC = Path(__file__).resolve().parents[2] / "src"


def _document(uid: str, revenue: str, sentence: str) -> dict[str, Any]:
    table = [["", "2019", "2018"], ["Revenue", revenue, "4"], ["Cost of sales", "(2)", "(1)"]]
    paragraphs = [{"uid": f"{uid}-p1", "order": 1, "text": sentence}]
    return {"table": {"uid": uid, "table": table}, "paragraphs": paragraphs, "questions": []}


def _write(path: Path, *documents: dict[str, Any]) -> Path:
    path.write_text(json.dumps(list(documents)), "utf-8")
    return path


def _sources(tmp_path: Path) -> tuple[Path, Path]:
    """A first import, and a second that changes one of its documents and adds another."""
    first = _write(
        tmp_path / "first.json", _document("alpha", "5", "Revenue of alpha grew in 2019.")
    )
    second = _write(
        tmp_path / "second.json",
        _document("alpha", "6", "Revenue of alpha was restated for 2019."),
        _document("beta", "7", "Revenue of beta rose on new contracts."),
    )
    return first, second


def _state(ws: Workspace) -> dict[str, Any]:
    """Everything an import may change, as a reader sees it."""
    facts = sorted(ws.facts.scan(max_level=int(Sensitivity.RESTRICTED)), key=repr)
    libraries = {
        name: sorted(
            (row.key, row.title, row.heading, row.text) for row in ws.chunks.index_rows(name)
        )
        for name in ws.chunks.library_names()
    }
    storage = ws.backend.glossary_storage()
    hits = ws.search("revenue contracts restated", top_k=10)
    return {
        "facts": facts,
        "libraries": libraries,
        "glossary": storage.generated(),
        "entities": sorted(ws.glossary.entities.terms),
        "search": [(hit.chunk_id, hit.text) for hit in hits.snippets],
    }


class _Failing:
    """A store that writes, then fails: everything the import wrote before must go."""

    def __init__(self, store: Any, method: str, error: BaseException) -> None:
        self._store = store
        self._error = error
        setattr(self, method, self._failing(getattr(store, method)))

    def _failing(self, write: Any) -> Any:
        def failing(*args: Any) -> Any:
            write(*args)
            raise self._error

        return failing

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


@pytest.fixture()
def failing_import(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """``arm(ws, error, at)``: the next import into ``ws`` fails with ``error`` right after
    writing its facts (``at="facts"``) or its generated glossary (``"glossary"``, the last
    write before the commit)."""

    def arm(ws: Workspace, error: BaseException, at: str = "facts") -> None:
        kind = type(ws.backend)
        real = kind.import_stores

        def failing(self: Any, chunks: Any) -> tuple[Any, Any]:
            facts, glossary = real(self, chunks)
            if at == "facts":
                return _Failing(facts, "write", error), glossary
            return facts, _Failing(glossary, "set_generated", error)

        monkeypatch.setattr(kind, "import_stores", failing)

    yield arm


@pytest.fixture(params=["folder", "postgresql"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "folder":
        return str(tmp_path / "ws")
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.mark.parametrize("at", ["facts", "glossary"])
@pytest.mark.parametrize("error", [RuntimeError("disk full"), KeyboardInterrupt()])
def test_a_failing_import_leaves_the_workspace_as_it_was(
    location: str,
    tmp_path: Path,
    failing_import: Any,
    monkeypatch: pytest.MonkeyPatch,
    error: BaseException,
    at: str,
) -> None:
    first, second = _sources(tmp_path)
    with Workspace.init(location) as ws:
        ws.ingest_tatqa(first)
        before = _state(ws)
        failing_import(ws, error, at)
        with pytest.raises(type(error)):
            ws.ingest_tatqa(second)
        assert _state(ws) == before  # the same workspace object
        monkeypatch.undo()
    with Workspace.open(location) as ws:
        assert _state(ws) == before  # and a new reader
        _, summary, report = ws.ingest_tatqa(second)
        assert (summary.added, summary.replaced, summary.unchanged) == (4, 1, 3)
        assert (report.count(IngestStatus.ADDED), report.count(IngestStatus.REPLACED)) == (1, 1)
        after = _state(ws)
    assert after != before and "tatqa-beta" in after["entities"]


@pytest.mark.parametrize("at", ["facts", "glossary"])
def test_a_failing_first_import_makes_no_library_and_no_glossary(
    tmp_path: Path, failing_import: Any, at: str
) -> None:
    """The import's own library and glossary file are new: both must not appear."""
    _, second = _sources(tmp_path)
    with Workspace.init(tmp_path / "ws") as ws:
        failing_import(ws, RuntimeError("disk full"), at)
        with pytest.raises(RuntimeError):
            ws.ingest_tatqa(second)
        assert ws.chunks.library_names() == []
        assert ws.facts.count() == 0
    assert not (tmp_path / "ws" / "glossary.d").exists()


@pytest.mark.parametrize("at", ["facts", "glossary"])
def test_a_convfinqa_import_without_text_is_one_transaction_too(
    tmp_path: Path, failing_import: Any, at: str
) -> None:
    table = {"2019": {"revenue": 5.0}, "2018": {"revenue": 4.0}}
    doc = {"pre_text": "", "post_text": "", "table": table}
    filing = {"id": "Single_ACME/2019/page_1.pdf-1", "doc": doc, "dialogue": {}}
    source = tmp_path / "filings.json"
    source.write_text(json.dumps([filing]), "utf-8")
    with Workspace.init(tmp_path / "ws") as ws:
        failing_import(ws, RuntimeError("disk full"), at)
        with pytest.raises(RuntimeError):
            ws.ingest_convfinqa(source, library=None)
        assert ws.facts.count() == 0
        assert not (tmp_path / "ws" / "glossary.d").exists()


_KILLED = """
import sys, time
sys.path.insert(0, {src!r})
from ragspine import Workspace
{patch}
with Workspace.open({ws!r}) as ws:
    ws.ingest_tatqa({source!r})
"""

_BEFORE_COMMIT = """
from ragspine.stores.backend import SQLiteBackend
real = SQLiteBackend.import_stores
class Hanging:
    def __init__(self, facts): self.facts = facts
    def write(self, facts):
        summary = self.facts.write(facts)
        print("written", flush=True)
        time.sleep(60)
def hanging(self, chunks):
    facts, glossary = real(self, chunks)
    return Hanging(facts), glossary
SQLiteBackend.import_stores = hanging
"""

_AFTER_COMMIT = """
from ragspine.stores.sqlite.staged import StagedTexts
real = StagedTexts.settle
def hanging(self, write):
    if self.texts():  # only once the import has committed its staged text
        print("committed", flush=True)
        time.sleep(60)
    real(self, write)
StagedTexts.settle = hanging
"""


def _kill_during(ws: Path, source: Path, patch: str) -> str:
    """Run an import of ``source`` in another process and kill it (SIGKILL) at the line it
    prints; returns that line."""
    script = _KILLED.format(
        src=str(SRC), patch=textwrap.dedent(patch), ws=str(ws), source=str(source)
    )
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait(timeout=60)
    assert process.returncode == -signal.SIGKILL
    return line


def test_an_import_killed_before_its_commit_leaves_nothing(tmp_path: Path) -> None:
    first, second = _sources(tmp_path)
    folder = tmp_path / "ws"
    with Workspace.init(folder) as ws:
        ws.ingest_tatqa(first)
        before = _state(ws)
        glossary = (folder / "glossary.d" / "tatqa.toml").read_text("utf-8")
    assert _kill_during(folder, second, _BEFORE_COMMIT) == "written"
    with Workspace.open(folder) as ws:
        assert _state(ws) == before
        assert StagedTexts(ws.db_path).texts() == {}
        assert ws.ingest_tatqa(second)[1].added == 4  # and it runs again whole
    assert (folder / "glossary.d" / "tatqa.toml").read_text("utf-8") != glossary


def test_an_import_killed_after_its_commit_shows_what_it_committed(tmp_path: Path) -> None:
    """Killed between its commit and writing the glossary file, the import is whole for every
    reader (the staged text stands in for the file) and the next glossary writer writes it."""
    _, second = _sources(tmp_path)
    folder = tmp_path / "ws"
    Workspace.init(folder).close()
    assert _kill_during(folder, second, _AFTER_COMMIT) == "committed"
    assert not (folder / "glossary.d" / "tatqa.toml").exists()
    with Workspace.open(folder) as ws:
        assert "tatqa-beta" in ws.glossary.entities.terms
        found = ws.query_metric("revenue", "tatqa-beta", "FY2019", principal=Principal.of("public"))
        assert found.status == "found" and str(found.value) == "7"
        staged = StagedTexts(ws.db_path).texts()
        assert set(staged) == {"tatqa.toml"}
        ws.set_glossary(ws.glossary_text())  # any writer of the glossary finishes it
        assert StagedTexts(ws.db_path).texts() == {}
    assert (folder / "glossary.d" / "tatqa.toml").read_text("utf-8") == staged["tatqa.toml"]


def test_facts_written_inside_the_chunk_transaction_roll_back_with_it(tmp_path: Path) -> None:
    """The fact store given the chunk store's connections joins its transaction."""
    with Workspace.init(tmp_path / "ws") as ws:
        facts, _ = ws.backend.import_stores(ws.chunks)
        fact = Fact(
            "revenue", "acme", "FY2024", "", Decimal(5), "", "USD", Scale.ONE, "a.csv", "r2"
        )
        with pytest.raises(RuntimeError), ws.chunks.transaction():
            facts.write([fact])
            raise RuntimeError("after the write")
        assert ws.facts.count() == 0
        with ws.chunks.transaction():
            facts.write([fact])
        assert ws.facts.count() == 1


def _interrupt_index_updates(monkeypatch: pytest.MonkeyPatch, error: BaseException) -> None:
    """The next lexical index update fails with ``error``: the writer dies (or fails) between
    its chunk-store commit and its index commit."""
    from ragspine.narrative.index.lexical.library_indexes import LibraryIndexes

    def failing(*args: Any, **kwargs: Any) -> None:
        raise error

    monkeypatch.setattr(LibraryIndexes, "apply", failing)


def _index_left_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A workspace whose re-import committed and died before its index update; returns the
    workspace folder and the re-imported file."""
    first, second = _sources(tmp_path)
    folder = tmp_path / "ws"
    with Workspace.init(folder) as ws:
        ws.ingest_tatqa(first)
        _interrupt_index_updates(monkeypatch, KeyboardInterrupt())
        with pytest.raises(KeyboardInterrupt):
            ws.ingest_tatqa(second)  # committed; its index update never ran
    monkeypatch.undo()
    return folder, second


def _finds(folder: Path, words: str) -> set[str]:
    with Workspace.open(folder) as ws:
        return {hit.doc_id for hit in ws.search(words, top_k=10).snippets}


def test_an_index_left_behind_by_a_dead_writer_is_built_in_memory_by_readers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A writer killed between its commit and its index commit left the library's index
    behind: the replaced document vanished from search and the new one was missing until the
    next write. With no writer at work, a reader builds the index in memory; while a writer
    holds the library's lock, readers keep the last committed index."""
    from ragspine.locks import lock_path, write_lock

    folder, second = _index_left_behind(tmp_path, monkeypatch)
    assert _finds(folder, "restated contracts") == {"alpha", "beta"}
    lock = lock_path(folder, "library-tatqa")
    with write_lock(lock, resource="library 'tatqa'"):  # a writer at work: the last commit
        assert _finds(folder, "restated contracts") == set()
    with Workspace.open(folder) as ws:  # the next write brings the index up to date
        ws.ingest_tatqa(second)
        assert ws.facts.count() == 8
    with write_lock(lock, resource="library 'tatqa'"):
        assert _finds(folder, "restated contracts") == {"alpha", "beta"}


def test_an_import_whose_index_update_fails_after_its_commit_says_it_landed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    _, second = _sources(tmp_path)
    folder = tmp_path / "ws"
    with Workspace.init(folder) as ws:
        _interrupt_index_updates(monkeypatch, OSError(28, "No space left on device"))
        _, summary, report = ws.ingest_tatqa(second)
        assert summary.added == 8 and report.count(IngestStatus.ADDED) == 2
    monkeypatch.undo()
    assert "the documents of library 'tatqa' landed" in caplog.text
    assert _finds(folder, "restated contracts") == {"alpha", "beta"}


def test_a_glossary_file_that_cannot_be_written_after_the_commit_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The import landed (readers see its glossary, staged); every glossary writer after it
    names the file it cannot write and what to do, until it can."""
    from ragspine.errors import StoreError
    from ragspine.structured.glossary_files import GlossaryFolder

    _, second = _sources(tmp_path)
    folder = tmp_path / "ws"

    def unwritable(self: GlossaryFolder, name: str, text: str) -> None:
        raise PermissionError(13, "Permission denied")

    with Workspace.init(folder) as ws:
        monkeypatch.setattr(GlossaryFolder, "_write", unwritable)
        assert ws.ingest_tatqa(second)[1].added == 8
        assert "the import landed, but cannot write" in caplog.text
        with pytest.raises(StoreError, match=r"make .*glossary\.d writable"):
            ws.set_glossary(ws.glossary_text())
    with Workspace.open(folder) as ws:
        assert "tatqa-beta" in ws.glossary.entities.terms
        monkeypatch.undo()
        ws.set_glossary(ws.glossary_text())
        assert StagedTexts(ws.db_path).texts() == {}
    assert "tatqa-beta" in (folder / "glossary.d" / "tatqa.toml").read_text("utf-8")


@pytest.mark.parametrize(
    "paragraphs", [["Revenue grew."], [{"uid": "p1", "order": 1, "text": 123}], "text"]
)
def test_paragraphs_that_are_not_objects_with_a_text_are_refused(
    tmp_path: Path, paragraphs: Any
) -> None:
    """They were dropped with no word (a document kept its old version, or lost a paragraph)."""
    from ragspine.errors import IngestError

    document = {**_document("alpha", "5", "x"), "paragraphs": paragraphs}
    source = _write(tmp_path / "bad.json", _document("beta", "7", "Revenue rose."), document)
    with Workspace.init(tmp_path / "ws") as ws, pytest.raises(IngestError, match="document 2"):
        ws.ingest_tatqa(source)


def test_a_reader_keeps_its_newer_index_while_a_writer_is_at_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader that built a left-behind index in memory served the older committed one
    again, reloading it at every search, once a writer took the library's lock."""
    import sqlite3

    from ragspine.locks import lock_path, write_lock

    folder, _ = _index_left_behind(tmp_path, monkeypatch)
    with Workspace.open(folder) as reader:
        found = {hit.doc_id for hit in reader.search("restated contracts").snippets}
        assert found == {"alpha", "beta"}
        with write_lock(lock_path(folder, "library-tatqa"), resource="library 'tatqa'"):
            db = sqlite3.connect(folder / "workspace.sqlite")
            with db:  # a writer between its chunk-store commit and its index commit
                db.execute("UPDATE narrative_libraries SET generation = generation + 1")
            db.close()
            again = {hit.doc_id for hit in reader.search("restated contracts").snippets}
        assert again == found
        assert len(reader.lexical_indexes.rebuilt) == 1  # the one build, nothing reloaded


def test_the_lock_probe_sees_writers_only_and_makes_no_file(tmp_path: Path) -> None:
    import fcntl

    from ragspine.locks import is_held, write_lock

    path = tmp_path / "locks" / "library-x.lock"
    assert not is_held(path) and not path.parent.exists()
    with write_lock(path, resource="library 'x'"):
        assert is_held(path)
    with open(path, encoding="utf-8") as other:  # another reader's probe, in flight
        fcntl.flock(other, fcntl.LOCK_SH | fcntl.LOCK_NB)
        assert not is_held(path)


def test_an_embedding_that_fails_after_the_commit_is_a_warning_that_it_landed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from hashing_embedder import HashingEmbedder

    _, second = _sources(tmp_path)
    embedder = HashingEmbedder()
    with Workspace.init(tmp_path / "ws") as ws:
        ws.vector_indexes.use_embedder(embedder)
        ws.create_library("tatqa", vectors=True)
        embedder.fail = True
        assert ws.ingest_tatqa(second)[1].added == 8
        assert "its new chunks could not be embedded" in caplog.text
        assert "ragspine library vectors tatqa on" in caplog.text
