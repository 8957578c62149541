"""Dense-only SciFact retrieval quality (nDCG@10 on the train qrels) with ONNX MiniLM.

Run (slow: embeds 5,183 abstracts): nice -n 10 python bench/bench_scifact_dense.py
Embeddings are saved to bench/out/ and reused on the next run (--reuse). ``--docs N`` embeds only
the first N abstracts and scores the train queries judged on them (a quick run; nothing is saved).
Also prints HNSW recall@10 against exact search on these real embeddings, and the nDCG@10 the
HNSW index gives, beside the exact index (the baseline).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from _beir_subset import judged_within
from ragspine.narrative.index.vector.engine import ExactVectorIndex, HnswVectorIndex

ROOT = Path(__file__).resolve().parent
DATA = ROOT.parents[1] / "shared" / "data" / "scifact"
OUT = ROOT / "out"


def ndcg_at_10(ranked: list[str], relevant: dict[str, int]) -> float:
    dcg = sum(relevant.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:10]))
    ideal = sorted(relevant.values(), reverse=True)[:10]
    idcg = sum(r / math.log2(i + 2) for i, r in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def progress(done: int, total: int) -> None:
    if done == total or done % 320 == 0:
        print(f"  embedded {done}/{total}", file=sys.stderr, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reuse", action="store_true", help="reuse bench/out embeddings")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument(
        "--docs", type=int, default=0, help="embed only the first N abstracts (nothing is saved)"
    )
    args = parser.parse_args()
    os.environ.setdefault("XDG_CACHE_HOME", tempfile.mkdtemp(prefix="ragspine-xdg-"))
    from ragspine.narrative.index.embed.model import load_embedder

    docs = [json.loads(line) for line in (DATA / "corpus.jsonl").open(encoding="utf-8")]
    if args.docs:
        docs = docs[: args.docs]
    queries = {
        q["_id"]: q["text"]
        for q in map(json.loads, (DATA / "queries.jsonl").open(encoding="utf-8"))
    }
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    for line in (DATA / "qrels" / "train.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        qid, did, score = line.split("\t")
        qrels[qid][did] = int(score)
    if args.docs:
        qrels = judged_within(qrels, {d["_id"] for d in docs})
    qids = sorted(qrels, key=int)
    doc_ids = [d["_id"] for d in docs]

    doc_file, query_file = OUT / "scifact_corpus_minilm.npy", OUT / "scifact_train_queries.npy"
    embedder = load_embedder(threads=args.threads)
    if args.reuse and not args.docs and doc_file.exists() and query_file.exists():
        doc_vectors, query_vectors = np.load(doc_file), np.load(query_file)
        print("reusing saved embeddings")
    else:
        start = time.perf_counter()
        doc_vectors = embedder.embed(
            [f"{d['title']}\n{d['text']}" for d in docs], batch_size=32, progress=progress
        )
        took = time.perf_counter() - start
        print(f"embedded {len(docs)} abstracts in {took:.0f} s ({len(docs) / took:.1f} chunks/s)")
        query_vectors = embedder.embed([queries[q] for q in qids])
        if not args.docs:
            OUT.mkdir(exist_ok=True)
            np.save(doc_file, doc_vectors)
            np.save(query_file, query_vectors)
            (OUT / "scifact_ids.json").write_text(json.dumps({"docs": doc_ids, "queries": qids}))

    keys = np.arange(len(docs), dtype=np.int64)
    levels = np.zeros(len(docs), dtype=np.int8)
    with tempfile.TemporaryDirectory() as folder:
        exact = ExactVectorIndex(folder + "/e", model_id=embedder.model_id, dim=embedder.dim)
        ann = HnswVectorIndex(
            folder + "/a", model_id=embedder.model_id, dim=embedder.dim, exact_below=0
        )
        exact.add(keys, doc_vectors, levels)
        ann.add(keys, doc_vectors, levels)
        scores = {"exact": 0.0, "hnsw": 0.0}
        overlap = 0
        for qid, q in zip(qids, query_vectors, strict=True):
            e_hits = exact.search(q, 10, max_level=0)
            a_hits = ann.search(q, 10, max_level=0)
            overlap += len({k for k, _ in e_hits} & {k for k, _ in a_hits})
            scores["exact"] += ndcg_at_10([doc_ids[k] for k, _ in e_hits], qrels[qid])
            scores["hnsw"] += ndcg_at_10([doc_ids[k] for k, _ in a_hits], qrels[qid])
    n = len(qids)
    print(f"SciFact train ({n} queries, {len(docs)} docs), dense-only MiniLM int8, 256 tokens:")
    print(f"  nDCG@10 exact index (baseline): {scores['exact'] / n:.4f}")
    print(f"  nDCG@10 HNSW index:             {scores['hnsw'] / n:.4f}")
    print(f"  HNSW recall@10 vs exact:        {overlap / (10 * n):.4f}")


if __name__ == "__main__":
    main()
