"""Ingest speed and memory against same-run anchors: the table of issue #12.

Rows (each side in a fresh Python process of its own, so each peak RSS is that process's alone;
sides alternate for ``--rounds`` and the best time of each is kept):

- **lexical ingest, full SciFact**: ``Workspace.ingest_beir`` into a fresh workspace (mode bm25:
  documents, parents, chunks, metadata and routing counts stored transactionally, both lexical
  index field sets committed) against bm25s tokenize + index over the same texts (title + text,
  English Snowball stemmer and English stop words, k1=0.9, b=0.4: the baseline of
  ``bench_retrieval_quality.py``). Ours is timed from the call to ``ingest_beir`` (reading the
  JSONL included); bm25s from texts already in memory.
  Wall time is the figure of the issue; CPU time (user + system) is printed beside it because
  it moves less when other processes share the machine, once for the ingesting process and
  once with its analysis worker's added (the work both cores did).
- **hybrid rows** (``ingest beir --vectors`` minus lexical time against raw onnxruntime, and the
  peak memory of both) come from ``bench/_ingest_hybrid.py`` when it is there (``--skip-hybrid``
  leaves them out).

Usage: ``python bench/bench_ingest.py [--docs N] [--rounds R] [--hybrid-docs N] [--skip-hybrid]``.
With ``--profile FILE`` one more ragspine run writes a cProfile dump (``pstats`` readable).
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
SCIFACT = ROOT.parent / "shared" / "data" / "scifact"
LIBRARY = "bench"

Row = tuple[str, str, str, str]


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _cpu_seconds() -> float:
    """CPU time of this process so far (user + system): less moved than wall time by other
    processes on a shared machine."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _child_ragspine(job: dict[str, Any]) -> dict[str, Any]:
    """A fresh workspace, one lexical ``ingest_beir``: seconds, peak RSS, chunks."""
    from ragspine import Workspace

    workspace = Workspace.open(job["workspace"], create=True)
    try:
        profile = None
        if job.get("profile"):
            import cProfile

            profile = cProfile.Profile()
            profile.enable()
        start, cpu = time.perf_counter(), _cpu_seconds()
        report = workspace.ingest_beir(job["corpus"], library=LIBRARY)
        seconds, cpu = time.perf_counter() - start, _cpu_seconds() - cpu
        if profile is not None:
            profile.disable()
            profile.dump_stats(job["profile"])
    finally:
        workspace.close()
    for thread in threading.enumerate():  # the analysis worker, once it has exited
        if thread.name == "analysis-worker-reap":
            thread.join(timeout=10)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "worker_cpu_seconds": children.ru_utime + children.ru_stime,
        "peak_rss_mb": _peak_rss_mb(),
        "chunks": sum(outcome.chunks for outcome in report.outcomes),
        "failed": len(report.failures),
    }


def _child_bm25s(job: dict[str, Any]) -> dict[str, Any]:
    """bm25s tokenize + index over title + text of every record (reading not timed)."""
    import bm25s
    import Stemmer

    texts = []
    with Path(job["corpus"]).open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                record = json.loads(line)
                texts.append(f"{record.get('title') or ''}\n{record.get('text') or ''}")
    start, cpu = time.perf_counter(), _cpu_seconds()
    stemmer = Stemmer.Stemmer("english")
    tokens = bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False)
    engine = bm25s.BM25(k1=0.9, b=0.4)
    engine.index(tokens, show_progress=False)
    return {
        "seconds": time.perf_counter() - start,
        "cpu_seconds": _cpu_seconds() - cpu,
        "peak_rss_mb": _peak_rss_mb(),
    }


_CHILDREN: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "ragspine": _child_ragspine,
    "bm25s": _child_bm25s,
}


def _run_child(job: dict[str, Any]) -> dict[str, Any]:
    """Run ``job`` in a fresh interpreter (this file as a script); its JSON result."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH", "")]))
    done = subprocess.run(
        [sys.executable, __file__, "--child", json.dumps(job)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{job['kind']} run failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def subset(corpus: Path, count: int | None, folder: Path) -> tuple[Path, int]:
    """A BEIR folder with the first ``count`` records of ``corpus`` (all for ``None``) and the
    number of records it holds."""
    folder.mkdir(parents=True, exist_ok=True)
    with corpus.open(encoding="utf-8") as source:
        lines = [line for line in source if line.strip()]
    kept = lines if count is None else lines[:count]
    (folder / "corpus.jsonl").write_text("".join(kept), encoding="utf-8")
    return folder, len(kept)


def lexical_rows(
    corpus: Path, docs: int | None, rounds: int, scratch: Path, profile: str | None
) -> list[Row]:
    """The lexical ingest row and its peak-memory companion."""
    folder, count = subset(corpus, docs, scratch / "corpus")
    runs: dict[str, list[dict[str, Any]]] = {"ragspine": [], "bm25s": []}
    for number in range(rounds):
        for kind in ("ragspine", "bm25s"):
            job = {"kind": kind, "corpus": str(folder / "corpus.jsonl")}
            if kind == "ragspine":
                job["workspace"] = str(scratch / f"ws-{number}")
            runs[kind].append(_run_child(job))
    if profile:
        _run_child(
            {
                "kind": "ragspine",
                "corpus": str(folder / "corpus.jsonl"),
                "workspace": str(scratch / "ws-profile"),
                "profile": profile,
            }
        )
    ours = min(runs["ragspine"], key=lambda r: r["seconds"])
    anchor = min(runs["bm25s"], key=lambda r: r["seconds"])
    ours_cpu = min(r["cpu_seconds"] for r in runs["ragspine"])
    anchor_cpu = min(r["cpu_seconds"] for r in runs["bm25s"])
    both_cpu = min(r["cpu_seconds"] + r["worker_cpu_seconds"] for r in runs["ragspine"])
    ours_rss = max(r["peak_rss_mb"] for r in runs["ragspine"])
    anchor_rss = max(r["peak_rss_mb"] for r in runs["bm25s"])
    label = "full SciFact" if docs is None else "SciFact"
    return [
        (
            f"lexical ingest, {label} ({count:,} docs, {ours['chunks']:,} chunks)",
            f"{ours['seconds']:.2f} s",
            f"bm25s tokenize + index {anchor['seconds']:.2f} s",
            f"{ours['seconds'] / anchor['seconds']:.2f}x",
        ),
        (
            "  same, CPU time (user + system)",
            f"{ours_cpu:.2f} s",
            f"bm25s {anchor_cpu:.2f} s",
            f"{ours_cpu / anchor_cpu:.2f}x",
        ),
        (
            "  same, CPU time of the ingest and its analysis worker",
            f"{both_cpu:.2f} s",
            f"bm25s {anchor_cpu:.2f} s",
            f"{both_cpu / anchor_cpu:.2f}x",
        ),
        (
            "peak memory of that lexical ingest",
            f"{ours_rss:,.0f} MB",
            f"bm25s process {anchor_rss:,.0f} MB",
            f"{ours_rss / anchor_rss:.2f}x",
        ),
    ]


def hybrid_rows(corpus: Path, docs: int, rounds: int) -> list[Row] | None:
    """The hybrid rows from ``bench/_ingest_hybrid.py``; None when that helper is absent."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    try:
        helper = importlib.import_module("_ingest_hybrid")
        compare, load = helper.compare, helper.load_beir_docs
    except (ImportError, AttributeError):
        return None
    result = compare(load(corpus.parent, docs), rounds=rounds)
    raw = result[result["raw_anchor"]]
    bare_name = result["rss_anchor"]
    bare = result[bare_name]
    hybrid = result["hybrid"]
    return [
        (
            f"ingest beir --vectors, {result['docs']:,} docs, minus lexical time",
            f"{result['embed_seconds']:.1f} s",
            f"raw onnxruntime same texts ({result['raw_anchor']}) {raw['seconds']:.1f} s",
            f"{result['embed_ratio']:.2f}x",
        ),
        (
            "peak memory of that hybrid ingest",
            f"{hybrid['peak_rss_mb']:,.0f} MB",
            f"bare onnxruntime process ({bare_name}) {bare['peak_rss_mb']:,.0f} MB",
            f"{result['rss_ratio']:.2f}x",
        ),
    ]


def print_table(rows: list[Row]) -> None:
    header: Row = ("", "ragspine", "anchor (same run)", "ratio")
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(4)]
    for row in itertools.chain([header], rows):
        print(" | ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--corpus", type=Path, default=SCIFACT / "corpus.jsonl")
    parser.add_argument("--docs", type=int, help="first N documents (default: all)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating runs of each side")
    parser.add_argument("--hybrid-docs", type=int, default=300)
    parser.add_argument("--skip-hybrid", action="store_true")
    parser.add_argument("--profile", help="write a cProfile dump of one more ragspine run")
    args = parser.parse_args()
    if args.child:
        job = json.loads(args.child)
        print(json.dumps(_CHILDREN[job["kind"]](job)))
        return
    try:
        import bm25s  # noqa: F401
        import Stemmer  # noqa: F401
    except ImportError:
        raise SystemExit("bm25s or PyStemmer not installed: pip install -e '.[bench]'") from None
    with tempfile.TemporaryDirectory(prefix="ragspine-bench-ingest-") as scratch:
        rows = lexical_rows(args.corpus, args.docs, args.rounds, Path(scratch), args.profile)
    hybrid = None
    if not args.skip_hybrid:
        hybrid = hybrid_rows(args.corpus, args.hybrid_docs, 1)
        if hybrid is not None:
            rows += hybrid
    print_table(rows)
    if args.skip_hybrid:
        print("hybrid: skipped (--skip-hybrid)")
    elif hybrid is None:
        print("hybrid: not available (bench/_ingest_hybrid.py is missing)")


if __name__ == "__main__":
    main()
