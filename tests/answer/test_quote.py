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
STOCK = (
    "Total stock-based compensation cost was $36 million, $52 million and $34 million in 2011, "
    "2010 and 2009, respectively."
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
        ("What was the stock-based compensation cost in 2010?", STOCK, "$52 million"),
        ("What was the stock-based compensation cost in 2009?", STOCK, "$34 million"),
        (  # years first, in the subject
            "What was goodwill in 2018?",
            "At December 31, 2019 and 2018, goodwill was $5.0 billion and $4.0 billion, "
            "respectively.",
            "$4.0 billion",
        ),
        (  # years after, ending the sentence
            "What was the rent expense in 2018?",
            "Rent expense was $12 million, $11 million and $10 million for the years ended "
            "December 31, 2019, 2018 and 2017, respectively.",
            "$11 million",
        ),
        ("What was the cash flow provided by operations in 2011?", CASH, "$6.1 billion"),
        (  # the subject's year; the comparison after the figure is not read
            "What was revenue in 2019?",
            "Revenue in 2019 was $5.0 billion, up 11% from $4.5 billion in 2018.",
            "$5.0 billion",
        ),
        (
            "What was the pension expense in 2019?",
            "Pension expense for 2019 was $205 million against 2018's.",
            "$205 million",
        ),
        (
            "What was the net loss in 2019?",
            "We incurred a net loss of $12.3 million in 2019.",
            "$12.3 million",
        ),
        (  # no period asked: the only figure of a sentence naming no year
            "What is the amount of federal alternative minimum tax credit carryforwards?",
            "In addition, the Company has $0.3 million of federal alternative minimum tax "
            "credit carryforwards.",
            "$0.3 million",
        ),
        (  # the day asked is the day the sentence names
            "What was the closing price of common stock as of 2/11/11?",
            "On February 11, 2011, the closing price of our common stock was $56.73.",
            "$56.73",
        ),
        (
            "What was the operating margin in 2014?",
            "The operating margin was 11.4% in 2014.",
            "11.4%",
        ),
        (
            "What was the operating margin in 2019?",
            "Operating margin was \u22122.5% in 2019.",
            "-2.5%",
        ),
        (  # a count: a bare number
            "What was the number of employees in 2019?",
            "The number of employees was 15,000 at December 31, 2019.",
            "15,000",
        ),
        (  # a percent repeated in parentheses by the cleaned source is one figure
            "What was the effective tax rate in 2019?",
            "The effective tax rate was 21.5% (21.5%) in 2019.",
            "21.5%",
        ),
        (
            "What was the rent expense in 2019?",
            "Rent expense totaled approximately $12 million in 2019.",
            "approximately $12 million",
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
        ("What was the stock-based compensation cost in 2008?", STOCK),  # a year not listed
        # a qualifier the question does not say: rent under operating leases only
        ("What was the rent expense in 2007?", RENT),
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
        # a part, a per-share figure, another segment, another kind of figure
        (
            "What was net income in 2019?",
            "Net income attributable to noncontrolling interests was $15 million in 2019.",
        ),
        ("What was net income in 2019?", "Net income per diluted share was $2.50 in 2019."),
        (
            "What was the operating income of the Energy segment in 2019?",
            "Operating income for the Industrial segment was $300 million in 2019.",
        ),
        ("What was the EBITDA in 2019?", "Adjusted EBITDA was $300 million in 2019."),
        (
            "What was interest expense in 2019?",
            "Interest expense was $5 million related to the notes in 2019.",
        ),
        (
            "What was the income tax expense in 2019?",
            "We recorded an income tax benefit of $20 million in 2019.",
        ),
        # a change, a flow, a forecast, a range, a part of the year
        ("What was revenue in 2019?", "Revenue increased $50 million in 2019 compared to 2018."),
        ("What was total debt in 2019?", "We repaid $500 million of debt in 2019."),
        (
            "What was the net income in 2018?",
            "Compared to net income of $500 million in 2018, it rose.",
        ),
        (
            "What were capital expenditures in 2020?",
            "Capital expenditures are expected to be $1.2 billion in 2020.",
        ),
        (
            "What were capital expenditures in 2020?",
            "Capital expenditures were $1.0 to $1.2 billion in 2020.",
        ),
        ("What was revenue in 2019?", "Revenue in the fourth quarter of 2019 was $1.2 billion."),
        (
            "What was revenue in 2019?",
            "Revenue for the three months ended December 31, 2019 was $1.3 billion.",
        ),
        ("What was revenue in 2019?", "Revenue was $1.2 billion in the fourth quarter of 2019."),
        # a scale the figure does not carry
        (
            "What was the rent expense in 2019?",
            "Rent expense was $12,000 and $11,000 (in thousands) in 2019 and 2018, respectively.",
        ),
        # a change, a which-year pick, two years: no lookup a sentence states
        ("What was the change in stock-based compensation cost from 2010 to 2011?", STOCK),
        ("Which year had the highest stock-based compensation cost?", STOCK),
        ("What was the stock-based compensation cost in 2011 and 2010?", STOCK),
        # a constant of the question is never applied
        ("What was the stock-based compensation cost in 2011 divided by 1000?", STOCK),
        ("What was the stock-based compensation cost in 2011, in thousands less 100?", STOCK),
        # a rate asked, an amount stated; an amount asked, a percent stated
        ("What was the stock-based compensation cost rate in 2011?", STOCK),
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
            "On February 13, 2009, the closing price of our common stock was $28.85.",
        ),
        (  # another day than the one asked
            "What was the closing price of common stock as of 2/11/11?",
            "On February 13, 2011, the closing price of our common stock was $56.73.",
        ),
        ("What was the weighted average discount rate for pension plans in 2015?", CASH),
        ("What was the total of notes payable?", "Note 8 describes the notes payable in total."),
        ("How did the stock-based compensation cost change?", STOCK),  # no amount asked
        ("Why was stock-based compensation cost high in 2011?", STOCK),
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
    ws = _paragraph_workspace(tmp_path, [STOCK, "The company leases office space."])
    question = "What was the stock-based compensation cost in 2010?"
    answer = _ask(ws, question)
    assert answer.route == "narrative" and answer.status is AnswerStatus.ANSWERED
    assert answer.quote is not None and answer.quote.value == Decimal("52")
    assert answer.text.startswith("The cited text gives $52 million for 2010. [1]\n\n")
    assert STOCK in answer.text
    assert answer.to_dict()["quote"] == {
        "written": "$52 million",
        "value": "52",
        "magnitude": "million",
        "period": "2010",
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
    ws = _paragraph_workspace(tmp_path, [STOCK])
    real = quote_module.quoted_figure

    def wrong(*args: object, **kwargs: object) -> object:
        found = real(*args, **kwargs)  # type: ignore[arg-type]
        return None if found is None else replace(found, written="$62 million")

    monkeypatch.setattr(quote_module, "quoted_figure", wrong)
    question = "What was the stock-based compensation cost in 2010?"
    answer = _ask(ws, question)
    assert answer.quote is not None
    fabricated, _ = fabricated_numbers(answer, question, ws.facts, _chunks(ws, answer), ())
    assert "62" in fabricated


def test_every_figure_named_on_tatqa_dev_is_written_in_its_cited_passage(
    tmp_path: Path,
) -> None:
    """Over the TAT-QA dev questions: each figure named is written, as named, in the passage
    its marker cites, and no answer naming one holds a number from nowhere."""
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
    assert named >= 3


def test_every_cited_sentence_is_read_and_two_figures_name_none(tmp_path: Path) -> None:
    """The sentence ranked first may state another figure (a part of the one asked); the one
    stating the figure asked is found among the others. Two sentences stating different
    figures for the same question leave it to the reader."""
    ws = _paragraph_workspace(
        tmp_path,
        [
            "Net income attributable to noncontrolling interests was $15 million in 2019.",
            "Net income was $500 million in 2019, compared to $450 million in 2018.",
        ],
    )
    answer = _ask(ws, "What was net income in 2019?")
    assert answer.quote is not None and answer.quote.written == "$500 million"
    assert answer.text.startswith("The cited text gives $500 million for 2019. [1]")
    (tmp_path / "other").mkdir()
    other = _paragraph_workspace(
        tmp_path / "other",
        [
            "Net income was $500 million in 2019, compared to $450 million in 2018.",
            "As restated, net income was $480 million in 2019.",
        ],
    )
    assert _ask(other, "What was net income in 2019?").quote is None
