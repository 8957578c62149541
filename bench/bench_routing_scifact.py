"""Routing quality through the real pipeline: SciFact in one library vs three routed libraries.

SciFact (train qrels) is ingested through ``Workspace.ingest_beir`` twice: once as one library,
once as three libraries made from disjoint thirds of the corpus split by topic (balanced
spherical k-means on TF-IDF, deterministic; see ``topic_thirds``), each named and described by
its most distinctive terms. Both are searched with ``Workspace.search`` in ``bm25`` mode: the
single library by name (the baseline, measured in the same run), the three libraries without
naming any, so the profile router picks them and RRF fuses their hits. Documents are ranked by
their best chunk. Prints nDCG@10 of both, the ratio (target >= 0.95), how many libraries were
searched per query and how often routing fell back to all of them.

    nice -n 10 python bench/bench_routing_scifact.py [--queries N] [--docs N] [--workdir DIR]

``--docs N`` ingests only the first N abstracts and scores the queries judged on them.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from _beir_subset import first_documents
from ragspine.analysis import routing_terms
from ragspine.eval.retrieval import load_qrels, load_queries, ndcg_at_k, rank_documents
from ragspine.narrative.retrieve.profile_router import distinctive_terms
from ragspine.workspace import Workspace

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "scifact"
TOP_K = 30  # chunks per query; documents are ranked by their best chunk, nDCG over the top 10


SparseVector = dict[str, float]


def _unit(vector: SparseVector) -> SparseVector:
    norm = math.sqrt(sum(w * w for w in vector.values())) or 1.0
    return {term: w / norm for term, w in vector.items()}


def _tfidf_vectors(token_lists: list[list[str]]) -> list[SparseVector]:
    """Unit-length TF-IDF vectors; terms found in a single document are left out."""
    df = Counter(term for tokens in token_lists for term in set(tokens))
    count = len(token_lists)
    return [
        _unit(
            {
                term: tf * math.log(count / df[term])
                for term, tf in Counter(tokens).items()
                if df[term] > 1
            }
        )
        for tokens in token_lists
    ]


def _centroid(members: Iterable[SparseVector]) -> SparseVector:
    total: SparseVector = defaultdict(float)
    for vector in members:
        for term, w in vector.items():
            total[term] += w
    return _unit(total)


def topic_thirds(
    docs: list[tuple[str, list[str]]], *, rounds: int = 8, seed: int = 13
) -> list[int]:
    """A group 0-2 per document: balanced spherical k-means (k=3) on TF-IDF; deterministic.

    Each round moves every centroid to the normalised sum of its members, then hands out the
    (document, centroid) pairs from the most similar down, no group taking more than a third.
    """
    vectors = _tfidf_vectors([tokens for _, tokens in docs])
    count = len(vectors)
    rng = random.Random(seed)
    labels = [rng.randrange(3) for _ in range(count)]
    capacity = math.ceil(count / 3)
    for _ in range(rounds):
        centroids = [
            _centroid(v for v, label in zip(vectors, labels, strict=True) if label == group)
            for group in range(3)
        ]
        pairs = sorted(
            (-sum(w * centroid.get(term, 0.0) for term, w in vector.items()), index, group)
            for index, vector in enumerate(vectors)
            for group, centroid in enumerate(centroids)
        )
        labels = [-1] * count
        fill = [0, 0, 0]
        for _, index, group in pairs:
            if labels[index] == -1 and fill[group] < capacity:
                labels[index] = group
                fill[group] += 1
    return labels


def split_corpus(corpus: Path, out: Path) -> dict[str, tuple[Path, str]]:
    """Write three topic thirds of ``corpus`` as BEIR folders; name -> (folder, description)."""
    raw = [json.loads(line) for line in corpus.open(encoding="utf-8") if line.strip()]
    docs = [(d["_id"], routing_terms(f"{d.get('title', '')} {d.get('text', '')}")) for d in raw]
    labels = topic_thirds(docs)
    groups: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for record, label in zip(raw, labels, strict=True):
        groups[label].append(record)
    distinctive = distinctive_terms(
        {
            str(label): [f"{d.get('title', '')} {d.get('text', '')}" for d in groups[label]]
            for label in sorted(groups)
        },
        top_n=40,
    )
    libraries: dict[str, tuple[Path, str]] = {}
    for label in sorted(groups):
        words = distinctive[str(label)]
        name = "scifact-" + "-".join(words[:3])
        folder = out / name
        folder.mkdir(parents=True, exist_ok=True)
        with (folder / "corpus.jsonl").open("w", encoding="utf-8") as lines:
            for record in groups[label]:
                lines.write(json.dumps(record, ensure_ascii=False) + "\n")
        description = f"SciFact abstracts about {', '.join(words[:12])}; also {' '.join(words)}"
        libraries[name] = (folder, description)
    return libraries


def evaluate(
    ws: Workspace, queries: dict[str, str], qrels: dict[str, dict[str, int]], **search: Any
) -> tuple[float, float, int, float]:
    """Mean nDCG@10, libraries searched per query, fallbacks and seconds per query."""
    total = searched = 0.0
    fallbacks = 0
    started = time.perf_counter()
    for qid in qrels:
        result = ws.search(queries[qid], top_k=TOP_K, **search)
        ranked = rank_documents([(s.doc_id, s.score) for s in result.snippets])
        total += ndcg_at_k(ranked, qrels[qid])
        routing = result.trace.routing
        searched += len(routing.libraries) if routing else 0
        fallbacks += bool(routing and routing.fallback)
    count = len(qrels) or 1
    return total / count, searched / count, fallbacks, (time.perf_counter() - started) / count


def run(data: Path, workdir: Path, *, limit: int = 0, docs: int = 0) -> dict[str, Any]:
    """Ingest both layouts under ``workdir`` and return the figures.

    ``limit`` keeps the first queries; ``docs`` the first documents of the corpus (and the
    judgments on them), for a quick run.
    """
    queries = load_queries(data / "queries.jsonl")
    qrels = {q: r for q, r in load_qrels(data / "qrels" / "train.tsv").items() if q in queries}
    corpus = data / "corpus.jsonl"
    if docs:
        corpus, qrels = first_documents(corpus, qrels, docs, workdir / f"first-{docs}")
    if limit:
        qrels = dict(sorted(qrels.items(), key=lambda item: int(item[0]))[:limit])
    started = time.perf_counter()
    single = Workspace.open(workdir / "single")
    if "scifact" not in {lib.library_id for lib in single.libraries()}:
        single.create_library("scifact", description="SciFact scientific abstracts")
    single.ingest_beir(corpus, library="scifact")
    split = Workspace.open(workdir / "split")
    libraries = split_corpus(corpus, workdir / "thirds")
    known = {lib.library_id for lib in split.libraries()}
    for name, (folder, description) in libraries.items():
        if name not in known:
            split.create_library(name, description=description)
        split.ingest_beir(folder, library=name)
    setup = time.perf_counter() - started
    base, _, _, base_latency = evaluate(single, queries, qrels, libraries=["scifact"])
    routed, per_query, fallbacks, routed_latency = evaluate(split, queries, qrels)
    everything, _, _, _ = evaluate(split, queries, qrels, route=False)
    single.close()
    split.close()
    return {
        "queries": len(qrels),
        "setup_seconds": setup,
        "libraries": {name: description for name, (_, description) in libraries.items()},
        "ndcg_single": base,
        "ndcg_routed": routed,
        "ndcg_all_fused": everything,
        "ratio": routed / base if base else 0.0,
        "ratio_all_fused": everything / base if base else 0.0,
        "libraries_per_query": per_query,
        "fallbacks": fallbacks,
        "ms_per_query_single": base_latency * 1000,
        "ms_per_query_routed": routed_latency * 1000,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=0, help="evaluate only the first N queries")
    parser.add_argument(
        "--docs", type=int, default=0, help="ingest only the first N abstracts (a quick run)"
    )
    parser.add_argument("--workdir", type=Path, help="keep the workspaces here (default: temp)")
    args = parser.parse_args()
    if not DATA.exists():
        print(f"SciFact not found at {DATA}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        figures = run(DATA, args.workdir or Path(tmp), limit=args.queries, docs=args.docs)
    print(f"setup (ingest + split) {figures['setup_seconds']:.1f}s; libraries:")
    for name, description in figures["libraries"].items():
        print(f"  {name}: {description[:90]}...")
    print(f"\n{figures['queries']} SciFact train queries, bm25 mode, Workspace.search")
    print(f"  nDCG@10 single library       {figures['ndcg_single']:.4f}  (baseline)")
    print(
        f"  nDCG@10 routed, 3 libraries  {figures['ndcg_routed']:.4f}  "
        f"ratio {figures['ratio']:.3f}  (target >= 0.95)"
    )
    print(
        f"  nDCG@10 all 3 fused (RRF)    {figures['ndcg_all_fused']:.4f}  "
        f"ratio {figures['ratio_all_fused']:.3f}"
    )
    print(
        f"  libraries searched per query {figures['libraries_per_query']:.2f}, "
        f"fallbacks {figures['fallbacks']}"
    )
    print(
        f"  ms/query single {figures['ms_per_query_single']:.1f}, "
        f"routed {figures['ms_per_query_routed']:.1f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
