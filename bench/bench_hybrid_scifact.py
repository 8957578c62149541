"""SciFact through the real pipeline in hybrid mode: ingest time with embeddings, and nDCG@10 on
the train qrels for bm25, lexical, vector (dense only) and hybrid.

The corpus is ingested with ``Workspace.ingest_beir(..., vectors=True)`` (chunking, embedding
of every chunk through the cache, lexical and vector indexes); the baseline in the same run is
the same ingest into a library without vectors. Slow (embeds about 5,500 chunks on a CPU):

    nice -n 10 python bench/bench_hybrid_scifact.py [--workspace bench/out/scifact-hybrid-ws]

With an existing ``--workspace`` the ingests are skipped unless ``--fresh`` is given.
``--docs N`` ingests only the first N abstracts and scores the train queries judged on them
(a quick run; use it with a fresh workspace).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from _beir_subset import first_documents
from ragspine.eval.retrieval import load_qrels, load_queries, run_retrieval_eval
from ragspine.workspace import Workspace

ROOT = Path(__file__).resolve().parent
DATA = ROOT.parents[1] / "shared" / "data" / "scifact"
TARGET = 0.70


def _embed_progress() -> object:
    state = {"last": 0.0, "started": time.perf_counter()}

    def report(done: int, total: int) -> None:
        now = time.perf_counter()
        if done == total or now - state["last"] > 30:
            state["last"] = now
            rate = done / max(now - state["started"], 1e-9)
            print(f"  embedded {done}/{total} of this batch ({rate:.1f}/s)", file=sys.stderr)
            state["started"] = now if done == total else state["started"]

    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workspace", default=str(ROOT / "out" / "scifact-hybrid-ws"))
    parser.add_argument("--fresh", action="store_true", help="delete the workspace first")
    parser.add_argument("--modes", default="bm25,lexical,vector,hybrid")
    parser.add_argument(
        "--weights", default="1:1", help="hybrid lexical:vector weights to try, comma-separated"
    )
    parser.add_argument(
        "--docs", type=int, default=0, help="ingest only the first N abstracts (a quick run)"
    )
    args = parser.parse_args()
    os.environ.setdefault("XDG_CACHE_HOME", tempfile.mkdtemp(prefix="ragspine-xdg-"))
    folder = Path(args.workspace)
    if args.fresh and folder.exists():
        shutil.rmtree(folder)
    ws = Workspace.open(folder)
    qrels = load_qrels(DATA / "qrels" / "train.tsv")
    corpus = DATA / "corpus.jsonl"
    if args.docs:
        corpus, qrels = first_documents(
            corpus, qrels, args.docs, folder.parent / f"{folder.name}-first-{args.docs}"
        )
    names = {library.library_id for library in ws.libraries()}
    if "scifact_lex" not in names:
        started = time.perf_counter()
        report = ws.ingest_beir(corpus, library="scifact_lex")
        lexical_seconds = time.perf_counter() - started
        print(f"ingest without vectors (baseline): {lexical_seconds:.1f} s; {report.summary()}")
    if "scifact" not in names:
        started = time.perf_counter()
        report = ws.ingest_beir(
            corpus, library="scifact", vectors=True, embed_progress=_embed_progress()
        )
        seconds = time.perf_counter() - started
        chunks = ws.describe_library("scifact")["chunks"]
        embedded = ws.vector_indexes.embedded
        print(
            f"ingest in hybrid mode (vectors on): {seconds:.1f} s for {chunks} chunks, "
            f"{embedded} embedded ({embedded / seconds:.2f} chunks/s end to end); "
            f"{report.summary()}"
        )
        if "lexical_seconds" in locals():
            print(f"  ratio to the lexical-only ingest: {seconds / lexical_seconds:.1f}x")
    queries = load_queries(DATA / "queries.jsonl")
    print(f"SciFact train qrels: {len(qrels)} queries")
    for mode in args.modes.split(","):
        pairs = args.weights.split(",") if mode == "hybrid" else ["1:1"]
        for pair in pairs:
            lexical_weight, vector_weight = (float(x) for x in pair.split(":"))
            result = run_retrieval_eval(
                ws,
                library="scifact",
                queries=queries,
                qrels=qrels,
                mode=mode,
                lexical_weight=lexical_weight,
                vector_weight=vector_weight,
            )
            m = result.metrics
            label = f"{mode} {pair}" if mode == "hybrid" else mode
            flag = ""
            if mode == "hybrid":
                flag = "  (target >= 0.70: " + ("met" if m["ndcg@10"] >= TARGET else "MISSED") + ")"
            print(
                f"{label:>12}: nDCG@10 {m['ndcg@10']:.4f}  recall@100 {m['recall@100']:.4f}  "
                f"MRR@10 {m['mrr@10']:.4f}  {m['qps']:.1f} q/s{flag}",
                flush=True,
            )
    ws.close()


if __name__ == "__main__":
    main()
