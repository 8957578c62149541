"""Quick runs on the first documents of a BEIR corpus, shared by the bench scripts' ``--docs N``.

A helper module, not a benchmark: the leading underscore keeps it out of the smoke-case check in
``tests/test_bench_smoke.py``.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Collection, Mapping
from pathlib import Path

Qrels = Mapping[str, Mapping[str, int]]


def judged_within(qrels: Qrels, documents: Collection[str]) -> dict[str, dict[str, int]]:
    """``qrels`` cut to ``documents``; queries left with no judgment are dropped."""
    cut = {
        qid: {d: g for d, g in judged.items() if d in documents} for qid, judged in qrels.items()
    }
    return {qid: judged for qid, judged in cut.items() if judged}


def first_documents(
    corpus: Path, qrels: Qrels, count: int, folder: Path
) -> tuple[Path, dict[str, dict[str, int]]]:
    """The first ``count`` records of ``corpus`` written to ``folder/corpus.jsonl``, and ``qrels``
    cut to them (see :func:`judged_within`)."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "corpus.jsonl"
    with corpus.open(encoding="utf-8") as source, target.open("w", encoding="utf-8") as out:
        out.writelines(itertools.islice((line for line in source if line.strip()), count))
    with target.open(encoding="utf-8") as kept:
        ids = {json.loads(line)["_id"] for line in kept}
    return target, judged_within(qrels, ids)
