"""Embedding settings: checked once, applied by the workspace and the CLI flags."""

from __future__ import annotations

from pathlib import Path

import pytest
from hashing_embedder import HashingEmbedder

from ragspine.errors import ConfigError
from ragspine.narrative.index.embed.settings import EmbedSettings
from ragspine.workspace import Workspace


@pytest.mark.parametrize(
    "changes",
    [{"batch_size": 0}, {"batch_size": 5000}, {"batch_size": True}, {"threads": 0}],
)
def test_out_of_range_settings_are_refused(changes: dict[str, object]) -> None:
    with pytest.raises(ConfigError, match=r"out of range|must be an integer"):
        EmbedSettings(**changes)  # type: ignore[arg-type]


def test_the_workspace_embeds_with_its_settings(tmp_path: Path) -> None:
    seen: list[int] = []

    class Recording(HashingEmbedder):
        def embed(self, texts, *, batch_size=32, progress=None):  # type: ignore[no-untyped-def]
            seen.append(batch_size)
            return super().embed(texts, batch_size=batch_size, progress=progress)

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text("Revenue grew in Europe.")
    with Workspace.open(tmp_path / "ws") as ws:
        assert ws.embed_settings == EmbedSettings(batch_size=1, threads=None)
        ws.vector_indexes.use_embedder(Recording())
        ws.embed_settings = EmbedSettings(batch_size=16, threads=1)
        ws.ingest_documents([tmp_path / "docs"], library="r", vectors=True)
        assert ws.embed_settings.threads == 1
    assert seen == [16]


def test_a_threads_change_reloads_only_a_factory_made_embedder(tmp_path: Path) -> None:
    made: list[int | None] = []

    def factory(settings: EmbedSettings) -> HashingEmbedder:
        made.append(settings.threads)
        return HashingEmbedder()

    from ragspine.narrative.index.vector.library_vectors import LibraryVectors

    with Workspace.open(tmp_path / "ws") as ws:
        vectors = LibraryVectors(ws.chunks, ws.index_dir, embedder_factory=factory)
        first = vectors.embedder()
        vectors.configure(EmbedSettings(batch_size=4))  # same threads: kept
        assert vectors.embedder() is first
        vectors.configure(EmbedSettings(threads=1))
        assert vectors.embedder() is not first and made == [None, 1]
        given = HashingEmbedder()
        vectors.use_embedder(given)
        vectors.configure(EmbedSettings(threads=2))
        assert vectors.embedder() is given
        vectors.close()
