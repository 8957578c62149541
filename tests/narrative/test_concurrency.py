"""One writer per library, any number of readers: real processes against one workspace.

Two ingests into one library at once must leave the same documents, index contents and scores as
one sequential ingest; searches running while a library is written must never fail and never
write index files.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from files import write_beir_corpus

from conftest import shared_data
from ragspine.errors import StoreError
from ragspine.eval.retrieval import load_qrels, load_queries, ndcg_at_k
from ragspine.locks import write_lock
from ragspine.narrative.index.lexical.library_indexes import MAINTAINED_FIELDS
from ragspine.security import Principal, max_visible_level
from ragspine.workspace import Workspace

WORDS = (
    "revenue",
    "margin",
    "growth",
    "cash",
    "flow",
    "asset",
    "liability",
    "equity",
    "dividend",
    "segment",
    "region",
    "europe",
    "asia",
    "america",
    "product",
    "service",
    "customer",
    "supplier",
    "contract",
    "lease",
    "debt",
    "bond",
    "interest",
    "rate",
    "currency",
    "hedge",
    "tax",
    "audit",
    "risk",
    "outlook",
    "guidance",
    "quarter",
    "annual",
)


def _cli(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "ragspine.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "RAGSPINE_DEBUG": ""},
    )


def _synthetic(count: int, seed: int, prefix: str) -> list[dict[str, str]]:
    rng = random.Random(seed)
    return [
        {
            "_id": f"{prefix}{n}",
            "title": " ".join(rng.choices(WORDS, k=3)),
            "text": " ".join(rng.choices(WORDS, k=rng.randint(20, 60))) + ".",
        }
        for n in range(count)
    ]


def _state(ws: Workspace, library: str) -> dict[str, object]:
    """Everything a search depends on, independent of chunk keys and write order."""
    store = ws.chunks
    chunk_ids = {
        key: ids.chunk_id
        for key, ids in store.chunk_ids([row.key for row in store.index_rows(library)]).items()
    }
    state: dict[str, object] = {"counts": ws.describe_library(library)}
    generation = store.generation(library)
    for fields in MAINTAINED_FIELDS:
        index = ws.lexical_indexes.get(library, fields)
        assert index.generation == generation, f"{fields} index is not current"
        assert len(index) == len(chunk_ids), f"{fields} index misses chunks"
        state[fields.value] = len(index)
    state["chunks"] = sorted(chunk_ids.values())
    del state["counts"]["created_at"]  # type: ignore[attr-defined]
    return state


def _rankings(ws: Workspace, library: str, queries: dict[str, str]) -> dict[str, list[tuple]]:
    """Top-10 (score, doc id) per query straight from the index, ties ordered by doc id.

    Chunk keys (the index's own tie-break) depend on which writer ran first, so 50 hits are
    fetched and re-sorted by doc id before the cut.
    """
    store = ws.chunks
    index = ws.lexical_indexes.get(library, MAINTAINED_FIELDS[0])
    level = max_visible_level(Principal.of("confidential"))
    result = {}
    for qid, text in queries.items():
        hits = index.search(text, 50, max_level=level)
        ids = store.chunk_ids([key for key, _ in hits])
        ranked = [(round(score, 9), ids[key].doc_id) for key, score in hits]
        result[qid] = sorted(ranked, key=lambda pair: (-pair[0], pair[1]))[:10]
    return result


def _ingest_concurrently(
    ws_path: Path, library: str, sources: list[Path], kind: str = "beir"
) -> None:
    procs = [
        _cli("--workspace", str(ws_path), "ingest", kind, str(c), "--library", library)
        for c in sources
    ]
    for proc in procs:
        _out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        assert "Traceback" not in err


def _write_files(folder: Path, records: list[dict[str, str]]) -> Path:
    folder.mkdir(parents=True)
    for record in records:
        (folder / f"{record['_id']}.txt").write_text(record["text"], encoding="utf-8")
    return folder


def test_two_processes_ingesting_one_library_equal_one_sequential_ingest(tmp_path: Path) -> None:
    # Files are written one transaction each, so the two writers' commits would interleave.
    folders = [
        _write_files(tmp_path / f"half{n}", _synthetic(300, seed, f"s{seed}-"))
        for n, seed in enumerate((1, 2))
    ]
    sequential = Workspace.open(tmp_path / "sequential")
    for folder in folders:
        sequential.ingest_documents([folder], library="lib")
    _ingest_concurrently(tmp_path / "concurrent", "lib", folders, kind="docs")
    concurrent = Workspace.open(tmp_path / "concurrent", create=False)
    assert _state(concurrent, "lib") == _state(sequential, "lib")
    queries = {str(n): " ".join(random.Random(n).choices(WORDS, k=4)) for n in range(50)}
    assert _rankings(concurrent, "lib", queries) == _rankings(sequential, "lib", queries)


def test_two_scifact_halves_at_once_score_like_one_sequential_ingest(tmp_path: Path) -> None:
    folder = shared_data("scifact")
    lines = (folder / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    middle = len(lines) // 2
    corpora = []
    for n, part in enumerate((lines[:middle], lines[middle:])):
        half = tmp_path / f"half{n}"
        half.mkdir()
        (half / "corpus.jsonl").write_text("\n".join(part) + "\n", encoding="utf-8")
        corpora.append(half)
    sequential = Workspace.open(tmp_path / "sequential")
    sequential.ingest_beir(folder, library="scifact")
    _ingest_concurrently(tmp_path / "concurrent", "scifact", corpora)
    concurrent = Workspace.open(tmp_path / "concurrent", create=False)
    assert concurrent.describe_library("scifact")["documents"] == 5183
    assert _state(concurrent, "scifact") == _state(sequential, "scifact")
    qrels = load_qrels(folder / "qrels" / "train.tsv")
    queries = {q: t for q, t in load_queries(folder / "queries.jsonl").items() if q in qrels}
    scores = []
    for ws in (sequential, concurrent):
        rankings = _rankings(ws, "scifact", queries)
        assert len(rankings) == 809
        scores.append(
            sum(ndcg_at_k([d for _, d in rankings[q]], qrels[q]) for q in rankings) / len(rankings)
        )
        if ws is concurrent:
            assert rankings == _rankings(sequential, "scifact", queries)
    assert scores[0] == scores[1] and scores[0] > 0.66


READER = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from ragspine import Principal, Workspace
    location, stop, report = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    from ragspine.narrative.index.lexical import engine as lexical
    from ragspine.narrative.index.vector import engine as vector
    def forbidden(*args, **kwargs):
        raise AssertionError("a reader wrote an index file")
    lexical.LexicalIndex.commit = forbidden  # every index file is written by a commit
    vector.ExactVectorIndex.commit = forbidden
    ws = Workspace.open(location, create=False)  # a folder or a PostgreSQL URL
    searches, errors, found = 0, [], 0
    modes = ("bm25", "lexical", "economy")
    while not stop.exists() or searches < 3:
        try:
            result = ws.search(
                "revenue margin growth", mode=modes[searches % 3], libraries=["lib"],
                principal=Principal.of("internal"),
            )
            found += len(result.snippets) > 0
        except Exception as exc:  # any error is a failure of the contract
            errors.append(f"{type(exc).__name__}: {exc}")
        searches += 1
    report.write_text(json.dumps({"searches": searches, "errors": errors, "found": found}))
    """
)


def test_readers_during_ingests_see_no_errors_and_write_no_index_file(tmp_path: Path) -> None:
    ws_path = tmp_path / "ws"
    first = write_beir_corpus(tmp_path / "c0", _synthetic(300, 10, "a"))
    Workspace.open(ws_path).ingest_beir(first, library="lib")
    stop = tmp_path / "stop"
    readers = [
        subprocess.Popen(
            [sys.executable, "-c", READER, str(ws_path), str(stop), str(tmp_path / f"r{n}.json")],
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(8)
    ]
    try:
        # Several writes: each commits the chunk store and then the indexes, merging segments
        # and deleting the files of the previous commit while the readers load them.
        for n in range(1, 7):
            corpus = write_beir_corpus(tmp_path / f"c{n}", _synthetic(150, 10 + n, f"b{n}-"))
            writer = _cli(
                "--workspace", str(ws_path), "ingest", "beir", str(corpus), "--library", "lib"
            )
            _, err = writer.communicate(timeout=300)
            assert writer.returncode == 0, err
        replaced = _synthetic(300, 99, "a")  # same ids as the first corpus: replaces them all
        writer = _cli(
            "--workspace",
            str(ws_path),
            "ingest",
            "beir",
            str(write_beir_corpus(tmp_path / "c7", replaced)),
            "--library",
            "lib",
        )
        _, err = writer.communicate(timeout=300)
        assert writer.returncode == 0, err
    finally:
        stop.touch()
        for reader in readers:
            reader.wait(timeout=300)
    reports = [json.loads((tmp_path / f"r{n}.json").read_text()) for n in range(8)]
    assert [r["errors"] for r in reports] == [[]] * 8
    assert all(r["searches"] >= 3 and r["found"] > 0 for r in reports)
    ws = Workspace.open(ws_path, create=False)
    state = _state(ws, "lib")
    assert state["counts"]["documents"] == 300 + 6 * 150  # type: ignore[index]
    # No reader wrote an index: the economy field set, never written by a writer, is absent.
    assert not (ws.index_dir / "lib" / "lexical-text").exists()


def test_a_second_writer_waits_and_says_who_is_writing(tmp_path: Path) -> None:
    ws = Workspace.init(tmp_path / "ws")
    corpus = write_beir_corpus(tmp_path / "c", _synthetic(50, 3, "w"))
    lock = ws.path / "locks" / "library-lib.lock"
    released = threading.Event()

    def hold() -> None:
        with write_lock(lock, resource="library 'lib'"):
            released.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    time.sleep(0.2)
    writer = _cli("--workspace", str(ws.path), "ingest", "beir", str(corpus), "--library", "lib")
    expected = f"waiting for library 'lib': it is being written by process {os.getpid()}"
    lines: list[str] = []
    assert writer.stderr is not None
    reader = threading.Thread(target=lambda: lines.extend(writer.stderr))  # type: ignore[arg-type]
    reader.start()
    deadline = time.monotonic() + 60  # the CLI may take seconds to start on a loaded machine
    while not any(expected in line for line in lines) and time.monotonic() < deadline:
        assert writer.poll() is None  # still waiting for the lock, never done without it
        time.sleep(0.05)
    assert any(expected in line for line in lines), "".join(lines)
    assert writer.poll() is None
    released.set()
    holder.join()
    writer.wait(timeout=120)
    reader.join()
    assert writer.returncode == 0, "".join(lines)
    assert ws.describe_library("lib")["documents"] == 50


def test_a_lock_times_out_with_a_store_error_naming_the_holder(tmp_path: Path) -> None:
    lock = tmp_path / "locks" / "library-x.lock"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
            import sys, time
            from pathlib import Path
            from ragspine.locks import write_lock
            with write_lock(Path({str(lock)!r}), resource="library 'x'"):
                print("held", flush=True)
                time.sleep(60)
            """),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with (
            pytest.raises(
                StoreError, match=rf"library 'x' is being written by process {holder.pid}"
            ),
            write_lock(lock, resource="library 'x'", timeout=0.2),
        ):
            pass
    finally:
        holder.kill()
        holder.wait()
    with write_lock(lock, resource="library 'x'", timeout=5):  # a killed holder frees the lock
        pass


def test_a_writer_killed_between_its_commits_is_repaired_by_the_next(tmp_path: Path) -> None:
    ws_path = tmp_path / "ws"
    Workspace.open(ws_path).ingest_beir(
        write_beir_corpus(tmp_path / "c0", _synthetic(100, 5, "k")), library="lib"
    )
    second = write_beir_corpus(tmp_path / "c1", _synthetic(100, 6, "m"))
    script = textwrap.dedent(
        """
        import os, sys
        from ragspine.narrative.index.lexical.library_indexes import LibraryIndexes
        from ragspine.workspace import Workspace
        def die(*args, **kwargs):
            os._exit(9)  # killed after the chunk store committed, before any index did
        LibraryIndexes.apply = die
        Workspace.open(sys.argv[1]).ingest_beir(sys.argv[2], library="lib")
        """
    )
    assert subprocess.run([sys.executable, "-c", script, str(ws_path), str(second)]).returncode == 9
    from ragspine.locks import lock_path, write_lock

    with write_lock(lock_path(ws_path, "library-lib"), resource="library 'lib'"):
        busy = Workspace.open(ws_path, create=False)  # while a writer is at work ...
        assert len(busy.lexical_indexes.get("lib", MAINTAINED_FIELDS[0])) == 100  # last commit
    ws = Workspace.open(ws_path, create=False)
    assert ws.describe_library("lib")["documents"] == 200
    built = ws.lexical_indexes.get("lib", MAINTAINED_FIELDS[0])
    assert len(built) == 200  # no writer at work: built in memory from the chunk store
    corpus = write_beir_corpus(tmp_path / "c2", _synthetic(10, 7, "n"))
    ws.ingest_beir(corpus, library="lib")
    state = _state(ws, "lib")
    assert state[MAINTAINED_FIELDS[0].value] == state[MAINTAINED_FIELDS[1].value] == 210


def test_readers_neither_write_nor_wait_while_a_writer_holds_the_database(tmp_path: Path) -> None:
    import sqlite3

    ws_path = tmp_path / "ws"
    Workspace.init(ws_path).ingest_beir(
        write_beir_corpus(tmp_path / "c", _synthetic(20, 8, "r")), library="lib"
    )
    Workspace.open(tmp_path / "facts-only").close()  # as `ingest facts` makes one
    writers = [
        sqlite3.connect(folder / "workspace.sqlite", isolation_level=None)
        for folder in (ws_path, tmp_path / "facts-only")
    ]
    for writer in writers:
        writer.execute("BEGIN IMMEDIATE")  # another process in the middle of a write
    try:
        started = time.monotonic()
        ws = Workspace.open(ws_path, create=False)
        assert ws.search("revenue margin", libraries=["lib"]).snippets
        assert [lib.library_id for lib in ws.libraries()] == ["lib"]
        principal = Principal.of("internal")
        assert ws.query_metric("revenue", "acme", "FY2024", principal=principal).status == (
            "not_found"
        )
        assert Workspace.open(tmp_path / "facts-only", create=False).libraries() == []
        assert time.monotonic() - started < 5  # SQLite's busy wait would take 60 s
    finally:
        for writer in writers:
            writer.rollback()
            writer.close()
