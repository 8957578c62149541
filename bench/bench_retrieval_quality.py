"""Retrieval quality on SciFact (train qrels) and Cranfield, with bm25s as a same-run baseline.

Both corpora come from ``../shared/data`` (see its README). Each is ingested into a temporary
workspace through ``Workspace.ingest_beir`` and scored with ``run_retrieval_eval`` (documents by
their best chunk). The baseline is bm25s over whole documents (title + text, k1=0.9, b=0.4,
English Snowball stemming and stopwords).

    nice -n 10 python bench/bench_retrieval_quality.py [--modes bm25,lexical,economy] [--docs N]

``--docs N`` ingests only the first N documents of each corpus and scores the queries judged on
them (a quick run).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

from _beir_subset import first_documents
from ragspine.eval.retrieval import (
    evaluate_rankings,
    load_qrels,
    load_queries,
    run_retrieval_eval,
)
from ragspine.workspace import Workspace

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
SCIFACT_TARGET = 0.66


def cranfield_to_beir(folder: Path, out: Path) -> None:
    """Write Cranfield as BEIR files: corpus.jsonl, queries.jsonl, qrels.tsv.

    ``cran.qry`` numbers queries 1, 2, 4, 8, ... but ``cranqrel`` numbers them by position
    1..225, so queries get their position as id. Grades 1 (complete answer) .. 4 (minimal
    interest) become gains 4 .. 1; -1 (not relevant) becomes 0.
    """
    out.mkdir(parents=True, exist_ok=True)

    def records(text: str) -> list[dict[str, str]]:
        result = []
        for block in re.split(r"^\.I\s+", text, flags=re.M)[1:]:
            number, _, rest = block.partition("\n")
            fields = dict(re.findall(r"^\.([TAWB])\n(.*?)(?=^\.[TAWB]\n|\Z)", rest, re.M | re.S))
            result.append(
                {"id": number.strip(), **{k: " ".join(v.split()) for k, v in fields.items()}}
            )
        return result

    docs = records((folder / "cran.all.1400").read_text(encoding="utf-8", errors="replace"))
    with (out / "corpus.jsonl").open("w", encoding="utf-8") as handle:
        for doc in docs:
            record = {
                "_id": str(int(doc["id"])),
                "title": doc.get("T", ""),
                "text": doc.get("W", ""),
            }
            handle.write(json.dumps(record) + "\n")
    queries = records((folder / "cran.qry").read_text(encoding="utf-8", errors="replace"))
    with (out / "queries.jsonl").open("w", encoding="utf-8") as handle:
        for position, query in enumerate(queries, start=1):
            handle.write(json.dumps({"_id": str(position), "text": query.get("W", "")}) + "\n")
    with (out / "qrels.tsv").open("w", encoding="utf-8") as handle:
        handle.write("query-id\tcorpus-id\tscore\n")
        for line in (folder / "cranqrel").read_text().splitlines():
            parts = line.split()
            if len(parts) >= 3:
                code = int(parts[2])
                gain = 5 - code if 1 <= code <= 4 else 0
                handle.write(f"{parts[0]}\t{parts[1]}\t{gain}\n")


def bm25s_baseline(
    corpus: Path, queries: Mapping[str, str], qrels: Mapping[str, Mapping[str, int]]
) -> dict[str, float]:
    """bm25s over whole documents with the same parameters."""
    import bm25s
    import Stemmer

    ids, texts = [], []
    for line in corpus.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        ids.append(str(record["_id"]))
        texts.append(f"{record.get('title', '')}\n{record.get('text', '')}")
    stemmer = Stemmer.Stemmer("english")
    engine = bm25s.BM25(k1=0.9, b=0.4)
    engine.index(
        bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False),
        show_progress=False,
    )
    judged = [q for q in qrels if q in queries]
    started = time.perf_counter()
    rankings = {}
    for qid in judged:
        tokens = bm25s.tokenize(queries[qid], stopwords="en", stemmer=stemmer, show_progress=False)
        k = min(100, len(ids))
        docs, _ = engine.retrieve(tokens, k=k, show_progress=False)
        rankings[qid] = [ids[int(i)] for i in docs[0]]
    seconds = time.perf_counter() - started
    metrics = evaluate_rankings(rankings, qrels)
    metrics["qps"] = len(judged) / seconds
    return metrics


def evaluate(
    name: str,
    corpus_dir: Path,
    queries_file: Path,
    qrels_file: Path,
    modes: list[str],
    *,
    docs: int = 0,
) -> dict[str, dict[str, float]]:
    queries, qrels = load_queries(queries_file), load_qrels(qrels_file)
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        corpus = corpus_dir / "corpus.jsonl"
        if docs:
            corpus, qrels = first_documents(corpus, qrels, docs, Path(folder) / "corpus")
        ws = Workspace.open(Path(folder) / "workspace")
        started = time.perf_counter()
        ws.ingest_beir(corpus, library=name)
        print(f"{name}: ingested in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        for mode in modes:
            report = run_retrieval_eval(ws, library=name, queries=queries, qrels=qrels, mode=mode)
            results[f"ragspine {mode}"] = dict(report.metrics)
        try:
            results["bm25s (baseline)"] = bm25s_baseline(corpus, queries, qrels)
        except ImportError:
            print("bm25s or PyStemmer not installed: pip install -e '.[bench]'", file=sys.stderr)
    print(f"\n{name} ({len([q for q in qrels if q in queries])} judged queries)")
    print(f"{'system':<20} {'nDCG@10':>8} {'R@100':>8} {'MRR@10':>8} {'q/s':>8}")
    for system, m in results.items():
        print(
            f"{system:<20} {m['ndcg@10']:>8.4f} {m['recall@100']:>8.4f} {m['mrr@10']:>8.4f} "
            f"{m['qps']:>8.0f}"
        )
    baseline = results.get("bm25s (baseline)")
    if baseline and f"ragspine {modes[0]}" in results:
        ours = results[f"ragspine {modes[0]}"]
        ratio = ours["ndcg@10"] / baseline["ndcg@10"]
        print(f"nDCG@10 ratio ragspine {modes[0]} / bm25s: {ratio:.3f}")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", default="bm25,lexical,economy")
    parser.add_argument("--only", choices=["scifact", "cranfield"])
    parser.add_argument(
        "--docs", type=int, default=0, help="ingest only the first N documents (a quick run)"
    )
    args = parser.parse_args()
    modes = args.modes.split(",")
    if args.only != "cranfield":
        scifact = DATA / "scifact"
        figures = evaluate(
            "scifact",
            scifact,
            scifact / "queries.jsonl",
            scifact / "qrels" / "train.tsv",
            modes,
            docs=args.docs,
        )
        ndcg = figures[f"ragspine {modes[0]}"]["ndcg@10"]
        verdict = "meets" if ndcg >= SCIFACT_TARGET else "MISSES"
        print(f"target SciFact nDCG@10 >= {SCIFACT_TARGET} ({modes[0]}): {verdict} ({ndcg:.4f})")
    if args.only != "scifact":
        with tempfile.TemporaryDirectory() as folder:
            beir = Path(folder) / "cranfield"
            cranfield_to_beir(DATA / "cranfield", beir)
            evaluate(
                "cranfield",
                beir,
                beir / "queries.jsonl",
                beir / "qrels.tsv",
                modes,
                docs=args.docs,
            )


if __name__ == "__main__":
    main()
