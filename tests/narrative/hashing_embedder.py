"""A small deterministic TEST embedder (feature hashing of word tokens), not a real model.

It implements the :class:`ragspine.narrative.index.embed.model.Embedder` protocol so that
pipeline tests
(ingest, indexes, modes, filters, visibility) run without the ``onnx`` extra and fast; it records
every text it embeds so tests can count embedder calls. The real ONNX embedder is exercised by
the ``onnx``-marked tests. It imports nothing from the embedding stack.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable, Sequence

import numpy as np

_WORD = re.compile(r"\w+", re.UNICODE)


class HashingEmbedder:
    """Bag of hashed lower-cased words, L2-normalised; ``calls`` keeps every embedded text."""

    def __init__(self, *, model_id: str = "test-hashing-v1", dim: int = 64) -> None:
        self.model_id = model_id
        self.dim = dim
        self.calls: list[str] = []
        self.fail = False

    def embed(
        self,
        texts: Sequence[str],
        *,
        batch_size: int = 32,
        progress: Callable[[int, int], None] | None = None,
    ) -> np.ndarray:
        if self.fail:
            raise RuntimeError("embedder broke")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            self.calls.append(text)
            for word in _WORD.findall(text.casefold()):
                out[row, zlib.crc32(word.encode("utf-8")) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        out /= np.maximum(norms, 1e-12)
        if progress is not None:
            progress(len(texts), len(texts))
        return out
