"""One `Workspace` shared by threads, as the HTTP service will share it.

Eight threads search (``bm25``, ``lexical``, ``economy``), answer and look up facts while
another thread ingests documents, a BEIR corpus and facts into the library they read and into
others. No call may fail, every result must be well formed, and once the writer is done the
shared workspace must answer exactly like a fresh one opened on the same folder.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
import threading
import traceback
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

from ragspine import Principal, Workspace
from ragspine.answer.types import Answer, AnswerStatus
from ragspine.narrative.retrieve.retriever import SearchResult
from ragspine.stores.sqlite.connect import ThreadConnections, connect
from ragspine.structured.query import MetricStatus

READERS = 8
MIN_ROUNDS = 3
"""Rounds every reader runs even when the writer is done first."""
TOP_K = 5
MODES = ("bm25", "lexical", "economy")
QUESTIONS = (
    "revenue growth in europe",
    "cash flow outlook",
    "lease liability and debt",
    "dividend guidance for the quarter",
)
LIBRARIES = ("reports", "beir", "extra")
_VOCABULARY = (
    "revenue margin growth cash flow asset liability equity dividend segment region europe asia "
    "america product service customer supplier contract lease debt bond interest rate currency "
    "hedge tax audit risk outlook guidance quarter annual"
)
WORDS = _VOCABULARY.split()
INTERNAL = Principal.of("internal")
PRINCIPALS = (Principal.of("public"), INTERNAL)
FACTS = {
    ("revenue", "acme", "FY2023"): "1234.5",
    ("revenue", "acme_cn", "FY2023"): "-17.25",
    ("headcount", "acme", "FY2022"): "1200",
    ("net_income", "acme", "FY2021"): "0.30000000000000004",
}
"""Facts stored before the threads start: every lookup must find exactly these values."""
LATER_FACTS = {("revenue", "acme", f"FY{year}"): f"{year}.5" for year in range(2010, 2016)}
"""Facts the writer adds while the readers run."""
_CHUNK_ID = re.compile(r"(?P<library>[^:]+):(?P<doc>.+)#(?P<n>\d+)")


def _words(seed: int, count: int) -> str:
    return " ".join(WORDS[(seed * 7 + i * (seed % 5 + 1)) % len(WORDS)] for i in range(count))


def _report(folder: Path, name: str, seed: int) -> Path:
    """A markdown report with sections; ``seed`` varies its words."""
    sections = [
        f"## Section {s}\n\n{_words(seed + s, 14)}. {_words(seed * 3 + s, 11)} rose {s + seed}%.\n"
        for s in range(4)
    ]
    path = folder / f"{name}.md"
    path.write_text(f"# Report {name}\n\n" + "\n".join(sections), encoding="utf-8")
    return path


def _beir(folder: Path, start: int, count: int, seed: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "corpus.jsonl").open("w", encoding="utf-8") as out:
        for n in range(start, start + count):
            record = {"_id": f"b{n}", "title": _words(n + seed, 3), "text": _words(n * seed, 30)}
            out.write(json.dumps(record) + "\n")
    return folder


def _facts(path: Path, facts: dict[tuple[str, str, str], str]) -> Path:
    rows = [
        {"metric": m, "entity": e, "period": p, "value": v, "sensitivity": "internal"}
        for (m, e, p), v in facts.items()
    ]
    path.write_text(json.dumps({"facts": rows}), encoding="utf-8")
    return path


def _check_search(result: SearchResult, mode: str) -> None:
    snippets = result.snippets
    assert isinstance(snippets, tuple) and 0 < len(snippets) <= TOP_K, len(snippets)
    assert result.trace.mode == mode
    ids = [s.chunk_id for s in snippets]
    assert len(set(ids)) == len(ids), ids
    scores = [s.score for s in snippets]
    assert all(math.isfinite(s) for s in scores) and scores == sorted(scores, reverse=True)
    for snippet in snippets:
        match = _CHUNK_ID.fullmatch(snippet.chunk_id)
        assert match is not None, snippet.chunk_id
        assert match["library"] == snippet.library_id and snippet.library_id in LIBRARIES
        assert match["doc"] == snippet.doc_id
        assert snippet.text.strip() and snippet.text in snippet.prompt_text


def _check_answer(answer: Answer) -> None:
    assert answer.status in (AnswerStatus.ANSWERED, AnswerStatus.NO_MATERIAL), answer.status
    assert [s.marker for s in answer.sources] == list(range(1, len(answer.sources) + 1))
    for source in answer.sources:
        assert f"[{source.marker}]" in answer.text
        assert source.library_id in LIBRARIES and source.chunk_id.startswith(source.library_id)


def _lookups(ws: Workspace) -> None:
    for (metric, entity, period), value in FACTS.items():
        result = ws.query_metric(metric, entity, period, principal=INTERNAL)
        assert result.status is MetricStatus.FOUND, result.text
        assert result.value == Decimal(value), (result.value, value)
        hidden = ws.query_metric(metric, entity, period, principal=PRINCIPALS[0])
        assert hidden.status is MetricStatus.NOT_FOUND, hidden.text


def _read_round(ws: Workspace, reader: int) -> None:
    for n, question in enumerate(QUESTIONS):
        principal = PRINCIPALS[(reader + n) % 2]
        for mode in MODES:
            result = ws.search(question, mode=mode, top_k=TOP_K, principal=principal)
            _check_search(result, mode)
        named = ws.search(question, libraries=["reports"], top_k=TOP_K, principal=principal)
        _check_search(named, "bm25")
        assert {s.library_id for s in named.snippets} == {"reports"}
        _check_answer(ws.answer_narrative(question, top_k=3, principal=principal))
        _lookups(ws)


def _failure(where: str, exc: BaseException) -> str:
    origin = exc.__cause__ or exc.__context__ or exc  # where a translated error started
    frame = traceback.extract_tb(origin.__traceback__)[-1]
    return f"{where}: {type(exc).__name__}: {exc} (at {Path(frame.filename).name}:{frame.lineno})"


def _run(where: str, errors: list[str], body: Callable[[], None]) -> None:
    try:
        body()
    except BaseException as exc:  # every failure is reported, none ends the test early
        errors.append(_failure(where, exc))


def _snapshot(ws: Workspace) -> dict[str, Any]:
    """Everything the readers ask, with timings zeroed, as plain data."""
    searches = {
        f"{question}|{mode}|{principal.clearance.label}": ws.search(
            question, mode=mode, top_k=TOP_K, principal=principal
        ).to_dict(timings=False)
        for question in QUESTIONS
        for mode in MODES
        for principal in PRINCIPALS
    }
    answers = {
        question: ws.answer_narrative(question, top_k=3, principal=INTERNAL).to_dict(timings=False)
        for question in QUESTIONS
    }
    metrics = {
        "|".join(key): ws.query_metric(*key, principal=INTERNAL).to_dict()
        for key in (*FACTS, *LATER_FACTS)
    }
    libraries = [repr(summary) for summary in ws.libraries(principal=INTERNAL)]
    return {"searches": searches, "answers": answers, "metrics": metrics, "libraries": libraries}


def test_eight_readers_and_a_writer_share_one_workspace(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    path = tmp_path / "ws"
    ws = Workspace.init(path)
    try:
        ws.ingest_documents([_report(docs, f"r{n}", n) for n in range(6)], library="reports")
        ws.ingest_beir(_beir(tmp_path / "beir0", 0, 120, 3), library="beir")
        ws.ingest_facts(_facts(tmp_path / "facts.json", FACTS))

        writer_done = threading.Event()
        start = threading.Barrier(READERS + 1)
        errors: list[str] = []
        rounds = [0] * READERS

        def read(reader: int) -> None:
            start.wait()
            while not writer_done.is_set() or rounds[reader] < MIN_ROUNDS:
                _read_round(ws, reader)
                rounds[reader] += 1

        def write() -> None:
            start.wait()
            try:
                for step in range(3):
                    fresh = [_report(docs, f"w{step}-{n}", 10 * step + n) for n in range(2)]
                    changed = _report(docs, f"r{step}", 50 + step)  # replaces a stored document
                    ws.ingest_documents([*fresh, changed], library="reports")
                    corpus = _beir(tmp_path / f"beir{step + 1}", 100 + 40 * step, 60, 5 + step)
                    ws.ingest_beir(corpus, library="beir")
                ws.ingest_documents([_report(docs, "x0", 77)], library="extra")
                ws.ingest_facts(_facts(tmp_path / "later.json", LATER_FACTS))
            finally:
                writer_done.set()

        threads = [
            threading.Thread(target=_run, args=(f"reader {n}", errors, lambda n=n: read(n)))
            for n in range(READERS)
        ]
        threads.append(threading.Thread(target=_run, args=("writer", errors, write)))
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        assert not any(thread.is_alive() for thread in threads), "a thread hung"
        print(f"rounds per reader: {rounds}; failures: {len(errors)}")
        for line in errors[:12]:
            print(line)
        assert errors == []
        assert min(rounds) >= MIN_ROUNDS

        shared = _snapshot(ws)
        assert all(m["status"] == "found" for m in shared["metrics"].values())
        with Workspace.open(path, create=False) as fresh_ws:
            assert shared == _snapshot(fresh_ws)
    finally:
        ws.close()


def test_closing_a_shared_workspace_closes_every_threads_connection(tmp_path: Path) -> None:
    ws = Workspace.init(tmp_path / "ws")
    docs = tmp_path / "docs"
    docs.mkdir()
    ws.ingest_documents([_report(docs, "r0", 0)], library="reports")
    ws.ingest_facts(_facts(tmp_path / "facts.json", FACTS))
    opened: list[Any] = []

    def read() -> None:
        ws.search("revenue", top_k=TOP_K)
        ws.query_metric("revenue", "acme", "FY2023", principal=INTERNAL)
        opened.append(ws.chunks._db)
        opened.append(ws.facts._conn)

    threads = [threading.Thread(target=read) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(conn) for conn in opened}) == 6  # one connection per store and thread
    ws.close()
    for conn in opened:
        try:
            conn.execute("SELECT 1")
        except Exception as exc:  # sqlite3.ProgrammingError: closed
            assert "closed" in str(exc)
        else:
            raise AssertionError("a thread's connection is still open after close()")


def test_a_writers_open_transaction_is_invisible_to_other_threads(tmp_path: Path) -> None:
    with Workspace.init(tmp_path / "ws") as ws:
        store = ws.chunks
        inside, checked = threading.Event(), threading.Event()

        def write() -> None:
            with store.transaction():
                store.create_library("pending")
                inside.set()
                checked.wait(timeout=60)

        writer = threading.Thread(target=write)
        writer.start()
        try:
            assert inside.wait(timeout=60)
            assert store.library_names() == []
            assert ws.libraries() == []
        finally:
            checked.set()
            writer.join(timeout=60)
        assert store.library_names() == ["pending"]


def test_two_threads_write_two_libraries_at_once(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    files = {name: [_report(docs, f"{name}{n}", n) for n in range(4)] for name in ("a", "b")}
    errors: list[str] = []
    with Workspace.init(tmp_path / "ws") as ws:

        def ingest(name: str) -> None:
            for path in files[name]:  # one transaction per call, interleaved with the other's
                ws.ingest_documents([path], library=name)

        threads = [
            threading.Thread(target=_run, args=(name, errors, lambda name=name: ingest(name)))
            for name in files
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        assert errors == []
        together = _snapshot_libraries(ws)
    with Workspace.init(tmp_path / "one-by-one") as ws:
        for name, paths in files.items():
            ws.ingest_documents(paths, library=name)
        assert together == _snapshot_libraries(ws)


def _snapshot_libraries(ws: Workspace) -> dict[str, Any]:
    return {
        "libraries": [(s.library_id, s.documents, s.chunks) for s in ws.libraries()],
        "search": [
            ws.search(question, mode=mode, top_k=TOP_K).to_dict(timings=False)["snippets"]
            for question in QUESTIONS
            for mode in MODES
        ],
    }


def _is_closed(conn: sqlite3.Connection) -> bool:
    try:
        conn.execute("SELECT 1")
    except sqlite3.ProgrammingError:
        return True
    return False


def test_each_thread_has_its_own_connection_and_ended_threads_leave_none(tmp_path: Path) -> None:
    connections = ThreadConnections(lambda: connect(tmp_path / "db.sqlite"))
    mine = connections.get()
    assert connections.get() is mine
    seen: list[sqlite3.Connection] = []
    for _ in range(3):
        thread = threading.Thread(target=lambda: seen.append(connections.get()))
        thread.start()
        thread.join()
    assert len({id(conn) for conn in [mine, *seen]}) == 4
    # Each new thread closed the connection of the one that had ended before it.
    assert [_is_closed(conn) for conn in seen] == [True, True, False]
    connections.close()
    assert _is_closed(mine) and _is_closed(seen[-1])
    errors: list[str] = []
    late = threading.Thread(target=_run, args=("late", errors, connections.get))
    late.start()
    late.join()
    assert len(errors) == 1 and "closed database" in errors[0]  # nothing opens after close()
