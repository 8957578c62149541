"""The analysis worker process: the values computing in process gives, and a clean failure."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

import ragspine
from ragspine.analysis import Analyzer
from ragspine.narrative.ingest import worker as worker_module
from ragspine.narrative.ingest.worker import AnalysisWorker, WorkerGone
from ragspine.stores.chunks import count_terms

SAMPLE = Path(ragspine.__file__).parent / "data" / "convfinqa_sample.json"


def _real_texts() -> list[str]:
    """Report text shipped with the package, plus text the ASCII fast paths do not cover."""
    records = json.loads(SAMPLE.read_text(encoding="utf-8"))["dev"]
    texts = [r["doc"]["pre_text"] for r in records] + [r["doc"]["post_text"] for r in records]
    return [*texts, "Umsätze stiegen um 3,5 %", "売上高は増加した", "", "1,234.5 and (1,234)"]


@pytest.mark.parametrize("analyzer", [Analyzer(), Analyzer(language=None, stopwords=False)])
def test_the_worker_gives_what_analyzing_in_process_gives(analyzer: Analyzer) -> None:
    texts = _real_texts()
    rows = [(i % 3, text) for i, text in enumerate(texts)]
    worker = AnalysisWorker.start()
    assert worker is not None, "two or more CPUs: a worker starts"
    with worker:
        first = worker.tokens(analyzer, texts)
        counted = worker.routing_counts(rows)
        second = worker.tokens(analyzer, texts[:3])
        assert worker.result(second) == analyzer.tokens_many(texts[:3])  # any order
        assert worker.result(counted) == count_terms(rows)
        assert worker.result(first) == analyzer.tokens_many(texts)


def test_a_killed_worker_fails_every_later_result() -> None:
    worker = AnalysisWorker.start()
    assert worker is not None
    worker._process.kill()
    tickets = [worker.tokens(Analyzer(), ["some text"]), worker.routing_counts([(0, "text")])]
    for ticket in tickets:
        with pytest.raises(WorkerGone):
            worker.result(ticket)
    worker.close()


def test_the_worker_can_be_switched_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(worker_module.ENV_SWITCH, "0")
    assert AnalysisWorker.start() is None
    monkeypatch.delenv(worker_module.ENV_SWITCH)
    monkeypatch.setattr(worker_module.os, "cpu_count", lambda: 1)
    assert AnalysisWorker.start() is None  # one CPU: nothing to overlap with


def test_the_worker_finds_the_relations_the_extractor_finds_in_process(tmp_path: Path) -> None:
    """Relations of real filing text with a glossary made from the filings' tables; a second
    glossary replaces the first for the jobs after it."""
    from ragspine.glossary import Glossary
    from ragspine.graph.extract import ChunkText, GlossaryExtractor
    from ragspine.workspace import Workspace

    with Workspace.open(tmp_path / "ws") as ws:
        ws.ingest_convfinqa(SAMPLE, library=None)  # the tables, for the glossary
        glossary = ws.glossary
    chunks = [("lib", f"d{i}", text) for i, text in enumerate(_real_texts())]
    worker = AnalysisWorker.start()
    assert worker is not None
    with worker:
        first = worker.relations(glossary, chunks)
        again = worker.relations(glossary, chunks[:2])  # the glossary is not sent again
        bare = worker.relations(Glossary.from_terms([]), chunks[:2])
        found = worker.result(first)
        assert found == [
            GlossaryExtractor(glossary).extract(ChunkText(*c[:2], "", c[2])) for c in chunks
        ]
        assert sum(map(len, found)) > 20
        assert worker.result(again) == found[:2]
        assert worker.result(bare) == [[], []]


SLOW_CHILD = """
import pickle, sys, time
while True:
    try:
        ticket, kind, payload = pickle.load(sys.stdin.buffer)
    except EOFError:
        break
    time.sleep(0.2)
    pickle.dump((ticket, ("ok", kind)), sys.stdout.buffer)
    sys.stdout.buffer.flush()
"""


def test_a_job_not_handed_over_is_taken_back_and_later_jobs_go_last() -> None:
    """Against a child taking 0.2 s a job: two jobs are under way, the others wait; one
    waiting can be taken back, one under way cannot; ``later`` jobs go after the others."""
    import subprocess
    import sys
    import time

    process = subprocess.Popen(
        [sys.executable, "-c", SLOW_CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    with AnalysisWorker(process) as worker:
        busy = [worker.routing_counts([(0, "a")]) for _ in range(worker_module.IN_FLIGHT)]
        deadline = time.monotonic() + 10
        while worker._in_flight < worker_module.IN_FLIGHT and time.monotonic() < deadline:
            time.sleep(0.01)
        later = worker.tokens(Analyzer(), ["later"], later=True)
        taken = worker.tokens(Analyzer(), ["taken back"], later=True)
        urgent = worker.routing_counts([(0, "urgent")])
        assert worker.withdraw(taken) and not worker.withdraw(taken)
        assert not worker.withdraw(busy[0])  # under way
        assert [worker.result(t) for t in busy] == ["routing"] * len(busy)
        assert worker.result(urgent) == "routing"
        assert not worker.ready(later)  # handed over after the urgent one, still running
        assert worker.result(later) == "tokens"


def test_a_job_that_does_not_pickle_stops_the_worker_cleanly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No exception escapes the worker's threads (a user would see its traceback)."""
    escaped: list[object] = []
    monkeypatch.setattr(threading, "excepthook", escaped.append)
    worker = AnalysisWorker.start()
    assert worker is not None
    with worker:
        unpicklable = threading.Lock()
        broken = worker.relations(unpicklable, [("lib", "d", "text")])  # type: ignore[arg-type]
        after = worker.routing_counts([(0, "text")])
        for ticket in (broken, after):
            with pytest.raises(WorkerGone):
                worker.result(ticket)
    assert escaped == []
