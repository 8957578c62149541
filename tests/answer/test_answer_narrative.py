"""``Workspace.answer_narrative`` and ``ragspine ask`` end to end over a real chunk store."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ragspine import NarrativeAnswer, Principal, Workspace
from ragspine.answer.guard import numbers_in
from ragspine.answer.types import NO_MATERIAL_TEXT, AnswerStatus
from ragspine.cli import main

REPORT = """# Annual report 2023

## Results

Revenue rose 12.5% to 4,210 million euros in 2023. Operating margin reached 18.2% after
cost savings. The board proposed a dividend of 1.40 euros per share.

## Outlook

For 2024 the group expects revenue growth of 5% to 7%. Margin should stay above 17%.
"""


@pytest.fixture()
def ws(workspace_dir: Path, tmp_path: Path) -> Workspace:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "annual.md").write_text(REPORT, encoding="utf-8")
    (docs / "memo.txt").write_text(
        "The revenue target of 9,999 million was discussed. Revenue margin plans vary.\n"
    )
    workspace = Workspace.open(workspace_dir)
    workspace.ingest_documents([docs], library="reports", window=1)
    return workspace


def _cited_sentences(answer: NarrativeAnswer) -> list[tuple[str, int]]:
    body = answer.text
    for note in answer.notes:
        body = body.replace(note, "")
    return [(m.group(1), int(m.group(2))) for m in re.finditer(r"(.+?) \[(\d+)\](?: |$)", body)]


def test_every_citation_points_at_a_child_holding_its_numbers(ws: Workspace) -> None:
    store = ws.chunks
    for question in ("How much did revenue rise in 2023?", "What margin is expected?", "dividend"):
        answer = ws.answer_narrative(question)
        assert answer.status is AnswerStatus.ANSWERED
        sentences = _cited_sentences(answer)
        assert sentences
        by_marker = {s.marker: s for s in answer.sources}
        for sentence, marker in sentences:
            source = by_marker[marker]
            (chunk,) = store.chunks_by_key(list(store.keys_of([source.chunk_id]).values())).values()
            assert chunk.doc_id == source.doc_id and chunk.library_id == source.library_id
            assert chunk.source_locator == source.source_locator
            for number in numbers_in(sentence):
                assert number in numbers_in(chunk.text), (sentence, chunk.text)


def test_the_answer_cites_the_revenue_figure(ws: Workspace) -> None:
    answer = ws.answer_narrative("How much did revenue rise in 2023?")
    assert "12.5%" in answer.text and "[1]" in answer.text
    first = answer.sources[0]
    assert first.doc_id == "annual.md" and first.source_locator["heading_path"] == [
        "Annual report 2023",
        "Results",
    ]
    assert first.parent_locator is not None
    assert answer.trace.routing is not None
    assert "answer:extractive" in answer.trace.stage_names


def test_no_material_gives_the_fixed_message(ws: Workspace) -> None:
    answer = ws.answer_narrative("zeppelin helium logistics")
    assert answer.status is AnswerStatus.NO_MATERIAL
    assert answer.text == NO_MATERIAL_TEXT and answer.sources == ()


def test_answers_are_deterministic(ws: Workspace, workspace_dir: Path) -> None:
    question = "What revenue growth and margin are expected for 2024?"
    first = json.dumps(ws.answer_narrative(question).to_dict(timings=False), sort_keys=True)
    second = json.dumps(ws.answer_narrative(question).to_dict(timings=False), sort_keys=True)
    reopened = Workspace.open(workspace_dir)
    third = json.dumps(reopened.answer_narrative(question).to_dict(timings=False), sort_keys=True)
    assert first == second == third


def test_ask_and_search_on_the_command_line(
    ws: Workspace, workspace_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["--workspace", str(workspace_dir)]
    assert main([*base, "ask", "How much did revenue rise in 2023?", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["status"] == "answered" and payload["route"] == "narrative"
    source = payload["sources"][0]
    assert {"chunk_id", "doc_id", "library_id", "source_locator", "parent_locator"} <= set(source)
    assert main([*base, "ask", "How much did revenue rise in 2023?"]) == 0
    out = capsys.readouterr().out
    assert "Sources:" in out and "[1] reports / annual.md / reports:annual.md#" in out
    assert main([*base, "ask", "revenue", "--channel", "structured", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "needs_clarification"
    assert main([*base, "ask", "revenue", "--channel", "sideways"]) == 2
    assert "unknown channel 'sideways'" in capsys.readouterr().err
    assert main([*base, "search", "revenue", "--filter", "year>=2020", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["snippets"] == []
    assert main([*base, "search", "revenue", "--filter", "year>>2020"]) == 2


def test_a_wider_search_for_the_entity_stays_within_the_options_limits(tmp_path: Path) -> None:
    """A review: passages about another company make the answer search again four times as
    deep; with near_duplicates that second search passed the 1,000 its stage allows and the
    ask failed (top_k 260 -> 1,040)."""
    docs = tmp_path / "docs"
    for folder, count in (("acme", 260), ("beta", 20)):
        (docs / folder).mkdir(parents=True)
        for n in range(count):
            said = "Why did travel costs of ACME rise? " if folder == "beta" else ""
            (docs / folder / f"{folder}{n}.txt").write_text(
                f"{said}Travel costs rose because of item {folder}{n}.\n", encoding="utf-8"
            )
    ws = Workspace.init(tmp_path / "ws")
    ws.set_glossary('[entities.acme]\nlabel = "ACME"\n[entities.beta]\nlabel = "Beta Corp"\n')
    for folder, entity in (("acme", "ACME"), ("beta", "Beta Corp")):
        ws.ingest_documents([docs / folder], library="lib", metadata={"entity": entity})
    answer = ws.ask(
        "Why did travel costs of ACME rise?",
        principal=Principal.of("public"),
        channel="narrative",
        top_k=260,
        near_duplicates=0.99,
    )
    assert answer.status is AnswerStatus.ANSWERED, answer.text
    assert "searched again for 1000 passages" in json.dumps(answer.trace.to_dict())
    ws.close()
