"""Vector query latency (p50) for exact and HNSW indexes on random 384-d unit vectors.

Run: nice -n 10 python bench/bench_vector.py [--sizes 100000,1000000] [--queries 200]
Baseline, same run: a plain numpy ``m @ q`` + ``argpartition`` top-10 over the same matrix.
Also prints HNSW recall@10 against exact search (random vectors are a hard case for graphs;
see tests/narrative/test_vector.py for recall on real embeddings).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

import numpy as np

from ragspine.narrative.index.vector.engine import ExactVectorIndex, HnswVectorIndex

DIM = 384
TOP_K = 10


def unit_rows(rng: np.random.Generator, n: int) -> np.ndarray:
    out = np.empty((n, DIM), dtype=np.float32)
    for start in range(0, n, 100_000):
        block = rng.standard_normal((min(100_000, n - start), DIM)).astype(np.float32)
        out[start : start + len(block)] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


def p50_ms(fn, queries: np.ndarray) -> float:  # type: ignore[no-untyped-def]
    times = []
    for q in queries:
        start = time.perf_counter()
        fn(q)
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def run(n: int, queries: np.ndarray, rng: np.random.Generator, hnsw: bool) -> None:
    matrix = unit_rows(rng, n)
    keys = np.arange(n, dtype=np.int64)
    levels = np.zeros(n, dtype=np.int8)

    def baseline(q: np.ndarray) -> np.ndarray:
        scores = matrix @ q
        top = np.argpartition(-scores, TOP_K)[:TOP_K]
        return top[np.argsort(-scores[top])]

    with tempfile.TemporaryDirectory() as folder:
        exact = ExactVectorIndex(folder + "/exact", model_id="bench", dim=DIM)
        exact.add(keys, matrix, levels)
        start = time.perf_counter()
        exact.commit(1)
        commit_s = time.perf_counter() - start
        exact = ExactVectorIndex(folder + "/exact", model_id="bench", dim=DIM)  # memory-mapped
        exact.search(queries[0], TOP_K, max_level=0)  # page the matrix in
        base_ms = p50_ms(baseline, queries)
        exact_ms = p50_ms(lambda q: exact.search(q, TOP_K, max_level=0), queries)
        allowed = keys[::100]
        filt_ms = p50_ms(lambda q: exact.search(q, TOP_K, max_level=0, allowed=allowed), queries)
        print(f"n={n:>9,}  numpy m@q+argpartition p50 {base_ms:7.2f} ms (baseline)")
        print(
            f"{'':13}exact index p50            {exact_ms:7.2f} ms  "
            f"ratio {exact_ms / base_ms:.2f}x  (commit {commit_s:.1f} s)"
        )
        print(
            f"{'':13}exact, 1% allowed filter   {filt_ms:7.2f} ms  ratio {filt_ms / base_ms:.2f}x"
        )
        if not hnsw:
            return
        ann = HnswVectorIndex(folder + "/ann", model_id="bench", dim=DIM, exact_below=0)
        ann.add(keys, matrix, levels)
        start = time.perf_counter()
        ann._build_graph()
        build_s = time.perf_counter() - start
        ann.search(queries[0], TOP_K, max_level=0)
        ann_ms = p50_ms(lambda q: ann.search(q, TOP_K, max_level=0), queries)
        hits = 0
        for q in queries:
            truth = {k for k, _ in exact.search(q, TOP_K, max_level=0)}
            hits += len(truth & {k for k, _ in ann.search(q, TOP_K, max_level=0)})
        recall = hits / (TOP_K * len(queries))
        print(
            f"{'':13}HNSW p50 (M=32, efSearch=96) {ann_ms:5.2f} ms  "
            f"ratio {ann_ms / base_ms:.3f}x  speed-up {base_ms / ann_ms:.0f}x  "
            f"recall@10 {recall:.3f}  (build {build_s:.0f} s)"
        )
        for ef in (256, 1024):
            ann.ef_search = ef
            ef_ms = p50_ms(lambda q: ann.search(q, TOP_K, max_level=0), queries)
            hits = 0
            for q in queries:
                truth = {k for k, _ in exact.search(q, TOP_K, max_level=0)}
                hits += len(truth & {k for k, _ in ann.search(q, TOP_K, max_level=0)})
            print(
                f"{'':13}HNSW p50 (efSearch={ef:<4})    {ef_ms:5.2f} ms  "
                f"ratio {ef_ms / base_ms:.3f}x  recall@10 {hits / (TOP_K * len(queries)):.3f}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--hnsw-max", type=int, default=1_000_000, help="skip HNSW above this")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    queries = unit_rows(rng, args.queries)
    for n in (int(s) for s in args.sizes.split(",")):
        run(n, queries, rng, hnsw=n <= args.hnsw_max)


if __name__ == "__main__":
    main()
