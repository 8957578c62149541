"""The analysis worker process: the same terms as analyzing in process, and a clean failure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ragspine
from ragspine.analysis import Analyzer
from ragspine.narrative.index.lexical import worker as worker_module
from ragspine.narrative.index.lexical.worker import TokenWorker, WorkerGone

SAMPLE = Path(ragspine.__file__).parent / "data" / "convfinqa_sample.json"


def _real_texts() -> list[str]:
    """Report text shipped with the package, plus text the ASCII fast paths do not cover."""
    records = json.loads(SAMPLE.read_text(encoding="utf-8"))["dev"]
    texts = [r["doc"]["pre_text"] for r in records] + [r["doc"]["post_text"] for r in records]
    return [*texts, "Umsätze stiegen um 3,5 %", "売上高は増加した", "", "1,234.5 and (1,234)"]


@pytest.mark.parametrize("analyzer", [Analyzer(), Analyzer(language=None, stopwords=False)])
def test_the_worker_gives_the_terms_of_the_analyzer(analyzer: Analyzer) -> None:
    texts = _real_texts()
    worker = TokenWorker.start()
    assert worker is not None, "two or more CPUs: a worker starts"
    with worker:
        worker.submit(analyzer, texts)
        worker.submit(analyzer, texts[:3])
        assert worker.take() == analyzer.tokens_many(texts)
        assert worker.take() == analyzer.tokens_many(texts[:3])  # in submission order
        with pytest.raises(WorkerGone):
            worker.take()  # nothing is waiting


def test_a_killed_worker_fails_every_later_take() -> None:
    worker = TokenWorker.start()
    assert worker is not None
    worker._process.kill()
    worker.submit(Analyzer(), ["some text"])
    worker.submit(Analyzer(), ["more text"])
    for _ in range(2):
        with pytest.raises(WorkerGone):
            worker.take()
    worker.close()


def test_the_worker_can_be_switched_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(worker_module.ENV_SWITCH, "0")
    assert TokenWorker.start() is None
    monkeypatch.delenv(worker_module.ENV_SWITCH)
    monkeypatch.setattr(worker_module.os, "cpu_count", lambda: 1)
    assert TokenWorker.start() is None  # one CPU: nothing to overlap with
