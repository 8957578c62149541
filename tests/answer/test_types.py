"""The shared answer shape: chunk and fact citations, JSON and terminal forms."""

from __future__ import annotations

import json

import pytest

from ragspine.answer.types import Answer, AnswerStatus, FactKey, Source, SourceKind
from ragspine.errors import ConfigError

CHUNK = Source.of_chunk(
    1,
    chunk_id="c1",
    doc_id="d1",
    library_id="reports",
    source_locator={"file": "a.md", "paragraph": 2},
    parent_locator="a.md#s1",
)
FACT = Source.of_fact(
    2,
    doc_id="acme-2023.pdf",
    locator="p. 4, table 2",
    fact=FactKey("revenue", "acme", "FY2023", "all"),
)


def test_a_source_cites_a_chunk_or_a_fact() -> None:
    assert CHUNK.kind is SourceKind.CHUNK and FACT.kind is SourceKind.FACT
    with pytest.raises(ConfigError):
        Source(1, "d1", "loc")
    with pytest.raises(ConfigError):
        Source(1, "d1", "loc", chunk_id="c1", fact=FactKey("m", "e", "p", "c"))


def test_one_answer_lists_both_kinds_of_citation() -> None:
    answer = Answer(
        "composite",
        status=AnswerStatus.ANSWERED,
        text="Revenue was 10 [2]; it grew [1].",
        sources=(CHUNK, FACT),
    )
    data = answer.to_dict(timings=False)
    json.dumps(data)
    assert data["sources"] == [
        {
            "marker": 1,
            "channel": "chunk",
            "chunk_id": "c1",
            "doc_id": "d1",
            "library_id": "reports",
            "source_locator": {"file": "a.md", "paragraph": 2},
            "parent_locator": "a.md#s1",
        },
        {
            "marker": 2,
            "channel": "fact",
            "kind": "fact",
            "doc_id": "acme-2023.pdf",
            "source_locator": "p. 4, table 2",
            "fact": {"metric": "revenue", "entity": "acme", "period": "FY2023", "channel": "all"},
        },
    ]
    assert answer.render().splitlines()[-2:] == [
        "[1] reports / d1 / c1: file=a.md, paragraph=2 (section a.md#s1)",
        "[2] acme-2023.pdf: p. 4, table 2 (revenue, acme, FY2023, all)",
    ]


def test_an_answer_without_material_has_no_sources() -> None:
    answer = Answer("narrative")
    assert answer.status is AnswerStatus.NO_MATERIAL and answer.render() == answer.text
