"""Relation graph: what the ingest hook costs, and how fast ``edges`` / ``neighbours`` answer.

Rows, measured in one run (sides alternate for ``--rounds``; the best time of each is kept):

- **ingest with relations vs without**: ``Workspace.ingest_documents`` of ConvFinQA dev filing
  texts (``../shared/data``, the demo's text form) into a fresh workspace whose glossary came from
  importing the same filings' tables, with the relation hook (mentions and co-occurrence edges
  written in the chunk transactions) and with the hook switched off; once with the glossary the
  import generates (hundreds of terms) and once with the example glossary alone.
- **neighbours / edges p50** for the most connected term, against a baseline: the bare SQLite
  adjacency query (``source IN (...) UNION target IN (...)``) on the same table.

Usage: ``python bench/bench_relations.py [--filings N] [--rounds R] [--queries Q]``.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
CONVFINQA = ROOT.parent / "shared" / "data" / "convfinqa" / "convfinqa_dev.json"

from ragspine.security import Principal  # noqa: E402
from ragspine.structured.convfinqa import filing_paragraphs  # noqa: E402
from ragspine.workspace import Workspace  # noqa: E402


def write_filing_texts(filings: Path, folder: Path) -> list[Path]:
    """Each filing's text before and after its table as one .txt file (as the importer
    reads it), for ``ingest_documents``."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for filing in json.loads(filings.read_text(encoding="utf-8"))["dev"]:
        path = folder / (filing["id"].replace("/", "_").replace(".pdf", "") + ".txt")
        path.write_text("\n\n".join(filing_paragraphs(filing)) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


def ingest_once(filings: Path | None, texts: list[Path], folder: Path, *, relations: bool) -> float:
    """Seconds to ingest ``texts`` into a fresh workspace (glossary from ``filings`` when
    given, else the example glossary alone)."""
    with Workspace.init(folder) as ws:
        if filings is not None:
            ws.ingest_convfinqa(filings, library=None)  # the tables, for the glossary
        if not relations:
            ws.library_writer._ingestor._relations = None  # the hook switched off
        start = time.perf_counter()
        ws.ingest_documents(texts, library="filings")
        return time.perf_counter() - start


def p50_ms(call: object, queries: int) -> float:
    times = []
    for _ in range(queries):
        start = time.perf_counter()
        call()  # type: ignore[operator]
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--filings", type=int, default=421)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    if not CONVFINQA.exists():
        sys.exit(f"needs {CONVFINQA} (clone ../shared beside the repo)")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        records = json.loads(CONVFINQA.read_text(encoding="utf-8"))["dev"][: args.filings]
        filings = root / "filings.json"
        filings.write_text(json.dumps({"dev": records}), encoding="utf-8")
        texts = write_filing_texts(filings, root / "texts")
        for glossary, source in (("filings' own (large)", filings), ("example (small)", None)):
            best = {True: float("inf"), False: float("inf")}
            for run in range(args.rounds):
                for relations in (True, False) if run % 2 == 0 else (False, True):
                    folder = root / f"ws-{run}-{relations}-{source is None}"
                    seconds = ingest_once(source, texts, folder, relations=relations)
                    best[relations] = min(best[relations], seconds)
            print(
                f"ingest {len(texts)} ConvFinQA filing texts, {glossary} glossary "
                f"(best of {args.rounds}):"
            )
            print(f"  with relations     {best[True]:8.3f} s")
            print(f"  without (baseline) {best[False]:8.3f} s")
            print(f"  ratio with/without {best[True] / best[False]:8.2f}")
        with Workspace.open(root / "ws-0-True-False") as ws:
            graph, anyone = ws.relations, Principal.of("confidential")
            edges = graph.edges(principal=anyone)
            kinds = Counter(e.kind.value for e in edges.edges)
            print(f"edges stored: {edges.total} ({dict(sorted(kinds.items()))})")
            degree = Counter(n for e in edges.edges for n in (e.source, e.target))
            node, count = degree.most_common(1)[0]
            print(f"most connected node: {node} ({count} edges)")
            db = sqlite3.connect(ws.db_path)
            sql = (
                "SELECT * FROM graph_edges WHERE source IN (?) AND sensitivity <= 2 "
                "UNION SELECT * FROM graph_edges WHERE target IN (?) AND sensitivity <= 2"
            )
            base = p50_ms(lambda: db.execute(sql, (node, node)).fetchall(), args.queries)
            near = p50_ms(lambda: graph.neighbours(node, principal=anyone), args.queries)
            listed = p50_ms(lambda: graph.edges(principal=anyone, node=node), args.queries)
            db.close()
            print(f"neighbours p50       {near:8.3f} ms")
            print(f"edges(node) p50      {listed:8.3f} ms")
            print(f"baseline: bare SQLite adjacency p50 {base:8.3f} ms")
            print(f"ratio neighbours/baseline {near / base:8.1f}")


if __name__ == "__main__":
    main()
