"""A question for the start of a period is never answered with the period's closing figure."""

from __future__ import annotations

import pytest

from conftest import ask_table, tatqa_workspace
from ragspine import Workspace
from ragspine.analysis import match_key
from ragspine.answer.question import opening_kind
from ragspine.answer.types import AnswerStatus
from ragspine.eval.qa import fabricated_numbers

TABLES = {
    "inv": [
        ["(in millions)", "2019", "2018", "2017"],
        ["Inventories", "400", "500", "300"],
        ["Revenue", "9,000", "8,000", "7,000"],
    ],
    # an IFRS 16 adoption table: the 1 January 2019 column is the opening figure itself
    # a roll-forward by years: the opening row's name holds the start
    "roll": [
        ["", "2019", "2018"],
        ["Balance at January 1", "115", "100"],
        ["Additions", "30", "25"],
        ["Reductions", "(10)", "(10)"],
        ["Balance at December 31", "135", "115"],
    ],
    "ifrs": [
        ["", "31 December 2018", "IFRS 16 adjustment", "1 January 2019"],
        ["Property, plant and equipment", "450.1", "(3.0)", "447.1"],
        ["Right-of-use assets", "-", "120.5", "120.5"],
    ],
    # a 52/53-week year that ends on January 1: a year's end, not its first day
    "weeks": [
        ["", "Fiscal year ended January 1, 2017", "January 3, 2016", "December 28, 2014"],
        ["Revenue", "900", "800", "700"],
    ],
    # a first day in a section heading: the figures are still the years'
    "section": [
        ["", "2019", "2018"],
        ["Impact of adoption of IFRS 16 at 1 January 2019", "", ""],
        ["Depreciation", "50", "40"],
    ],
}


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return tatqa_workspace(tmp_path_factory.mktemp("opening"), TABLES)


@pytest.mark.parametrize(
    "question",
    [
        "What were the inventories at the beginning of 2019?",
        "What were the inventories at 1/1/2019?",
        "What were the inventories brought forward in 2019?",
        "What were the inventories as of the first day of 2019?",
        "Which year had the highest inventories at the beginning of the year?",
        "Quali erano le Inventories al 1° gennaio 2019?",
        "Quali erano le Inventories al 1º gennaio 2019?",  # ordinal º: NFKC reads 1o
        "What were the inventories at 1-Jan-2019?",
        "What were the inventories at year beginning 2019?",
        "What was the year-beginning balance of inventories in 2019?",
        "What were the inventories at the outset of 2019?",
        # a fourth review: a span from a first day starts from the year before's closing
        # figure (the change below is +100 from 300, not -100 from 500), and a quarter
        # described by its first day is no year
        "What was the change in inventories from January 1, 2018 to December 31, 2019?",
        "What was the revenue for the quarter beginning January 1, 2019?",
    ],
)
def test_the_start_of_a_year_is_asked_back_not_answered_with_its_end(
    ws: Workspace, question: str
) -> None:
    """The inventories stored for 2019 are its closing 400 (the opening ones are 2018's 500).
    Before, each of these was answered 400 or picked by closing figures (a review found the
    year pick, the dates written 1/1/2019 and 1° gennaio, and 'brought forward')."""
    answer = ask_table(ws, "inv", question)
    assert answer.status is AnswerStatus.NEEDS_CLARIFICATION, question
    assert "400" not in answer.text and "FY2018" not in answer.text


@pytest.mark.parametrize(
    ("uid", "question", "figure"),
    [
        ("inv", "What were the inventories in 2019?", "400"),
        # a year described by its first day asks for the whole year
        ("inv", "What was the revenue for the fiscal year beginning January 1, 2019?", "9,000"),
        # stored from a column of that first day: the figure asked for
        ("ifrs", "What was the property, plant and equipment at 1 January 2019?", "447.1"),
        ("ifrs", "What were the right-of-use assets as at 1 January 2019?", "120.5"),
        # a year that ends on January 1, and a heading that mentions a first day (a review
        # found these asked back: only a column of a first day is read at that day)
        ("weeks", "What was the revenue in 2017?", "900"),
        ("section", "What was the depreciation in 2019?", "50"),
        # a span from a year's first day to its last names that year (these were asked back)
        ("inv", "What was the revenue from 1 January 2019 to 31 December 2019?", "9,000"),
        ("inv", "What was the revenue for January 1, 2019 through December 31, 2019?", "9,000"),
        ("inv", "What was the revenue for the year that began on January 1, 2019?", "9,000"),
        ("inv", "What was the revenue from 1/1/19 to 12/31/19?", "9,000"),
    ],
)
def test_a_figure_of_that_start_or_of_the_whole_year_is_answered(
    ws: Workspace, uid: str, question: str, figure: str
) -> None:
    answer = ask_table(ws, uid, question)
    assert answer.status is AnswerStatus.ANSWERED, question
    assert figure in answer.text


@pytest.mark.parametrize(
    "question",
    [
        "What was the change in inventories from 1/1/2019 to 12/31/2019?",
        "What was the change in inventories from 1st January 2019 to 31st December 2019?",
        "What was the increase in revenue from 1/1/2019 to 12/31/2019?",
        "What were the combined inventories on 1 January 2019 and 31 December 2019?",
        "What were the inventories at 1 January 2019 and 31 December 2019 respectively?",
    ],
)
def test_a_whole_year_span_is_no_lookup_of_a_change_or_of_two_days(
    ws: Workspace, question: str
) -> None:
    """A review found, once a span from a year's first day to its last named the year: a
    change or an increase over it answered the wrong way round (+100, -1,000; the end
    written 12/31/2019 is said by no end word), and two days joined by 'and' answered 400
    alone. Each is asked back, with no figure."""
    answer = ask_table(ws, "inv", question)
    assert answer.status is AnswerStatus.NEEDS_CLARIFICATION, question
    assert answer.figures == ()


def test_a_first_day_in_a_section_heading_is_no_first_day_column(ws: Workspace) -> None:
    """A review found 'the depreciation at 1 January 2019' answered 50, the year's flow,
    because a section heading above the row mentions that day."""
    answer = ask_table(ws, "section", "What was the depreciation at 1 January 2019?")
    assert answer.status is AnswerStatus.NEEDS_CLARIFICATION
    assert "50" not in answer.text


def test_a_first_day_column_does_not_answer_for_a_beginning_said_in_words(
    ws: Workspace,
) -> None:
    """'at the beginning of 2019' is the start of the fiscal year 2019 whatever the table's
    columns; only a date equal to a column's first day is that column's figure."""
    answer = ask_table(
        ws, "ifrs", "What was the property, plant and equipment at the beginning of 2019?"
    )
    assert answer.status is AnswerStatus.NEEDS_CLARIFICATION


@pytest.mark.parametrize(
    "question",
    [
        "What was the property, plant and equipment in 2019?",
        "What was the property, plant and equipment at December 31, 2019?",
        "What was the change in property, plant and equipment from 2018 to 2019?",
        "Which year had the highest property, plant and equipment?",
    ],
)
def test_a_figure_read_at_a_first_day_is_not_the_years(ws: Workspace, question: str) -> None:
    """The only 2019 figure of the adoption table is its '1 January 2019' column: 447.1 is
    2019's opening, so it answers for that day alone. Before, each of these was answered with
    it (447.1 as PP&E at December 31, 2019; the IFRS 16 adjustment -3.0 as 2019's change)."""
    answer = ask_table(ws, "ifrs", question)
    assert answer.status is AnswerStatus.NEEDS_CLARIFICATION, question
    assert "447.1" not in answer.text and "3.0" not in answer.text
    assert "first day" in answer.text
    assert fabricated_numbers(answer, question, ws.facts, {}, ("ifrs",)) == ([], False)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("start-up costs in 2019", ""),
        ("pre-opening costs", ""),
        ("stores opened in 2019", ""),
        ("january 10, 2019", ""),
        ("jan 1-15", ""),
        ("january 01, 2019", "date"),
        ("01-jan-2019", "date"),
        ("the initial balance of inventories in 2019", "word"),
        ("the right-of-use asset at lease commencement", ""),
        # a span from a first day is a start, unless it runs to the last day of that
        # fiscal year: then it names the year
        ("from 1 january 2019 to 31 december 2019", ""),
        ("from 1/1/2019 - 12/31/2019", ""),
        ("from 1 january 2018 to 31 december 2019", "date"),
        ("from january 1, 2019 to june 30, 2019", "date"),
        ("the year that began on january 1, 2019", ""),
        ("the change from the beginning of 2018 to the end of 2019", "word"),
        ("the 1st of january 2019", "date"),
        ("at 01.01.2019", "date"),
        ("at 2019-01-01", "date"),
        ("at 1/1/19", "date"),
        ("at 1 gennaio 2019", "date"),
    ],
)
def test_what_counts_as_asking_for_a_start(text: str, kind: str) -> None:
    assert opening_kind(match_key(text)) == kind


def test_the_first_day_is_the_fiscal_years() -> None:
    """A fiscal year starting in July begins on July 1 (written ``7/1/2019`` month first, or
    ``july 01``); January 1 still starts the calendar year, so it is asked back there too (a
    review found it answered with the June closing figure); ``may first`` is a verb."""
    assert opening_kind(match_key("at july 1, 2019"), 7) == "date"
    assert opening_kind(match_key("at july 01, 2019"), 7) == "date"
    assert opening_kind(match_key("at 7/1/2019"), 7) == "date"
    assert opening_kind(match_key("at sept. 1, 2019"), 9) == "date"
    assert opening_kind(match_key("at january 1, 2019"), 7) == "date"
    assert opening_kind(match_key("at july 1, 2019"), 1) == ""
    # a whole fiscal year from July; a calendar year is no fiscal year there
    assert opening_kind(match_key("from july 1, 2018 to june 30, 2019"), 7) == ""
    assert opening_kind(match_key("from january 1, 2019 to december 31, 2019"), 7) == "date"
    assert opening_kind(match_key("which inventories may first be written down"), 5) == ""


@pytest.mark.parametrize(
    "question",
    [
        "What was the change in balance from January 1, 2019 to December 31, 2019?",
        "What was the change in balance at January 1 from the start of 2019 to the end of 2019?",
    ],
)
def test_a_change_from_a_start_to_an_end_is_no_change_of_one_row(
    ws: Workspace, question: str
) -> None:
    """A review found 'the change in balance from January 1, 2019 to December 31, 2019'
    answered 15: the row 'Balance at January 1' across 2018 and 2019 (its name held the start,
    so no start was left to ask about). From 115 at the start to 135 at the end is 20."""
    answer = ask_table(ws, "roll", question)
    assert answer.status is not AnswerStatus.ANSWERED
    assert "15" not in answer.text.replace("115", "")


_MONTH_SPELLINGS = (
    ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"),
    ("may", "may"), ("june", "jun"), ("july", "jul"), ("august", "aug"),
    ("september", "sep"), ("october", "oct"), ("november", "nov"), ("december", "dec"),
)  # fmt: skip


@pytest.mark.parametrize("month", range(1, 13))
def test_every_fiscal_first_day_is_found(month: int) -> None:
    """Each spelling of a fiscal year's first day is read as a start for every start month
    (a cheap test of the text's month names and date marks runs before the pattern: it must
    never hide a first day the pattern finds)."""
    name, short = _MONTH_SPELLINGS[month - 1]
    for said in (
        f"at {name} 1, 2019",
        f"at {short}. 1, 2019",
        f"at 1 {short} 2019",
        f"at the first of {name} 2019",
        f"at {month}/1/2019",
        f"at 01.{month:02d}.2019",
        f"at 2019-{month:02d}-01",
    ):
        assert opening_kind(match_key(said), month) == "date", (month, said)
    assert opening_kind(match_key(f"at {name} 10, 2019"), month) == ""
