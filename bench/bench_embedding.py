"""Encode throughput of the ONNX MiniLM embedder on SciFact abstracts (title + text).

Run: nice -n 10 python bench/bench_embedding.py [--docs 500] [--threads N]
Baseline, same run: the same model fed batches in input order (no length sorting), where each
batch pads to its longest abstract.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "scifact" / "corpus.jsonl"


def load_abstracts(limit: int) -> list[str]:
    with DATA.open(encoding="utf-8") as handle:
        docs = [json.loads(line) for _, line in zip(range(limit), handle, strict=False)]
    return [f"{d['title']}\n{d['text']}" for d in docs]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--docs", type=int, default=500)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    os.environ.setdefault("XDG_CACHE_HOME", tempfile.mkdtemp(prefix="ragspine-xdg-"))
    from ragspine.narrative.index.embed.model import OnnxMiniLMEmbedder, load_embedder

    texts = load_abstracts(args.docs)
    embedder = load_embedder(threads=args.threads)
    embedder.embed(texts[:8])  # warm-up
    start = time.perf_counter()
    ours = embedder.embed(texts, batch_size=args.batch_size)
    ours_s = time.perf_counter() - start

    start = time.perf_counter()
    base = np.vstack(
        [
            embedder._embed_batch(texts[i : i + args.batch_size])  # type: ignore[attr-defined]
            for i in range(0, len(texts), args.batch_size)
        ]
    )
    base_s = time.perf_counter() - start

    short = OnnxMiniLMEmbedder(max_tokens=128, threads=args.threads)
    start = time.perf_counter()
    short.embed(texts, batch_size=args.batch_size)
    short_s = time.perf_counter() - start

    encoded = embedder._tokenizer.encode_batch(texts)  # type: ignore[attr-defined]
    tokens = sum(sum(e.attention_mask) for e in encoded)
    print(f"abstracts: {len(texts)}  (mean {tokens / len(texts):.0f} word pieces after 256 cut)")
    print(
        f"ragspine embed (length-sorted batches of {args.batch_size}): "
        f"{len(texts) / ours_s:.1f} chunks/s  ({ours_s:.1f} s)"
    )
    print(
        f"baseline (input-order batches):                {len(texts) / base_s:.1f} chunks/s  "
        f"({base_s:.1f} s)"
    )
    print(
        f"for reference, a 128-token cut (the shipped tokenizer setting, loses text): "
        f"{len(texts) / short_s:.1f} chunks/s"
    )
    print(
        f"speed-up: {base_s / ours_s:.2f}x   max |diff| between the two: "
        f"{np.abs(ours - base).max():.2e}"
    )


if __name__ == "__main__":
    main()
