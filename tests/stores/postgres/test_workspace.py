"""A PostgreSQL workspace through the public API and the CLI: the same answers as a folder
workspace, migrations run and refused, the glossary, API keys and locks shared through the
database."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import psycopg
import pytest

from cli.runner import run
from ragspine import Principal, Workspace
from ragspine.errors import ConfigError, GlossaryError, IngestError, QueryError, StoreError
from ragspine.service.keys import keys_of
from ragspine.stores.postgres.database import Database
from ragspine.stores.postgres.migrate import (
    VERSION_TABLE,
    latest_version,
    migrations,
)

FACTS = (
    "metric,entity,period,value,unit,sensitivity\n"
    'revenue,acme,FY2024,"(1,234.50)",USD,public\n'
    "revenue,acme,FY2023,900,USD,internal\n"
)
INTERNAL = Principal.of("internal")


def _facts_file(tmp_path: Path) -> Path:
    path = tmp_path / "acme.csv"
    path.write_text(FACTS, encoding="utf-8")
    return path


def test_the_same_answers_as_a_folder_workspace(postgres_url: str, tmp_path: Path) -> None:
    source = _facts_file(tmp_path)
    answers = []
    for location in (str(tmp_path / "ws"), postgres_url):
        with Workspace.init(location) as ws:
            summary = ws.ingest_facts(source)
            assert (summary.added, summary.replaced, summary.unchanged) == (2, 0, 0)
            assert ws.ingest_facts(source).unchanged == 2  # re-ingesting is a no-op
            results = [
                ws.query_metric("revenue", "acme", period, principal=who).to_dict()
                for period in ("FY2024", "FY2023", "FY2022")
                for who in (Principal.of("public"), INTERNAL)
            ]
            answers.append(results)
    assert answers[0] == answers[1]
    assert answers[1][0]["status"] == "found" and answers[1][0]["value"] == "-1234.50"
    assert answers[1][2]["status"] == "not_found"  # internal fact, public asker
    assert answers[1][3]["status"] == "found"


def test_cli_init_migrate_glossary_and_metric(
    postgres_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = ["--workspace", postgres_url]
    code, out, _ = run(capsys, *ws, "init")
    assert code == 0 and "workspace ready in" in out and "options=" in out
    code, out, _ = run(capsys, *ws, "migrate")
    assert code == 0 and f"schema is current (version {latest_version()})" in out
    code, out, _ = run(capsys, *ws, "glossary", "show")
    assert code == 0 and "[metrics.revenue]" in out
    code, _, _ = run(capsys, *ws, "ingest", "facts", str(_facts_file(tmp_path)))
    assert code == 0
    ask = [*ws, "metric", "--metric", "revenue", "--entity", "acme", "--period", "FY2024"]
    code, out, _ = run(capsys, *ask)
    assert code == 0 and out.startswith("[found]")


def test_a_glossary_set_is_checked_first_and_shared(postgres_url: str, tmp_path: Path) -> None:
    with Workspace.init(postgres_url) as first, Workspace.open(postgres_url) as second:
        before = first.glossary_text()
        with pytest.raises(GlossaryError):
            first.set_glossary("[metrics.revenue\nbroken = ")
        assert first.glossary_text() == before  # nothing changed
        extra = before + '\n[entities.globex]\nlabel = "Globex"\naliases = ["globex inc"]\n'
        first.set_glossary(extra)
        assert second.glossary_text() == extra
        assert second.glossary.entities.resolve("globex inc") == "globex"


def test_an_older_schema_asks_for_migrate_and_a_newer_one_is_refused(
    postgres_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    db = Database(postgres_url)
    try:
        with db.transaction() as conn:  # a database left at version 1 by an older RAGSpine
            conn.execute(
                f"CREATE TABLE {VERSION_TABLE} (version integer PRIMARY KEY, name text NOT NULL, "
                "applied_at timestamptz NOT NULL DEFAULT now())"
            )
            conn.execute(migrations()[0].sql)
            conn.execute(f"INSERT INTO {VERSION_TABLE} (version, name) VALUES (1, 'facts')")
        with pytest.raises(StoreError, match="run 'ragspine --workspace URL migrate'"):
            Workspace.open(postgres_url)
        code, out, _ = run(capsys, "--workspace", postgres_url, "migrate")
        assert code == 0 and f"from version 1 to {latest_version()}" in out
        Workspace.open(postgres_url).close()
        with db.connection() as conn:
            conn.execute(f"INSERT INTO {VERSION_TABLE} (version, name) VALUES (9999, 'future')")
        for attempt in (
            lambda: Workspace.open(postgres_url),
            lambda: Workspace.migrate(postgres_url),
        ):
            with pytest.raises(StoreError, match="newer than this RAGSpine knows"):
                attempt()
        code, _, err = run(capsys, "--workspace", postgres_url, "libraries")
        assert code == 2 and "upgrade RAGSpine" in err and "Traceback" not in err
    finally:
        db.close()


def test_reading_an_empty_database_without_create_is_a_clear_error(postgres_url: str) -> None:
    with pytest.raises(ConfigError, match="has no RAGSpine schema"):
        Workspace.open(postgres_url, create=False)


def test_two_migrations_at_once_apply_each_version_once(postgres_url: str) -> None:
    script = "import sys; from ragspine import Workspace; print(Workspace.migrate(sys.argv[1]))"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, postgres_url],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [proc.communicate(timeout=120) for proc in procs]
    assert all(proc.returncode == 0 for proc in procs), outputs
    with psycopg.connect(postgres_url) as conn:
        versions = [r[0] for r in conn.execute(f"SELECT version FROM {VERSION_TABLE}")]
    assert sorted(versions) == [m.version for m in migrations()]


def test_api_keys_live_in_the_database(postgres_url: str) -> None:
    with Workspace.init(postgres_url) as ws, Workspace.open(postgres_url) as other:
        keys, elsewhere = keys_of(ws), keys_of(other)
        key, secret = keys.create("analyst", clearance="internal", groups=["finance"])
        found = elsewhere.authenticate(secret)
        assert found is not None and found.principal.groups == frozenset({"finance"})
        assert elsewhere.authenticate(secret + "x") is None
        with pytest.raises(ConfigError, match="exists: revoke it first"):
            elsewhere.create("analyst")
        elsewhere.revoke("analyst")
        assert keys.authenticate(secret) is None
        assert [k.key_id for k in keys.all()] == [key.key_id]
        assert "digest" not in keys.all()[0].public_dict()


def test_concurrent_key_creation_with_one_name_has_one_winner(postgres_url: str) -> None:
    with Workspace.init(postgres_url) as ws:
        keys = keys_of(ws)
        outcomes: list[str] = []
        barrier = threading.Barrier(4)

        def create() -> None:
            barrier.wait()
            try:
                keys.create("ci")
                outcomes.append("made")
            except ConfigError:
                outcomes.append("taken")

        threads = [threading.Thread(target=create) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(outcomes) == ["made", "taken", "taken", "taken"]


def test_writer_locks_are_shared_through_the_database(postgres_url: str) -> None:
    """A second process cannot take a library's write lock while this one holds it."""
    with Workspace.init(postgres_url) as ws:
        holder = ws.backend.lock("library-notes", resource="library 'notes'")
        script = (
            "import sys\n"
            "from ragspine.stores.postgres.database import Database\n"
            "from ragspine.errors import StoreError\n"
            "db = Database(sys.argv[1])\n"
            "try:\n"
            "    with db.advisory_lock('library-notes', wait='0'):\n"
            "        print('took it')\n"
            "except StoreError as exc:\n"
            "    print('refused:', exc)\n"
        )
        with holder:
            held = subprocess.run(
                [sys.executable, "-c", script, postgres_url], capture_output=True, text=True
            )
        free = subprocess.run(
            [sys.executable, "-c", script, postgres_url], capture_output=True, text=True
        )
    assert held.stdout.startswith("refused: library-notes is held"), held
    assert free.stdout.startswith("took it"), free


def test_a_search_takes_one_pooled_connection(postgres_url: str, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Travel\n\nTravel costs fell as meetings moved online.\n")
    with Workspace.init(postgres_url) as ws:
        ws.ingest_documents([docs], library="reports")
        pool = ws.backend.db._pool  # type: ignore[attr-defined]
        before = pool.get_stats()["requests_num"]
        found = ws.search("travel costs", mode="bm25")
        assert [s.doc_id for s in found.snippets] == ["a.md"]
        assert pool.get_stats()["requests_num"] - before == 1  # a dozen reads, one checkout


def test_a_transaction_inside_a_session_commits_or_rolls_back_whole(postgres_url: str) -> None:
    db = Database(postgres_url)
    try:
        with db.session():
            with db.transaction() as conn:
                conn.execute("CREATE TABLE t (n int)")
                conn.execute("INSERT INTO t VALUES (1)")
            with pytest.raises(RuntimeError), db.transaction() as conn:
                conn.execute("INSERT INTO t VALUES (2)")
                raise RuntimeError("half way")
            with db.connection() as conn:
                assert conn.execute("SELECT array_agg(n) FROM t").fetchone() == ([1],)
        with psycopg.connect(postgres_url) as other:  # committed for everyone
            assert other.execute("SELECT count(*) FROM t").fetchone() == (1,)
    finally:
        db.close()


def test_an_index_left_behind_by_a_dead_writer_is_searched_in_memory(
    postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A writer killed between its chunk-store commit and its index commit left the index
    behind its library: searched as last committed, the new document was missing until the
    next write. With no writer holding the library's lock, it is searched in memory; while one
    does, the last commit is searched."""
    from ragspine.stores.postgres.lexical import PostgresLexicalIndexes

    (tmp_path / "a.md").write_text("Revenue grew in 2019.\n", "utf-8")
    (tmp_path / "b.md").write_text("Cash flow from operations doubled.\n", "utf-8")

    def killed(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    with Workspace.init(postgres_url) as ws:
        ws.ingest_documents([tmp_path / "a.md"], library="notes")
        monkeypatch.setattr(PostgresLexicalIndexes, "apply", killed)
        with pytest.raises(KeyboardInterrupt):
            ws.ingest_documents([tmp_path / "b.md"], library="notes")
    monkeypatch.undo()

    def found(words: str) -> list[str]:
        with Workspace.open(postgres_url) as reader:
            return [hit.doc_id for hit in reader.search(words, libraries=["notes"]).snippets]

    assert found("cash flow") == ["b.md"]
    with Workspace.open(postgres_url) as writer, writer.backend.lock("library-notes", resource="x"):
        assert found("cash flow") == []  # a writer at work: the last commit
    assert found("revenue") == ["a.md"]


def test_a_nul_character_is_handled_as_in_a_folder_workspace(
    postgres_url: str, tmp_path: Path
) -> None:
    """A review: one document holding U+0000 failed the whole PostgreSQL run ('text fields
    cannot contain NUL'), a fact's text named no row, and a filter value was a 503; the folder
    store took them. Both now drop NUL from documents, refuse it in facts and filters alike."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Before\x00after the mark.\n", encoding="utf-8")
    (docs / "m.txt").write_text("Plain text here.\n", encoding="utf-8")
    facts = tmp_path / "nul.csv"
    facts.write_text(
        "metric,entity,period,value,unit,source_doc_id\nrevenue,acme,FY2024,5,USD,r\x00p\n",
        encoding="utf-8",
    )
    seen = []
    for location in (str(tmp_path / "ws"), postgres_url):
        with Workspace.init(location) as ws:
            report = ws.ingest_documents([docs], library="nul")
            assert [o.status.value for o in report.outcomes] == ["added", "added"]
            hits = ws.search("after the mark", libraries=["nul"]).snippets
            seen.append([s.text for s in hits])
            with pytest.raises(IngestError, match=r"nul.csv: row 2: source_doc_id holds a NUL"):
                ws.ingest_facts(facts)
            with pytest.raises(QueryError, match="NUL character"):
                ws.search("mark", filters={"region": "US\x00"})
    assert seen[0] == seen[1] and seen[0][0] == "Beforeafter the mark."


def test_a_waiting_writer_says_it_waits(
    postgres_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A review: a writer waiting for a library's lock on PostgreSQL said nothing for up to
    ten minutes (a folder workspace's writer says whom it waits for)."""
    db = Database(postgres_url)
    release = threading.Event()
    taken = threading.Event()

    def holder() -> None:
        with db.advisory_lock("library-waiting", description="library 'waiting'"):
            taken.set()
            release.wait(30)

    thread = threading.Thread(target=holder)
    thread.start()
    try:
        assert taken.wait(30)
        threading.Timer(0.5, release.set).start()
        with (
            caplog.at_level("WARNING", logger="ragspine.locks"),
            db.advisory_lock("library-waiting", description="library 'waiting'"),
        ):
            pass
        assert "waiting for library 'waiting': it is being written by another process" in (
            caplog.text
        )
    finally:
        release.set()
        thread.join()
        db.close()
