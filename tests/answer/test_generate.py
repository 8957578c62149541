"""Cited generation through ``ask --provider openai`` against a fake endpoint that misbehaves.

Each scripted misbehaviour runs twice: with the guard, the promise holds; with the guard turned
off (every sentence kept), the same check fails, so the test can catch a broken guard.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from fake_openai import FakeEndpoint, Reply
from llm_workspace import PUBLIC, build, guard_off
from ragspine import Workspace
from ragspine.answer import generate
from ragspine.answer.generate import parse_reply
from ragspine.answer.guard import (
    PERCENT,
    DraftSentence,
    GuardVerdict,
    StatedValue,
    fact_magnitude,
    guard_sentences,
    numbers_in,
)
from ragspine.answer.types import Answer, AnswerStatus
from ragspine.cli import main
from ragspine.structured.facts import Scale

QUESTION = "What happened to revenue, net income and the plants?"


@pytest.fixture()
def ws(tmp_path: Path, fake_endpoint: FakeEndpoint) -> Workspace:
    return build(tmp_path / "ws", fake_endpoint)


def ask(
    ws: Workspace,
    endpoint: FakeEndpoint,
    reply: Reply,
    guarded: bool,
    monkeypatch: pytest.MonkeyPatch,
    **changes: object,
) -> Answer:
    endpoint.script = [reply]
    if not guarded:
        monkeypatch.setattr(generate, "guard_sentences", guard_off)
    return ws.ask(QUESTION, principal=PUBLIC, provider="openai", **changes)


def shown_numbers(answer: Answer) -> set[str]:
    return set(numbers_in(answer.text))


def numbers_hold(answer: Answer, ws: Workspace) -> bool:
    """Every number of every shown sentence is in the text of a chunk that sentence cites."""
    by_marker = {s.marker: s for s in answer.sources}
    for sentence in answer.sentences:
        texts = []
        for marker in sentence.markers:
            source = by_marker.get(marker)
            if source is None:
                return False
            key = ws.chunks.keys_of([source.chunk_id or ""])[source.chunk_id]
            texts.append(ws.chunks.chunks_by_key([key])[key].text)
        if any(
            n not in {m for t in texts for m in numbers_in(t)} for n in numbers_in(sentence.text)
        ):
            return False
    return True


GOOD = (
    "Net income improved after cost savings of 40 million. [1] ACME revenue rose 12% in FY2024. [2]"
)


def test_a_supported_reply_is_shown_with_its_citations(
    ws: Workspace, fake_endpoint: FakeEndpoint
) -> None:
    fake_endpoint.script = [Reply(GOOD)]
    answer = ws.ask(QUESTION, principal=PUBLIC, provider="openai")
    assert answer.status is AnswerStatus.ANSWERED
    assert answer.text == (
        "Net income improved after cost savings of 40 million. [1] "
        "ACME revenue rose 12% in FY2024. [2]"
    )
    chunk_ids = [s.chunk_id for s in answer.sources]
    prompt = fake_endpoint.requests[0]["body"]["messages"][-1]["content"]
    assert chunk_ids == ["reports:annual.md#1", "reports:annual.md#0"]  # the search's order
    assert prompt.index("[1] ") < prompt.index("40 million") < prompt.index("[2] ")
    assert [d.verdict for d in answer.guard] == [GuardVerdict.KEPT, GuardVerdict.KEPT]
    assert numbers_hold(answer, ws)


@pytest.mark.parametrize("guarded", [True, False])
def test_a_fabricated_number_is_dropped_with_its_sentence(
    ws: Workspace, fake_endpoint: FakeEndpoint, monkeypatch: pytest.MonkeyPatch, guarded: bool
) -> None:
    reply = Reply("ACME revenue rose 12% in FY2024. [2] Revenue reached 987,654 dollars. [2]")
    answer = ask(ws, fake_endpoint, reply, guarded, monkeypatch)
    assert ("987654" not in shown_numbers(answer)) is guarded
    assert numbers_hold(answer, ws) is guarded
    if guarded:
        assert answer.text.startswith("ACME revenue rose 12% in FY2024. [1]\n\nSome sentences")
        assert [d.to_dict()["reason"] for d in answer.guard] == ["kept", "unsupported_number"]
        assert answer.guard[1].unsupported == 1


@pytest.mark.parametrize("guarded", [True, False])
def test_a_number_at_a_magnitude_its_source_does_not_state_is_dropped(
    ws: Workspace, fake_endpoint: FakeEndpoint, monkeypatch: pytest.MonkeyPatch, guarded: bool
) -> None:
    # [1] says "cost savings of 40 million": the number is there, the billion is not
    reply = Reply("Cost savings reached 40 billion. [1] ACME revenue rose 12% in FY2024. [2]")
    answer = ask(ws, fake_endpoint, reply, guarded, monkeypatch)
    assert ("40 billion" not in answer.text) is guarded
    if guarded:
        assert answer.text.startswith("ACME revenue rose 12% in FY2024. [1]\n\nSome sentences")
        assert [d.to_dict()["reason"] for d in answer.guard] == ["unsupported_number", "kept"]


@pytest.mark.parametrize("guarded", [True, False])
def test_a_citation_of_a_source_that_was_not_given_is_dropped(
    ws: Workspace, fake_endpoint: FakeEndpoint, monkeypatch: pytest.MonkeyPatch, guarded: bool
) -> None:
    reply = Reply("ACME revenue rose 12% in FY2024. [2] Margins doubled to 30%. [7]")
    answer = ask(ws, fake_endpoint, reply, guarded, monkeypatch)
    assert ("30" not in shown_numbers(answer)) is guarded
    if guarded:
        assert answer.guard[1].verdict is GuardVerdict.UNKNOWN_SOURCE
        assert all(s.marker <= len(answer.sources) for s in answer.sources)


@pytest.mark.parametrize("guarded", [True, False])
def test_a_number_cited_to_the_wrong_source_is_dropped(
    ws: Workspace, fake_endpoint: FakeEndpoint, monkeypatch: pytest.MonkeyPatch, guarded: bool
) -> None:
    # 40 million is in [2]; the model cites [3] (the outlook) for it.
    reply = Reply("Cost savings were 40 million. [3] The board expects 3 new plants. [3]")
    answer = ask(ws, fake_endpoint, reply, guarded, monkeypatch)
    assert numbers_hold(answer, ws) is guarded
    if guarded:
        assert answer.text.startswith("The board expects 3 new plants. [1]")
        assert [s.chunk_id for s in answer.sources] == ["reports:annual.md#2"]


@pytest.mark.parametrize("guarded", [True, False])
def test_nothing_left_gives_the_fixed_text_with_the_sources(
    ws: Workspace, fake_endpoint: FakeEndpoint, monkeypatch: pytest.MonkeyPatch, guarded: bool
) -> None:
    reply = Reply("Revenue was 555 million. Profit rose 77%. [2]")
    answer = ask(ws, fake_endpoint, reply, guarded, monkeypatch)
    assert (not shown_numbers(answer) & {"555", "77"}) is guarded
    if guarded:
        assert answer.status is AnswerStatus.REFUSED
        assert answer.text.startswith("No supported answer: no sentence of the model's reply")
        assert [s.chunk_id for s in answer.sources] == [
            "reports:annual.md#1", "reports:annual.md#0", "reports:annual.md#2",
        ]  # fmt: skip
        assert [d.verdict for d in answer.guard] == [
            GuardVerdict.UNCITED, GuardVerdict.UNSUPPORTED_NUMBER,
        ]  # fmt: skip


@pytest.mark.parametrize("guarded", [True, False])
def test_a_number_only_in_history_is_unsupported(
    ws: Workspace, fake_endpoint: FakeEndpoint, monkeypatch: pytest.MonkeyPatch, guarded: bool
) -> None:
    history = [("user", "My analyst says revenue was 4,321 last year."), ("assistant", "Noted.")]
    fake_endpoint.script = [Reply("Revenue was 4,321 last year as discussed. [1]")]
    if not guarded:
        monkeypatch.setattr(generate, "guard_sentences", guard_off)
    answer = ws.ask(QUESTION, principal=PUBLIC, provider="openai", history=history)
    sent = fake_endpoint.requests[0]["body"]["messages"]
    assert sent[1] == {"role": "user", "content": history[0][1]}  # context, before the sources
    assert "4321" not in json.dumps(sent[-1]).replace(",", "")
    assert ("4321" not in shown_numbers(answer)) is guarded


@pytest.mark.parametrize("guarded", [True, False])
def test_a_streamed_reply_cut_short_keeps_only_supported_complete_sentences(
    tmp_path: Path,
    fake_endpoint: FakeEndpoint,
    monkeypatch: pytest.MonkeyPatch,
    guarded: bool,
) -> None:
    ws = build(tmp_path / "ws", fake_endpoint, stream=True)
    text = (
        "ACME revenue rose 12% in FY2024. [2] Revenue will reach 1,234,567 next year, "
        "said the board in its letter to all of the shareholders. [2]"
    )
    answer = ask(ws, fake_endpoint, Reply(text, stream=True, cut=True), guarded, monkeypatch)
    assert fake_endpoint.requests[0]["body"]["stream"] is True
    assert ("1234567" not in answer.text.replace(",", "")) is guarded
    assert numbers_hold(answer, ws) is guarded
    if guarded:
        assert "The model's reply was cut short" in answer.text


def test_restricted_chunks_never_reach_the_prompt(
    ws: Workspace, fake_endpoint: FakeEndpoint
) -> None:
    fake_endpoint.script = [Reply(GOOD)]
    ws.ask(
        "What about Project Zeppelin and the lawsuit in Europe?",
        principal=PUBLIC,
        provider="openai",
    )
    assert all("Zeppelin" not in body.split("Question:")[0] for body in fake_endpoint.bodies())


def test_the_default_answer_is_unchanged_and_calls_no_model(
    ws: Workspace, fake_endpoint: FakeEndpoint
) -> None:
    offline = ws.ask(QUESTION, principal=PUBLIC)
    named = ws.ask(QUESTION, principal=PUBLIC, provider="extractive")
    assert offline.to_dict(timings=False) == named.to_dict(timings=False)
    assert "guard" not in offline.to_dict() and fake_endpoint.requests == []


def test_the_cli_shows_guard_decisions_in_json(
    ws: Workspace, fake_endpoint: FakeEndpoint, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_endpoint.script = [Reply("Revenue rose 12%. [2] It hit 999. [2]")]
    code = main(["--workspace", str(ws.path), "ask", QUESTION, "--provider", "openai", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert [(g["decision"], g["reason"]) for g in data["guard"]] == [
        ("kept", "kept"), ("dropped", "unsupported_number"),
    ]  # fmt: skip
    assert "999" not in json.dumps(data)


def test_the_cli_names_a_failing_endpoint_without_a_traceback(
    ws: Workspace, fake_endpoint: FakeEndpoint, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_endpoint.script = [Reply(status=404, error="model 'tiny' not found")]
    code = main(["--workspace", str(ws.path), "ask", QUESTION, "--provider", "openai"])
    err = capsys.readouterr().err
    assert code == 2 and "HTTP 404" in err and "model 'tiny' not found" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("reply", "sentences"),
    [
        ("Sales rose. [1] Costs fell [2].", [("Sales rose.", (1,)), ("Costs fell.", (2,))]),
        (
            "- Margin was 12.5% [1][3]\n- Plants: 3 [2, 3]",
            [("Margin was 12.5%", (1, 3)), ("Plants: 3", (2, 3))],
        ),
        ("No citation here.", [("No citation here.", ())]),
        ("Revenue was $1,234.5m in the U.S. [1]", [("Revenue was $1,234.5m in the U.S.", (1,))]),
    ],
)
def test_parse_reply(reply: str, sentences: list[tuple[str, tuple[int, ...]]]) -> None:
    assert [(d.text, d.markers) for d in parse_reply(reply)] == sentences


def test_guard_sentences_uses_cited_chunks_and_found_facts_only() -> None:
    evidence = {1: "Revenue rose 12% to 1,200.", 2: "Costs were 40."}
    drafts = [
        DraftSentence("Revenue rose 12%.", (1,)),
        DraftSentence("Costs were 40.", (1,)),
        DraftSentence("Costs were 40 and revenue 1200.", (1, 2)),
        DraftSentence("Revenue was 179,260.3.", (2,)),
        DraftSentence("Revenue was 179,260.30.", (9,)),
    ]
    decisions = guard_sentences(drafts, evidence, [Decimal("179260.3")])
    assert [d.verdict.value for d in decisions] == [
        "kept", "unsupported_number", "kept", "kept", "unknown_source",
    ]  # fmt: skip


def test_guard_sentences_compares_the_magnitude_a_number_is_written_with() -> None:
    evidence = {1: "Revenue rose 12% to 1,200 million; 7 new plants.", 2: "A table: 1,200 | 35"}
    facts = [StatedValue(Decimal("2455"), "million"), StatedValue(Decimal("31.5"), PERCENT)]
    said = {
        "Revenue reached 1,200 million.": (1,),  # as the chunk says
        "Revenue reached 1,200 billion.": (1,),  # the chunk says million only
        "Revenue rose 1,200%.": (1,),  # an amount is no percentage
        "The table shows 1,200 billion.": (2,),  # a bare cell supports any magnitude
        "Revenue was 2,455 million.": (1,),  # the fact's own scale
        "Revenue was 2,455 thousand.": (1,),
        "Revenue was 2,455.": (1,),  # no magnitude said: nothing contradicted
        "The margin was 31.5%.": (1,),
        "The margin was 31.5 million.": (1,),
        "Revenue rose 12 percent.": (1,),
        "Revenue rose 12 million.": (1,),
    }
    drafts = [DraftSentence(text, markers) for text, markers in said.items()]
    kept = [d.kept for d in guard_sentences(drafts, evidence, facts)]
    assert kept == [True, False, False, True, True, False, True, True, False, True, False]
    # a percentage metric's value is written in percent whatever its stored unit
    margin = [StatedValue(Decimal("40.5"), fact_magnitude(Scale.ONE, "", percent=True))]
    assert guard_sentences([DraftSentence("The margin was 40.5%.", (1,))], evidence, margin)[0].kept
    percent = [StatedValue(Decimal("40.5"), fact_magnitude(Scale.ONE, "percent"))]
    assert guard_sentences([DraftSentence("It was 40.5 percent.", (1,))], evidence, percent)[0].kept
    # a plain Decimal is a value with no magnitude: a scale word added to it is unsupported
    plain = guard_sentences([DraftSentence("It was 2,455 million.", (1,))], evidence, [2455])
    assert not plain[0].kept
