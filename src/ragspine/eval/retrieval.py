"""Retrieval evaluation: nDCG@10, Recall@100 and MRR@10 over BEIR-style queries and qrels.

Metrics are pure functions of a ranked list of document ids and graded judgments (grade > 0 is
relevant; nDCG uses the grade as gain with a log2 discount). The runner searches a library, ranks
documents by their best chunk and averages over the judged queries.
"""

from __future__ import annotations

import csv
import json
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragspine.errors import ConfigError
from ragspine.narrative.retrieve.options import SearchOptions, resolve_options
from ragspine.security import PUBLIC, Principal

if TYPE_CHECKING:
    from ragspine.workspace import Workspace

Qrels = Mapping[str, Mapping[str, int]]
CHUNKS_PER_DOC_DEPTH = 3


def ndcg_at_k(ranked: Sequence[str], judgments: Mapping[str, int], k: int = 10) -> float:
    """Normalised discounted cumulative gain of ``ranked`` at cut-off ``k``."""
    gains = sorted((g for g in judgments.values() if g > 0), reverse=True)
    ideal = sum(g / math.log2(rank + 2) for rank, g in enumerate(gains[:k]))
    if ideal == 0:
        return 0.0
    actual = sum(
        max(judgments.get(doc, 0), 0) / math.log2(rank + 2) for rank, doc in enumerate(ranked[:k])
    )
    return actual / ideal


def recall_at_k(ranked: Sequence[str], judgments: Mapping[str, int], k: int = 100) -> float:
    """Share of the relevant documents found in the first ``k``."""
    relevant = {doc for doc, grade in judgments.items() if grade > 0}
    if not relevant:
        return 0.0
    return len(relevant.intersection(ranked[:k])) / len(relevant)


def mrr_at_k(ranked: Sequence[str], judgments: Mapping[str, int], k: int = 10) -> float:
    """Reciprocal rank of the first relevant document within ``k`` (0 when none)."""
    for rank, doc in enumerate(ranked[:k], start=1):
        if judgments.get(doc, 0) > 0:
            return 1.0 / rank
    return 0.0


def rank_documents(chunk_hits: Sequence[tuple[str, float]]) -> list[str]:
    """Document ids ranked by their best chunk's score (ties by document id)."""
    best: dict[str, float] = {}
    for doc_id, score in chunk_hits:
        if score > best.get(doc_id, float("-inf")):
            best[doc_id] = score
    return sorted(best, key=lambda doc: (-best[doc], doc))


def load_queries(path: str | Path) -> dict[str, str]:
    """BEIR ``queries.jsonl``: ``_id`` -> ``text``."""
    queries: dict[str, str] = {}
    try:
        with Path(path).open(encoding="utf-8") as lines:
            for number, line in enumerate(lines, start=1):
                if line.strip():
                    try:
                        record = json.loads(line)
                        if not isinstance(record["text"], str):
                            raise TypeError("text is not a string")
                        queries[str(record["_id"])] = record["text"]
                    except (ValueError, KeyError, TypeError):
                        raise ConfigError(
                            f"{path}:{number}: expected a JSON object with _id and text"
                        ) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"queries file {path} is not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise ConfigError(f"cannot read queries file {path}: {exc.strerror}") from None
    return queries


def load_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """BEIR qrels TSV with header ``query-id corpus-id score``."""
    qrels: dict[str, dict[str, int]] = {}
    try:
        with Path(path).open(encoding="utf-8", newline="") as handle:
            rows = csv.reader(handle, delimiter="\t")
            header = next(rows, None)
            if header is None or [h.strip() for h in header[:3]] != [
                "query-id",
                "corpus-id",
                "score",
            ]:
                raise ConfigError(f"{path}: expected the header 'query-id<TAB>corpus-id<TAB>score'")
            for number, row in enumerate(rows, start=2):
                if not row:
                    continue
                try:
                    qrels.setdefault(row[0].strip(), {})[row[1].strip()] = int(row[2])
                except (IndexError, ValueError):
                    raise ConfigError(
                        f"{path}:{number}: expected query-id, corpus-id, score"
                    ) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"qrels file {path} is not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise ConfigError(f"cannot read qrels file {path}: {exc.strerror}") from None
    return qrels


@dataclass(frozen=True, slots=True)
class RetrievalReport:
    """Mean metrics over the judged queries, and the search throughput."""

    library: str
    mode: str
    queries: int
    metrics: Mapping[str, float]
    seconds: float


def evaluate_rankings(rankings: Mapping[str, Sequence[str]], qrels: Qrels) -> dict[str, float]:
    """Mean nDCG@10, Recall@100 and MRR@10 over the queries of ``qrels`` present in rankings."""
    judged = [qid for qid in qrels if qid in rankings]
    if not judged:
        return {"ndcg@10": 0.0, "recall@100": 0.0, "mrr@10": 0.0}
    return {
        "ndcg@10": sum(ndcg_at_k(rankings[q], qrels[q]) for q in judged) / len(judged),
        "recall@100": sum(recall_at_k(rankings[q], qrels[q]) for q in judged) / len(judged),
        "mrr@10": sum(mrr_at_k(rankings[q], qrels[q]) for q in judged) / len(judged),
    }


def run_retrieval_eval(
    workspace: Workspace,
    *,
    library: str,
    queries: Mapping[str, str],
    qrels: Qrels,
    options: SearchOptions | None = None,
    depth: int = 100,
    principal: Principal = PUBLIC,
    progress: Callable[[int, int], None] | None = None,
    **changes: Any,
) -> RetrievalReport:
    """Search every judged query of ``library`` as ``principal`` and score documents by their
    best chunk. ``options`` and ``changes`` are those of :meth:`Workspace.search` (e.g.
    ``mode``, ``lexical_weight``); the library and the depth are set here.
    ``progress(done, total)`` follows the queries searched."""
    judged = [qid for qid in qrels if qid in queries]
    if not judged:
        raise ConfigError("no query in the qrels file has a text in the queries file: check ids")
    chosen = resolve_options(options, SearchOptions(), changes).with_changes(
        {"libraries": (library,), "top_k": depth * CHUNKS_PER_DOC_DEPTH}
    )
    rankings: dict[str, list[str]] = {}
    started = time.perf_counter()
    for qid in judged:
        result = workspace.search(queries[qid], chosen, principal=principal)
        hits = [(snippet.doc_id, snippet.score) for snippet in result.snippets]
        rankings[qid] = rank_documents(hits)[:depth]
        if progress is not None:
            progress(len(rankings), len(judged))
    seconds = time.perf_counter() - started
    metrics = evaluate_rankings(rankings, qrels)
    metrics["qps"] = len(judged) / seconds if seconds > 0 else float("inf")
    return RetrievalReport(library, chosen.mode.value, len(judged), metrics, seconds)
