"""The analysis worker process: the values computing in process gives, and a clean failure."""

from __future__ import annotations

import json
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
