"""Search latency over a 100k-chunk synthetic library, through ``Workspace.search``.

Measures build time, p50/p99 latency (analysis, index, security screen and snippet construction
included) and peak memory, with bm25s and rank_bm25 on the same corpus and queries as baselines.
Each engine runs in its own process so peak RSS is its own.

    nice -n 10 python bench/bench_search_latency.py [--chunks 100000] [--queries 500]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time

SEED = 20261130
SYLLABLES = [a + b for a in "bcdfghklmnprstvz" for b in ("a", "e", "i", "o", "u", "ai", "ou")]


def vocabulary(size: int) -> list[str]:
    """Distinct pronounceable pseudo-words (deterministic)."""
    rng = random.Random(SEED)
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def corpus(chunks: int, vocab_size: int = 50_000) -> tuple[list[str], list[str], list[int]]:
    """Titles, texts (Zipf word frequencies, ~60 words) and sensitivity levels (10% non-public)."""
    vocab = vocabulary(vocab_size)
    rng = random.Random(SEED + 1)
    cumulative = []
    total = 0.0
    for rank in range(1, vocab_size + 1):
        total += 1.0 / rank**1.07
        cumulative.append(total)
    titles, texts, levels = [], [], []
    for _ in range(chunks):
        titles.append(" ".join(rng.choices(vocab, cum_weights=cumulative, k=3)))
        texts.append(" ".join(rng.choices(vocab, cum_weights=cumulative, k=rng.randint(40, 80))))
        levels.append(rng.choice((0,) * 9 + (2,)))
    return titles, texts, levels


def queries(count: int) -> list[str]:
    """Two to four mid-frequency words, sometimes with a frequent one."""
    vocab = vocabulary(50_000)
    rng = random.Random(SEED + 2)
    result = []
    for _ in range(count):
        words = [vocab[rng.randint(50, 5000)] for _ in range(rng.randint(2, 4))]
        if rng.random() < 0.3:
            words.append(vocab[rng.randint(0, 49)])
        result.append(" ".join(words))
    return result


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": statistics.median(ordered) * 1000,
        "p99_ms": ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000,
    }


def run_ours(chunks: int, query_count: int) -> dict[str, float]:
    from ragspine.narrative.ingest.ingestor import DocumentSource
    from ragspine.narrative.ingest.loaders import Paragraph, Section
    from ragspine.workspace import Workspace

    titles, texts, levels = corpus(chunks)
    from ragspine.security import Sensitivity

    with tempfile.TemporaryDirectory() as folder:
        ws = Workspace.open(folder)
        started = time.perf_counter()
        sources = (
            DocumentSource(
                doc_id=f"d{i}",
                title=titles[i],
                source="synthetic",
                sections=(Section((), (Paragraph(texts[i]),)),),
                content_hash=str(i),
                sensitivity=Sensitivity(levels[i]),
            )
            for i in range(chunks)
        )
        ws.library_writer.ingest_sources("synthetic", sources, batch_size=5000)
        ws.search("warm up", top_k=10)
        build = time.perf_counter() - started
        qs = queries(query_count)
        samples = []
        for question in qs:
            t0 = time.perf_counter()
            result = ws.search(question, top_k=10)
            samples.append(time.perf_counter() - t0)
            assert len(result.snippets) <= 10
        return {"build_s": build, **_percentiles(samples), "queries": len(qs)}


def run_bm25s(chunks: int, query_count: int) -> dict[str, float]:
    import bm25s
    import Stemmer

    titles, texts, _ = corpus(chunks)
    stemmer = Stemmer.Stemmer("english")
    started = time.perf_counter()
    tokens = bm25s.tokenize(
        [f"{t}\n{x}" for t, x in zip(titles, texts, strict=True)],
        stopwords="en",
        stemmer=stemmer,
        show_progress=False,
    )
    engine = bm25s.BM25(k1=0.9, b=0.4)
    engine.index(tokens, show_progress=False)
    build = time.perf_counter() - started
    samples = []
    for question in queries(query_count):
        t0 = time.perf_counter()
        query_tokens = bm25s.tokenize(
            question, stopwords="en", stemmer=stemmer, show_progress=False
        )
        engine.retrieve(query_tokens, k=10, show_progress=False)
        samples.append(time.perf_counter() - t0)
    return {"build_s": build, **_percentiles(samples), "queries": len(samples)}


def run_rank_bm25(chunks: int, query_count: int) -> dict[str, float]:
    import heapq

    from rank_bm25 import BM25Okapi

    titles, texts, _ = corpus(chunks)
    started = time.perf_counter()
    engine = BM25Okapi(
        [f"{t} {x}".lower().split() for t, x in zip(titles, texts, strict=True)], k1=0.9, b=0.4
    )
    build = time.perf_counter() - started
    samples = []
    for question in queries(query_count)[: max(10, query_count // 25)]:
        t0 = time.perf_counter()
        scores = engine.get_scores(question.lower().split())
        heapq.nlargest(10, range(len(scores)), key=scores.__getitem__)
        samples.append(time.perf_counter() - t0)
    return {"build_s": build, **_percentiles(samples), "queries": len(samples)}


ENGINES = {"ragspine": run_ours, "bm25s": run_bm25s, "rank_bm25": run_rank_bm25}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--engine", choices=sorted(ENGINES), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.engine:
        figures = ENGINES[args.engine](args.chunks, args.queries)
        figures["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps(figures))
        return
    results = {}
    for name in ENGINES:
        command = [sys.executable, __file__, "--engine", name, "--chunks", str(args.chunks)]
        command += ["--queries", str(args.queries)]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            print(f"{name}: failed\n{done.stderr[-2000:]}")
            continue
        results[name] = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"{args.chunks} chunks, top-10, k1=0.9 b=0.4")
    print(
        f"{'engine':<10} {'build s':>9} {'p50 ms':>8} {'p99 ms':>8} {'peak MiB':>9} {'queries':>8}"
    )
    for name, fig in results.items():
        print(
            f"{name:<10} {fig['build_s']:>9.1f} {fig['p50_ms']:>8.2f} {fig['p99_ms']:>8.2f} "
            f"{fig['peak_rss_mib']:>9.0f} {fig['queries']:>8.0f}"
        )
    ours = results.get("ragspine")
    for name in ("bm25s", "rank_bm25"):
        if ours and name in results:
            ratio = results[name]["p50_ms"] / ours["p50_ms"]
            print(f"p50 speed-up of ragspine over {name}: {ratio:.2f}x")
    if ours:
        verdict = "meets" if ours["p50_ms"] < 5 else "MISSES"
        print(f"target p50 < 5 ms at {args.chunks} chunks: {verdict} ({ours['p50_ms']:.2f} ms)")


if __name__ == "__main__":
    main()
