"""One writer per library, any number of readers, on a PostgreSQL workspace: real processes
sharing one database, as several servers and ingest workers on several hosts would."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from files import write_beir_corpus
from test_concurrency import READER, WORDS, _cli, _synthetic, _write_files

from ragspine.narrative.index.lexical.library_indexes import MAINTAINED_FIELDS
from ragspine.security import Principal, max_visible_level
from ragspine.workspace import Workspace

CONFIDENTIAL = Principal.of("confidential")


def _finish(proc: subprocess.Popen[str]) -> None:
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0 and "Traceback" not in err, err


def _library(ws: Workspace, library: str) -> tuple[list[str], dict[str, list[tuple[float, str]]]]:
    """The library's chunk ids and the BM25 top-10 (score, chunk id) of 30 queries, ties by
    chunk id: what a search ranks by, independent of chunk keys and write order."""
    store = ws.chunks
    rows = list(store.index_rows(library))
    ids = sorted(i.chunk_id for i in store.chunk_ids([row.key for row in rows]).values())
    index = ws.lexical_indexes.get(library, MAINTAINED_FIELDS[0])
    level = max_visible_level(CONFIDENTIAL)
    rankings = {}
    for n in range(30):
        question = " ".join(random.Random(n).choices(WORDS, k=4))
        hits = index.search(question, 50, max_level=level)
        names = store.chunk_ids([key for key, _ in hits])
        ranked = sorted(((round(score, 9), names[key].chunk_id) for key, score in hits),
                        key=lambda pair: (-pair[0], pair[1]))  # fmt: skip
        rankings[question] = ranked[:10]
    return ids, rankings


def test_two_processes_ingesting_one_library_equal_one_sequential_ingest(
    postgres_url: str, tmp_path: Path
) -> None:
    folders = [
        _write_files(tmp_path / f"half{n}", _synthetic(200, seed, f"s{seed}-"))
        for n, seed in enumerate((1, 2))
    ]
    with Workspace.init(tmp_path / "sequential") as sequential:
        for folder in folders:
            sequential.ingest_documents([folder], library="lib")
        expected = _library(sequential, "lib")
    Workspace.init(postgres_url).close()
    procs = [
        _cli("--workspace", postgres_url, "ingest", "docs", str(f), "--library", "lib")
        for f in folders
    ]
    for proc in procs:
        _finish(proc)
    with Workspace.open(postgres_url, create=False) as concurrent:
        assert concurrent.describe_library("lib")["documents"] == 400
        assert _library(concurrent, "lib") == expected


def test_eight_readers_during_ingests_see_no_errors(postgres_url: str, tmp_path: Path) -> None:
    with Workspace.init(postgres_url) as ws:
        ws.ingest_beir(write_beir_corpus(tmp_path / "c0", _synthetic(200, 10, "a")), library="lib")
    stop = tmp_path / "stop"
    readers = [
        subprocess.Popen(
            [sys.executable, "-c", READER, postgres_url, str(stop), str(tmp_path / f"r{n}.json")],
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(8)
    ]
    try:
        for n in range(1, 4):
            corpus = write_beir_corpus(tmp_path / f"c{n}", _synthetic(100, 10 + n, f"b{n}-"))
            _finish(
                _cli("--workspace", postgres_url, "ingest", "beir", str(corpus), "--library", "lib")
            )
        replaced = write_beir_corpus(tmp_path / "c9", _synthetic(200, 99, "a"))  # same ids
        _finish(
            _cli("--workspace", postgres_url, "ingest", "beir", str(replaced), "--library", "lib")
        )
    finally:
        stop.touch()
        for reader in readers:
            reader.wait(timeout=300)
    reports = [json.loads((tmp_path / f"r{n}.json").read_text()) for n in range(8)]
    assert [r["errors"] for r in reports] == [[]] * 8
    assert all(r["searches"] >= 3 and r["found"] > 0 for r in reports)
    with Workspace.open(postgres_url, create=False) as ws:
        assert ws.describe_library("lib")["documents"] == 200 + 3 * 100


def test_an_ingest_killed_mid_write_leaves_whole_documents(
    postgres_url: str, tmp_path: Path
) -> None:
    """SIGKILL an ingest part-way: every document is there whole or not at all, searches work,
    and the lock it held is free (the server ends the dead session's advisory lock)."""
    records = _synthetic(600, 5, "k")
    folder = _write_files(tmp_path / "docs", records)
    Workspace.init(postgres_url).close()
    proc = _cli("--workspace", postgres_url, "ingest", "docs", str(folder), "--library", "lib")
    deadline = time.monotonic() + 120
    with Workspace.open(postgres_url) as ws:
        while time.monotonic() < deadline:
            if "lib" in ws.chunks.library_names() and ws.chunks.generation("lib") >= 3:
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        store = ws.chunks
        rows = list(store.index_rows("lib"))
        per_doc: dict[str, int] = {}
        for identity in store.chunk_ids([row.key for row in rows]).values():
            per_doc[identity.doc_id] = per_doc.get(identity.doc_id, 0) + 1
        assert 0 < len(per_doc) < len(records), "kill the ingest part-way"
        assert all(count == 1 for count in per_doc.values())  # each short text is one chunk
        ws.search("revenue", mode="bm25", principal=CONFIDENTIAL)  # the index is usable
        report = ws.ingest_documents([folder], library="lib")  # the lock is free again
        assert not report.failures
        assert ws.describe_library("lib")["documents"] == len(records)
