"""One library of N chunks (default 1,000,000) on one machine: ingest, memory, disk, search.

The text is synthetic but real English: SciFact abstracts are split into sentences and each
chunk is 2-4 sentences drawn with a fixed seed (the same N gives the same library). Each
document has four sections (one chunk each), metadata ``year`` (2015-2024) and ``entity`` (one of
50), and 10% of the documents are ``internal``. The library is ingested through the public
ingest API for prepared sources (``Workspace.library_writer.ingest_sources``, what
``ingest beir`` runs), then searched through ``Workspace.search`` with SciFact claims as
questions. Each phase runs in a fresh process, so each peak RSS is its own.

Vectors: embedding N texts with the real model is out of reach here (about 20 texts/s on two
cores), so the vector figures use the real vector engine
(``ragspine.narrative.index.vector.engine.HnswVectorIndex``, what a library with vectors uses at
this size) on SYNTHETIC clustered unit vectors of the model's dimension (384), with exact numpy
search on the same matrix as the baseline and as the truth for recall@10.

    nice -n 10 python bench/bench_scale.py [--chunks 1000000] [--queries 300] [--workdir DIR]
        [--keep]

Baselines, same run: bm25s (tokenize + index + query, same texts, same questions) and numpy
exact top-10 (``m @ q`` + ``argpartition``).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

SEED = 20261201
SCIFACT = Path(__file__).resolve().parents[2] / "shared" / "data" / "scifact"
LIBRARY = "scale"
SECTIONS = ("Background", "Methods", "Results", "Conclusions")
YEARS = range(2015, 2025)
ENTITIES = tuple(f"e{i:02d}" for i in range(50))
NARROW_FILTER = "entity=e07"
"""About 2% of the chunks."""
BROAD_FILTER = "year>=2022"
"""About 30% of the chunks."""
DIM = 384
TOP_K = 10
RECALL_GOAL = 0.95
EF_SEARCHES = (96, 128, 192, 256, 384, 512)
LEXICAL_P50_GOAL_MS = 20.0
COLD_FILTER_QUERIES = 50

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9])")


def sentences_and_titles(scifact: Path) -> tuple[list[str], list[str]]:
    """SciFact abstract sentences (5 to 80 words) and titles, in corpus order."""
    sentences: list[str] = []
    titles: list[str] = []
    with (scifact / "corpus.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            titles.append(str(record.get("title") or "").strip())
            for sentence in _SENTENCE_END.split(str(record.get("text") or "")):
                if 5 <= len(sentence.split()) <= 80:
                    sentences.append(sentence.strip())
    return sentences, [t for t in titles if t]


def questions(scifact: Path, count: int) -> list[str]:
    """The first ``count`` SciFact claims (repeated when ``count`` exceeds them)."""
    with (scifact / "queries.jsonl").open(encoding="utf-8") as lines:
        claims = [str(json.loads(line)["text"]) for line in lines if line.strip()]
    return [claims[i % len(claims)] for i in range(count)]


def documents(chunks: int, scifact: Path) -> Iterator[dict[str, Any]]:
    """Deterministic synthetic documents holding ``chunks`` chunks in all."""
    sentences, titles = sentences_and_titles(scifact)
    rng = random.Random(SEED)
    made = 0
    number = 0
    while made < chunks:
        parts = min(len(SECTIONS), chunks - made)
        yield {
            "doc_id": f"d{number:07d}",
            "title": rng.choice(titles),
            "sections": [
                (SECTIONS[i], " ".join(rng.choices(sentences, k=rng.randint(2, 4))))
                for i in range(parts)
            ],
            "year": rng.choice(YEARS),
            "entity": rng.choice(ENTITIES),
            "internal": rng.random() < 0.1,
        }
        made += parts
        number += 1


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return 1000 * ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def _disk_mib(folder: Path) -> dict[str, float]:
    sizes = {"sqlite": 0, "indexes": 0, "other": 0}
    for path in folder.rglob("*"):
        if not path.is_file():
            continue
        part = path.relative_to(folder).parts[0]
        kind = "indexes" if part == "indexes" else "sqlite" if ".sqlite" in path.name else "other"
        sizes[kind] += path.stat().st_size
    return {kind: size / 2**20 for kind, size in sizes.items()}


# -- phases, each in its own process ---------------------------------------------------------


def phase_ingest(args: argparse.Namespace) -> dict[str, Any]:
    from ragspine.narrative.ingest.ingestor import BEIR_BATCH, DocumentSource
    from ragspine.narrative.ingest.loaders import Paragraph, Section
    from ragspine.security import Sensitivity
    from ragspine.workspace import Workspace

    def sources() -> Iterator[DocumentSource]:
        for doc in documents(args.chunks, args.scifact):
            yield DocumentSource(
                doc_id=doc["doc_id"],
                title=doc["title"],
                source="synthetic",
                sections=tuple(
                    Section((heading,), (Paragraph(text),)) for heading, text in doc["sections"]
                ),
                content_hash=doc["doc_id"],
                metadata={"year": doc["year"], "entity": doc["entity"]},
                sensitivity=Sensitivity.INTERNAL if doc["internal"] else Sensitivity.PUBLIC,
            )

    ws = Workspace.open(args.workdir / "workspace")
    started = time.perf_counter()
    report = ws.library_writer.ingest_sources(LIBRARY, sources(), batch_size=BEIR_BATCH)
    seconds = time.perf_counter() - started
    from ragspine.security import Principal

    counts = ws.describe_library(LIBRARY, principal=Principal.of("internal"))
    ws.close()
    failed = sum(1 for outcome in report.outcomes if outcome.status.value == "failed")
    return {
        "seconds": seconds,
        "documents": counts["documents"],
        "chunks": counts["chunks"],
        "failed": failed,
        "peak_mib": _peak_mib(),
    }


def phase_search(args: argparse.Namespace) -> dict[str, Any]:
    from ragspine.workspace import Workspace

    qs = questions(args.scifact, args.queries)
    started = time.perf_counter()
    ws = Workspace.open(args.workdir / "workspace")
    ws.search(qs[0])
    first = time.perf_counter() - started
    for question in qs[1:6]:
        ws.search(question)

    def timed(**options: Any) -> list[float]:
        samples = []
        for question in qs:
            t0 = time.perf_counter()
            result = ws.search(question, **options)
            samples.append(time.perf_counter() - t0)
            assert len(result.snippets) <= TOP_K
        return samples

    plain = timed()
    narrow = timed(filters=NARROW_FILTER)
    broad = timed(filters=BROAD_FILTER)
    cold = []  # a different filter each time (more values than the retriever keeps)
    for number, question in enumerate(qs[:COLD_FILTER_QUERIES]):
        t0 = time.perf_counter()
        ws.search(question, filters=f"entity={ENTITIES[number % len(ENTITIES)]}")
        cold.append(time.perf_counter() - t0)
    ws.close()
    return {
        "open_first_s": first,
        "p50_ms": _pct(plain, 0.5),
        "p95_ms": _pct(plain, 0.95),
        "narrow_p50_ms": _pct(narrow, 0.5),
        "broad_p50_ms": _pct(broad, 0.5),
        "cold_p50_ms": _pct(cold, 0.5),
        "peak_mib": _peak_mib(),
    }


def phase_bm25s(args: argparse.Namespace) -> dict[str, Any]:
    import bm25s
    import Stemmer

    texts = [
        f"{doc['title']}\n{text}"
        for doc in documents(args.chunks, args.scifact)
        for _, text in doc["sections"]
    ]
    stemmer = Stemmer.Stemmer("english")
    started = time.perf_counter()
    tokens = bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False)
    engine = bm25s.BM25(k1=0.9, b=0.4)
    engine.index(tokens, show_progress=False)
    seconds = time.perf_counter() - started
    del texts, tokens
    samples = []
    for question in questions(args.scifact, args.queries):
        t0 = time.perf_counter()
        query = bm25s.tokenize(question, stopwords="en", stemmer=stemmer, show_progress=False)
        engine.retrieve(query, k=TOP_K, show_progress=False)
        samples.append(time.perf_counter() - t0)
    return {
        "seconds": seconds,
        "p50_ms": _pct(samples, 0.5),
        "p95_ms": _pct(samples, 0.95),
        "peak_mib": _peak_mib(),
    }


def clustered_unit_vectors(rng: np.random.Generator, n: int, centers: np.ndarray) -> np.ndarray:
    """``n`` unit vectors, each a random center plus noise (topics, like real embeddings)."""
    out = np.empty((n, DIM), dtype=np.float32)
    for start in range(0, n, 100_000):
        size = min(100_000, n - start)
        block = centers[rng.integers(0, len(centers), size)]
        block += rng.standard_normal((size, DIM)).astype(np.float32) * 0.06
        out[start : start + size] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


def phase_vector(args: argparse.Namespace) -> dict[str, Any]:
    from ragspine.narrative.index.vector.engine import HnswVectorIndex

    rng = np.random.default_rng(SEED)
    centers = rng.standard_normal((max(10, args.chunks // 1000), DIM)).astype(np.float32)
    centers /= np.linalg.norm(centers, axis=1, keepdims=True)
    matrix = clustered_unit_vectors(rng, args.chunks, centers)
    queries = clustered_unit_vectors(rng, args.queries, centers)
    levels = (rng.random(args.chunks) < 0.1).astype(np.int8)  # 10% internal, as the text
    folder = args.workdir / "vectors"
    index = HnswVectorIndex(folder, model_id="synthetic", dim=DIM, exact_below=0)
    index.add(np.arange(args.chunks, dtype=np.int64), matrix, levels)
    started = time.perf_counter()
    index.commit(1)
    build_s = time.perf_counter() - started
    del index
    index = HnswVectorIndex(folder, model_id="synthetic", dim=DIM, exact_below=0)

    def baseline(q: np.ndarray) -> set[int]:
        scores = matrix @ q
        top = np.argpartition(-scores, TOP_K)[:TOP_K]
        return {int(k) for k in top}

    def p50(fn: Callable[[np.ndarray], object]) -> float:
        fn(queries[0])
        samples = []
        for q in queries:
            t0 = time.perf_counter()
            fn(q)
            samples.append(time.perf_counter() - t0)
        return 1000 * statistics.median(samples)

    truth = [baseline(q) for q in queries]
    sweep = []
    for ef in EF_SEARCHES:
        index.ef_search = ef
        hits = sum(
            len(t & {k for k, _ in index.search(q, TOP_K, max_level=1)})
            for q, t in zip(queries, truth, strict=True)
        )
        recall = hits / (TOP_K * len(queries))
        sweep.append({"ef": ef, "recall": recall, "p50_ms": p50(_searcher(index, 1))})
        if recall >= RECALL_GOAL:
            break
    return {
        "build_s": build_s,
        "numpy_p50_ms": p50(baseline),
        "public_p50_ms": p50(_searcher(index, 0)),
        "sweep": sweep,
        "disk_mib": sum(p.stat().st_size for p in folder.iterdir()) / 2**20,
        "peak_mib": _peak_mib(),
    }


def _searcher(index: Any, max_level: int) -> Callable[[np.ndarray], object]:
    return lambda q: index.search(q, TOP_K, max_level=max_level)


PHASES: dict[str, Callable[[argparse.Namespace], dict[str, Any]]] = {
    "ingest": phase_ingest,
    "search": phase_search,
    "bm25s": phase_bm25s,
    "vector": phase_vector,
}


# -- the driver ------------------------------------------------------------------------------


def run_phase(name: str, args: argparse.Namespace) -> dict[str, Any] | None:
    command = [sys.executable, __file__, "--phase", name, "--chunks", str(args.chunks)]
    command += ["--queries", str(args.queries), "--workdir", str(args.workdir)]
    command += ["--scifact", str(args.scifact)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        print(f"{name}: failed\n{done.stderr[-3000:]}")
        return None
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def has_module(name: str) -> bool:
    from importlib.util import find_spec

    return find_spec(name) is not None


def report(args: argparse.Namespace) -> None:
    ingest = run_phase("ingest", args)
    if ingest is None:
        sys.exit(1)
    disk = _disk_mib(args.workdir / "workspace")
    search = run_phase("search", args)
    bm25 = run_phase("bm25s", args) if has_module("bm25s") else None
    vector = run_phase("vector", args) if has_module("faiss") else None

    chunks = ingest["chunks"]
    print(f"library: {ingest['documents']:,} documents, {chunks:,} chunks (asked {args.chunks:,})")
    rate = chunks / ingest["seconds"]
    line = f"ingest: {ingest['seconds']:.1f} s, {rate:,.0f} chunks/s"
    if bm25:
        line += (
            f"  | bm25s tokenize + index (baseline) {bm25['seconds']:.1f} s, "
            f"{chunks / bm25['seconds']:,.0f} chunks/s, "
            f"ratio {ingest['seconds'] / bm25['seconds']:.1f}x"
        )
    print(line)
    line = f"peak RSS ingest: {ingest['peak_mib']:,.0f} MiB"
    if bm25:
        line += f"  | bm25s build + query process (baseline) {bm25['peak_mib']:,.0f} MiB"
    print(line)
    total = sum(disk.values())
    print(
        f"disk: {total:,.0f} MiB (SQLite {disk['sqlite']:,.0f}, index files {disk['indexes']:,.0f},"
        f" other {disk['other']:,.0f}); {1024 * 1024 * total / chunks:,.0f} bytes/chunk"
    )
    if search:
        goal = "meets" if search["p50_ms"] < LEXICAL_P50_GOAL_MS else "MISSES"
        print(
            f"search (Workspace.search, bm25 mode, top-10, {args.queries} SciFact claims): "
            f"p50 {search['p50_ms']:.2f} ms, p95 {search['p95_ms']:.2f} ms "
            f"(goal p50 < {LEXICAL_P50_GOAL_MS:.0f} ms at 1M chunks: {goal} at {chunks:,})"
        )
        if bm25:
            print(
                f"  bm25s query (baseline): p50 {bm25['p50_ms']:.2f} ms, "
                f"p95 {bm25['p95_ms']:.2f} ms; "
                f"ratio ragspine/bm25s p50 {search['p50_ms'] / bm25['p50_ms']:.2f}x"
            )
        print(
            f"filtered search p50, the same filter each time: {NARROW_FILTER} (~2%) "
            f"{search['narrow_p50_ms']:.2f} ms, {BROAD_FILTER} (~30%) "
            f"{search['broad_p50_ms']:.2f} ms; a new filter each time (entity=eNN, chosen in "
            f"SQL) {search['cold_p50_ms']:.2f} ms"
        )
        print(
            f"search process: open + first search {search['open_first_s']:.1f} s, "
            f"peak RSS {search['peak_mib']:,.0f} MiB"
        )
    if vector:
        print(
            f"vectors (SYNTHETIC clustered unit vectors, {DIM}-d; real engine, HNSW M=32 "
            f"efConstruction=80): build + commit {vector['build_s']:.1f} s, "
            f"{vector['disk_mib']:,.0f} MiB on disk, peak RSS {vector['peak_mib']:,.0f} MiB"
        )
        print(f"  numpy exact top-10 p50 (baseline): {vector['numpy_p50_ms']:.2f} ms")
        for step in vector["sweep"]:
            print(
                f"  HNSW top-10 p50 efSearch={step['ef']:<4} {step['p50_ms']:.2f} ms, "
                f"recall@10 {step['recall']:.3f}, speed-up over numpy "
                f"{vector['numpy_p50_ms'] / step['p50_ms']:.1f}x"
            )
        best = vector["sweep"][-1]
        verdict = "meets" if best["recall"] >= RECALL_GOAL else "MISSES"
        print(
            f"  vector top-10 p50 at recall@10 >= {RECALL_GOAL}: {best['p50_ms']:.2f} ms "
            f"(efSearch {best['ef']}: {verdict})"
        )
        print(
            f"  public asker (10% of vectors internal, so answered exactly, contract 11): "
            f"p50 {vector['public_p50_ms']:.2f} ms"
        )
    elif not has_module("faiss"):
        print("vectors: skipped (faiss not installed: pip install -e '.[ann]')")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--workdir", type=Path, help="where the library is built (default: temp)")
    parser.add_argument("--keep", action="store_true", help="keep the workdir afterwards")
    parser.add_argument("--scifact", type=Path, default=SCIFACT, help=argparse.SUPPRESS)
    parser.add_argument("--phase", choices=sorted(PHASES), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        print(json.dumps(PHASES[args.phase](args)))
        return
    made = args.workdir is None
    args.workdir = Path(tempfile.mkdtemp(prefix="bench-scale-")) if made else args.workdir
    if (args.workdir / "workspace").exists():
        sys.exit(f"{args.workdir / 'workspace'} exists: give an empty --workdir")
    args.workdir.mkdir(parents=True, exist_ok=True)
    try:
        report(args)
    finally:
        if args.keep:
            print(f"kept {args.workdir}")
        elif made:
            shutil.rmtree(args.workdir, ignore_errors=True)
        else:
            for name in ("workspace", "vectors"):
                shutil.rmtree(args.workdir / name, ignore_errors=True)


if __name__ == "__main__":
    main()
