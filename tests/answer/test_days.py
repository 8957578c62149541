"""A question naming a day is answered only with a figure read at that day (or read where the
source names no day): a figure of the same year read at another day is asked back."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from conftest import ask_table, tatqa_workspace
from graph.builders import fact
from ragspine import Principal, Workspace
from ragspine.answer.question import read_question
from ragspine.answer.types import AnswerStatus
from ragspine.eval.qa import fabricated_numbers
from ragspine.glossary import Glossary
from ragspine.structured.facts import Scale
from ragspine.structured.headers import days_in
from ragspine.workspace import example_glossary_text

TABLES = {
    # a June year end in a workspace whose fiscal year is the calendar year: each column is
    # stored for the year holding its day
    "midyear": [
        ["(in millions)", "June 30, 2019", "June 30, 2018"],
        ["Inventories", "400", "500"],
        ["Revenue", "9,000", "8,000"],
    ],
    "calendar": [["", "December 31, 2019", "December 31, 2018"], ["Inventories", "40", "50"]],
    # a 52/53-week year: its end is within a week of the calendar year's
    "weekly": [["", "December 28, 2019", "December 29, 2018"], ["Inventories", "4", "5"]],
    # a column naming no day is the year's figure
    "plain": [["", "2019", "2018"], ["Inventories", "7", "8"]],
    # a day in a header row of its own, over two years and under a caption
    "spanday": [
        ["", "Domestic", "", "International", ""],
        ["", "September 30,", "", "September 30,", ""],
        ["", "2019", "2018", "2019", "2018"],
        ["Discount rate", "4.00%", "3.75%", "1.90%", "2.80%"],
    ],
    # Italian balance dates after their lead words (stored nothing before)
    "ital": [["", "Al 31 dicembre 2019", "Al 31 dicembre 2018"], ["Rimanenze", "43", "53"]],
}


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return tatqa_workspace(tmp_path_factory.mktemp("days"), TABLES)


@pytest.mark.parametrize(
    ("uid", "question", "day"),
    [
        ("midyear", "What were the inventories at December 31, 2019?", "December 31, 2019"),
        # a day in figures is said as the question writes it
        ("midyear", "What were the inventories as of 12/31/2019?", "12/31/2019"),
        # a fourth review: a two-digit year is said as the question writes it (a reply
        # writing 2019 was counted as a fabricated number)
        ("midyear", "What were the inventories at 12/31/19?", "12/31/19"),
        (
            "midyear",
            "What was the change in inventories from December 31, 2018 to December 31, 2019?",
            "December 31, 2018",
        ),
        ("calendar", "What were the inventories at June 30, 2019?", "June 30, 2019"),
        ("calendar", "What were the inventories at June 30th, 2019?", "June 30, 2019"),
        # a third review: every day asked must be one a figure was read at, and two days of
        # one year cannot be told apart by a year's figure (answered 100 or 80 - 100 before)
        (
            "calendar",
            "What was the change in inventories from June 30, 2019 to December 31, 2019?",
            "June 30, 2019",
        ),
        (
            "calendar",
            "What were the inventories at June 30, 2019 and December 31, 2019?",
            "June 30, 2019",
        ),
        (
            "plain",
            "What was the average of inventories between March 31, 2019 and 9/30/19?",
            "March 31, 2019",
        ),
    ],
)
def test_a_figure_read_at_another_day_of_the_year_is_asked_back(
    ws: Workspace, uid: str, question: str, day: str
) -> None:
    """Before, each was answered with the figure of the other day (400 as the inventories at
    December 31, 2019; -100 as a change between two December days)."""
    answer = ask_table(ws, uid, question)
    assert answer.status is AnswerStatus.NEEDS_CLARIFICATION, question
    assert answer.figures == ()
    assert day in answer.text
    # only the days the question names are said, as it writes them: no number of the reply's
    # own (an ISO date's "06", or a source's "row 2", was caught as fabricated)
    assert fabricated_numbers(answer, question, ws.facts, {}, (uid,)) == ([], False)


DAY_SPELLINGS = [
    "31-Dec-2019",
    "31-Dec-19",  # a review: said back as 'December 31, 2019', a number the question lacks
    "December 31 of 2019",
    "the 31st of December 2019",
    "31/12/2019",
    "31.12.2019",
    "12-31-2019",
    "2019-12-31",
]


@pytest.mark.parametrize("day", DAY_SPELLINGS)
def test_every_spelling_of_a_day_is_read_as_that_day(ws: Workspace, day: str) -> None:
    """Before, these spellings were not read as days: '31-Dec-2019', 'December 31 of 2019' and
    '12-31-2019' fell back to the year 2019 and were answered with the June 30 column's 400;
    '31/12/2019', '31.12.2019', '2019-12-31' and '31st of December' were refused. Each now
    asks back against the June column and is answered from the December one."""
    question = f"What were the inventories at {day}?"
    assert read_question(question, Glossary.from_terms([])).days == (date(2019, 12, 31),)
    other = ask_table(ws, "midyear", question)
    assert other.status is AnswerStatus.NEEDS_CLARIFICATION, question
    assert "400" not in other.text
    assert fabricated_numbers(other, question, ws.facts, {}, ("midyear",)) == ([], False)
    same = ask_table(ws, "calendar", question)
    assert same.status is AnswerStatus.ANSWERED and "was 40" in same.text


@pytest.mark.parametrize(
    ("question", "day"),
    [
        # the order a separator implies, unless only the other order names a month
        ("at 01.02.2019", date(2019, 2, 1)),
        ("at 02/01/2019", date(2019, 2, 1)),
        ("at 02-01-2019", date(2019, 2, 1)),
        ("at 13/01/2019", date(2019, 1, 13)),
        ("at 01.13.2019", date(2019, 1, 13)),
        ("at 30-Jun-2019", date(2019, 6, 30)),
    ],
)
def test_figures_of_a_day_are_read_in_the_order_they_can_be(question: str, day: date) -> None:
    assert read_question(question, Glossary.from_terms([])).days == (day,)


@pytest.mark.parametrize("day", ["13/13/2019", "31/02/2019", "2019-13-01", "00.12.2019"])
def test_figures_that_name_no_day_are_a_malformed_period(day: str) -> None:
    """Never a year's figure for them (a month of 13, a day 0 or February 31)."""
    reading = read_question(f"What were the inventories at {day}?", Glossary.from_terms([]))
    assert reading.bad_period == day and not reading.periods and not reading.days


@pytest.mark.parametrize(
    "day",
    [
        "31 dic 2019",
        "31-dic-2019",
        "Dec-31-2019",
        "31/Dec/2019",
        "December, 31 2019",
        "31. 12. 2019",
        "31 12 2019",
    ],
)
def test_a_day_the_grammar_cannot_read_is_no_year(ws: Workspace, day: str) -> None:
    """A review found each answered with the June 30 column's 400 for December 31: the year
    was taken out of a day the grammar does not read. It is a malformed period now."""
    question = f"What were the inventories at {day}?"
    reading = read_question(question, Glossary.from_terms([]))
    assert not reading.periods and reading.bad_period == day.casefold()
    answer = ask_table(ws, "midyear", question)
    assert answer.status is not AnswerStatus.ANSWERED and "400" not in answer.text


@pytest.mark.parametrize("day", ["2019/12/31", "2019.12.31"])
def test_a_day_with_its_year_first_is_read(day: str) -> None:
    reading = read_question(f"the inventories at {day}", Glossary.from_terms([]))
    assert reading.days == (date(2019, 12, 31),)


@pytest.mark.parametrize("day", ["05-08-2019", "05.08.2019", "07/01/2019"])
def test_figures_read_either_way_into_two_fiscal_years_are_a_malformed_period(day: str) -> None:
    """A review: with a fiscal year starting in July, '05-08-2019' (May 8 read month first)
    answered for FY2019 and '05.08.2019' (August 5 read day first) for FY2020; which one the
    asker meant is not known, so neither is guessed. In a calendar year both readings fall in
    one year and the day is read as its separator says."""
    july = read_question(
        f"the revenue at {day}", Glossary.from_terms([], fiscal_year_start_month=7)
    )
    assert july.bad_period == day and not july.periods
    calendar = read_question(f"the revenue at {day}", Glossary.from_terms([]))
    assert calendar.periods == ("FY2019",)


@pytest.mark.parametrize(
    "span",
    ["01.01.2019 to 31.12.2019", "2019-01-01 to 2019-12-31", "1-Jan-2019 to 31-Dec-2019"],
)
def test_a_span_over_the_whole_year_in_figures_is_the_year(ws: Workspace, span: str) -> None:
    question = f"What were the inventories from {span}?"
    answer = ask_table(ws, "calendar", question)
    assert answer.status is AnswerStatus.ANSWERED, question
    assert "was 40" in answer.text


def test_a_first_day_in_figures_is_a_first_day(ws: Workspace) -> None:
    """'01.01.2019' and '2019-01-01' ask for a start, as 'January 1, 2019' does."""
    for question in ("What were the inventories at 01.01.2019?", "the inventories at 2019-01-01"):
        assert read_question(question, Glossary.from_terms([])).opening == "date"
        assert ask_table(ws, "calendar", question).status is not AnswerStatus.ANSWERED


@pytest.mark.parametrize(
    ("uid", "question", "figure"),
    [
        ("midyear", "What were the inventories at June 30, 2019?", "400"),
        ("midyear", "What were the inventories as of 6/30/2019?", "400"),
        ("midyear", "What were the inventories in 2019?", "400"),
        ("midyear", "What was the revenue for the year ended June 30, 2019?", "9,000"),
        ("calendar", "What were the inventories at December 31, 2019?", "40"),
        ("weekly", "What were the inventories at December 31, 2019?", "4"),
        ("weekly", "What were the inventories at 31 December 2018?", "5"),
        ("plain", "What were the inventories at June 30, 2019?", "7"),
        # a span over the whole year names its end (a fourth review found its first day
        # asked back against the column of December 31)
        ("calendar", "What were the inventories from January 1, 2019 to December 31, 2019?", "40"),
    ],
)
def test_a_figure_of_the_day_asked_or_of_a_year_is_answered(
    ws: Workspace, uid: str, question: str, figure: str
) -> None:
    answer = ask_table(ws, uid, question)
    assert answer.status is AnswerStatus.ANSWERED, question
    assert f"was {figure}" in answer.text


def test_an_italian_day_is_read_as_a_day(ws: Workspace) -> None:
    """A review found '31 dicembre 2019' unread as a day: the question fell back to its year,
    and 'al 31 dicembre 2019' was answered with the June 30 figure (400); with a fiscal year
    starting in April it also named the wrong year."""
    question = "Quali erano le Inventories al 31 dicembre 2019?"
    answer = ask_table(ws, "midyear", question)
    assert answer.status is AnswerStatus.NEEDS_CLARIFICATION
    assert "December 31, 2019" in answer.text and "400" not in answer.text
    assert fabricated_numbers(answer, question, ws.facts, {}, ("midyear",)) == ([], False)
    april = read_question(question, Glossary.from_terms([], fiscal_year_start_month=4))
    assert april.periods == ("FY2020",) and april.days == (date(2019, 12, 31),)
    # a fifth review: "1° gennaio" is a day too, and a half year ending on a day is no year
    calendar = Glossary.from_terms([])
    first = read_question("Qual era il saldo al 1° gennaio 2019?", calendar)
    assert first.days == (date(2019, 1, 1),) and first.periods == ("FY2019",)
    half = read_question("Quali erano i ricavi nel semestre chiuso al 30 giugno 2019?", calendar)
    assert half.bad_period is not None and not half.periods


def test_a_table_headed_by_italian_balance_dates_answers_for_those_days(ws: Workspace) -> None:
    answer = ask_table(ws, "ital", "Quali erano le Rimanenze al 31 dicembre 2018?")
    assert answer.status is AnswerStatus.ANSWERED and "53" in answer.text
    other = ask_table(ws, "ital", "Quali erano le Rimanenze al 30 giugno 2019?")
    assert other.status is AnswerStatus.NEEDS_CLARIFICATION and "43" not in other.text


@pytest.mark.parametrize(
    ("question", "period"),
    [
        ("What were the inventories in the first half of 2019?", "FY2019-H1"),
        ("What was the revenue in the third quarter of fiscal 2019?", "FY2019-Q3"),
        ("What is the revenue of the first half of the year 2019?", "FY2019-H1"),
        ("Quali erano i ricavi nel primo semestre 2019?", "FY2019-H1"),
        ("Quali erano i ricavi nel secondo trimestre del 2019?", "FY2019-Q2"),
    ],
)
def test_a_half_or_quarter_said_in_words_is_no_year(
    ws: Workspace, question: str, period: str
) -> None:
    """A fifth review found 'the first half of 2019' read as the year 2019, so a table of June
    30 columns answered it with the year's 400 (and TAT-QA's 'the goodwill impairment charge
    in the fourth quarter of 2019' with the year's charge). The half is read; no figure is
    stored for it, so none is given."""
    assert read_question(question, Glossary.from_terms([])).periods == (period,)
    answer = ask_table(ws, "midyear", question)
    assert answer.status is not AnswerStatus.ANSWERED
    assert "400" not in answer.text


def test_days_in_reads_every_spelling_of_a_day() -> None:
    locator = (
        "Single_X/2013/page_3.pdf, page 3, column 'december 31 , 2013', row 'notes due "
        "june 30 2015'; 12/31/19, 1/3/2015, 31-dec-2013, dec . 31 2008, 1st of March 2017"
    )
    assert days_in(locator) == [
        date(2013, 12, 31),
        date(2015, 6, 30),
        date(2019, 12, 31),
        date(2015, 1, 3),
        date(2013, 12, 31),
        date(2008, 12, 31),
        date(2017, 3, 1),
    ]
    # a month alone, an impossible day and a year are no days
    assert days_in("june 2019, February 30, 2019, 2019") == []
    # days in figures: day first where the first cannot be a month, or after a full stop
    assert (
        days_in("31/12/2019, 31.12.2019, 2019-12-31, 12-31-2019, December 31 of 2019")
        == [date(2019, 12, 31)] * 5
    )
    assert days_in("13/13/2019, 00.12.2019, 2019-12-32, v1.2.2019.4") == []


@pytest.mark.parametrize(
    "header",
    [
        ["(in millions)", "June 30, 2019", "December 31, 2018"],
        ["", "30.06.2019", "31.12.2018"],
        ["", "Al 30 giugno 2019", "Al 31 dicembre 2018"],
    ],
)
def test_a_half_year_balance_beside_a_year_end_is_no_years_figure(
    tmp_path: Path, header: list[str]
) -> None:
    """A review: a half-year balance sheet's 'June 30, 2019' column (beside the year end
    'December 31, 2018', as 10-Qs and European interim reports head it) was stored as the
    year 2019, so 'the inventories at the end of 2019' was answered with the June figure.
    That column is an interim figure: reported, not stored; the year end answers."""
    ws = tatqa_workspace(tmp_path, {"interim": [header, ["Inventories", "41", "50"]]})
    assert {(f.period, f.value) for f in ws.facts.scan(max_level=9)} == {("FY2018", 50)}
    for question in ("What were the inventories at the end of 2019?", "the inventories in 2019"):
        answer = ask_table(ws, "interim", question)
        assert answer.status is not AnswerStatus.ANSWERED and "41" not in answer.text
    answer = ask_table(ws, "interim", "What were the inventories at December 31, 2018?")
    assert answer.status is AnswerStatus.ANSWERED and "was 50" in answer.text


def test_interim_days_keep_year_ends_first_days_and_ambiguous_years() -> None:
    from ragspine.structured.headers import interim_days

    def days(*found: tuple[int, int, int]) -> dict[int, date]:
        return {i: date(*day) for i, day in enumerate(found)}

    assert interim_days(days((2019, 6, 30), (2018, 12, 31))) == {0}
    assert interim_days(days((2019, 12, 31), (2019, 6, 30)), 7) == {0}  # a July year
    assert interim_days(days((2019, 6, 30), (2018, 6, 30))) == set()  # a June year end
    assert interim_days(days((2019, 1, 1), (2018, 12, 31))) == set()  # an IFRS 16 first day
    # 52/53-week year ends (ConvFinQA's '12/28/2013 | 1/3/2015 | 1/2/2016')
    assert interim_days(days((2013, 12, 28), (2015, 1, 3), (2016, 1, 2))) == set()
    assert interim_days(days((2019, 3, 31), (2018, 6, 30))) == {0, 1}  # quarter ends
    # a graph from a listing day: 2011 stays ambiguous (neither column is read for it)
    assert interim_days(days((2011, 11, 17), (2011, 12, 31), (2012, 12, 31))) == set()


@pytest.mark.parametrize(
    "header",
    [
        # a second review: the quarters' columns of one year were left out as ambiguous and
        # the lone quarter of 2018 was then kept as the year (TAT-QA dev's Cisco table:
        # 'revenue in 2018' answered with one quarter's 13,072)
        ["", "July 27, 2019", "April 27, 2019", "January 26, 2019", "October 27, 2018"],
        ["", "June 30, 2019", "December 31, 2018", "June 30, 2018"],
        ["", "September 29, 2019", "December 29, 2018", "September 30, 2018"],
        ["Three months ended", "Dec 31, 2019", "Sep 30, 2019", "Jun 30, 2019", "Dec 31, 2018"],
    ],
)
def test_quarters_and_half_years_are_no_years_figures(tmp_path: Path, header: list[str]) -> None:
    values = [str(10 * (i + 1)) for i in range(len(header) - 1)]
    ws = tatqa_workspace(tmp_path, {"quarters": [header, ["Revenue", *values]]})
    assert not list(ws.facts.scan(max_level=9))
    for question in ("What was the revenue in 2018?", "What was the revenue in 2019?"):
        assert ask_table(ws, "quarters", question).status is not AnswerStatus.ANSWERED


def test_a_span_shorter_than_a_year_over_the_columns_is_no_year(tmp_path: Path) -> None:
    """'Six Months Ended' over 'June 30, 2019 | June 30, 2018' heads six months' figures."""
    table = [
        ["", "Six Months Ended", ""],
        ["", "June 30, 2019", "June 30, 2018"],
        ["Sales", "1", "2"],
    ]
    ws = tatqa_workspace(tmp_path, {"six": table})
    assert not list(ws.facts.scan(max_level=9))


@pytest.mark.parametrize(
    ("question", "period", "bad"),
    [
        # a second review: a half or quarter of a split year was answered with the whole year
        ("What was the revenue in H1 2018/19?", None, "2018/19"),
        ("What was the revenue in 2018/19 Q3?", None, "2018/19"),
        ("What was the revenue in the first half of 2018/19?", None, "2018/19"),
        # 'FY18/19' and 'FY 2018-19' are split years too; '2018-19' in calendar years may be
        # two years (a third review): malformed (it was read as 2018 before this round)
        ("What was the revenue in FY18/19?", "FY2019", None),
        ("What was the revenue in FY 2018-19?", "FY2019", None),
        ("What was the revenue in 2018-19?", None, "2018-19"),
        # a third review: a quarter or half before two years, and a year's month, were
        # answered with whole years' figures
        ("What was the revenue in Q4 2019/2018?", None, "2019/2018"),
        ("What was the revenue in the first half of 2019/2018?", None, "2019/2018"),
        ("What was the revenue in 2018/2?", None, "2018/2"),
        # a fourth review: parts of a year said after it or with a comma were answered with
        # years; a four-digit split year is one year, in a question as in a header
        ("What was the revenue in 2019/Q3?", None, "2019/q3"),
        ("What was the revenue in 2019 (9M)?", None, "2019 (9m)"),
        ("What was the revenue YTD 2019?", None, "ytd 2019"),
        ("What was the revenue in Q4, 2019?", None, "q4, 2019"),
        ("What was the revenue in 2018/2019?", "FY2019", None),
        ("What is the ratio of revenue 2019/2018?", ("FY2019", "FY2018"), None),
        ("What was the revenue in 2015/14?", None, "2015/14"),
        # a following pair is one split year (as a header is read), a chain of years is each;
        # an ISO month stays a month
        ("What was the sum of revenue in 2017/2018?", "FY2018", None),
        ("What was the revenue in 2017/2018/2019?", ("FY2017", "FY2018", "FY2019"), None),
        ("What was the revenue in 2019-12?", "2019-12", None),
        # months and parts of a year the grammar does not read are no year
        ("What was the cash at 06/2019?", None, "06/2019"),
        ("What was the revenue in 9M 2019?", None, "9m 2019"),
        # analysts' shorthand for a quarter or a half is read as it (a sixth pass: '1Q19'
        # was answered with the year's figure)
        ("What was the revenue in 1H 2019?", "FY2019-H1", None),
        ("What was the revenue in 1Q19?", "FY2019-Q1", None),
        ("What was the revenue in Q4'19?", "FY2019-Q4", None),
        ("What was the revenue for six months 2019?", None, "six months 2019"),
        ("What were the inventories at 30 June of 2019?", "FY2019", None),
    ],
)
def test_split_years_and_parts_of_years_are_read_or_refused(
    question: str, period: str | tuple[str, ...] | None, bad: str | None
) -> None:
    reading = read_question(question, Glossary.from_terms([]))
    expected = (period,) if isinstance(period, str) else period or ()
    assert reading.periods == expected and reading.bad_period == bad, question


def test_split_years_with_a_hyphen_need_fy_in_headers_and_calendar_years(tmp_path: Path) -> None:
    """A third review: '2021-22 | 2023-24' in a maturity table are buckets of two years,
    read as FY2022 and FY2024 by a first version ('the operating leases due in 2022' answered
    30). A hyphen without FY is no split year in a header; under a fiscal year starting in
    April a question's '2018-19' is FY2019."""
    buckets = [
        ["", "Total", "2020", "2021-22", "2023-24"],
        ["Operating leases", "75", "20", "30", "25"],
    ]
    fiscal = [["", "FY 2018-19", "FY 2017-18"], ["Revenue", "200", "90"]]
    ws = tatqa_workspace(tmp_path, {"buckets": buckets, "fiscal": fiscal})
    stored = {(f.entity.removeprefix("tatqa-"), f.period) for f in ws.facts.scan(max_level=9)}
    assert stored == {("fiscal", "FY2019"), ("fiscal", "FY2018")}  # 2020 alone: it may span
    answer = ask_table(ws, "fiscal", "What was the revenue in 2018/19?")
    assert answer.status is AnswerStatus.ANSWERED and "was 200" in answer.text
    april = Glossary.from_terms([], fiscal_year_start_month=4)
    assert read_question("the revenue in 2018-19", april).periods == ("FY2019",)


@pytest.mark.parametrize(
    "caption",
    [
        "Three-Month Periods Ended",
        "Thirteen Weeks Ended",
        "Nine-month period ended",
        "Second Quarter",
        "Year to date",
        "Half year to",
    ],
)
def test_a_caption_over_the_days_naming_a_shorter_span_makes_no_year(
    tmp_path: Path, caption: str
) -> None:
    """A third review found these captions over 'June 30, 2019 | June 30, 2018' stored as
    years ('revenue in 2019' answered with a quarter's figure)."""
    table = [["", caption, ""], ["", "June 30, 2019", "June 30, 2018"], ["Revenue", "300", "200"]]
    ws = tatqa_workspace(tmp_path, {"span": table})
    assert not list(ws.facts.scan(max_level=9))


def test_only_the_columns_under_a_shorter_span_are_left_out(tmp_path: Path) -> None:
    """'Three Months Ended December 31, | | Year Ended December 31, |' over two pairs of years:
    the year's columns are read; quarter captions below a year ('Fiscal 2019' over 'First
    Quarter') name measures of that year and are read as before; a span heading measures
    whose names lose it (rows 2019, 2018 under 'Revenue | Cost of sales') is not read."""
    both = [
        ["", "Three Months Ended December 31,", "", "Year Ended December 31,", ""],
        ["", "2019", "2018", "2019", "2018"],
        ["Revenue", "1", "2", "3", "4"],
    ]
    quarters = [
        ["", "", "Fiscal 2019", ""],
        ["", "First", "Second", ""],
        ["", "Quarter", "Quarter", "Total"],
        ["Revenues", "10", "20", "30"],
    ]
    measures = [
        ["", "Three months ended June 30,", ""],
        ["", "Revenue", "Cost of sales"],
        ["2019", "300", "200"],
        ["2018", "250", "150"],
    ]
    ws = tatqa_workspace(tmp_path, {"both": both, "quarters": quarters, "measures": measures})
    stored = {
        (f.entity.removeprefix("tatqa-"), f.period, f.value) for f in ws.facts.scan(max_level=9)
    }
    assert {(e, p, v) for e, p, v in stored if e == "both"} == {
        ("both", "FY2019", 3),
        ("both", "FY2018", 4),
    }
    assert {v for e, _, v in stored if e == "quarters"} == {10, 20, 30}
    assert not any(e == "measures" for e, _, _ in stored)


def test_a_quarter_below_its_year_or_a_span_in_the_corner_is_no_year(tmp_path: Path) -> None:
    """A fourth review: '2019 | | 2018 |' over 'Q4 | Full year | Q4 | Full year' stored the
    fourth quarter as the year (300 for 'revenue in 2019'), and 'Three Months Ended June 30,'
    in the corner beside '2019 | 2018' was not looked at."""
    below = [
        ["", "2019", "", "2018", ""],
        ["", "Q4", "Full year", "Q4", "Full year"],
        ["Revenue", "300", "1,200", "280", "1,000"],
    ]
    corner = [["Three Months Ended June 30,", "2019", "2018"], ["Revenue", "300", "280"]]
    ws = tatqa_workspace(tmp_path, {"below": below, "corner": corner})
    stored = {(f.entity.removeprefix("tatqa-"), f.value) for f in ws.facts.scan(max_level=9)}
    assert ("below", 300) not in stored and not any(e == "corner" for e, _ in stored)
    answer = ask_table(ws, "below", "What was the revenue in 2019?")
    assert "300" not in answer.text


def test_a_change_from_one_year_names_no_end(tmp_path: Path) -> None:
    """A third review: 'the change in revenue from 2018' ran back to the year before (900 -
    1,000 = -100, from FY2018 to FY2017); which later year is meant is asked."""
    ws = tatqa_workspace(
        tmp_path, {"t": [["", "2019", "2018", "2017"], ["Revenue", "1,200", "1,000", "900"]]}
    )
    for question in (
        "What is the change in revenue from 2018?",
        "How did revenue change since 2019?",
        "What was the change in revenue from the end of 2018?",  # a fourth review
        "What was the change in revenue after 2018?",
    ):
        answer = ask_table(ws, "t", question)
        assert answer.status is AnswerStatus.NEEDS_CLARIFICATION and "100" not in answer.text
    assert (
        ask_table(ws, "t", "What is the change in revenue in 2019?").status is AnswerStatus.ANSWERED
    )


@pytest.mark.parametrize(
    ("question", "period", "bad"),
    [
        ("What was revenue in the year ended December 31, 2018?", None, "december 31, 2018"),
        (
            "What was revenue for the twelve months ended December 31, 2018?",
            None,
            "december 31, 2018",
        ),
        ("What was revenue for the year ended June 30, 2019?", "FY2019", None),
        ("What was revenue for the year ended July 2, 2019?", "FY2019", None),
        ("What was the cash at December 31, 2018?", "FY2019", None),
    ],
)
def test_a_year_ended_on_a_day_no_fiscal_year_ends_is_reported(
    question: str, period: str | None, bad: str | None
) -> None:
    """A sixth adversarial pass: under a July-June year, 'the year ended December 31, 2018'
    was answered with FY2019 (July 2018 to June 2019), twelve months ending half a year later.
    A year said to end on a day no fiscal year ends near is reported; a 53-week year ending a
    few days after June 30 is the year it ends; a balance at a day stays the year holding it."""
    july = Glossary.from_terms([], fiscal_year_start_month=7)
    reading = read_question(question, july)
    assert reading.periods == ((period,) if period else ()) and reading.bad_period == bad


def test_a_day_in_a_header_row_of_its_own_is_the_day_read(ws: Workspace) -> None:
    """A review found 'Domestic / September 30, / 2019' (the header rows a locator joins) read
    as naming no day: the September 30 figure (4.00) answered 'at December 31, 2019'."""
    question = "What was the domestic discount rate at December 31, 2019?"
    other = ask_table(ws, "spanday", question)
    assert other.status is AnswerStatus.NEEDS_CLARIFICATION, other.text
    assert "4.00" not in other.text and "December 31, 2019" in other.text
    same = ask_table(ws, "spanday", "What was the domestic discount rate at September 30, 2019?")
    assert same.status is AnswerStatus.ANSWERED and "was 4.00 percent" in same.text
    assert not [line for line in same.assumptions if line.startswith("Day:")]


@pytest.mark.parametrize(
    ("uid", "question", "said"),
    [
        ("plain", "What were the inventories at June 30, 2019?", "June 30, 2019"),
        ("plain", "What were the inventories as of 6/30/19?", "6/30/19"),
        ("plain", "What was the change in inventories from June 30, 2018 to June 30, 2019?", ""),
        ("plain", "What were the inventories at December 31, 2019?", None),
        ("plain", "What were the inventories in 2019?", None),
        ("calendar", "What were the inventories at December 31, 2019?", None),
        # a day the figure's own column names is no assumption
        ("midyear", "What were the inventories at June 30, 2019?", None),
    ],
)
def test_a_year_figure_given_for_a_day_inside_its_year_says_so(
    ws: Workspace, uid: str, question: str, said: str | None
) -> None:
    """A figure stored by year whose source names no day was given for a day inside the
    workspace's fiscal year (the cash 'at June 30, 2019' in a calendar year) without a word:
    the year's figure may be December's. It is still given (a source naming no day is often a
    company whose year ends then), with the reading said in the answer's assumptions."""
    answer = ask_table(ws, uid, question)
    assert answer.status is AnswerStatus.ANSWERED, answer.text
    days = [line for line in answer.assumptions if line.startswith("Day:")]
    if said is None:
        assert days == [], days
        return
    assert days and all("stored by year, not at a day" in line for line in days), days
    if said:
        assert len(days) == 1 and f"Day: {said} is read as FY2019" in days[0]
    else:  # one for each day asked
        assert [line.split(" is read as ")[1][:6] for line in days] == ["FY2018", "FY2019"]
    assert fabricated_numbers(answer, question, ws.facts, {}, (uid,)) == ([], False)


def test_a_day_that_ends_the_workspace_year_needs_no_word(tmp_path: Path) -> None:
    """Under a fiscal year starting in July, June 30, 2019 ends FY2019: the year's figure is
    that day's, and nothing is said; March 31, 2019 is inside it, and is said."""
    folder = tmp_path / "ws"
    folder.mkdir()
    glossary = example_glossary_text().replace(
        "fiscal_year_start_month = 1", "fiscal_year_start_month = 7"
    )
    (folder / "glossary.toml").write_text(glossary, encoding="utf-8")
    ws = Workspace.open(folder)
    ws.facts.write([fact("revenue", "acme", "70", period="FY2019", scale=Scale.MILLION)])
    public = Principal.of("public")
    end = ws.ask("What was ACME's revenue for the year ended June 30, 2019?", principal=public)
    assert end.status is AnswerStatus.ANSWERED and "was 70 million" in end.text, end.text
    assert not [line for line in end.assumptions if line.startswith("Day:")]
    inside = ws.ask("What was ACME's revenue at March 31, 2019?", principal=public)
    assert inside.status is AnswerStatus.ANSWERED and "was 70 million" in inside.text
    assert [line[:45] for line in inside.assumptions if line.startswith("Day:")] == [
        "Day: March 31, 2019 is read as FY2019, the fi"
    ]
