"""Expansion to parent sections and sentence windows, with only visible text; post-processing."""

from __future__ import annotations

from dataclasses import replace

import pytest
from narrative_fixtures import BY_KEY, CONFIDENTIAL, PARENTS, SECRET, WINDOWS

from ragspine.errors import ConfigError
from ragspine.narrative.retrieve.expansion import (
    Candidate,
    ExpansionMode,
    Postprocessor,
    build_snippets,
    deduplicate,
    order_by_score,
)
from ragspine.security import Principal

PUBLIC = Principal.of("public")
CONF = Principal.of("confidential", groups=["finance"])


def cands(*ids: str, library: str = "reports") -> list[Candidate]:
    return [Candidate(BY_KEY[(library, i)], 1.0 / (n + 1)) for n, i in enumerate(ids)]


def test_parent_expansion_keeps_child_fields_and_adds_back_reference() -> None:
    result = build_snippets(cands("c1"), PUBLIC, parents=PARENTS)
    (snippet,) = result.snippets
    chunk = BY_KEY[("reports", "c1")]
    assert (snippet.text, snippet.chunk_id, snippet.source_locator, snippet.doc_id) == (
        chunk.text,
        "c1",
        "ar.pdf#p1",
        "d1",
    )
    assert snippet.parent_locator == "ar.pdf#s1"
    assert snippet.prompt_text == (
        "Revenue grew 12% in EMEA during 2023.\n\nRevenue in the prior year was 900 million."
    )
    assert result.dropped_parts == 2  # the restricted and the confidential passage
    assert snippet.sensitivity == 0


def test_mixed_sensitivity_expansion_includes_only_what_the_principal_may_see() -> None:
    (snippet,) = build_snippets(cands("c1"), CONF, parents=PARENTS).snippets
    assert CONFIDENTIAL in snippet.prompt_text
    assert SECRET not in snippet.prompt_text
    assert snippet.sensitivity == 2


def test_invisible_children_never_become_snippets() -> None:
    result = build_snippets(cands("c1", "c2", "c3"), PUBLIC, parents=PARENTS)
    assert [s.chunk_id for s in result.snippets] == ["c1"]
    assert result.dropped_children == 2
    conf = build_snippets(cands("c1", "c2", "c3"), CONF, parents=PARENTS)
    assert [s.chunk_id for s in conf.snippets] == ["c1", "c3"]


def test_group_restricted_child_needs_the_group() -> None:
    internal = Principal.of("internal")
    assert build_snippets(cands("c5", library="policies"), internal).snippets == ()
    finance = Principal.of("internal", groups=["finance"])
    assert [
        s.chunk_id for s in build_snippets(cands("c5", library="policies"), finance).snippets
    ] == ["c5"]


def test_restricted_parent_is_never_expanded_nor_referenced() -> None:
    (snippet,) = build_snippets(cands("c4"), CONF, parents=PARENTS).snippets
    assert snippet.prompt_text == snippet.text == "APAC revenue was flat in 2022."
    assert snippet.parent_locator is None


def test_window_expansion_skips_invisible_sentences() -> None:
    result = build_snippets(cands("c1"), CONF, mode=ExpansionMode.WINDOW, windows=WINDOWS)
    (snippet,) = result.snippets
    assert snippet.prompt_text == "Overview of revenue. Revenue grew 12% in EMEA during 2023."
    assert result.dropped_parts == 1


def test_no_expansion_and_missing_expansion_fall_back_to_child_text() -> None:
    (plain,) = build_snippets(
        cands("c1"), PUBLIC, mode=ExpansionMode.NONE, parents=PARENTS
    ).snippets
    assert plain.prompt_text == plain.text
    result = build_snippets(cands("c1"), PUBLIC, mode=ExpansionMode.WINDOW, windows={})
    assert result.snippets[0].prompt_text == result.snippets[0].text and result.unexpanded == 1
    with pytest.raises(ConfigError, match="parent, window"):
        ExpansionMode.parse("section")
    assert ExpansionMode.parse(" Window ") is ExpansionMode.WINDOW


def test_postprocess_dedup_and_order_keep_identity_fields() -> None:
    snippets = build_snippets(cands("c1", "c4", "c1"), PUBLIC, parents=PARENTS).snippets
    rescored = (snippets[0], replace(snippets[1], score=5.0), snippets[2])
    out = Postprocessor((deduplicate, order_by_score))(rescored)
    assert [s.chunk_id for s in out] == ["c4", "c1"]
    for snippet in out:
        chunk = BY_KEY[("reports", snippet.chunk_id)]
        assert (snippet.text, snippet.source_locator) == (chunk.text, chunk.source_locator)


def test_postprocess_that_rewrites_or_invents_is_refused() -> None:
    snippets = build_snippets(cands("c1", "c4"), PUBLIC, parents=PARENTS).snippets

    def rewrite(items):  # type: ignore[no-untyped-def]
        return [replace(items[0], text="summarised"), *items[1:]]

    def invent(items):  # type: ignore[no-untyped-def]
        return [*items, replace(items[0], chunk_id="c999")]

    for step in (rewrite, invent):
        with pytest.raises(ConfigError, match=step.__name__):
            Postprocessor((step,))(snippets)


def test_sections_and_windows_built_from_chunk_records_keep_each_level() -> None:
    from narrative_fixtures import CHUNKS

    from ragspine.narrative.retrieve.expansion import parent_from_children, window_from_neighbours

    section = parent_from_children("p1", "ar.pdf#s1", CHUNKS)
    assert [p.sensitivity for p in section.parts] == [0, 3, 2]
    (snippet,) = build_snippets(cands("c1"), CONF, parents={"p1": section}).snippets
    assert SECRET not in snippet.prompt_text and CONFIDENTIAL in snippet.prompt_text
    window = window_from_neighbours(CHUNKS, 1, size=1)
    assert window.chunk_id == "c2" and len(window.parts) == 3
    edge = window_from_neighbours(CHUNKS, 2, size=1)  # c4 belongs to another document
    assert [p.text for p in edge.parts] == [CHUNKS[1].text, CHUNKS[2].text]
    (windowed,) = build_snippets(
        cands("c3"), CONF, mode=ExpansionMode.WINDOW, windows={"c3": edge}
    ).snippets
    assert windowed.prompt_text == CHUNKS[2].text
    with pytest.raises(ConfigError):
        window_from_neighbours(CHUNKS, 0, size=-1)
