"""Routing quality on SciFact: routed multi-index search vs one library holding everything.

The corpus is split into three disjoint, equal thirds by topic (balanced spherical k-means on
TF-IDF, deterministic), each library described by its most distinctive terms
(``distinctive_terms``). Every library is searched with the same plain BM25 (k1=0.9, b=0.4,
title+text); the baseline is one BM25 over the whole corpus, measured in the same run. Prints
nDCG@10 for the baseline, for all three libraries fused by RRF without routing, and for routed
search, with ratios, plus how often routing kept the library of a relevant document.

    python bench/bench_routing.py [--queries N] [--split topic|random]
"""

from __future__ import annotations

import argparse
import heapq
import json
import math
import random
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

from ragspine.narrative.library_profile import LibraryProfile, ProfileRouter, distinctive_terms
from ragspine.narrative.multi_index import MultiIndexRetriever
from ragspine.narrative.routing import LibraryRouter
from ragspine.narrative.snippets import Hit
from ragspine.narrative.terms import terms

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "scifact"


class BM25:
    """Plain BM25 over pre-tokenised documents (a reference, not the project's index)."""

    def __init__(self, docs: list[tuple[str, list[str]]], k1: float = 0.9, b: float = 0.4) -> None:
        self.ids = [doc_id for doc_id, _ in docs]
        self.postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        lengths = []
        for index, (_, tokens) in enumerate(docs):
            lengths.append(len(tokens))
            for term, tf in Counter(tokens).items():
                self.postings[term].append((index, tf))
        avg = sum(lengths) / max(len(lengths), 1)
        self.norms = [k1 * (1 - b + b * n / avg) for n in lengths]
        count = len(docs)
        self.idf = {
            t: math.log(1 + (count - len(p) + 0.5) / (len(p) + 0.5))
            for t, p in self.postings.items()
        }
        self.k1 = k1

    def search(self, tokens: list[str], top_k: int) -> list[tuple[str, float]]:
        scores: dict[int, float] = defaultdict(float)
        for term in set(tokens):
            idf = self.idf.get(term)
            if idf is None:
                continue
            for index, tf in self.postings[term]:
                scores[index] += idf * tf * (self.k1 + 1) / (tf + self.norms[index])
        best = heapq.nsmallest(
            top_k, scores.items(), key=lambda item: (-item[1], self.ids[item[0]])
        )
        return [(self.ids[i], s) for i, s in best]


def ndcg10(ranked: list[str], relevant: dict[str, int]) -> float:
    dcg = sum(relevant.get(d, 0) / math.log2(r + 2) for r, d in enumerate(ranked[:10]))
    ideal = sorted(relevant.values(), reverse=True)[:10]
    idcg = sum(g / math.log2(r + 2) for r, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def topic_thirds(docs: list[tuple[str, list[str]]], rounds: int = 8) -> list[int]:
    """Balanced spherical k-means (k=3) on TF-IDF; deterministic."""
    df = Counter(t for _, tokens in docs for t in set(tokens))
    n = len(docs)
    vectors = []
    for _, tokens in docs:
        weights = {t: tf * math.log(n / df[t]) for t, tf in Counter(tokens).items() if df[t] > 1}
        norm = math.sqrt(sum(w * w for w in weights.values())) or 1.0
        vectors.append({t: w / norm for t, w in weights.items()})
    rng = random.Random(13)
    labels = [rng.randrange(3) for _ in range(n)]
    capacity = math.ceil(n / 3)
    for _ in range(rounds):
        centroids: list[dict[str, float]] = [defaultdict(float) for _ in range(3)]
        for vector, label in zip(vectors, labels, strict=True):
            for t, w in vector.items():
                centroids[label][t] += w
        for c in centroids:
            norm = math.sqrt(sum(w * w for w in c.values())) or 1.0
            for t in c:
                c[t] /= norm
        sims = [[sum(w * c.get(t, 0.0) for t, w in v.items()) for c in centroids] for v in vectors]
        pairs = sorted((-sims[i][c], i, c) for i in range(n) for c in range(3))
        labels = [-1] * n
        fill = [0, 0, 0]
        for _, i, c in pairs:
            if labels[i] == -1 and fill[c] < capacity:
                labels[i] = c
                fill[c] += 1
    return labels


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=0, help="evaluate only the first N queries")
    parser.add_argument("--split", choices=["topic", "random"], default="topic")
    parser.add_argument("--top-n", type=int, default=40, help="description terms per library")
    parser.add_argument("--threshold", type=float, default=0.5, help="LibraryRouter threshold")
    parser.add_argument("--margin", type=float, default=2.0, help="ProfileRouter margin")
    args = parser.parse_args()
    if not DATA.exists():
        print(f"SciFact not found at {DATA}", file=sys.stderr)
        return 1

    started = time.perf_counter()
    raw = [json.loads(line) for line in (DATA / "corpus.jsonl").open(encoding="utf-8")]
    docs = [(d["_id"], terms(f"{d['title']} {d['text']}")) for d in raw]
    texts = {d["_id"]: f"{d['title']} {d['text']}" for d in raw}
    queries = {
        q["_id"]: q["text"]
        for q in map(json.loads, (DATA / "queries.jsonl").open(encoding="utf-8"))
    }
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    for line in (DATA / "qrels" / "train.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        qid, did, score = line.split("\t")
        qrels[qid][did] = int(score)
    qids = sorted(qrels, key=int)
    if args.queries:
        qids = qids[: args.queries]

    if args.split == "topic":
        labels = topic_thirds(docs)
    else:
        labels = [random.Random(f"{doc_id}").randrange(3) for doc_id, _ in docs]
    groups: dict[int, list[tuple[str, list[str]]]] = defaultdict(list)
    for doc, label in zip(docs, labels, strict=True):
        groups[label].append(doc)
    profile = distinctive_terms(
        {str(label): [texts[d] for d, _ in groups[label]] for label in sorted(groups)},
        top_n=args.top_n,
    )
    names = {str(label): "-".join(profile[str(label)][:3]) for label in sorted(groups)}
    libraries = {names[str(label)]: BM25(groups[label]) for label in sorted(groups)}
    library_of = {d: names[str(label)] for (d, _), label in zip(docs, labels, strict=True)}
    descriptions = {names[k]: " ".join(v) for k, v in profile.items()}
    single = BM25(docs)
    print(f"setup {time.perf_counter() - started:.1f}s; libraries:")
    for name, bm25 in libraries.items():
        print(f"  {name:40s} {len(bm25.ids):5d} docs: {descriptions[name][:70]}...")

    def search_one(library_id: str, question: str, top_k: int) -> list[Hit]:
        found = libraries[library_id].search(terms(question), top_k)
        return [Hit(doc_id, score, library_id) for doc_id, score in found]

    registered = list(libraries)
    profiles = [
        LibraryProfile.from_texts(names[str(label)], (texts[d] for d, _ in groups[label]))
        for label in sorted(groups)
    ]
    retrievers = {
        "all-rrf": MultiIndexRetriever(search_one, registered),
        "describe": MultiIndexRetriever(
            search_one,
            registered,
            router=LibraryRouter(descriptions, relative_threshold=args.threshold),
        ),
        "profile": MultiIndexRetriever(
            search_one, registered, router=ProfileRouter(profiles, margin=args.margin)
        ),
    }
    totals = dict.fromkeys(["single", *retrievers], 0.0)
    kept = dict.fromkeys(retrievers, 0)
    searched = dict.fromkeys(retrievers, 0)
    fallbacks = dict.fromkeys(retrievers, 0)
    started = time.perf_counter()
    for qid in qids:
        question = queries[qid]
        relevant = qrels[qid]
        totals["single"] += ndcg10([d for d, _ in single.search(terms(question), 10)], relevant)
        for name, retriever in retrievers.items():
            result = retriever.retrieve(question)
            totals[name] += ndcg10([h.chunk_id for h in result.hits], relevant)
            searched[name] += len(result.decision.libraries)
            fallbacks[name] += result.decision.fallback
            kept[name] += all(library_of[d] in result.decision.libraries for d in relevant)
    count = len(qids)
    base = totals["single"] / count
    print(f"\n{count} queries ({args.split} thirds), {time.perf_counter() - started:.1f}s")
    print(f"  nDCG@10 single   {base:.4f}  (baseline: one BM25 over the whole corpus)")
    for name in retrievers:
        score = totals[name] / count
        print(
            f"  nDCG@10 {name:8s} {score:.4f}  ratio {score / base:.3f}  "
            f"libraries/query {searched[name] / count:.2f}  "
            f"relevant library kept {kept[name] / count:.1%}  fallbacks {fallbacks[name]}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
