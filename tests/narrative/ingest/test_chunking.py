"""Chunking: a section short enough for one chunk is not split into sentences, with the very
same result as splitting it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragspine.narrative.ingest import chunking
from ragspine.narrative.ingest.chunking import ChunkingOptions, chunk_sections
from ragspine.narrative.ingest.loaders import Paragraph, Section
from ragspine.narrative.ingest.sentences import breaks_only_at_white_space

PIECES = st.sampled_from(
    ["word", "Word", ". ", "! ", "? ", "… ", ".", " ", "\n", "\n\n", "\t", "1. ", "\n- ", "U.S. ",
     "e.g. ", "J. ", "N.A. ", "3.5 ", '"', "'", ")", "(", "。", "\uff01", "\u3000", "Inc. "]
)  # fmt: skip
TEXTS = st.lists(PIECES, max_size=40).map("".join)


def _split_always(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chunking, "_whole_section", lambda section, max_words: None)


@settings(max_examples=300, deadline=None)
@given(
    paragraphs=st.lists(st.tuples(TEXTS, st.none() | st.integers(1, 3)), min_size=1, max_size=3),
    max_words=st.sampled_from([1, 3, 8, 200]),
    heading=st.sampled_from([(), ("Results",)]),
)
def test_a_short_section_chunks_as_if_split(
    paragraphs: list[tuple[str, int | None]], max_words: int, heading: tuple[str, ...]
) -> None:
    sections = (Section(heading, tuple(Paragraph(text, page) for text, page in paragraphs)),)
    options = ChunkingOptions(max_words=max_words)
    quick = chunk_sections(sections, "f.txt", options)
    with pytest.MonkeyPatch.context() as patch:
        _split_always(patch)
        assert chunk_sections(sections, "f.txt", options) == quick


def test_real_abstracts_chunk_as_if_split(monkeypatch: pytest.MonkeyPatch) -> None:
    from real_text import scifact_docs

    sections = [(Section((), (Paragraph(doc["text"]),)),) for doc in scifact_docs(300)]
    quick = [chunk_sections(s, "c", ChunkingOptions()) for s in sections]
    _split_always(monkeypatch)
    assert [chunk_sections(s, "c", ChunkingOptions()) for s in sections] == quick


def test_cjk_full_stops_break_without_white_space() -> None:
    assert breaks_only_at_white_space("One. Two! Three?")
    assert not breaks_only_at_white_space("売上高は増加した。利益も")
