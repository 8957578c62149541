"""Before/after in one run: the working tree against an earlier git revision.

Checks the revision out into a temporary git worktree and runs, for each tree with its own
``src/`` and ``bench/``, the figures a refactoring must not move: SciFact nDCG@10 (bm25 mode),
``Workspace.search`` p50/p99 over a synthetic library, and ``query_metric`` p50 over synthetic
facts. The two trees alternate within each benchmark so machine load hits both alike.

    nice -n 10 python bench/bench_revisions.py --base a030289 [--chunks 100000] [--facts 100000]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(tree: Path, script: str, *args: str) -> str:
    """Run ``bench/<script>`` of ``tree`` with that tree's package; its stdout."""
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    done = subprocess.run(
        [sys.executable, str(tree / "bench" / script), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=tree,
    )
    if done.returncode != 0:
        raise SystemExit(f"{script} failed in {tree}:\n{done.stderr[-3000:]}")
    return done.stdout


def search_figures(tree: Path, chunks: int, queries: int) -> dict[str, float]:
    out = run(tree, "bench_search_latency.py", "--engine", "ragspine", "--chunks", str(chunks),
              "--queries", str(queries))  # fmt: skip
    figures: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return figures


def metric_figures(tree: Path, facts: int, queries: int) -> dict[str, float]:
    out = run(tree, "bench_query_metric.py", "--facts", str(facts), "--queries", str(queries))
    figures: dict[str, float] = {}
    for kind in ("found", "not_found"):
        match = re.search(rf"^query_metric {kind}\s+p50\s+([\d.]+)\s*(us|ms)", out, re.M)
        if match:
            scale = 1000.0 if match.group(2) == "ms" else 1.0
            figures[f"{kind}_p50_us"] = float(match.group(1)) * scale
    if not figures:
        print(out)
    return figures


def ndcg(tree: Path, docs: int | None) -> float | None:
    args = ["--only", "scifact", "--modes", "bm25"] + (["--docs", str(docs)] if docs else [])
    out = run(tree, "bench_retrieval_quality.py", *args)
    match = re.search(r"^ragspine bm25\s+([\d.]+)", out, re.M)
    if match is None:
        print(out)
        return None
    return float(match.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="git revision to compare against")
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--docs", type=int, help="SciFact documents (default: all)")
    parser.add_argument("--rounds", type=int, default=2, help="alternations per benchmark")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="ragspine-base-"))
    base_dir = scratch / "ragspine"
    shared = ROOT.parent / "shared"
    if shared.exists():  # the benchmarks read ../shared/data beside their tree
        (scratch / "shared").symlink_to(shared)
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(base_dir), args.base],
        check=True,
    )
    trees = {f"base {args.base}": base_dir, "working tree": ROOT}
    try:
        rows: dict[str, dict[str, float | None]] = {name: {} for name in trees}
        for name, tree in trees.items():
            rows[name]["SciFact nDCG@10 (bm25)"] = ndcg(tree, args.docs)
        for _ in range(args.rounds):
            for name, tree in trees.items():
                s = search_figures(tree, args.chunks, args.queries)
                m = metric_figures(tree, args.facts, 20_000)
                for key, value in (
                    ("search p50 ms", s["p50_ms"]),
                    ("search p99 ms", s["p99_ms"]),
                    ("query_metric found p50 µs", m.get("found_p50_us")),
                    ("query_metric not_found p50 µs", m.get("not_found_p50_us")),
                ):
                    if value is None:
                        continue
                    best = rows[name].get(key)  # the better of the rounds: load only adds
                    rows[name][key] = value if best is None else min(best, value)
        keys = list(next(iter(rows.values())))
        print(f"{'figure':<32}" + "".join(f"{name:>24}" for name in trees))
        for key in keys:
            cells = "".join(
                f"{'-' if rows[n].get(key) is None else format(rows[n][key], '.4g'):>24}"
                for n in trees
            )
            print(f"{key:<32}{cells}")
        print(f"(search: {args.chunks} chunks, {args.queries} queries; facts: {args.facts})")
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base_dir)])
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
