"""Reading a question and choosing its route: a table in English and Italian, with traps."""

from __future__ import annotations

import tomllib
from datetime import date
from pathlib import Path

import pytest

from conftest import ask_table, tatqa_workspace
from ragspine.answer.question import Operation, Route, choose_route, read_question
from ragspine.answer.types import AnswerStatus
from ragspine.glossary import Glossary, parse_glossary
from ragspine.structured.tatqa import header_period
from ragspine.workspace import example_glossary_text

EXTRA = """
[metrics.driver_costs]
label = "Driver costs"
aliases = ["costi autisti"]
unit = "EUR"
kind = "currency"

[metrics.amortization_2014_dac]
label = "amortization 2014 dac"
"""


@pytest.fixture(scope="module")
def glossary() -> Glossary:
    return parse_glossary(tomllib.loads(example_glossary_text() + EXTRA))


ROUTES = [
    # (question, route)
    ("What was ACME's revenue in FY2024?", Route.STRUCTURED),
    ("Revenue of ACME China in Q3 2024", Route.STRUCTURED),
    ("How did ACME's net income change from 2023 to 2024?", Route.STRUCTURED),
    ("sales 2023", Route.STRUCTURED),  # a metric and a period, no entity
    ("Qual è stato il fatturato di ACME nel 2024?", Route.NARRATIVE),  # no Italian alias
    ("Ricavi: turnover di ACME nel 2024?", Route.STRUCTURED),
    ("Why did ACME's revenue fall in 2024?", Route.COMPOSITE),
    ("Explain the drivers of ACME's operating profit in FY2023", Route.COMPOSITE),
    ("Perché il turnover di ACME è calato nel 2024?", Route.COMPOSITE),
    ("Qual è il motivo del calo delle sales di ACME CN nel 2023?", Route.COMPOSITE),
    ("What led to the fall in ACME's revenue in 2024?", Route.COMPOSITE),
    ("What could result in ACME's net income falling in 2024?", Route.COMPOSITE),
    ("What was ACME's revenue result in 2024?", Route.STRUCTURED),  # no cue (review)
    ("Why did margins improve?", Route.NARRATIVE),  # a cue, no metric
    ("Come mai i margini sono migliorati?", Route.NARRATIVE),
    ("What is the parental leave policy?", Route.NARRATIVE),  # neither
    ("Why did revenue fall?", Route.NARRATIVE),  # a metric alone is not looked up
    # traps: a word inside another word, a cue word inside a metric name
    ("What are the revenues of the explanation?", Route.NARRATIVE),
    ("Driver costs of ACME in 2024", Route.STRUCTURED),
    ("costi autisti di ACME nel 2024", Route.STRUCTURED),
    ("Why did driver costs of ACME rise in 2024?", Route.COMPOSITE),
    ("amortization 2014 dac of ACME", Route.STRUCTURED),
    ("Is there a concern about sales?", Route.NARRATIVE),  # "cn" is not in "concern"
]


def test_values_asked_respectively_with_the_calls_entity_are_looked_up(glossary: Glossary) -> None:
    """A metric alone with the call's entity may ask for a definition (documents), but 'X and Y
    respectively' asks for their values (TAT-QA dev: answered with a passage's sentence)."""
    each = read_question("What were revenue and net income respectively?", glossary)
    assert choose_route(each, entity_given=True)[0] is Route.STRUCTURED
    alone = read_question("What were revenue and net income?", glossary)
    assert choose_route(alone, entity_given=True)[0] is Route.NARRATIVE


@pytest.mark.parametrize(("question", "route"), ROUTES)
def test_the_route_of_each_question(glossary: Glossary, question: str, route: Route) -> None:
    chosen, reason = choose_route(read_question(question, glossary, date(2024, 11, 15)))
    assert chosen is route, reason
    assert reason.startswith(route.value)


def test_the_reason_names_the_terms_and_cues_that_decided(glossary: Glossary) -> None:
    reading = read_question("Why did ACME's revenue fall in 2024?", glossary)
    route, reason = choose_route(reading)
    assert route is Route.COMPOSITE
    assert "metric revenue" in reason and "entity acme" in reason and "FY2024" in reason
    assert "'why'" in reason


def test_a_cue_or_a_period_inside_a_metric_name_is_not_read(glossary: Glossary) -> None:
    reading = read_question("Driver costs of ACME", glossary)
    assert reading.cues == () and reading.metrics == ("driver_costs",)
    reading = read_question("amortization 2014 dac of ACME", glossary)
    assert reading.periods == () and reading.metrics == ("amortization_2014_dac",)
    reading = read_question("What are the revenues of the explanation?", glossary)
    assert reading.metrics == () and reading.cues == ()


def test_slots_periods_and_operations(glossary: Glossary) -> None:
    reading = read_question(
        "Percentage change of ACME and ACME CN online sales from Q3 2023 to last quarter",
        glossary,
        date(2024, 11, 15),
    )
    assert reading.metrics == ("revenue",)
    assert reading.entities == ("acme", "acme_cn")
    assert reading.channels == ("online",)
    assert reading.periods == ("FY2023-Q3", "FY2024-Q3")
    assert reading.operation is Operation.PERCENT_CHANGE
    assert read_question("average ACME sales in 2023 and 2024", glossary).operation is (
        Operation.AVERAGE
    )
    share = read_question("ACME net income as a percentage of sales in 2024", glossary)
    assert share.operation is Operation.SHARE and share.metrics == ("net_income", "revenue")
    ratio = read_question("ratio of net income to sales for ACME in 2024", glossary)
    assert ratio.operation is Operation.RATIO
    assert read_question(
        "rapporto tra net income e sales di ACME nel 2024", glossary
    ).operation is (Operation.RATIO)


def test_full_width_and_case_do_not_matter(glossary: Glossary) -> None:
    full_width = "".join(chr(ord(c) + 0xFEE0) if c.isalnum() else c for c in "REVENUE")
    reading = read_question(
        f"{full_width} of acme in \uff26\uff39\uff12\uff10\uff12\uff14", glossary
    )
    assert reading.metrics == ("revenue",) and reading.periods == ("FY2024",)


def test_a_malformed_period_is_reported_and_numbers_are_not_years(glossary: Glossary) -> None:
    assert read_question("ACME sales in FY2o24", glossary).bad_period == "fy2o24"
    assert read_question("ACME sales in 2024Q5", glossary).bad_period == "2024q5"
    reading = read_question("ACME sales of 2,024.5 or 1999.5 or 12024 in fiscal results", glossary)
    assert reading.periods == () and reading.bad_period is None


def test_cues_come_from_the_glossary(glossary: Glossary) -> None:
    custom = parse_glossary(
        tomllib.loads(example_glossary_text().split("[cues]")[0] + '[cues]\nen = ["how come"]\n')
    )
    assert read_question("How come ACME sales fell in 2024?", custom).cues == ("how come",)
    assert read_question("Why did ACME sales fall in 2024?", custom).cues == ()


@pytest.mark.parametrize(
    ("question", "base", "span"),
    [
        ("What is the change in ACME sales in 2019 from 2018?", "FY2018", None),
        ("How did ACME sales change from 2018 to 2019?", "FY2018", (2018, 2019)),
        ("percentage change in ACME sales in 2019 compared to 2018", "FY2018", None),
        ("variazione del fatturato ACME nel 2019 rispetto al 2018", "FY2018", None),
        ("average ACME sales between 2017 and 2019", None, (2017, 2019)),
        ("average ACME sales for 2017-2019", None, (2017, 2019)),
        ("average ACME sales in 2017, 2018 and 2019", None, None),  # a list, not a span
        ("average ACME sales in 2019 and 2017", None, None),
        ("ACME sales in 2019", None, None),
    ],
)
def test_the_base_of_a_change_and_a_span_of_years(
    glossary: Glossary, question: str, base: str | None, span: tuple[int, int] | None
) -> None:
    reading = read_question(question, glossary, date(2024, 11, 15))
    assert (reading.base_period, reading.year_range) == (base, span)


@pytest.mark.parametrize(
    ("question", "backward"),
    [
        ("What is the change in ACME sales from 2019 to 2018?", True),
        ("variazione del fatturato ACME dal 2019 al 2018", True),
        ("change in ACME sales from Q4 2019 to Q4 2018", True),
        ("change in ACME sales from Q3 2019 to Q4 2019", False),
        ("decrease in ACME sales from December 31, 2019 to December 31, 2018", True),
        ("change in ACME sales from 31 December 2019 to 31 December 2018", True),
        ("change in ACME sales from 31 December 2018 to 31 December 2019", False),
        ("What is the change in ACME sales from 2018 to 2019?", False),
        ("change in ACME sales in 2018 from 2019", False),  # 2018 measured against 2019
        ("change in ACME sales between 2019 and 2018", False),  # no base: runs forward anyway
        ("average ACME sales from 2019 to 2017", True),  # read, though only a change uses it
    ],
)
def test_a_span_named_from_the_later_year(
    glossary: Glossary, question: str, backward: bool
) -> None:
    reading = read_question(question, glossary, date(2024, 11, 15))
    assert reading.backward is backward


@pytest.mark.parametrize(
    ("question", "operation"),
    [
        # a weighted average is a stated figure: a plain average of two years is not it
        ("What was ACME's weighted average revenue in 2024?", Operation.LOOKUP),
        ("What was ACME's average revenue in 2023 and 2024?", Operation.AVERAGE),
        ("What percentage was ACME's net income of sales in 2024?", Operation.SHARE),
        ("What portion of ACME's sales is net income in 2024?", Operation.SHARE),
        ("How much did ACME net income represent in relation to sales in 2024?", (Operation.RATIO)),
        # found by review: "in relation to" alone means "concerning", and a variance may be
        # against a budget, not the year before
        ("What was ACME's revenue in relation to the restructuring in 2024?", Operation.LOOKUP),
        ("What was the revenue variance of ACME against budget in 2024?", Operation.LOOKUP),
        ("What was the variance in ACME's revenue from 2023 to 2024?", Operation.CHANGE),
        (
            "What percentage did revenue of ACME increase by from 2023 to 2024?",
            (Operation.PERCENT_CHANGE),
        ),
        ("What percentage did ACME net income represent in relation to sales?", Operation.SHARE),
        ("What was the variation in ACME's revenue between 2023 and 2024?", Operation.CHANGE),
        ("What was the fluctuation of ACME's revenue from 2023 to 2024?", Operation.CHANGE),
        ("ACME revenue in 2024 less its revenue in 2023", Operation.CHANGE),
        # "less than" is a comparison, not a subtraction
        ("Was ACME's revenue in 2024 less than in 2023?", Operation.LOOKUP),
        ("What percentage was ACME's revenue in 2024?", Operation.LOOKUP),  # no "of": no share
        (
            "What percentage did ACME's revenue increase by from 2023 to 2024?",
            (Operation.PERCENT_CHANGE),
        ),
        ("ACME revenue in 2024 less its revenue in 2023", Operation.CHANGE),
        (
            "What is the percentage difference in ACME's revenue between 2023 and 2024?",
            (Operation.PERCENT_CHANGE),
        ),
        # the difference of two percentages in points (was: their relative change)
        (
            "What was the absolute percentage change in ACME's margin from 2023 to 2024?",
            Operation.CHANGE,
        ),
        (
            "What was the percentage point change in ACME's margin from 2023 to 2024?",
            Operation.CHANGE,
        ),
        # a column's heading said as the question (TAT-QA: 'the change (%) for order intake'
        # was answered with the change in millions, 62, before its percentage, 13.2)
        (
            "What is the change (%) for ACME's revenue between 2023 and 2024?",
            Operation.PERCENT_CHANGE,
        ),
        ("What was the increase (in %) of ACME's revenue in 2024?", Operation.PERCENT_CHANGE),
    ],
)
def test_operation_phrasings(glossary: Glossary, question: str, operation: Operation) -> None:
    assert read_question(question, glossary).operation is operation


def test_a_split_year_is_the_year_it_ends_in_as_a_header_says(tmp_path: Path) -> None:
    """A table headed '2018/19 | 2017/18' stores FY2019 and FY2018 (as every split-year header
    is read); 'the revenue in 2018/19' was read as 2018 and answered with the 2017/18
    column's figure. It is the year it ends in, as the header's is."""
    ws = tatqa_workspace(
        tmp_path, {"split": [["", "2018/19", "2017/18"], ["Revenue", "200", "100"]]}
    )
    for question in ("What was the revenue in 2018/19?", "What was the revenue in FY 2018/2019?"):
        answer = ask_table(ws, "split", question)
        assert answer.status is AnswerStatus.ANSWERED and "was 200" in answer.text, question
    reading = read_question("What was the revenue in FY 2015/2014?", Glossary.from_terms([]))
    assert reading.bad_period == "fy 2015/2014" and not reading.periods
    # without FY, four-digit pairs are two years (a second review: 'the ratio of revenue
    # 2019/2018' was refused as a malformed split year)
    pair = read_question("What is the ratio of revenue 2019/2018?", Glossary.from_terms([]))
    assert pair.periods == ("FY2019", "FY2018")


def test_the_whole_a_share_is_represented_by_or_made_of_is_named_first(tmp_path: Path) -> None:
    """'the percentage of revenue represented by cost of sales' asked for revenue as a
    percentage of cost of sales (refused: the first is larger); the whole is named first
    in every phrasing of it, and the part first in 'X as a percentage of Y'."""
    ws = tatqa_workspace(
        tmp_path,
        {"made": [["", "2019"], ["Revenue", "200"], ["Cost of sales", "50"], ["Other", "150"]]},
    )
    for question in (
        "What was the percentage of revenue represented by cost of sales in 2019?",
        "What is the share of revenue that was made up of cost of sales in 2019?",
        "What was the portion of revenue accounted for by cost of sales in 2019?",
        "What percentage of revenue is represented by cost of sales in 2019?",
        "What was cost of sales as a percentage of revenue in 2019?",
    ):
        answer = ask_table(ws, "made", question)
        assert answer.status is AnswerStatus.ANSWERED, question
        assert "Cost of sales FY2019 as a percentage of" in answer.text, question
        assert "50 / 200 = 25 %" in answer.text, question
    # found by review: a clause describing a figure, "as a percentage of" and a ratio keep
    # the order they name
    for question, shown in (
        (
            "What was cost of sales as a percentage of revenue, where revenue is made up of "
            "product and service sales, in 2019?",
            "50 / 200 = 25 %",
        ),
        (
            "What was cost of sales in 2019 as a percentage of revenue, which is made up of "
            "product and service sales?",
            "50 / 200 = 25 %",
        ),
        (
            "What is the ratio of revenue to cost of sales in 2019, given the portion of "
            "revenue represented by other?",
            "200 / 50 = 4",
        ),
    ):
        answer = ask_table(ws, "made", question)
        assert answer.status is AnswerStatus.ANSWERED and shown in answer.text, answer.text


def test_a_part_of_a_year_or_another_year_said_apart_is_no_year(tmp_path: Path) -> None:
    """Found by an adversarial pass: 'What was Q4 revenue in 2019?' and 'the year before
    2019' were answered with 2019's annual figure. A quarter, a half, months, 'quarterly',
    'mid-2019' or 'the years before 2019' said apart from the year is a period not
    understood; 'the year before 2019' is 2018; a row named 'Quarterly dividend' and a year
    read whole still answer."""
    ws = tatqa_workspace(
        tmp_path,
        {
            "parts": [
                ["", "2019", "2018"],
                ["Revenue", "1,234", "1,100"],
                ["Quarterly dividend", "0.25", "0.20"],
            ]
        },
    )
    for question in (
        "What was fourth-quarter revenue in 2019?",
        "What was Q4 revenue in 2019?",
        "What was 2019 fourth quarter revenue?",
        "What was the revenue of the fourth quarter in 2019?",
        "What was revenue for the first nine months in 2019?",
        "What was quarterly revenue in 2019?",
        "What was revenue in mid-2019?",
        "What was revenue in the years before 2019?",
    ):
        answer = ask_table(ws, "parts", question)
        assert answer.status is AnswerStatus.UNRECOGNIZED_PARAM, (question, answer.text)
    for question, shown in (
        ("What was the quarterly dividend in 2019?", "was 0.25"),
        ("What was revenue in the year ended 2019?", "was 1,234"),
        ("What was revenue in 2019?", "was 1,234"),
        # the year named by the one next to it (a review: "from the year before 2019 to 2019"
        # had become a period not understood)
        ("What was revenue in the year before 2019?", "FY2018 was 1,100"),
        ("What was revenue in the fiscal year preceding fiscal 2019?", "FY2018 was 1,100"),
        ("What was revenue in the year after 2018?", "FY2019 was 1,234"),
        ("What was the change in revenue from the year before 2019 to 2019?", "= 134"),
    ):
        answer = ask_table(ws, "parts", question)
        assert answer.status is AnswerStatus.ANSWERED and shown in answer.text, answer.text


def test_named_calculations_are_computed_or_refused_never_answered_with_inputs(
    tmp_path: Path,
) -> None:
    """Found by an adversarial pass: 'the CAGR of revenue', 'the gap between revenue and
    operating expenses', 'how much higher was revenue than cost of revenue', 'cumulative
    revenue' were ANSWERED with the input figures and no result. The gap, the spread and 'how
    much higher ... than' are differences, 'cumulative' and 'plus' sums, 'multiple of' a
    ratio; a CAGR, an annualized figure or a median is refused with its inputs shown."""
    ws = tatqa_workspace(
        tmp_path,
        {
            "calc": [
                ["", "2019", "2018", "2017"],
                ["Revenue", "1,234", "1,100", "1,000"],
                ["Cost of revenue", "500", "450", "400"],
                ["Net income", "150", "120", "100"],
                ["Annualized return", "7.5%", "6.5%", "6.0%"],
            ]
        },
    )
    minus = "\N{MINUS SIGN}"
    for question, shown in (
        ("What was the gap between revenue and cost of revenue in 2019?", f"1,234 {minus} 500"),
        ("What was the spread between revenue and cost of revenue in 2019?", "= 734"),
        ("How much higher was revenue than cost of revenue in 2019?", "= 734"),
        ("What was cumulative revenue from 2017 to 2019?", "= 3,334"),
        ("What was revenue plus net income in 2019?", "1,234 + 150 = 1,384"),
        ("What is the multiple of revenue to net income in 2019?", "1,234 / 150"),
        ("What was the annualized return in 2019?", "was 7.5"),
    ):
        answer = ask_table(ws, "calc", question)
        assert answer.status is AnswerStatus.ANSWERED and shown in answer.text, answer.text
    for question in (
        "What was the CAGR of revenue from 2017 to 2019?",
        "What was the median revenue from 2017 to 2019?",
    ):
        answer = ask_table(ws, "calc", question)
        assert answer.status is AnswerStatus.REFUSED, answer.text
        assert "not computed here" in answer.text, answer.text
    question = "What was the compound annual growth rate of revenue from 2017 to 2019?"
    assert ask_table(ws, "calc", question).status is not AnswerStatus.ANSWERED


def test_a_number_the_question_multiplies_by_is_a_constant(glossary: Glossary) -> None:
    """``1000 times X`` asks for arithmetic with a number only the question gives, like ``X
    times 1000``: it must not be answered with X alone."""
    assert read_question("What is 1000 times ACME's revenue in 2024?", glossary).constant
    assert read_question("What is ACME's revenue in 2024 times 1000?", glossary).constant
    assert not read_question("What was ACME's revenue in 2024?", glossary).constant
    # a slip between the word and the number ("less and initial 100": ConvFinQA dev, answered
    # with the index's 205.14 alone) is still a constant; a year after "less the" is no number
    # the question gives
    typo = "What is ACME's revenue in 2024 less and initial 100?"
    assert read_question(typo, glossary).constant == "less and initial 100"
    other = "What is ACME's revenue in 2024 less the 2023 revenue?"
    assert not read_question(other, glossary).constant


REVENUE_AND_INCOME = {
    "calc": [
        ["", "2019", "2018"],
        ["Revenue", "1,200", "1,100"],
        ["Net income", "150", "120"],
    ]
}
"""A table of two years and two rows, for the calculations a question may name."""


def test_one_figure_divided_by_another_is_a_ratio(tmp_path: Path) -> None:
    """ConvFinQA dev: 'the amount of oil and gas mmboe from canada divided by the total' was
    read as a lookup and answered with passages (or refused), and 'revenue divided by net
    income' was answered with revenue alone. ``X divided by Y`` is the ratio of X to Y;
    ``divided by 1000`` stays a number the question gives, and an initial investment named
    after its amount (``less an initial investment of $100``) is such a number too."""
    ws = tatqa_workspace(tmp_path, REVENUE_AND_INCOME)
    answer = ask_table(ws, "calc", "What was revenue divided by net income in 2019?")
    assert answer.status is AnswerStatus.ANSWERED, answer.text
    assert "1,200 / 150 = 8" in answer.text, answer.text
    # no row named: a passage cannot divide, so the structured route asks which figures
    reading = read_question("what is the mmboe from canada divided by the total?", ws.glossary)
    assert reading.operation is Operation.RATIO and reading.calculation
    assert choose_route(reading, entity_given=True)[0] is Route.STRUCTURED
    by_number = read_question("What was revenue in 2019 divided by 1000?", ws.glossary)
    assert by_number.operation is not Operation.RATIO and by_number.constant
    invested = "What is revenue in 2019 less an initial investment of $100?"
    assert read_question(invested, ws.glossary).constant == "less an initial investment of $100"
    answer = ask_table(ws, "calc", invested)
    assert answer.status is not AnswerStatus.ANSWERED, answer.text


def test_a_change_or_an_average_inside_a_ratio_is_asked_back(tmp_path: Path) -> None:
    """ConvFinQA dev: 'the ratio of the difference of citi to the s&p 500' was answered with
    the ratio of the two values (0.93; the gold divides their differences). A change, a
    difference, a sum less another or an average inside a ratio or a share is a second
    calculation: asked back, never computed as the plain ratio (which gave 8 for 'the ratio of
    average revenue to average net income' and 10.91 % for a share of two changes), nor the
    difference of two figures then divided by one as the difference alone (1,050)."""
    ws = tatqa_workspace(
        tmp_path,
        {
            "calc": [
                ["", "2019", "2018"],
                ["Revenue", "1,200", "1,100"],
                ["Net income", "150", "120"],
                ["Cost of revenue", "500", "450"],
            ]
        },
    )
    for question in (
        "What is the ratio of the difference of revenue to net income?",
        "What is the ratio of the change in revenue from 2018 to 2019 to net income in 2019?",
        "What is the ratio of average revenue to average net income?",
        "What percentage of the change in revenue from 2018 to 2019 is the change in net income?",
        "What is the ratio of revenue less cost of revenue to revenue in 2019?",
        "What is the difference between revenue and net income divided by revenue in 2019?",
        "What is revenue less cost of revenue as a percentage of revenue in 2019?",
    ):
        answer = ask_table(ws, "calc", question)
        assert answer.status is AnswerStatus.NEEDS_CLARIFICATION, (question, answer.text)
        assert "two calculations at once" in answer.text, answer.text
    # a plain share or ratio still computes, and so does a row whose name says a change; one
    # metric's change divided by its base is its percentage change, which the answer shows
    answer = ask_table(ws, "calc", "What is net income as a percentage of revenue in 2019?")
    assert "150 / 1,200 = 12.5 %" in answer.text, answer.text
    question = "What was the change in revenue from 2018 to 2019 divided by the 2018 revenue?"
    answer = ask_table(ws, "calc", question)
    assert "(1,200 \N{MINUS SIGN} 1,100) / 1,100 = 9.09 %" in answer.text, answer.text
    (tmp_path / "moves").mkdir()
    ws2 = tatqa_workspace(
        tmp_path / "moves",
        {
            "moves": [
                ["", "2019", "2018"],
                ["Change in working capital", "60", "40"],
                ["Revenue", "1,200", "1,100"],
            ]
        },
    )
    question = "What is the ratio of change in working capital to revenue in 2019?"
    answer = ask_table(ws2, "moves", question)
    assert "60 / 1,200 = 0.05" in answer.text, answer.text


def test_a_number_in_words_or_a_supposition_is_never_dropped(tmp_path: Path) -> None:
    """Found by a fourth adversarial pass: 'half of revenue in 2019' and 'twice the revenue'
    were answered with revenue (1,200), 'revenue in 2019 if it had grown 10%' with the actual
    change, 'the square of revenue' with revenue, and 'net income plus depreciation' (no such
    row) with net income. A number in words or in a supposition is a number the question
    gives (shown, not computed), a square or a reciprocal is not computed here, and ``plus``
    a figure not stored asks for it; periods in such words still read as periods."""
    ws = tatqa_workspace(tmp_path, REVENUE_AND_INCOME)
    for question, said in (
        ("What was half of revenue in 2019?", "'half'"),
        ("What was twice the revenue in 2019?", "'twice'"),
        ("What was a third of revenue in 2019?", "'a third'"),
        ("What was revenue in 2019 if it had grown 10%?", "'if it had grown 10%'"),
        ("What is the square of revenue in 2019?", "'square of'"),
        ("What is the reciprocal of revenue in 2019?", "'reciprocal'"),
        # a sixth pass: a power in words was answered with the figure itself
        ("What was revenue in 2019 to the power of 2?", "'to the power of'"),
        ("What was revenue in 2019 raised to the third power?", "'raised to'"),
        ("What was revenue in 2019 multiplied by itself?", "'multiplied by itself'"),
        ("What is double the company's revenue in 2019?", "'double'"),
        ("What was net income in 2019 plus depreciation?", "('plus')"),
    ):
        answer = ask_table(ws, "calc", question)
        assert answer.status is not AnswerStatus.ANSWERED, (question, answer.text)
        assert said in answer.text, answer.text
    answer = ask_table(ws, "calc", "What is revenue in 2019 plus net income?")
    assert "1,200 + 150 = 1,350" in answer.text, answer.text
    for period in ("the first half of 2019", "the second half of the year", "twice a year"):
        reading = read_question(f"What was revenue in {period}?", ws.glossary)
        assert not reading.constant, period
    for named in (
        "triple net lease revenue",
        "the double taxation relief",
        "revenue from a third party",
        "the half year revenue",
    ):  # a review: words of names, no numbers
        assert not read_question(f"What was {named} in 2019?", ws.glossary).constant, named


def test_a_share_of_figures_from_different_years_is_asked_back(tmp_path: Path) -> None:
    """Found by a fourth adversarial pass: 'operating income in 2019 as a percentage of revenue
    in 2018' was answered with each year's own share (12.5 % and 10.91 %), neither of them the
    150 / 1,100 asked for. Figures each named with a year of its own are asked back; both
    figures over the same years, and one figure over two years, still compute."""
    ws = tatqa_workspace(tmp_path, REVENUE_AND_INCOME)
    for question in (
        "What was net income in 2019 as a percentage of revenue in 2018?",
        "What was the ratio of 2019 net income to 2018 revenue?",
    ):
        answer = ask_table(ws, "calc", question)
        assert answer.status is AnswerStatus.NEEDS_CLARIFICATION, (question, answer.text)
        assert "Which year for each figure?" in answer.text, answer.text
    for question, shown in (
        ("What was net income as a percentage of revenue in 2019 and 2018?", "120 / 1,100"),
        ("What was net income in 2019 and 2018 as a percentage of revenue?", "150 / 1,200"),
        ("What is the ratio of revenue in 2019 to revenue in 2018?", "1,200 / 1,100"),
        # a review: the question asked again for another year names both figures' years
        ("What was net income in 2019 as a percentage of revenue, and in 2018?", "120 / 1,100"),
    ):
        answer = ask_table(ws, "calc", question)
        assert answer.status is AnswerStatus.ANSWERED and shown in answer.text, answer.text


def test_how_much_lower_is_the_fall_not_the_rise(tmp_path: Path) -> None:
    """Found by a fourth adversarial pass: 'how much lower was revenue in 2019 than in 2018'
    (800 -> 1,000) was answered 200, as if revenue had fallen; 'how much lower was revenue
    than operating expenses' gave revenue less expenses (700); 'how much less were operating
    expenses in 2019 compared to 2018' gave -50; 'how much higher was revenue than 500' gave
    revenue alone. Lower, smaller, less and fewer ask for the fall or the second figure less
    the first; a number after ``than`` is a number the question gives."""
    ws = tatqa_workspace(
        tmp_path,
        {
            "t": [
                ["(in millions)", "2019", "2018"],
                ["Revenue", "1,000", "800"],
                ["Operating expenses", "300", "350"],
            ]
        },
    )
    minus = "\N{MINUS SIGN}"
    for question, shown in (
        ("How much lower was revenue in 2019 than in 2018?", f"800 {minus} 1,000 = -200"),
        ("How much less were operating expenses in 2019 compared to 2018?", "= 50 million"),
        ("How much lower were operating expenses in 2019 than in 2018?", "= 50 million"),
        ("How much lower were operating expenses than revenue in 2019?", "= 700 million"),
        ("How much higher was revenue in 2019 than in 2018?", f"1,000 {minus} 800 = 200"),
        # a review of the first version: the year named first may be the earlier one, the
        # year after "than" is no number the question gives
        ("How much lower was revenue in 2018 than in 2019?", f"1,000 {minus} 800 = 200"),
        ("How much lower was revenue in 2018 compared to 2019?", f"1,000 {minus} 800 = 200"),
        ("How much higher was revenue in 2019 than 2018?", f"1,000 {minus} 800 = 200"),
        ("How much higher was revenue in 2018 than in 2019?", f"800 {minus} 1,000 = -200"),
    ):
        answer = ask_table(ws, "t", question)
        assert answer.status is AnswerStatus.ANSWERED, (question, answer.text)
        assert shown in answer.text, (question, answer.text)
    answer = ask_table(ws, "t", "How much lower was revenue than operating expenses in 2019?")
    assert answer.status is AnswerStatus.NEEDS_CLARIFICATION, answer.text
    assert f"300 {minus} 1,000 = -700" in answer.text, answer.text
    answer = ask_table(ws, "t", "How much higher was revenue in 2019 than 500?")
    assert answer.status is AnswerStatus.REFUSED and "number it gives" in answer.text


def test_a_year_named_from_another_hyphenated_or_following_is_read(glossary: Glossary) -> None:
    """Found by a fourth adversarial pass: 'the prior-year revenue in 2019' was answered with
    2019's revenue, 'the following year's revenue for 2018' with 2018's and 'the subsequent
    year revenue for 2017' with 2017's: the relative year was not read at all. Hyphenated,
    possessive, ``preceding``, ``following`` and ``subsequent`` years are read from the year
    named beside them, as ``the prior year`` was; a ``year-end`` is no year."""
    for question, periods in (
        ("What was the prior-year revenue in 2019?", ("FY2018", "FY2019")),
        ("What was the following year's revenue for 2018?", ("FY2019", "FY2018")),
        ("What was the subsequent year revenue for 2017?", ("FY2018", "FY2017")),
        ("What was the preceding year's revenue for 2017?", ("FY2016", "FY2017")),
        ("What were the following year-end balances in 2019?", ("FY2019",)),
    ):
        assert read_question(question, glossary).periods == periods, question


def test_a_year_read_from_a_january_or_february_column_says_so(tmp_path: Path) -> None:
    """Found by a fourth adversarial pass: with columns 'February 1, 2020' and 'February 2,
    2019', 'revenue in fiscal 2019' gave the February 2019 column's 800 and said nothing of
    the reading; many retailers call the year ending February 1, 2020 fiscal 2019. The answer
    keeps the header's calendar year and now says so, as an assumption naming no number."""
    ws = tatqa_workspace(
        tmp_path,
        {
            "retail": [
                ["(in millions)", "February 1, 2020", "February 2, 2019"],
                ["Revenue", "1,000", "800"],
            ],
            "calendar": [
                ["(in millions)", "December 31, 2019", "December 31, 2018"],
                ["Revenue", "1,000", "800"],
            ],
        },
    )
    early = ask_table(ws, "retail", "What was revenue in fiscal 2019?")
    assert "800" in early.text and any("retailers" in a for a in early.assumptions), early.text
    assert not any(ch.isdigit() for a in early.assumptions if "retailers" in a for ch in a)
    late = ask_table(ws, "calendar", "What was revenue in fiscal 2019?")
    assert "1,000" in late.text and not any("retailers" in a for a in late.assumptions)


def test_a_total_named_first_as_a_percentage_of_another_is_the_part(tmp_path: Path) -> None:
    """Found by a review: 'total dividends paid as a percentage of revenue' gave revenue as a
    percentage of the dividends (1,111.11 %), as a total named first was taken for the whole.
    ``X as a percentage of Y`` says its order; ``what percentage of total X is Y`` still
    reads the total as the whole."""
    ws = tatqa_workspace(
        tmp_path,
        {
            "div": [
                ["", "2019", "2018"],
                ["Revenue", "1,000", "800"],
                ["Total dividends paid", "90", "80"],
            ]
        },
    )
    question = "What were total dividends paid as a percentage of revenue in 2019?"
    answer = ask_table(ws, "div", question)
    assert answer.status is AnswerStatus.ANSWERED and "90 / 1,000 = 9 %" in answer.text


def test_a_written_date_is_the_fiscal_year_holding_it(glossary: Glossary) -> None:
    """``12/31/10`` was not read at all before, so a change between two dates ran over the
    latest two stored years instead."""
    reading = read_question("change in ACME's revenue between 12/31/10 and 12/31/05", glossary)
    assert reading.periods == ("FY2010", "FY2005")
    assert reading.operation is Operation.CHANGE
    # an impossible date is reported, not ignored
    assert read_question("ACME's revenue on 2/30/2019", glossary).bad_period == "2/30/2019"


def test_a_day_written_before_its_month_is_that_day_not_the_month(glossary: Glossary) -> None:
    """TAT-QA dev: 'the total energy consumption for the year ended 31 December 2019' was read
    as the month 2019-12, while 'December 31, 2019' was FY2019 and the table's header '31
    December 2019' is FY2019 too, so four questions were refused. A day before its month is
    read as the day; a month and year alone stays the month."""
    for said in ("year ended 31 December 2019", "as at 31 Dec 2019", "on 31 December, 2019"):
        reading = read_question(f"What was ACME's revenue for the {said}?", glossary)
        assert reading.periods == ("FY2019",), said
    assert read_question("ACME's revenue in December 2019", glossary).periods == ("2019-12",)
    assert read_question("ACME's revenue on 31 February 2019", glossary).bad_period == (
        "31 february 2019"
    )
    spanned = read_question(
        "change in ACME's revenue from 31 December 2019 to 31 December 2018", glossary
    )
    assert spanned.periods == ("FY2019", "FY2018") and spanned.backward


def test_a_day_is_read_as_a_header_reads_it_and_never_for_a_shorter_span(
    glossary: Glossary,
) -> None:
    """A review found: 'the six months ended 30 June 2019' and 'the quarter ended 30 September
    2019' were answered with the fiscal year's figure; and under a fiscal year starting in
    July, 'December 31, 2019' was the bare year FY2019 while a header 'December 31, 2019' is
    FY2020 (the 2018 column's figure was given). A day ending a span shorter than a year is
    reported, both orders and ordinals read as a header's date does, and 52 weeks are a year."""
    for said in (
        "six months ended 30 June 2019",
        "quarter ended September 30, 2019",
        "13 weeks ended March 30, 2019",
        # a third review: these read as the year
        "six-month period ended June 30, 2019",
        "first half ended 30 June 2019",
        "second quarter, ended June 30, 2019",
        "Q2 ended June 30, 2019",
    ):
        reading = read_question(f"What was ACME's revenue for the {said}?", glossary)
        assert reading.periods == () and reading.bad_period, said
    for said in ("52 weeks ended December 28, 2019", "year ended 31st December 2019"):
        assert read_question(f"ACME's revenue for the {said}", glossary).periods == ("FY2019",)
    july = Glossary.from_terms([], fiscal_year_start_month=7)
    for said in ("December 31, 2019", "31 December 2019", "12/31/2019"):
        reading = read_question(f"What were total assets at {said}?", july)
        assert reading.periods == ("FY2020",), said
        assert header_period(f"At {said}", 7) == "FY2020"
    assert header_period("13 weeks ended March 30, 2019") is None  # a quarter, not the year
    assert header_period("52 weeks ended 30 June 2019") == "FY2019"


def test_f_and_two_digits_is_no_period_in_a_question(glossary: Glossary) -> None:
    """``F19`` heads fiscal-year columns in some reports, but in a question it may be a
    product (``the F20 product line``): read there, it added a year or dropped a quarter
    (``Q3 F19`` became FY2019). It is a year only after a word leading to a period."""
    assert read_question("the F20 revenue of ACME in 2024", glossary).periods == ("FY2024",)
    reading = read_question("What was ACME's revenue in Q3 F19?", glossary)
    assert reading.periods != ("FY2019",)


@pytest.mark.parametrize(
    "question",
    [
        "What was the change in ACME's revenue from FY-18 to FY-19?",
        "What was the change in ACME's revenue from F18 to F19?",
        "What was the change in ACME's revenue between F19 and F18?",
        "What was the change in ACME's revenue from '18 to '19?",
        "What was the change in ACME's revenue from 2018A to 2019A?",
        "What was the change in ACME's revenue from Y2018 to Y2019?",
        "What was the change in ACME's revenue, FY\u201319 vs FY\u201318?",
        "What was the change in ACME's revenue from FY\u201118 to FY\u201119?",
        "What was the average of ACME's revenue in F18 & F19?",
        "What was the average of ACME's revenue in F18/F19?",
        "What was the average of ACME's revenue in F18-F19?",
    ],
)
def test_other_ways_to_write_a_year_are_read(glossary: Glossary, question: str) -> None:
    """Found by an adversarial pass: none of these was read, so a change fell back to the two
    latest stored years (FY2019 to FY2020 for a question about 2018 to 2019)."""
    assert sorted(read_question(question, glossary).periods) == ["FY2018", "FY2019"]


@pytest.mark.parametrize("said", ["2019E", "2019F", "2019P", "2019B"])
def test_a_planned_year_is_reported_not_read_as_the_year(glossary: Glossary, said: str) -> None:
    reading = read_question(f"What was the change in ACME's revenue from 2018 to {said}?", glossary)
    assert reading.bad_period == said.casefold() and "FY2019" not in reading.periods


def test_a_long_question_full_of_periods_is_read_in_linear_time(glossary: Glossary) -> None:
    """100 KB of years or dates took 30-70 s (each period rebuilt the text and searched all
    of it before): found by review. A generous alarm, not a benchmark."""
    import signal

    def too_slow(*_: object) -> None:
        raise TimeoutError("reading took more than 20 s: not linear in the question")

    previous = signal.signal(signal.SIGALRM, too_slow)
    signal.alarm(20)
    try:
        for unit in ("2019 ", "12/31/19 ", "from 2018 ", "what percentage is revenue "):
            reading = read_question(unit * (100_000 // len(unit)), glossary)
            assert reading.periods or reading.metrics
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize(
    ("question", "second"),
    [
        ("What was the change in ACME's average revenue from 2023 to 2024?", "average"),
        ("What is the sum of the average revenue of ACME in 2023 and 2024?", "sum"),
        (
            "What was the difference between the highest and the lowest revenue of ACME?",
            "the highest",
        ),
        ("What was the change in ACME's revenue from 2023 to 2024?", ""),
        ("What was ACME's average revenue in 2023 and 2024?", ""),
        # a word of a row's description is no value picked among several
        ("What is the net change in total maximum revenue of ACME from 2023 to 2024?", ""),
    ],
)
def test_a_second_calculation_is_read(glossary: Glossary, question: str, second: str) -> None:
    """ConvFinQA / TAT-QA dev: each compound was answered as one of its two calculations (the
    average for 'the sum of the average', the latest change for 'the highest and the lowest')."""
    assert read_question(question, glossary).second_operation == second


def test_the_built_in_cues_are_the_example_glossarys() -> None:
    """A workspace without a ``[cues]`` section reads the same cues as the example file shows."""
    from ragspine.glossary import DEFAULT_CUES

    example = tomllib.loads(example_glossary_text())["cues"]
    assert {k: tuple(v) for k, v in example.items()} == dict(DEFAULT_CUES)


def test_over_what_period_asks_how_long_not_which_years(glossary: Glossary) -> None:
    """TAT-QA dev: 'Over what period would the expense be recognized?' was answered with the
    years the table covers; it asks for a length of time a passage states."""
    over = read_question("Over what period is ACME's deferred revenue recognized?", glossary)
    assert over.operation is Operation.LOOKUP and over.duration_asked
    which = read_question("For which period was ACME's revenue highest?", glossary)
    assert which.operation is Operation.WHICH_PERIODS and not which.duration_asked
    # found by review: a period picked by its values is no duration
    over = read_question("Over which period was ACME's revenue the highest?", glossary)
    assert over.operation is Operation.WHICH_PERIODS and not over.duration_asked


@pytest.mark.parametrize(
    "question",
    ["What was ACME's revenue in calendar 2019?", "What was ACME's calendar year 2019 revenue?"],
)
def test_a_calendar_year_is_not_read_as_the_fiscal_year(glossary: Glossary, question: str) -> None:
    """Found by an adversarial pass: 'calendar 2019' was answered with FY2019, which under a
    March year end runs from April 2018; a calendar year is reported as not understood."""
    reading = read_question(question, glossary)
    assert reading.bad_period is not None and "calendar" in reading.bad_period


@pytest.mark.parametrize(
    ("question", "periods"),
    [
        (
            "How much did ACME's revenue grow in 2019 compared with the prior year?",
            ["FY2018", "FY2019"],
        ),
        (
            "What was the change in ACME's revenue from the previous year to 2019?",
            ["FY2018", "FY2019"],
        ),
        ("What was ACME's revenue in 2019 versus last year?", ["FY2018", "FY2019"]),
    ],
)
def test_a_year_named_relative_to_a_named_year(
    glossary: Glossary, question: str, periods: list[str]
) -> None:
    """Found by an adversarial pass: 'the prior year' beside 2019 was read against today
    (FY2025), so the answer named a year nobody asked about."""
    reading = read_question(question, glossary, date(2026, 12, 4))
    assert sorted(reading.periods) == periods


def test_years_in_a_list_of_f_years_are_all_read(glossary: Glossary) -> None:
    """Found by review: 'F17, F18 and F19' dropped F18 (after a comma), so an average took two
    years of three."""
    reading = read_question(
        "What was the average of ACME's revenue for F17, F18 and F19?", glossary
    )
    assert sorted(reading.periods) == ["FY2017", "FY2018", "FY2019"]


@pytest.mark.parametrize("said", ["June '19", "Dec 31 '19", "Sept. '19"])
def test_a_month_with_a_two_digit_year_is_not_the_year(glossary: Glossary, said: str) -> None:
    """Found by review: 'revenue in June '19' was answered with the whole year 2019."""
    reading = read_question(f"What was ACME's revenue in {said}?", glossary)
    assert "FY2019" not in reading.periods and reading.bad_period is not None


def test_a_year_end_said_by_its_month_is_the_year(glossary: Glossary) -> None:
    """Found by a second review: 'the fiscal year ending June '19' was refused as a month."""
    reading = read_question(
        "What was ACME's revenue for the fiscal year ending June '19?", glossary
    )
    assert reading.periods == ("FY2019",)


def test_an_f_and_two_digits_after_a_product_is_no_year(glossary: Glossary) -> None:
    """'the F-16, F22 lines': F22 follows no year, so it is no year (a second review)."""
    assert (
        "FY2022"
        not in read_question("What was ACME's revenue of the F-16, F22 lines?", glossary).periods
    )


@pytest.mark.parametrize(
    ("question", "said"),
    [
        ("What was ACME's revenue before 2019?", "before 2019"),
        ("What was ACME's revenue prior to 2019?", "prior to 2019"),
        ("What was ACME's revenue after 2018?", "after 2018"),
        ("What are ACME's commitments due beyond 2022?", "beyond 2022"),
        ("What are ACME's commitments due in 2023 and thereafter?", "2023 and thereafter"),
        # a fourth pass: "cumulative revenue through 2019" gave 2019's revenue
        ("What was ACME's cumulative revenue through 2019?", "through 2019"),
        ("What was ACME's combined revenue up to 2019?", "up to 2019"),
    ],
)
def test_years_open_on_one_side_are_not_the_year(
    glossary: Glossary, question: str, said: str
) -> None:
    """``before 2019`` is every year before it, ``due after 2022`` every later one: a span
    with one end, never the year named (found by an adversarial pass: ``revenue before 2019``
    answered 2019's, ``due after 2022`` the 2022 row of a schedule). ``The year before 2019``
    is 2018, and ``after-tax`` names no year."""
    assert read_question(question, glossary).bad_period == said
    shifted = read_question("What was ACME's revenue in the year before 2019?", glossary)
    assert shifted.periods == ("FY2018",) and shifted.bad_period is None
    taxed = read_question("What was ACME's revenue in 2019 after tax?", glossary)
    assert taxed.periods == ("FY2019",) and taxed.bad_period is None
    spanned = read_question("What was ACME's revenue from 2017 through 2019?", glossary)
    assert spanned.bad_period is None and spanned.year_range == (2017, 2019)
    # a level through a year is its value then (a review: a performance graph's index)
    level = read_question("What was the value of ACME's stock through 2019?", glossary)
    assert level.bad_period is None and level.periods == ("FY2019",)
    graph = read_question("What was ACME's cumulative total return through 2019?", glossary)
    assert graph.bad_period is None and graph.periods == ("FY2019",)


def test_what_the_open_side_and_constant_rules_leave_alone(glossary: Glossary) -> None:
    """Found by review: 'after tax in 2018', 'after the 2018 acquisition' and 'before 2018
    restated figures' name no span of years; 'LIBOR plus 1.75%' and '2 times faster' are no
    number to compute with."""
    for question in (
        "What was ACME's revenue in 2019 after the 2018 acquisition?",
        "What was ACME's profit after tax in 2019 and after tax in 2018?",
    ):
        assert read_question(question, glossary).bad_period is None, question
    assert not read_question(
        "What do borrowings bear interest at, LIBOR plus 1.75%?", glossary
    ).constant
    assert not read_question("What grew 2 times faster than the market?", glossary).constant
    assert read_question("What is ACME's revenue in 2024 plus 100?", glossary).constant
    assert read_question("Give ACME's revenue in 2024 less 100.", glossary).constant
    assert not read_question("What is ACME's revenue in 2024 plus 1.5%?", glossary).constant
