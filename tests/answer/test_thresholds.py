"""Period selections against a threshold (``how many years did X exceed N``): found by an
adversarial pass, each of these gave a confident wrong count or list."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ask_table, tatqa_workspace
from ragspine import Workspace
from ragspine.answer.types import Answer, AnswerStatus, Figure, FigureKind

_TABLE = [
    ["(in millions)", "2019", "2018", "2017"],
    ["Cost of sales", "(700)", "(600)", "(800)"],
    ["Operating expenses", "(300)", "(350)", "(200)"],
    ["Revenue", "1,200", "1,000", "900"],
]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    root = tmp_path_factory.mktemp("thresholds")
    ws = tatqa_workspace(root, {"zqw": _TABLE})
    yield ws  # type: ignore[misc]
    ws.close()


def _periods(workspace: Workspace, question: str) -> tuple[str, ...]:
    return _ask_periods(workspace, "zqw", question)


@pytest.mark.parametrize(
    ("question", "periods"),
    [
        ("How many years did revenue not exceed 1,000?", ("FY2017", "FY2018")),
        ("How many years didn't revenue exceed 1,000?", ("FY2017", "FY2018")),
        ("How many years was revenue not less than 1,000?", ("FY2018", "FY2019")),
        ("In which years was revenue at least 1,000?", ("FY2018", "FY2019")),
        ("In which years was revenue at most 1,000?", ("FY2017", "FY2018")),
        ("How many years did revenue exceed 1,000?", ("FY2019",)),
        ("In which years was cost of sales less than -650?", ("FY2017", "FY2019")),
        ("In which years was revenue greater than or equal to 1,000?", ("FY2018", "FY2019")),
        ("In which years was revenue equal to or greater than 1,000?", ("FY2018", "FY2019")),
        ("In which years was revenue 1,000 or more?", ("FY2018", "FY2019")),
        ("In which years was revenue >= 1,000?", ("FY2018", "FY2019")),
        ("In which years was revenue \u2264 1,000?", ("FY2017", "FY2018")),
        ("In which years did revenue fail to exceed 1,000?", ("FY2017", "FY2018")),
        ("In which years did revenue not go above 1,000?", ("FY2017", "FY2018")),
        ("How many years between 2017 and 2019 did revenue exceed 950?", ("FY2018", "FY2019")),
        ("In which years was revenue over 950 over the 2017-2019 period?", ("FY2018", "FY2019")),
        ("In which years was revenue not 1,000 or more?", ("FY2017",)),
        ("In which years was revenue below<br/> 1,000?", ("FY2017", "FY2018", "FY2019")),
    ],
)
def test_negated_and_bounded_thresholds(
    workspace: Workspace, question: str, periods: tuple[str, ...]
) -> None:
    """'not exceed 1,000' was read as 'exceed 1,000' (FY2019 only: the opposite set); 'at
    least' and 'at most' include the threshold itself."""
    assert sorted(_periods(workspace, question)) == sorted(periods)


@pytest.mark.parametrize(
    "question",
    [
        "How many years did revenue exceed 1 000?",
        "How many years did revenue exceed 1\u00a0000?",
        "How many years did revenue exceed 1.000?",
        "How many years did revenue exceed 1,1 billion?",
    ],
)
def test_a_threshold_grouped_another_way_is_not_read_as_a_smaller_number(
    workspace: Workspace, question: str
) -> None:
    """'1 000' was read as 1 (3 of 3 years above it) and '1,1 billion' as 11 billion."""
    answer = ask_table(workspace, "zqw", question)
    assert answer.status is AnswerStatus.REFUSED, answer.text
    assert "1,000 or 1000" in answer.text
    assert not _selected(answer)


@pytest.mark.parametrize(
    ("question", "by_value", "by_size"),
    [
        ("How many years did cost of sales exceed 650?", "none", "FY2017, FY2019"),
        ("In which years were operating expenses above 250?", "none", "FY2018, FY2019"),
        ("In which years were operating expenses below 250?", "FY2017, FY2018, FY2019", "FY2017"),
    ],
)
def test_a_positive_threshold_over_negative_values_asks_value_or_size(
    workspace: Workspace, question: str, by_value: str, by_size: str
) -> None:
    """Costs stored as (700) were compared in value with a positive 650: '0 of 3 years', where
    the asker almost surely meant the size. Both readings are named and asked back."""
    answer = ask_table(workspace, "zqw", question)
    assert answer.status is AnswerStatus.NEEDS_CLARIFICATION, answer.text
    assert f"are {by_value} in value, {by_size} in size" in answer.text
    assert not _selected(answer)


@pytest.mark.parametrize(
    "question",
    [
        "In which years was revenue between 950 and 1,100?",
        "In which years was revenue under 1,100 but over 950?",
        "In which years was revenue over 1,000 or under 950?",
        "In which years > 2017 was revenue the highest?",
    ],
)
def test_a_range_or_two_bounds_is_refused_not_read_as_one(
    workspace: Workspace, question: str
) -> None:
    """Found by review: a range listed every year; a second bound was dropped."""
    answer = ask_table(workspace, "zqw", question)
    assert answer.status is AnswerStatus.REFUSED, answer.text
    assert "a range or two bounds" in answer.text


def test_a_decimal_threshold_below_one_is_read(tmp_path_factory: pytest.TempPathFactory) -> None:
    """'0.125' is no dot-grouped thousand (a review found it refused by the first version),
    and a signed figure with one loss year is compared by value, never asked value or size."""
    root = tmp_path_factory.mktemp("decimal")
    table = [
        ["", "2019", "2018", "2017"],
        ["EPS", "0.2", "0.1", "0.13"],
        ["Net income", "100", "(50)", "20"],
    ]
    ws = tatqa_workspace(root, {"zqd": table})
    try:
        assert sorted(_ask_periods(ws, "zqd", "In which years was EPS above 0.125?")) == [
            "FY2017",
            "FY2019",
        ]
        assert sorted(_ask_periods(ws, "zqd", "In which years was net income above 10?")) == [
            "FY2017",
            "FY2019",
        ]
    finally:
        ws.close()


def _ask_periods(ws: Workspace, uid: str, question: str) -> tuple[str, ...]:
    answer = ask_table(ws, uid, question)
    assert answer.status is AnswerStatus.ANSWERED, (question, answer.text)
    (figure,) = _selected(answer)
    return figure.periods


def _selected(answer: Answer) -> list[Figure]:
    """The figures of ``answer`` that name periods picked (a list or a count of them)."""
    return [f for f in answer.figures if f.kind in (FigureKind.PERIODS, FigureKind.COUNT)]


def test_a_threshold_over_a_row_mostly_negative_asks_value_or_size(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Found by a second review: an expense row with one year's benefit ((300), (250), 50)
    answered 'none' above 200 once only rows all negative were asked about."""
    root = tmp_path_factory.mktemp("mixed")
    table = [["", "2019", "2018", "2017"], ["Income tax expense", "(300)", "(250)", "50"]]
    ws = tatqa_workspace(root, {"zqm": table})
    try:
        answer = ask_table(ws, "zqm", "In which years did income tax expense exceed 200?")
        assert answer.status is AnswerStatus.NEEDS_CLARIFICATION, answer.text
        assert "in size" in answer.text
    finally:
        ws.close()


@pytest.mark.parametrize(
    ("question", "status"),
    [
        ("How many years did revenue exceed $950,000,000?", AnswerStatus.NEEDS_CLARIFICATION),
        ("In which years was revenue below 1,000,000,000?", AnswerStatus.NEEDS_CLARIFICATION),
        ("How many years did revenue exceed 1e3?", AnswerStatus.REFUSED),
        ("How many years did revenue exceed 950 million?", AnswerStatus.ANSWERED),
        ("How many years did revenue exceed 950?", AnswerStatus.ANSWERED),
    ],
)
def test_a_threshold_in_whole_units_or_exponent_form_is_never_read_in_the_stored_scale(
    workspace: Workspace, question: str, status: AnswerStatus
) -> None:
    """A sixth adversarial pass: 'exceed $950,000,000' over revenue in millions counted no year
    (read as 950,000,000 million) and 'exceed 1e3' every year (read as 1). A threshold with no
    scale word, as large as the stored scale, asks which scale; an exponent is not read; '950'
    and '950 million' are still read in the stored scale."""
    answer = ask_table(workspace, "zqw", question)
    assert answer.status is status, answer.text
    if status is not AnswerStatus.ANSWERED:
        assert not [f for f in answer.figures if f.kind is not FigureKind.FACT], answer.text
    else:
        assert _periods(workspace, question) == ("FY2018", "FY2019"), answer.text


def test_a_threshold_of_a_million_or_more_over_thousands_or_with_b_is_not_misread(
    tmp_path: Path,
) -> None:
    """A second review: 'less than $5,000,000' over expenses in thousands listed every year
    (5,000,000 thousand), and 'exceed $1.2B' over revenue in millions read 1.2."""
    table = [
        ["(in thousands)", "2019", "2018", "2017"],
        ["Operating expenses", "4,800", "5,200", "4,100"],
    ]
    (tmp_path / "t").mkdir()
    ws = tatqa_workspace(tmp_path / "t", {"zqx": table})
    answer = ask_table(ws, "zqx", "In which years were operating expenses less than $5,000,000?")
    assert answer.status is AnswerStatus.NEEDS_CLARIFICATION, answer.text
    millions = [["(in millions)", "2019", "2018"], ["Revenue", "1,300", "1,100"]]
    (tmp_path / "m").mkdir()
    ws2 = tatqa_workspace(tmp_path / "m", {"zqy": millions})
    assert _ask_periods(ws2, "zqy", "In which years did revenue exceed $1.2B?") == ("FY2019",)
