"""The PostgreSQL backend's search beside the embedded engine, on SciFact, in one run.

Prints: the embedded SciFact ingest time and the time to write the same chunks' BM25 postings to
PostgreSQL; lexical search p50 / p99 (depth 30 chunks, public asker) for the embedded engine and
PostgreSQL at 1 and 8 concurrent clients, alternating rounds; nDCG@10 (train qrels) of both;
PostgreSQL's own full-text ranking (``ts_rank_cd`` over an English ``tsvector`` of the same
texts, GIN index, query words OR-ed) with its nDCG@10 and p50; HNSW recall@10 against exact
search over SciFact vectors (``--embed N``: the MiniLM vectors of the first N chunks, embedded
now; ``--vectors FILE.npy``: a float32 matrix, e.g. from an earlier run; otherwise clustered
random unit vectors, a harder case, said in the output); and the
fact look-up p50 of both fact stores. Then the same through whole workspaces (``Workspace``, a
folder and a ``postgresql://`` URL): SciFact ``ingest_beir`` time (chunks, routing counts,
relations, postings), ``Workspace.search`` (bm25, top 10) p50 / p99 at 1 and 8 clients, and
``Workspace.query_metric`` p50 over the ``bench_graph`` fact tree (``--facts``).

The server is ``RAGSPINE_TEST_POSTGRES_URL`` (``--url``) or one that ``pgserver`` starts in a
temporary folder. Everything is written to a schema of its own, dropped at the end.

    nice -n 10 python bench/bench_postgres.py [--queries 809] [--vectors FILE.npy | --embed 7683]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import numpy as np

from _beir_subset import first_documents
from ragspine.eval.retrieval import evaluate_rankings, load_qrels, load_queries, rank_documents
from ragspine.narrative.index.lexical.library_indexes import IndexFields
from ragspine.security import Principal, Sensitivity
from ragspine.stores.postgres.database import Database
from ragspine.stores.postgres.facts import PostgresFactStore
from ragspine.stores.postgres.lexical import POSTING, PostgresLexicalIndexes
from ragspine.stores.postgres.migrate import migrate
from ragspine.stores.postgres.vectors import PostgresVectorIndex, create_hnsw_index
from ragspine.stores.sqlite.facts import SQLiteFactStore
from ragspine.structured.facts import Fact, FactKey, Scale
from ragspine.workspace import Workspace

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "scifact"
LIBRARY = "scifact"
DEPTH = 30
FIELDS = IndexFields.TITLE_TEXT
Search = Callable[[str], list[tuple[int, float]]]


def server_url(given: str | None, folder: Path) -> tuple[str, Any]:
    """A server URL, and the pgserver handle when this run started one."""
    url = given or os.environ.get("RAGSPINE_TEST_POSTGRES_URL")
    if url:
        return url, None
    import pgserver  # type: ignore[import-not-found]

    handle = pgserver.get_server(folder, cleanup_mode="stop")
    return handle.get_uri(), handle


def with_schema(url: str, schema: str) -> str:
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k != "options"]
    query.append(("options", f"-csearch_path={schema},public"))
    return urlunsplit(parts._replace(query=urlencode(query)))


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def timed(search: Search, queries: Sequence[str], clients: int) -> tuple[list[float], float]:
    """Per-query latencies (ms) of ``queries`` run by ``clients`` threads, and queries/s."""

    def one(query: str) -> float:
        started = time.perf_counter()
        search(query)
        return (time.perf_counter() - started) * 1000

    started = time.perf_counter()
    if clients == 1:
        latencies = [one(q) for q in queries]
    else:
        with ThreadPoolExecutor(clients) as pool:
            latencies = list(pool.map(one, queries))
    return latencies, len(queries) / (time.perf_counter() - started)


def rankings(search: Search, chunks: Any, queries: dict[str, str]) -> dict[str, list[str]]:
    out = {}
    for qid, text in queries.items():
        hits = search(text)
        ids = chunks.chunk_ids([key for key, _ in hits])
        out[qid] = rank_documents([(ids[key].doc_id, score) for key, score in hits])[:10]
    return out


def ts_rank_cd_search(db: Database) -> Search:
    sql = (
        "SELECT key, ts_rank_cd(tsv, q) AS score FROM scifact_tsv, "
        "(SELECT replace(plainto_tsquery('english', %s)::text, '&', '|')::tsquery AS q) AS x "
        "WHERE tsv @@ q ORDER BY score DESC, key LIMIT %s"
    )

    def search(query: str) -> list[tuple[int, float]]:
        with db.connection() as conn:
            if not conn.execute("SELECT plainto_tsquery('english', %s) <> ''", (query,)).fetchone()[
                0
            ]:
                return []
            return [(int(k), float(s)) for k, s in conn.execute(sql, (query, DEPTH)).fetchall()]

    return search


def build_tsvectors(db: Database, chunks: Any) -> float:
    started = time.perf_counter()
    with db.transaction() as conn:
        conn.execute("CREATE TABLE scifact_tsv (key bigint PRIMARY KEY, tsv tsvector NOT NULL)")
        conn.execute("CREATE TEMP TABLE raw_text (key bigint, body text) ON COMMIT DROP")
        with conn.cursor() as cur, cur.copy("COPY raw_text (key, body) FROM STDIN") as copy:
            for row in chunks.index_rows(LIBRARY):
                copy.write_row((row.key, f"{row.title}\n{row.text}"))
        conn.execute(
            "INSERT INTO scifact_tsv SELECT key, to_tsvector('english', body) FROM raw_text"
        )
        conn.execute("CREATE INDEX scifact_tsv_gin ON scifact_tsv USING gin (tsv)")
    return time.perf_counter() - started


def load_vectors(path: str | None, rows: int) -> tuple[np.ndarray, str]:
    if path:
        matrix = np.load(path, allow_pickle=False).astype(np.float32)
        return matrix, f"{Path(path).name} ({matrix.shape[0]} x {matrix.shape[1]})"
    rng = np.random.default_rng(7)
    centres = rng.standard_normal((200, 384))
    matrix = centres[rng.integers(200, size=rows)] + 0.8 * rng.standard_normal((rows, 384))
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix.astype(np.float32), f"clustered random unit vectors ({rows} x 384)"


def query_vectors(
    matrix: np.ndarray, queries: Sequence[str], count: int, real: bool
) -> tuple[np.ndarray, str]:
    """The MiniLM vectors of ``count`` SciFact queries for real (MiniLM) corpus vectors when
    the model is installed; otherwise noisy copies of corpus rows."""
    if real and matrix.shape[1] == 384:
        try:
            from ragspine.narrative.index.embed.model import load_embedder

            return load_embedder().embed(list(queries[:count])), "SciFact queries (MiniLM)"
        except Exception as exc:  # the onnx extra is optional
            print(f"  (query embedding unavailable: {exc})")
    rng = np.random.default_rng(8)
    picked = matrix[rng.integers(len(matrix), size=count)]
    noisy = picked + 0.3 * rng.standard_normal(picked.shape).astype(np.float32)
    return noisy / np.linalg.norm(noisy, axis=1, keepdims=True), "noisy corpus rows"


def hnsw_recall(db: Database, matrix: np.ndarray, queries: np.ndarray) -> dict[str, float]:
    dim = matrix.shape[1]
    started = time.perf_counter()
    with db.transaction() as conn:
        conn.execute("INSERT INTO vector_libraries VALUES ('vectors', 'bench', %s, 1)", (dim,))
        with (
            conn.cursor() as cur,
            cur.copy("COPY chunk_vectors (library, key, level, embedding) FROM STDIN") as copy,
        ):
            for key, row in enumerate(matrix):
                copy.write_row(
                    ("vectors", key, key % 3, "[" + ",".join(map(repr, row.tolist())) + "]")
                )
    loaded = time.perf_counter() - started
    started = time.perf_counter()
    with db.transaction() as conn:
        create_hnsw_index(conn, "vectors", dim)
        conn.execute("ANALYZE chunk_vectors")
    built = time.perf_counter() - started
    index = PostgresVectorIndex(db, "vectors", "bench", dim, 1)
    found = total = 0
    hnsw_ms, exact_ms, filtered_full = [], [], 0
    for q in queries:
        t0 = time.perf_counter()
        exact = index.search(q, 10, max_level=2, exact=True)
        t1 = time.perf_counter()
        approx = index.search(q, 10, max_level=2)
        t2 = time.perf_counter()
        exact_ms.append((t1 - t0) * 1000)
        hnsw_ms.append((t2 - t1) * 1000)
        found += len({k for k, _ in exact} & {k for k, _ in approx})
        total += len(exact)
        filtered_full += len(index.search(q, 10, max_level=0)) == 10
    return {
        "recall": found / total,
        "load_s": loaded,
        "build_s": built,
        "hnsw_p50": statistics.median(hnsw_ms),
        "exact_p50": statistics.median(exact_ms),
        "level_filter_full": filtered_full / len(queries),
    }


def fact_lookups(db: Database, folder: Path, count: int) -> dict[str, float]:
    facts = [
        Fact(f"metric_{i % 50}", f"entity_{i // 50}", "FY2024", "total", Decimal(i), "USD", "USD",
             Scale.ONE, "doc", "row", Sensitivity.PUBLIC, "2024-12-31", "2025-01-01T00:00:00Z")
        for i in range(count)
    ]  # fmt: skip
    keys = [FactKey(f.metric, f.entity, f.period, f.channel) for f in facts]
    rng = np.random.default_rng(3)
    order = rng.integers(count, size=5000).tolist()
    out = {}
    for name, store in (
        ("sqlite", SQLiteFactStore(folder / "facts.sqlite")),
        ("postgres", PostgresFactStore(db)),
    ):
        store.write(facts)
        latencies = []
        for i in order:
            started = time.perf_counter()
            assert store.lookup(keys[i], max_level=0) is not None
            latencies.append((time.perf_counter() - started) * 1000)
        out[name] = statistics.median(latencies)
        store.close()
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="a PostgreSQL server (default: start one with pgserver)")
    parser.add_argument("--queries", type=int, default=809, help="judged train queries used")
    parser.add_argument("--rounds", type=int, default=2, help="alternating timing rounds")
    parser.add_argument("--vectors", help="a float32 .npy matrix of SciFact vectors")
    parser.add_argument("--vector-rows", type=int, default=7683, help="random vectors' rows")
    parser.add_argument(
        "--embed", type=int, default=0, help="embed the first N chunks with MiniLM for HNSW"
    )
    parser.add_argument("--docs", type=int, help="only the first N SciFact documents")
    parser.add_argument("--facts", type=int, default=20_000, help="facts for the look-ups")
    args = parser.parse_args(argv)
    if not DATA.exists():
        print(f"SciFact not found at {DATA}", file=sys.stderr)
        return 2
    queries = load_queries(DATA / "queries.jsonl")
    qrels = load_qrels(DATA / "qrels" / "train.tsv")
    corpus = DATA
    if args.docs:
        subset = Path(tempfile.mkdtemp())
        _, qrels = first_documents(DATA / "corpus.jsonl", qrels, args.docs, subset)
        corpus = subset
    judged = {qid: queries[qid] for qid in qrels if qid in queries}
    judged = dict(list(judged.items())[: args.queries])
    texts = list(judged.values())
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        url, handle = server_url(args.url, folder / "pg")
        schema = f"bench_{uuid.uuid4().hex[:10]}"
        import psycopg

        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
            admin.execute(f"CREATE SCHEMA {schema}")
            admin.execute(f"CREATE SCHEMA {schema}_ws")
        db = Database(with_schema(url, schema))
        try:
            migrate(db)
            run(db, folder, corpus, judged, texts, qrels, args)
            workspaces(folder, with_schema(url, f"{schema}_ws"), corpus, texts, args)
        finally:
            db.close()
            with psycopg.connect(url, autocommit=True) as admin:
                admin.execute(f"DROP SCHEMA {schema} CASCADE")
                admin.execute(f"DROP SCHEMA {schema}_ws CASCADE")
            if handle is not None:
                handle.cleanup()
    return 0


def run(
    db: Database,
    folder: Path,
    corpus: Path,
    judged: dict[str, str],
    texts: list[str],
    qrels: Any,
    args: argparse.Namespace,
) -> None:
    print(f"SciFact: {len(judged)} judged train queries, depth {DEPTH} chunks, public asker")
    ws = Workspace.open(folder / "ws")
    started = time.perf_counter()
    ws.ingest_beir(corpus, library=LIBRARY)
    embedded_ingest = time.perf_counter() - started
    chunks = ws.chunks
    rows = list(chunks.index_rows(LIBRARY))
    server = PostgresLexicalIndexes(db, chunks)
    started = time.perf_counter()
    server.apply(LIBRARY, [], rows, since=0, generation=chunks.generation(LIBRARY))
    postings = time.perf_counter() - started
    with db.connection() as conn:
        count = conn.execute(
            "SELECT sum(octet_length(postings)) / %s, count(*) FROM lexical_blocks",
            (POSTING.itemsize,),
        ).fetchone()
    print(f"ingest: embedded workspace {embedded_ingest:.1f} s ({len(rows)} chunks); "
          f"PostgreSQL BM25 postings of the same chunks {postings:.1f} s ({count[0]} postings "
          f"in {count[1]} blocks, both field sets)")  # fmt: skip

    def embedded(query: str) -> list[tuple[int, float]]:
        return ws.lexical_indexes.get(LIBRARY, FIELDS).search(query, DEPTH, max_level=0)

    def postgres(query: str) -> list[tuple[int, float]]:
        return server.get(LIBRARY, FIELDS).search(query, DEPTH, max_level=0)

    ts_build = build_tsvectors(db, chunks)
    ts_rank = ts_rank_cd_search(db)
    engines: dict[str, Search] = {"embedded": embedded, "postgres": postgres, "ts_rank_cd": ts_rank}
    ndcg = {name: evaluate_rankings(rankings(s, chunks, judged), qrels)["ndcg@10"]
            for name, s in engines.items()}  # fmt: skip
    latencies: dict[tuple[str, int], list[float]] = {}
    rates: dict[tuple[str, int], list[float]] = {}
    for _ in range(args.rounds):  # alternate, so machine noise hits every engine alike
        for clients in (1, 8):
            for name, search in engines.items():
                if name == "ts_rank_cd" and clients == 8:
                    continue
                lat, qps = timed(search, texts, clients)
                latencies.setdefault((name, clients), []).extend(lat)
                rates.setdefault((name, clients), []).append(qps)
    print(f"\n{'engine':<12}{'clients':>8}{'p50 ms':>9}{'p99 ms':>9}{'q/s':>9}{'nDCG@10':>9}")
    for (name, clients), lat in latencies.items():
        print(f"{name:<12}{clients:>8}{statistics.median(lat):>9.2f}"
              f"{percentile(lat, 0.99):>9.2f}{statistics.median(rates[name, clients]):>9.0f}"
              f"{ndcg[name]:>9.4f}")  # fmt: skip
    base = statistics.median(latencies["embedded", 1])
    ours = statistics.median(latencies["postgres", 1])
    print(f"PostgreSQL BM25 p50 / embedded p50 = {ours / base:.1f}x (goal <= 3x); "
          f"ts_rank_cd tsvector build {ts_build:.1f} s")  # fmt: skip

    if args.embed:
        from ragspine.narrative.index.embed.model import load_embedder
        from ragspine.narrative.index.vector.library_vectors import embedded_text

        chosen = rows[: args.embed]
        started = time.perf_counter()
        matrix = load_embedder().embed([embedded_text(r.title, r.heading, r.text) for r in chosen])
        described = (
            f"MiniLM vectors of the first {len(chosen)} SciFact chunks (embedded in "
            f"{time.perf_counter() - started:.0f} s)"
        )
    else:
        matrix, described = load_vectors(args.vectors, args.vector_rows)
    real = args.vectors is not None or bool(args.embed)
    qvecs, qdescribed = query_vectors(matrix, texts, 200, real)
    vectors = hnsw_recall(db, matrix, np.asarray(qvecs, dtype=np.float32))
    print(f"\nHNSW (m=16, ef_construction=128, ef_search=max(100, k+16)) over {described}, "
          f"queries: {qdescribed}")  # fmt: skip
    print(f"  recall@10 against exact {vectors['recall']:.4f} (goal >= 0.95); p50 HNSW "
          f"{vectors['hnsw_p50']:.2f} ms, exact scan {vectors['exact_p50']:.2f} ms; load "
          f"{vectors['load_s']:.1f} s, index build {vectors['build_s']:.1f} s; level filter "
          "(a third visible) still filled top-10 for "
          f"{vectors['level_filter_full']:.0%}")  # fmt: skip
    lookups = fact_lookups(db, folder, args.facts)
    print(f"\nfact lookup p50 ({args.facts} facts, 5000 look-ups): SQLite "
          f"{lookups['sqlite']:.3f} ms, "
          f"PostgreSQL {lookups['postgres']:.3f} ms (store level; query_metric adds glossary and "
          "period parsing, the same for both)")  # fmt: skip
    ws.close()


def workspaces(folder: Path, url: str, corpus: Path, texts: list[str], args: Any) -> None:
    """The whole-workspace figures: ingest, ``search`` and ``query_metric`` on both backends."""
    from bench_graph import batches, build_tree, generate, glossary_text, periods_for

    locations = {"embedded": str(folder / "ws-whole"), "postgres": url}
    opened: dict[str, Workspace] = {}
    ingest: dict[str, float] = {}
    parents = build_tree(max(16, args.facts // 50))
    for name, location in locations.items():
        ws = opened[name] = Workspace.init(location)
        ws.set_glossary(glossary_text(parents))
        for batch in batches(generate(parents, args.facts, 13)):
            ws.facts.write(batch)
        started = time.perf_counter()
        ws.ingest_beir(corpus, library=LIBRARY)
        ingest[name] = time.perf_counter() - started
    slower = ingest["postgres"] / ingest["embedded"]
    print(f"\nwhole workspaces: SciFact ingest_beir embedded {ingest['embedded']:.1f} s, "
          f"PostgreSQL {ingest['postgres']:.1f} s ({slower:.1f}x)")  # fmt: skip
    latencies: dict[tuple[str, int], list[float]] = {}
    for _ in range(args.rounds):
        for clients in (1, 8):
            for name, ws in opened.items():

                def search(query: str, ws: Workspace = ws) -> object:
                    return ws.search(query, mode="bm25", top_k=10)

                lat, _ = timed(search, texts, clients)
                latencies.setdefault((name, clients), []).extend(lat)
    for (name, clients), lat in latencies.items():
        print(f"  Workspace.search {name:<9} x{clients}: p50 {statistics.median(lat):6.2f} ms, "
              f"p99 {percentile(lat, 0.99):6.2f} ms")  # fmt: skip
    base = statistics.median(latencies["embedded", 1])
    ratio = statistics.median(latencies["postgres", 1]) / base
    print(f"  Workspace.search p50 PostgreSQL / embedded = {ratio:.1f}x (goal <= 3x)")
    period = periods_for(max(1, args.facts // len(parents)))[0]
    leaves = [code for code in parents if code not in set(parents.values())]
    rng = np.random.default_rng(5)
    picks = [leaves[i] for i in rng.integers(len(leaves), size=3000)]
    who = Principal.of("internal")
    metric_p50 = {}
    for _ in range(args.rounds):
        for name, ws in opened.items():
            samples = []
            for code in picks:
                started = time.perf_counter()
                result = ws.query_metric("m0", code, period, principal=who)
                samples.append((time.perf_counter() - started) * 1000)
                assert result.status in ("found", "not_found"), result.status
            metric_p50.setdefault(name, []).append(statistics.median(samples))
    print(f"  Workspace.query_metric p50 ({args.facts} facts): embedded "
          f"{min(metric_p50['embedded']):.3f} ms, PostgreSQL {min(metric_p50['postgres']):.3f} "
          "ms (goal <= 0.5 ms over a local socket)")  # fmt: skip
    for ws in opened.values():
        ws.close()


if __name__ == "__main__":
    raise SystemExit(main())
