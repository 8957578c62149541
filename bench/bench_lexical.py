"""Lexical search throughput: RAGSpine's numpy BM25 index against bm25s and rank_bm25.

A synthetic library with Zipfian word frequencies (English stopwords at the top ranks, then
pseudo-words with English inflections), chunks of 40-80 words. Every engine gets the same tokens
from RAGSpine's analyzer and runs in its own child process so that peak memory (ru_maxrss) is
its own. Run: ``nice -n 10 python bench/bench_lexical.py [--docs 100000] [--queries 300]``.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ragspine.analysis import Analyzer
from ragspine.narrative.index.lexical.engine import LexicalIndex
from ragspine.stopwords import STOPWORDS

SEED = 20261130
VOCABULARY = 60_000
ZIPF_EXPONENT = 1.07
SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"] + ["tra", "pro", "sen", "lor"]
SUFFIXES = ["", "", "", "s", "ing", "ed", "ation", "ly"]


def vocabulary(rng: np.random.Generator) -> list[str]:
    """Stopwords first (the most frequent ranks), then unique pseudo-words."""
    words = sorted(STOPWORDS["english"])
    rng.shuffle(words)
    seen = set(words)
    while len(words) < VOCABULARY:
        n = int(rng.integers(2, 5))
        base = "".join(SYLLABLES[i] for i in rng.integers(0, len(SYLLABLES), n))
        word = base + SUFFIXES[int(rng.integers(0, len(SUFFIXES)))]
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


def corpus(n_docs: int, n_queries: int) -> tuple[list[str], list[str]]:
    """Deterministic documents and queries (3-6 words drawn from random documents)."""
    rng = np.random.default_rng(SEED)
    words = np.asarray(vocabulary(rng), dtype=object)
    weights = 1.0 / np.arange(1, len(words) + 1) ** ZIPF_EXPONENT
    cdf = np.cumsum(weights / weights.sum())
    lengths = rng.integers(40, 81, n_docs)
    ranks = np.minimum(np.searchsorted(cdf, rng.random(int(lengths.sum()))), len(words) - 1)
    tokens = words[ranks]
    ends = np.cumsum(lengths)
    spans = zip(ends.tolist(), lengths.tolist(), strict=True)
    docs = [" ".join(tokens[end - n : end]) for end, n in spans]
    queries = []
    for doc_index in rng.integers(0, n_docs, n_queries):
        doc_words = docs[int(doc_index)].split()
        picks = rng.choice(len(doc_words), int(rng.integers(3, 7)), replace=False)
        queries.append(" ".join(doc_words[i] for i in sorted(picks)))
    return docs, queries


def latencies(
    run: Callable[[str], object], queries: list[str], passes: int = 3
) -> dict[str, float]:
    """Per-query latency over ``passes`` passes; the pass with the lowest median is kept.

    The machine is shared with other jobs, so the quietest pass is the fairest comparison.
    """
    for query in queries[:10]:
        run(query)
    best: list[float] = []
    for _ in range(passes):
        times = []
        for query in queries:
            start = time.perf_counter()
            run(query)
            times.append(time.perf_counter() - start)
        if not best or statistics.median(times) < statistics.median(best):
            best = times
    times_ms = sorted(t * 1000 for t in best)
    return {
        "p50_ms": statistics.median(times_ms),
        "p99_ms": times_ms[min(len(times_ms) - 1, int(0.99 * len(times_ms)))],
        "qps": len(best) / sum(best),
        "queries": len(best),
        "passes": passes,
    }


def bench_ragspine(docs: list[str], queries: list[str]) -> dict[str, Any]:
    analyzer = Analyzer()
    keys = list(range(len(docs)))
    levels = [k % 4 for k in keys]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "lexical"
        start = time.perf_counter()
        index = LexicalIndex.open(folder, analyzer=analyzer)
        index.add(keys[:-100], docs[:-100], levels[:-100])
        index.commit(1)
        build = time.perf_counter() - start
        start = time.perf_counter()
        index.add(keys[-100:], docs[-100:], levels[-100:])
        index.commit(2)
        add_100 = time.perf_counter() - start
        single = []
        for i in range(5):
            start = time.perf_counter()
            index.remove([i])
            index.add([i], [docs[i]], [levels[i]])
            index.commit(3 + i)
            single.append(time.perf_counter() - start)
        start = time.perf_counter()
        index = LexicalIndex.open(folder)
        open_s = time.perf_counter() - start
        disk = sum(p.stat().st_size for p in folder.iterdir())
        allowed = set(range(0, len(docs), 50))
        return {
            "build_s": build,
            "add_100_commit_s": add_100,
            "replace_1_commit_s": statistics.median(single),
            "open_s": open_s,
            "segments": index.segment_count,
            "disk_mb": disk / 2**20,
            "search": latencies(lambda q: index.search(q, 10, max_level=3), queries),
            "search_public_only": latencies(lambda q: index.search(q, 10, max_level=0), queries),
            "search_allowed_2pct": latencies(
                lambda q: index.search(q, 10, max_level=2, allowed=allowed), queries
            ),
        }


def bench_bm25s(docs: list[str], queries: list[str]) -> dict[str, Any]:
    import bm25s

    analyzer = Analyzer()
    start = time.perf_counter()
    retriever = bm25s.BM25(method="lucene", k1=0.9, b=0.4)
    retriever.index([analyzer.tokens(d) for d in docs], show_progress=False)
    build = time.perf_counter() - start

    def run(query: str) -> list[int]:
        scores = retriever.get_scores(analyzer.tokens(query) or ["__none__"])
        top = np.argpartition(-scores, 10)[:10]
        return top[np.argsort(-scores[top])].tolist()

    return {"build_s": build, "search": latencies(run, queries)}


def bench_rank_bm25(docs: list[str], queries: list[str]) -> dict[str, Any]:
    from rank_bm25 import BM25Okapi

    analyzer = Analyzer()
    start = time.perf_counter()
    retriever = BM25Okapi([analyzer.tokens(d) for d in docs], k1=0.9, b=0.4)
    build = time.perf_counter() - start

    def run(query: str) -> list[int]:
        scores = retriever.get_scores(analyzer.tokens(query))
        return np.argsort(-scores)[:10].tolist()

    return {"build_s": build, "search": latencies(run, queries)}


ENGINES = {"ragspine": bench_ragspine, "bm25s": bench_bm25s, "rank_bm25": bench_rank_bm25}


def child(engine: str, n_docs: int, n_queries: int) -> None:
    docs, queries = corpus(n_docs, n_queries)
    base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = ENGINES[engine](docs, queries)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result["peak_rss_mb"] = peak / 1024
    result["rss_over_corpus_mb"] = (peak - base_rss) / 1024
    print(json.dumps(result))


def run_child(engine: str, n_docs: int, n_queries: int) -> dict[str, Any]:
    command = [
        sys.executable,
        __file__,
        "--child",
        engine,
        "--docs",
        str(n_docs),
        "--queries",
        str(n_queries),
    ]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument(
        "--rank-bm25-queries",
        type=int,
        default=40,
        help="rank_bm25 scores every document in Python per query: fewer queries",
    )
    parser.add_argument("--child", choices=sorted(ENGINES))
    args = parser.parse_args()
    if args.child:
        child(args.child, args.docs, args.queries)
        return
    print(
        f"synthetic library: {args.docs} chunks of 40-80 words, Zipf s={ZIPF_EXPONENT}, "
        f"vocabulary {VOCABULARY}; top-10 queries of 3-6 words"
    )
    results = {
        "ragspine": run_child("ragspine", args.docs, args.queries),
        "bm25s": run_child("bm25s", args.docs, args.queries),
        "rank_bm25": run_child("rank_bm25", args.docs, args.rank_bm25_queries),
    }
    print(json.dumps(results, indent=1))
    ours = results["ragspine"]
    print("\nengine      build s  p50 ms  p99 ms   q/s   peak RSS MB  queries")
    for name, r in results.items():
        s = r["search"]
        print(
            f"{name:10} {r['build_s']:8.1f} {s['p50_ms']:7.2f} {s['p99_ms']:7.2f} "
            f"{s['qps']:6.0f} {r['peak_rss_mb']:12.0f} {s['queries']:8d}"
        )
    print(
        f"ragspine masks: public-only p50 {ours['search_public_only']['p50_ms']:.2f} ms, "
        f"allowed 2% p50 {ours['search_allowed_2pct']['p50_ms']:.2f} ms"
    )
    print(
        f"ragspine incremental: add 100 + commit {ours['add_100_commit_s'] * 1000:.0f} ms, "
        f"replace 1 + commit {ours['replace_1_commit_s'] * 1000:.0f} ms, open "
        f"{ours['open_s'] * 1000:.0f} ms, {ours['segments']} segments, "
        f"{ours['disk_mb']:.0f} MB on disk"
    )
    print(
        f"incremental add of 100 chunks: ragspine {ours['add_100_commit_s'] * 1000:.0f} ms; "
        f"bm25s and rank_bm25 have no incremental add and re-index everything "
        f"({results['bm25s']['build_s']:.1f} s / {results['rank_bm25']['build_s']:.1f} s)"
    )
    for name in ("bm25s", "rank_bm25"):
        base = results[name]
        ratio = base["search"]["p50_ms"] / ours["search"]["p50_ms"]
        print(
            f"p50 latency ratio {name}/ragspine: {ratio:.1f}x; build ratio "
            f"{base['build_s'] / ours['build_s']:.2f}x"
        )


if __name__ == "__main__":
    main()
