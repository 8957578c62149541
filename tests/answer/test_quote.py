"""The figure a narrative answer's cited sentence states for what the question asks."""

from __future__ import annotations

import json
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pytest

from conftest import shared_data
from ragspine import Principal, Workspace
from ragspine.answer import quote as quote_module
from ragspine.answer.options import AskOptions
from ragspine.answer.question import read_question
from ragspine.answer.quote import quoted_figure
from ragspine.answer.types import AnswerStatus
from ragspine.eval.qa import fabricated_numbers
from ragspine.glossary import parse_glossary
from ragspine.narrative.filters.expr import parse_filter

PUBLIC = Principal.of("public")
RENT = (
    "Rent expense incurred under all operating leases during the years ended December 31, "
    "2007, 2006 and 2005 was $106.4 million, $81.5 million and $61.1 million, respectively."
)
CASH = (
    "Cash flow provided by operations was $6.8 billion in 2012, $6.1 billion in 2011 and $5.5 "
    "billion in 2010."
)
GLOSSARY = parse_glossary({})


def _quote(question: str, sentence: str, month: int = 1) -> str | None:
    found = quoted_figure(question, read_question(question, GLOSSARY), sentence, month)
    return None if found is None else found.written


@pytest.mark.parametrize(
    ("question", "sentence", "figure"),
    [
        ("What was the rent expense in 2007?", RENT, "$106.4 million"),
        ("What was the rent expense in 2005?", RENT, "$61.1 million"),
        (  # values first, years after
            "What was the stock-based compensation cost in 2010?",
            "Total stock-based compensation cost was $36 million, $52 million and $34 million "
            "in 2011, 2010 and 2009, respectively.",
            "$52 million",
        ),
        ("What was the cash flow provided by operations in 2011?", CASH, "$6.1 billion"),
        (  # the only figure, the only year
            "What was the net favorable prior period development in 2010?",
            "We experienced $503 million of net favorable prior period development in our P&C "
            "segments in 2010.",
            "$503 million",
        ),
        (  # no period asked: the only figure of a sentence naming no year
            "What is the total dividend based on the number of shares outstanding?",
            "This amounts to a total dividend of US$15.9 million based on the number of shares "
            "outstanding.",
            "US$15.9 million",
        ),
        (  # the day asked is the day the sentence names
            "What was the closing price of common stock as of 2/11/11?",
            "On February 11, 2011, the closing price of our common stock was $56.73 per share.",
            "$56.73",
        ),
        (  # a rate asked: a percent
            "What was the operating margin in 2014?",
            "The operating margin was 11.4% in 2014.",
            "11.4%",
        ),
        (  # a count: a bare number followed by what is counted
            "What was the number of gas customers in 2008?",
            "About 93000 gas customers had returned by December 31, 2008.",
            "93000",
        ),
        (  # a percent repeated in parentheses by the cleaned source is one figure
            "What was the effective tax rate in 2019?",
            "The effective tax rate was 21.5% (21.5%) in 2019.",
            "21.5%",
        ),
    ],
)
def test_the_figure_a_sentence_states_for_the_year_asked(
    question: str, sentence: str, figure: str
) -> None:
    assert _quote(question, sentence) == figure


@pytest.mark.parametrize(
    ("question", "sentence"),
    [
        ("What was the rent expense in 2008?", RENT),  # a year the sentence does not list
        (  # two lists of values: which one is aligned is not known
            "What were the unrealized losses in 2011?",
            "Unrealized losses totaled $303 million, or $189 million after-tax, and $523 "
            "million, or $317 million after-tax, as of December 31, 2011 and 2010, respectively.",
        ),
        (  # a list of three values for two years
            "What was the rent expense in 2007?",
            "Rent expense for 2007 and 2006 was $1 million, $2 million and $3 million, "
            "respectively.",
        ),
        (  # two figures, neither tied to a year
            "What was the pension expense in 2019?",
            "Pension expense will rise to $205 million in the 2019 plan from $160 million.",
        ),
        (  # one figure, but another year named beside it
            "What was the pension expense in 2019?",
            "Pension expense for 2019 was $205 million against 2018's.",
        ),
        # a change, a which-year pick, a share: no lookup a sentence states
        ("What was the change in rent expense from 2006 to 2007?", RENT),
        ("Which year had the highest rent expense?", RENT),
        ("What was the rent expense in 2007 and 2006?", RENT),
        # a constant of the question is never applied
        ("What was the rent expense in 2007 divided by 1000?", RENT),
        ("What was the rent expense in 2007, in thousands less 100?", RENT),
        # a rate asked, an amount stated; an amount asked, a percent stated
        ("What was the rent expense rate in 2007?", RENT),
        (
            "What was the operating income in 2014?",
            "Operating income was 11.4% of revenue in 2014.",
        ),
        # a month asked: a year's figure is not the month's
        (
            "What was the price of shares in February of 2009?",
            "The price of shares was $28.85 in 2009.",
        ),
        (  # a day of the year that is not its end: that day's figure
            "What was the closing price of common stock in 2009?",
            "On February 13, 2009, the closing price of our common stock was $28.85 per share.",
        ),
        (  # another day than the one asked
            "What was the closing price of common stock as of 2/11/11?",
            "On February 13, 2011, the closing price of our common stock was $56.73 per share.",
        ),
        # a sentence about something else
        ("What was the weighted average discount rate for pension plans in 2015?", CASH),
        (  # a bare number that is no count of what is asked
            "What was the total of notes payable?",
            "Note 8 describes the notes payable in total.",
        ),
        ("How did the rent expense change?", RENT),  # no amount asked
        ("Why was rent expense high in 2007?", RENT),
    ],
)
def test_no_figure_where_more_than_one_reading_is_left(question: str, sentence: str) -> None:
    assert _quote(question, sentence) is None


def test_a_fiscal_year_ends_where_the_glossary_says() -> None:
    sentence = "At June 30, 2019, the backlog of orders was $2.1 billion."
    assert _quote("What was the backlog of orders in 2019?", sentence, month=7) == "$2.1 billion"
    assert _quote("What was the backlog of orders in 2019?", sentence, month=1) is None


def _paragraph_workspace(tmp_path: Path, paragraphs: list[str]) -> Workspace:
    documents = [
        {
            "table": {"uid": "doc-rent", "table": [["", "2007"], ["Revenue", "500"]]},
            "paragraphs": [
                {"uid": str(i), "order": i, "text": t} for i, t in enumerate(paragraphs)
            ],
            "questions": [],
        }
    ]
    source = tmp_path / "docs.json"
    source.write_text(json.dumps(documents), "utf-8")
    workspace = Workspace.open(tmp_path / "ws", create=True)
    workspace.ingest_tatqa(source)
    return workspace


def _ask(workspace: Workspace, question: str) -> object:
    entity = workspace.glossary.entities.resolve("doc-rent")
    options = AskOptions(
        entity=entity, libraries=("tatqa",), filters=parse_filter({"entity": entity})
    )
    return workspace.ask(question, options, principal=PUBLIC)


def test_a_narrative_answer_leads_with_the_figure_and_cites_it(tmp_path: Path) -> None:
    """The figure comes first, cited by the sentence it is read from, which follows whole; it
    is in the answer's JSON, and every number of the answer is in the passage it cites."""
    ws = _paragraph_workspace(tmp_path, [RENT, "The company leases office space."])
    question = "What was the rent expense in 2006?"
    answer = _ask(ws, question)
    assert answer.route == "narrative" and answer.status is AnswerStatus.ANSWERED
    assert answer.quote is not None and answer.quote.value == Decimal("81.5")
    assert answer.text.startswith("The cited text gives $81.5 million for 2006. [1]\n\n")
    assert RENT in answer.text
    assert answer.to_dict()["quote"] == {
        "written": "$81.5 million",
        "value": "81.5",
        "magnitude": "million",
        "period": "2006",
        "marker": 1,
        "reading": "respectively",
    }
    assert fabricated_numbers(answer, question, ws.facts, _chunks(ws, answer), ()) == ([], False)
    assert "quote" not in _ask(ws, "Why does the company lease office space?").to_dict()


def _chunks(ws: Workspace, answer: object) -> dict[int, str]:
    from ragspine.eval.qa import _chunk_texts

    return _chunk_texts(ws, answer)


def test_a_figure_not_in_its_sentence_would_be_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reverse proof: a quote naming a number its sentence does not hold is flagged as
    fabricated by the evaluation's check."""
    ws = _paragraph_workspace(tmp_path, [RENT])
    real = quote_module.quoted_figure

    def wrong(*args: object, **kwargs: object) -> object:
        found = real(*args, **kwargs)  # type: ignore[arg-type]
        return None if found is None else replace(found, written="$91.5 million")

    monkeypatch.setattr(quote_module, "quoted_figure", wrong)
    question = "What was the rent expense in 2006?"
    answer = _ask(ws, question)
    assert answer.quote is not None
    fabricated, _ = fabricated_numbers(answer, question, ws.facts, _chunks(ws, answer), ())
    assert "91.5" in fabricated


def test_every_figure_named_on_tatqa_dev_is_written_in_its_cited_passage(
    tmp_path: Path,
) -> None:
    """Over the TAT-QA dev questions answered from text: each figure named is written, as
    named, in the passage its marker cites, and no answer holds a number from nowhere."""
    source = shared_data("tatqa", "tatqa_dataset_dev.json")
    documents = json.loads(source.read_text(encoding="utf-8"))
    ws = Workspace.open(tmp_path / "ws", create=True)
    ws.ingest_tatqa(source)
    named = 0
    for document in documents:
        entity = ws.glossary.entities.resolve(str(document["table"]["uid"]).strip())
        options = AskOptions(
            entity=entity, libraries=("tatqa",), filters=parse_filter({"entity": entity})
        )
        for item in document["questions"]:
            if item.get("answer_from") != "text":
                continue
            answer = ws.ask(item["question"], options, principal=PUBLIC)
            if answer.quote is None:
                continue
            named += 1
            chunk = _chunks(ws, answer)[answer.quote.marker]
            assert answer.quote.written in " ".join(chunk.split()), item["question"]
            found, _ = fabricated_numbers(
                answer, item["question"], ws.facts, _chunks(ws, answer), ()
            )
            assert found == [], (item["question"], found)
    assert named >= 5
