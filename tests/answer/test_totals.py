"""A row proven, by its table's sums, to be a part of a total is named by the total's words
(``the revenue from UK``), unless the row's own words are all the total's (then the question
may name the total); a count asked for is never answered with a negative figure as it stands."""

from __future__ import annotations

import re
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pytest

from conftest import ask_table, tatqa_workspace
from ragspine import Workspace
from ragspine.answer.options import AskOptions
from ragspine.answer.types import AnswerStatus
from ragspine.security import PUBLIC, Sensitivity
from ragspine.structured.facts import Fact, Scale, utc_now

TABLES = {
    "geo": [
        ["", "Year-ended 31 March 2019", "Year-ended 31 March 2018"],
        ["Revenue from external customers by country", "$M", "$M"],
        ["UK", "83.2", "73.5"],
        ["USA", "222.2", "199.0"],
        ["Germany", "143.5", "128.4"],
        ["Other countries", "261.7", "238.1"],
        ["Total revenue from external customers by country", "710.6", "639.0"],
    ],
    # the same rows, but the total is not their sum (a row left out): no proof
    "loose": [
        ["", "2019", "2018"],
        ["UK", "83.2", "73.5"],
        ["USA", "222.2", "199.0"],
        ["Total revenue from external customers by country", "999.9", "888.8"],
    ],
    # the row's words are all the total's: a question saying them may name the total
    "ppe": [
        ["(in thousands)", "2019", "2018"],
        ["Land", "$672", "$672"],
        ["Machinery and equipment", "1,372", "1,296"],
        ["Land, property and equipment, gross", "$2,044", "$1,968"],
    ],
    # a cost table: its parts are costs, whatever the total says after "of"
    "costs": [
        ["(in millions)", "2019", "2018"],
        ["Products", "300", "250"],
        ["Services", "200", "150"],
        ["Total cost of revenue", "500", "400"],
    ],
    # a total netting unlike parts: a liability is no part of the net assets
    "netted": [
        ["", "2019", "2018"],
        ["Deferred tax assets", "500", "450"],
        ["Deferred tax liabilities", "(200)", "(180)"],
        ["Net deferred tax assets", "300", "270"],
    ],
    # shares of a total in percent
    "pct": [
        ["", "2019", "2018"],
        ["UK", "40%", "41%"],
        ["USA", "60%", "59%"],
        ["Total revenue", "100%", "100%"],
    ],
    "signed": [
        ["", "2019", "2018"],
        ["Cash conversion cycle (days)", "-5", "-3"],
        ["Net increase (decrease) in number of shares", "(40)", "25"],
        ["Number of stores closed", "(7)", "(3)"],
        ["Net loss", "(500)", "(400)"],
        ["Employees", "1,000", "900"],
    ],
    "noncur": [
        ["", "2019", "2018"],
        ["UK", "10", "8"],
        ["USA", "20", "15"],
        ["Total non-current assets", "30", "23"],
    ],
    "spend": [
        ["", "2019", "2018"],
        ["Salaries", "10", "8"],
        ["Rent", "20", "15"],
        ["Total operating expenses and capital expenditures", "30", "23"],
    ],
    # a bare "Total" adding up every expense row
    "staff": [
        ["", "2019", "2018"],
        ["Wages and salaries", "191,459", "158,371"],
        ["Pension expenses", "8,408", "6,937"],
        ["Restructuring expenses", "108", "178"],
        ["Total", "199,975", "165,486"],
    ],
    # the same, with an expense row outside the sum (after the total)
    "staff2": [
        ["", "2019", "2018"],
        ["Wages and salaries", "191,459", "158,371"],
        ["Pension expenses", "8,408", "6,937"],
        ["Total", "199,867", "165,308"],
        ["Travel expenses", "500", "400"],
    ],
    # a bare "Total" that is no proven sum of the rows above it
    "staff3": [
        ["", "2019", "2018"],
        ["Wages and salaries", "191,459", "158,371"],
        ["Pension expenses", "8,408", "6,937"],
        ["Total", "999,999", "888,888"],
    ],
    # sections of one row each: the heading names its row
    "affil": [
        ["", "2019", "2018"],
        ["Sales:", "", ""],
        ["Product and equipment sales to affiliates", "$10,436", "$26,069"],
        ["Purchases", "", ""],
        ["Purchases of resale inventories and services", "9,399", "256,660"],
        ["Fees:", "", ""],
        ["Management fees", "500", "400"],
        ["Licence fees", "300", "200"],
        ["Other", "", ""],
        ["Dividends paid", "56,028", "54,810"],
    ],
    # found by the second review: each answered with a lone row before its rules
    "cogs": [  # the question says a longer heading
        ["(in thousands)", "2019", "2018"],
        ["Revenue:", "", ""],
        ["Product revenue", "900", "800"],
        ["Cost of revenue:", "", ""],
        ["Product", "400", "350"],
        ["Services", "100", "90"],
        ["Gross profit", "400", "360"],
    ],
    "nrv": [  # the next heading is a sub-section: "Product" is one line of net revenues
        ["(in millions)", "2019", "2018"],
        ["Net revenues:", "", ""],
        ["Product", "300", "250"],
        ["Services:", "", ""],
        ["Maintenance", "50", "40"],
        ["Consulting", "30", "20"],
        ["Total net revenues", "380", "310"],
    ],
    "ns": [  # another row says the heading's words
        ["", "2019", "2018"],
        ["Net sales", "50,000", "45,000"],
        ["Sales:", "", ""],
        ["Product and equipment sales to affiliates", "10,436", "26,069"],
        ["Purchases:", "", ""],
        ["Purchases of inventories", "9,399", "8,660"],
    ],
    "mix": [  # a part of another kind: the Total is no total revenue
        ["", "2019", "2018"],
        ["Domestic revenue", "500", "450"],
        ["Foreign revenue", "300", "280"],
        ["Interest income", "50", "40"],
        ["Total", "850", "770"],
    ],
    "roll": [
        ["", "Shares", "Weighted-Average Grant Date Fair Value"],
        ["Non-vested at December 31, 2018", "100,000", "$10.00"],
        ["Granted", "50,000", "$12.00"],
        ["Vested", "(37,368)", "$9.00"],
        ["Forfeited", "(12,632)", "$11.00"],
        ["Non-vested at December 31, 2019", "100,000", "$11.00"],
    ],
}


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return tatqa_workspace(tmp_path_factory.mktemp("totals"), TABLES)


@pytest.mark.parametrize(
    ("question", "figure"),
    [
        ("What is the Revenue from UK in 2019?", "83.2"),
        (
            "What was the change in revenue from external customers from UK in 2019 from 2018?",
            "9.7",
        ),
        ("In which year was the revenue from external customers in the UK larger?", "FY2019"),
    ],
)
def test_a_part_of_a_total_is_named_by_the_totals_words(
    ws: Workspace, question: str, figure: str
) -> None:
    """UK, USA, Germany and Other countries sum to the total in both years: the revenue from
    UK is the row UK. Before, each was asked back ('revenue' is said by the total only)."""
    answer = ask_table(ws, "geo", question)
    assert answer.status is AnswerStatus.ANSWERED, question
    assert figure in answer.text


def test_without_a_proven_sum_the_totals_words_still_ask(ws: Workspace) -> None:
    answer = ask_table(ws, "loose", "What is the Revenue from UK in 2019?")
    assert answer.status is AnswerStatus.NEEDS_CLARIFICATION
    assert "83.2" not in answer.text


@pytest.mark.parametrize(
    "question",
    [
        "What is the gross cost of land, property, and equipment in 2019?",
        "What is the ratio of the gross cost of land, property, and equipment in 2019 to 2018?",
    ],
)
def test_a_part_whose_words_are_all_the_totals_is_not_the_total(
    ws: Workspace, question: str
) -> None:
    """Land sums into 'Land, property and equipment, gross': a question saying the total's
    words names the total, not Land (a first version answered 672 / 672 = 1.00 here)."""
    answer = ask_table(ws, "ppe", question)
    assert answer.status is not AnswerStatus.ANSWERED, question
    assert "672" not in answer.text


@pytest.mark.parametrize(
    ("uid", "question", "figure"),
    [
        ("costs", "What is the services revenue in 2019?", "200"),
        ("costs", "What was the change in services revenue from 2018 to 2019?", "50"),
        ("netted", "What is the net deferred tax liabilities in 2019?", "200"),
        ("pct", "What is the UK revenue in 2019?", "40"),
        ("geo", "How many customers were in the UK in 2019?", "83.2"),
        # a third review: the question must say all of what the total counts, in words the
        # row and the total account for, and never as a count
        ("noncur", "What were the current assets in the UK in 2019?", "10"),
        ("noncur", "What is the UK total assets in 2019?", "10"),
        ("spend", "What is the capital expenditures on rent in 2019?", "20"),
        ("geo", "What is the count of customers in the UK in 2019?", "83.2"),
        ("geo", "What were the UK customers in 2019?", "83.2"),
        ("geo", "What is the UK deferred revenue from external customers in 2019?", "83.2"),
        ("geo", "What is the UK revenue per share in 2019?", "83.2"),
    ],
)
def test_a_total_of_unlike_parts_or_a_count_names_no_part(
    ws: Workspace, uid: str, question: str, figure: str
) -> None:
    """A review found each answered with the part: a cost as the services revenue ('revenue'
    is the total's word after 'of'), a liability as a net figure, a percentage share as an
    amount, an amount as a number of customers. Each stays asked back."""
    answer = ask_table(ws, uid, question)
    assert answer.status is AnswerStatus.NEEDS_CLARIFICATION, question
    assert figure not in answer.text


def test_a_row_named_as_a_count_is_not_answered_negative(ws: Workspace) -> None:
    """A fourth review found 'the number of stores closed' answered -7: the count words were
    the row's own, so no count was read in the question."""
    answer = ask_table(ws, "signed", "What was the number of stores closed in 2019?")
    assert answer.status is AnswerStatus.NEEDS_CLARIFICATION
    assert "never negative" in answer.text


def test_two_parts_named_together_are_each_answered(ws: Workspace) -> None:
    """A fourth review found this asked back: each row was a word amid the other's."""
    answer = ask_table(ws, "geo", "What is the revenue from the UK and the USA in 2019?")
    assert answer.status is AnswerStatus.ANSWERED
    assert "83.2" in answer.text and "222.2" in answer.text


def test_a_count_is_not_answered_with_a_negative_figure(ws: Workspace) -> None:
    """The roll-forward stores Forfeited as written, (12,632): the number forfeited is a
    count, so the stored figure is shown and the sign asked about (before: answered -12,632)."""
    answer = ask_table(ws, "roll", "What is the number of non-vested shares forfeited in 2019?")
    assert answer.status is AnswerStatus.NEEDS_CLARIFICATION
    assert "12,632" in answer.text and "never negative" in answer.text


def test_a_negative_figure_not_asked_as_a_count_is_answered_as_stored(ws: Workspace) -> None:
    answer = ask_table(ws, "roll", "What were the non-vested shares forfeited in 2019?")
    assert answer.status is AnswerStatus.ANSWERED
    assert "-12,632" in answer.text or "\N{MINUS SIGN}12,632" in answer.text


@pytest.mark.parametrize(
    ("question", "figure"),
    [
        # a number of days is a measure, and may be negative
        ("How many days was the cash conversion cycle in 2019?", "5"),
        # two metrics: the count is of employees, not of the net loss
        ("What is the number of employees and the net loss in 2019?", "500"),
        # "number of" in the row's own name: a signed change, answered as stored
        ("What is the net increase (decrease) in number of shares in 2019?", "40"),
    ],
)
def test_a_negative_measure_or_another_metric_is_no_negative_count(
    ws: Workspace, question: str, figure: str
) -> None:
    """A review found these asked back by a first version of the count rule."""
    answer = ask_table(ws, "signed", question)
    assert answer.status is AnswerStatus.ANSWERED, question
    assert figure in answer.text


def test_a_bare_total_is_named_by_the_words_of_the_rows_it_adds_up(ws: Workspace) -> None:
    """'expenses' is said by rows that 'Total' is the proven sum of: the total personnel
    expenses are that Total. Before, the question was asked back."""
    answer = ask_table(
        ws, "staff", "What is the change in total personnel expenses from 2018 to 2019?"
    )
    assert answer.status is AnswerStatus.ANSWERED
    assert "= 34,489" in answer.text


@pytest.mark.parametrize("uid", ["staff2", "staff3"])
def test_a_bare_total_is_not_named_by_words_of_rows_outside_its_sum(
    ws: Workspace, uid: str
) -> None:
    """'Travel expenses' is outside the sum, and a Total that is no proven sum proves nothing:
    both still ask which figure is meant."""
    answer = ask_table(ws, uid, "What is the change in total personnel expenses from 2018 to 2019?")
    assert answer.status is AnswerStatus.NEEDS_CLARIFICATION
    assert "expenses" in answer.text


def test_a_row_alone_under_its_heading_is_named_by_the_heading(ws: Workspace) -> None:
    """'Sales:' and 'Purchases' each head one row, the next table row being another heading:
    the sales and the purchases are those rows. Before, neither was named."""
    answer = ask_table(ws, "affil", "What are the respective sales and purchases for 2019?")
    assert answer.status is AnswerStatus.ANSWERED
    assert "10,436" in answer.text and "9,399" in answer.text


@pytest.mark.parametrize(
    "question",
    [
        "What were the fees in 2019?",  # two rows under 'Fees:': which one is not known
        "What was other in 2019?",  # the table's last section: a row below may be unread
    ],
)
def test_a_heading_names_no_row_it_is_not_proven_alone_over(ws: Workspace, question: str) -> None:
    answer = ask_table(ws, "affil", question)
    assert answer.status is not AnswerStatus.ANSWERED
    assert not {"500", "300", "56,028"} & set(re.findall(r"[\d,]+", answer.text))


@pytest.mark.parametrize("word", ["pension", "wages", "restructuring"])
def test_a_word_of_one_part_names_that_part_not_the_total(ws: Workspace, word: str) -> None:
    """Found by review: 'the total pension' was answered with the grand Total. A word that
    only some parts say (not most of them) picks those parts out: it is asked back."""
    answer = ask_table(ws, "staff", f"What was the total {word} in 2019?")
    assert answer.status is AnswerStatus.NEEDS_CLARIFICATION
    assert "199,975" not in answer.text


def test_a_total_stored_in_two_tables_of_one_entity_proves_no_sum(tmp_path: Path) -> None:
    """Found by review: the parts of two tables' 'Total' rows were pooled, and the revenue
    question got the personnel table's total. With two such rows, which one is asked is not
    known: the question is asked back."""
    ws = Workspace.init(tmp_path / "ws")
    ws.set_glossary(
        "[metrics.wages]\nlabel = 'Wages and salaries'\n[metrics.pension]\n"
        "label = 'Pension expenses'\n[metrics.restructuring]\nlabel = 'Restructuring expenses'\n"
        "[metrics.total]\nlabel = 'Total'\n[metrics.product_revenue]\nlabel = 'Product revenue'\n"
        "[metrics.service_revenue]\nlabel = 'Service revenue'\n[entities.acme]\nlabel = 'ACME'\n"
    )

    def fact(metric: str, period: str, value: int, doc: str, row: int, label: str) -> Fact:
        where = f"{doc}, table, row {row} {label!r}"
        return Fact(
            metric, "acme", period, "total", Decimal(value), "", "", Scale.MILLION, doc, where,
            Sensitivity.PUBLIC, "", utc_now(),
        )  # fmt: skip

    rows = []
    for period, (wages, pension, other) in (("FY2018", (158, 7, 2)), ("FY2019", (191, 8, 1))):
        rows += [
            fact("wages", period, wages, "hr", 1, "Wages and salaries"),
            fact("pension", period, pension, "hr", 2, "Pension expenses"),
            fact("restructuring", period, other, "hr", 3, "Restructuring expenses"),
            fact("total", period, wages + pension + other, "hr", 4, "Total"),
        ]
    for period, (product, service) in (("FY2020", (300, 200)), ("FY2021", (330, 210))):
        rows += [
            fact("product_revenue", period, product, "rev", 1, "Product revenue"),
            fact("service_revenue", period, service, "rev", 2, "Service revenue"),
            fact("total", period, product + service, "rev", 3, "Total"),
        ]
    ws.facts.write(rows)
    options = AskOptions(entity="acme")
    answer = ws.ask("What was the total revenue in FY2019?", options, principal=PUBLIC)
    assert answer.status is AnswerStatus.NEEDS_CLARIFICATION and "200" not in answer.text
    ws.close()


@pytest.mark.parametrize(
    ("uid", "question", "wrong"),
    [
        ("cogs", "What was the cost of revenue in 2019?", "900"),
        ("nrv", "What were the net revenues in 2019?", "300"),
        ("ns", "What were the sales in 2019?", "10,436"),
        ("mix", "What was the total revenue in 2019?", "850"),
    ],
)
def test_a_lone_row_or_a_total_is_not_named_where_the_table_says_otherwise(
    ws: Workspace, uid: str, question: str, wrong: str
) -> None:
    """Found by the second review: a longer heading the question says, a sub-section after the
    lone row, another row saying the heading's words, and a part of another kind beside the
    parts saying 'revenue' each made the answer a wrong row's figure."""
    answer = ask_table(ws, uid, question)
    assert f" was {wrong}" not in answer.text and f" were {wrong}" not in answer.text


def test_a_last_total_is_named_by_what_every_line_of_its_table_says(tmp_path: Path) -> None:
    """Every line above the last 'Total' is under a heading saying 'assets' (the subtotal
    aside): the total assets are that Total. Before, the question was asked back, 'assets'
    being a word of the row 'Assets held for sale'. With a section of liabilities among the
    lines, the Total is no total of assets: still asked back."""
    assets = [
        ["(In millions)", "2019", "2018"],
        ["Assets allocated to segments:", "", ""],
        ["Food Care", "1,997.8", "1,914.4"],
        ["Product Care", "2,762.9", "2,273.8"],
        ["Total segments", "4,760.7", "4,188.2"],
        ["Assets not allocated:", "", ""],
        ["Cash and cash equivalents", "262.4", "271.7"],
        ["Assets held for sale", "2.8", "0.6"],
        ["Other", "387.6", "279.5"],
        ["Total", "5,413.5", "4,740.0"],
    ]
    mixed = [row[:] for row in assets]
    mixed[5] = ["Liabilities not allocated:", "", ""]
    ws = tatqa_workspace(tmp_path, {"t-last": assets, "t-mixed": mixed})
    answer = ask_table(ws, "t-last", "What is the total assets for year 2019?")
    assert answer.status is AnswerStatus.ANSWERED
    assert "5,413.5" in answer.text
    other = ask_table(ws, "t-mixed", "What is the total assets for year 2019?")
    assert other.status is AnswerStatus.NEEDS_CLARIFICATION and "5,413.5" not in other.text
    ws.close()


def test_a_hidden_line_keeps_a_last_total_unnamed(tmp_path: Path) -> None:
    """A line the asker may not see might say something else: the visible lines all saying
    'assets' prove nothing then, and the question is asked back."""
    table = [
        ["(In millions)", "2019", "2018"],
        ["Assets:", "", ""],
        ["Cash", "262.4", "271.7"],
        ["Assets held for sale", "2.8", "0.6"],
        ["Accrued liabilities", "50.0", "40.0"],
        ["Total", "999.9", "888.8"],
    ]
    ws = tatqa_workspace(tmp_path, {"t-hid": table})
    question = "What is the total assets for year 2019?"
    # the row is read under 'Assets:' like the others: visible, the question is answered
    assert ask_table(ws, "t-hid", question).status is AnswerStatus.ANSWERED
    hidden = [f for f in ws.facts.scan(max_level=9) if "Accrued liabilities" in f.locator]
    ws.facts.write([replace(f, sensitivity=Sensitivity.RESTRICTED) for f in hidden])
    answer = ask_table(ws, "t-hid", question)
    assert answer.status is AnswerStatus.NEEDS_CLARIFICATION and "999.9" not in answer.text
    ws.close()
