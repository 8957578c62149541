"""Questions about several companies, a default company, far years and bare total rows: each
answer names the figures of the company and year asked, or asks back (found by a fifth
adversarial pass; each test fails on the code before it)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from conftest import ask_table, tatqa_workspace
from graph.builders import fact
from ragspine import Principal, Workspace
from ragspine.answer.types import Answer, AnswerStatus, FigureKind
from ragspine.security import Sensitivity
from ragspine.structured.facts import Fact, Scale
from ragspine.workspace import example_glossary_text

PUBLIC = Principal.of("public")
BETA = """
[entities.beta]
label = "Beta Inc"
aliases = ["BETA"]
"""


def _fact(
    metric: str,
    entity: str,
    period: str,
    value: str,
    *,
    channel: str = "total",
    currency: str = "USD",
) -> Fact:
    """A public fact in millions (of ``currency``, in ``channel``)."""
    return fact(
        metric, entity, value, period=period, channel=channel, unit=currency,
        currency=currency, scale=Scale.MILLION,
    )  # fmt: skip


FACTS = [
    _fact("revenue", "acme", "FY2018", "100"),
    _fact("revenue", "acme", "FY2019", "120"),
    _fact("revenue", "beta", "FY2018", "90"),
    _fact("revenue", "beta", "FY2019", "150"),
    _fact("net_income", "acme", "FY2019", "12"),
    _fact("net_income", "beta", "FY2019", "15"),
]


def _workspace(folder: Path, *, default_entity: bool = False) -> Workspace:
    folder.mkdir(parents=True)
    glossary = example_glossary_text() + BETA
    if default_entity:
        glossary = glossary.replace('# default_entity = "acme"', 'default_entity = "acme"')
    (folder / "glossary.toml").write_text(glossary, encoding="utf-8")
    ws = Workspace.open(folder)
    ws.facts.write(FACTS)
    return ws


@pytest.fixture()
def two(tmp_path: Path) -> Workspace:
    return _workspace(tmp_path / "ws")


def _computed(answer: Answer) -> list[str]:
    return [f.text for f in answer.figures if f.kind is not FigureKind.FACT]


def test_a_change_never_runs_from_one_company_to_another_year(two: Workspace) -> None:
    """'How did revenue change from 2018 to 2019 for ACME and BETA?' also gave a step from
    ACME's 2019 to BETA's 2018 (90 - 120 = -30): the change of nothing."""
    answer = two.ask(
        "How did revenue change from 2018 to 2019 for ACME and BETA?", principal=PUBLIC
    )
    assert answer.status is AnswerStatus.ANSWERED, answer.text
    changes = [f for f in answer.figures if f.kind is FigureKind.CHANGE]
    assert [f.decimal_value for f in changes] == ["20", "60"], answer.text
    assert "90 \N{MINUS SIGN} 120" not in answer.text


@pytest.mark.parametrize(
    "question",
    [
        "What was the ratio of ACME revenue to BETA net income in 2019?",
        "What was ACME's net income as a percentage of BETA's revenue in 2019?",
    ],
)
def test_a_share_of_one_companys_figure_in_anothers_is_asked_back(
    two: Workspace, question: str
) -> None:
    """Both were computed within the first company (ACME's 120 / 12 = 10, 12 / 120 = 10 %),
    with every input shown as if it were the one asked."""
    answer = two.ask(question, principal=PUBLIC)
    assert answer.status is AnswerStatus.NEEDS_CLARIFICATION, answer.text
    assert "Which company for each figure?" in answer.text


def test_a_share_for_two_companies_is_each_ones_own(two: Workspace) -> None:
    """Two metrics and two companies, each figure not tied to one: each company's share (the
    first company's alone was given)."""
    answer = two.ask(
        "What was net income as a percentage of revenue for ACME and BETA in 2019?",
        principal=PUBLIC,
    )
    assert answer.status is AnswerStatus.ANSWERED, answer.text
    assert [f.decimal_value for f in answer.figures if f.kind is FigureKind.SHARE] == ["10", "10"]
    assert "12 / 120" in answer.text and "15 / 150" in answer.text


def test_which_company_is_the_whole_and_which_is_more_follow_the_words(two: Workspace) -> None:
    """'What percentage of BETA's revenue was ACME's revenue?' gave 150 / 120 (BETA's share of
    ACME's), 'how much more revenue did BETA have than ACME' gave -30, and a share of the
    combined revenue of both gave ACME over BETA (80 %)."""
    share = two.ask(
        "What percentage of BETA's revenue was ACME's revenue in 2019?", principal=PUBLIC
    )
    assert "120 / 150 = 80 %" in share.text, share.text
    more = two.ask("How much more revenue did BETA have than ACME in 2019?", principal=PUBLIC)
    assert "150 \N{MINUS SIGN} 120 = 30" in more.text, more.text
    less = two.ask("How much more revenue did ACME have than BETA in 2019?", principal=PUBLIC)
    assert "120 \N{MINUS SIGN} 150 = -30" in less.text, less.text
    for question in (
        "ACME revenue as a percentage of total revenue of ACME and BETA in 2019",
        "What was ACME's revenue share of the combined ACME and BETA revenue in 2019?",
    ):
        answer = two.ask(question, principal=PUBLIC)
        assert answer.status is AnswerStatus.NEEDS_CLARIFICATION, answer.text
        assert "two calculations at once" in answer.text


def test_a_default_company_never_stands_in_for_one_the_question_names(tmp_path: Path) -> None:
    """With the glossary's default entity ACME, 'What was Microsoft's revenue in 2019?' was
    answered with ACME's 120, saying the question named no company."""
    ws = _workspace(tmp_path / "ws", default_entity=True)
    answer = ws.ask("What was Microsoft's revenue in 2019?", principal=PUBLIC)
    assert answer.status is AnswerStatus.NEEDS_CLARIFICATION, answer.text
    assert "microsoft" in answer.text.casefold()
    plain = ws.ask("What was revenue in 2019?", principal=PUBLIC)
    assert plain.status is AnswerStatus.ANSWERED and "120" in plain.text
    assert "the workspace's default entity" in plain.text


@pytest.mark.parametrize(
    ("question", "said"),
    [
        ("What was ACME's revenue in 2100?", "2100"),
        ("How did revenue change from 1899 to 2019?", "1899"),
    ],
)
def test_a_year_outside_the_grammar_is_reported_never_dropped(
    two: Workspace, question: str, said: str
) -> None:
    """'revenue in 2100' was answered with the latest year's figure, and 'from 1899 to 2019'
    with the change over the two latest years: the year was not read at all."""
    answer = two.ask(question, principal=PUBLIC)
    assert answer.status is AnswerStatus.UNRECOGNIZED_PARAM, answer.text
    assert said in answer.text
    stores = two.ask("How many revenue figures are there in 2500 stores?", principal=PUBLIC)
    assert "2500" not in (stores.param or "")


def test_a_change_asked_with_its_why_is_still_the_change(tmp_path: Path) -> None:
    """'How much did ACME's revenue fall in 2019 and why?' gave 2019's level alone (80),
    while the same question without 'why' gave the fall from 2018 (20)."""
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "glossary.toml").write_text(example_glossary_text(), encoding="utf-8")
    ws = Workspace.open(folder)
    ws.facts.write(
        [_fact("revenue", "acme", "FY2018", "100"), _fact("revenue", "acme", "FY2019", "80")]
    )
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("ACME revenue fell in 2019 because the plant closed.\n", "utf-8")
    ws.ingest_documents([docs / "a.md"], library="reports")
    answer = ws.ask("How much did ACME's revenue fall in 2019 and why?", principal=PUBLIC)
    assert answer.route == "composite" and answer.status is AnswerStatus.ANSWERED
    assert "100 \N{MINUS SIGN} 80 = 20" in answer.text, answer.text


def test_total_before_a_row_keeps_the_total_row(tmp_path: Path) -> None:
    """A review: dropping a bare 'Total' row when 'total' comes right before another row's
    name ('the total free cash flow') answered 'the total cash' with the Cash row (200 of a 500
    total) and 'the change in total cash' with the Cash row's change. The Total row stays a
    figure of such a question, shown with the row named."""
    ws = tatqa_workspace(
        tmp_path,
        {
            "t": [
                ["", "2019", "2018"],
                ["Cash", "200", "150"],
                ["Cash equivalents", "300", "250"],
                ["Total", "500", "400"],
            ]
        },
    )
    answer = ask_table(ws, "t", "What was total cash in 2019?")
    assert "500" in answer.text, answer.text
    change = ask_table(ws, "t", "What was the change in total cash from 2018 to 2019?")
    assert "= 50" not in change.text or "= 100" in change.text, change.text


def test_an_average_over_companies_and_years_is_asked_which(two: Workspace) -> None:
    """'the average revenue of ACME and BETA in 2018 and 2019' pooled the four figures (115):
    each company's average, each year's, or all four? Over one year it is the companies'."""
    pooled = two.ask(
        "What was the average revenue of ACME and BETA in 2018 and 2019?", principal=PUBLIC
    )
    assert pooled.status is AnswerStatus.NEEDS_CLARIFICATION, pooled.text
    assert "Which to combine?" in pooled.text
    one_year = two.ask("What was the average revenue of ACME and BETA in 2019?", principal=PUBLIC)
    assert "(120 + 150) / 2 = 135" in one_year.text, one_year.text


def test_an_average_that_does_not_combine_is_refused_not_answered(tmp_path: Path) -> None:
    """Two companies' revenue in dollars and in euros: 'not computable' was said, and the
    answer's status still said answered."""
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "glossary.toml").write_text(example_glossary_text() + BETA, encoding="utf-8")
    ws = Workspace.open(folder)
    euros = _fact("revenue", "beta", "FY2019", "150", currency="EUR")
    ws.facts.write([_fact("revenue", "acme", "FY2019", "120"), euros])
    answer = ws.ask("What was the average revenue of ACME and BETA in 2019?", principal=PUBLIC)
    assert answer.status is AnswerStatus.REFUSED, answer.text
    assert "not computable" in answer.text


def test_counts_after_from_and_to_are_no_years(tmp_path: Path) -> None:
    """A review: the far-year rule read '1200' in 'from 1200 to 1500' (employees) and '1000'
    in 'equal to 1000' as periods not understood; a count named so is no year."""
    ws = tatqa_workspace(
        tmp_path,
        {
            "hc": [
                ["", "2019", "2018"],
                ["Employees", "1,500", "1,200"],
                ["Revenue", "1,000", "900"],
            ]
        },
    )
    for question in (
        "By what percentage did employees increase from 1200 to 1500?",
        "What is the difference between 1500 and 1200 employees?",
        "Was revenue in 2019 equal to 1000?",
    ):
        answer = ask_table(ws, "hc", question)
        assert answer.status is not AnswerStatus.UNRECOGNIZED_PARAM, (question, answer.text)


def test_a_channel_or_a_relative_year_is_no_narrowing_word(tmp_path: Path) -> None:
    """A review: with the default company read like a given one, 'online revenue' (a channel
    the glossary names), 'in the preceding year, 2018' and 'consolidated revenue' asked back;
    they name the channel, the year and the whole company."""
    folder = tmp_path / "ws"
    folder.mkdir()
    glossary = example_glossary_text().replace(
        '# default_entity = "acme"', 'default_entity = "acme"'
    )
    (folder / "glossary.toml").write_text(glossary, encoding="utf-8")
    ws = Workspace.open(folder)
    ws.facts.write([*FACTS[:2], _fact("revenue", "acme", "FY2019", "70", channel="online")])
    for question, shown in (
        ("What was online revenue in 2019?", "70"),
        ("What was revenue in the preceding year, 2018?", "100"),
        ("What was consolidated revenue in 2019?", "120"),
    ):
        answer = ws.ask(question, principal=PUBLIC)
        assert answer.status is AnswerStatus.ANSWERED and shown in answer.text, (
            question,
            answer.text,
        )


def _channels(folder: Path, facts: list[Fact]) -> Workspace:
    folder.mkdir()
    (folder / "glossary.toml").write_text(example_glossary_text(), encoding="utf-8")
    ws = Workspace.open(folder)
    ws.facts.write(facts)
    return ws


def test_each_channel_named_is_answered_or_said_missing(tmp_path: Path) -> None:
    """A fifth review: 'revenue in online and retail' answered Online alone, Retail left out
    without a word (the first channel named was the only one read). A hidden Retail figure
    reads as an absent one."""
    online = _fact("revenue", "acme", "FY2019", "70", channel="online")
    retail = _fact("revenue", "acme", "FY2019", "50", channel="retail")
    hidden = dataclasses.replace(retail, sensitivity=Sensitivity.CONFIDENTIAL)
    both = _channels(tmp_path / "both", [online, retail])
    absent = _channels(tmp_path / "absent", [online])
    secret = _channels(tmp_path / "secret", [online, hidden])
    question = "What was ACME's revenue in online and retail in 2019?"
    answer = both.ask(question, principal=PUBLIC)
    assert answer.status is AnswerStatus.ANSWERED
    assert [f.decimal_value for f in answer.figures] == ["70", "50"], answer.text
    assert "Revenue (Retail) in FY2019 was 50 million" in answer.text
    missing = absent.ask(question, principal=PUBLIC)
    assert missing.status is AnswerStatus.ANSWERED
    assert [f.decimal_value for f in missing.figures] == ["70"]
    assert "ACME Corp, FY2019: no stored fact for Revenue (Retail)." in missing.text
    assert secret.ask(question, principal=PUBLIC).text == missing.text
    shown = secret.ask(question, principal=Principal.of("confidential"))
    assert [f.decimal_value for f in shown.figures] == ["70", "50"]


@pytest.mark.parametrize(
    "question",
    [
        "How did ACME's online and retail revenue change from 2018 to 2019?",
        "What was ACME's average online and retail revenue over 2018 and 2019?",
        "In which year was ACME's revenue in online and retail highest?",
    ],
)
def test_a_calculation_over_several_channels_is_asked_back(tmp_path: Path, question: str) -> None:
    """It was computed over the first channel named only (Online's change, 70 - 60), the other
    left out without a word."""
    ws = _channels(
        tmp_path / "ws",
        [
            _fact("revenue", "acme", year, value, channel=channel)
            for year, value, channel in (
                ("FY2018", "60", "online"), ("FY2019", "70", "online"),
                ("FY2018", "40", "retail"), ("FY2019", "50", "retail"),
            )
        ],
    )  # fmt: skip
    answer = ws.ask(question, principal=PUBLIC)
    assert answer.status is AnswerStatus.NEEDS_CLARIFICATION, answer.text
    assert "Which channel?" in answer.text and "(Online, Retail)" in answer.text
    assert not answer.figures


def test_the_order_channels_are_named_in_chooses_nothing(tmp_path: Path) -> None:
    """A review: with no period named, the latest period came from the first channel named
    ('online and retail' was refused where 'retail and online' answered), and only the first
    channel's figure was checked for a column of a year's first day (an opening balance was
    given as the year's figure)."""
    retail = _fact("revenue", "acme", "FY2019", "50", channel="retail")
    ws = _channels(tmp_path / "ws", [retail])
    answers = [
        ws.ask(f"What was ACME's revenue in {pair}?", principal=PUBLIC)
        for pair in ("online and retail", "retail and online")
    ]
    assert [[f.decimal_value for f in a.figures] for a in answers] == [["50"], ["50"]]
    opening = dataclasses.replace(
        retail, locator="t.pdf, table 1, row 2, column 1 '1 January 2019'"
    )
    online = _fact("revenue", "acme", "FY2019", "70", channel="online")
    first_day = _channels(tmp_path / "first", [online, opening])
    for pair in ("online and retail", "retail and online"):
        answer = first_day.ask(f"What was ACME's revenue in {pair} in 2019?", principal=PUBLIC)
        assert answer.status is AnswerStatus.NEEDS_CLARIFICATION, (pair, answer.text)
        assert "50" not in answer.text


def test_a_day_is_checked_against_the_channels_answered_only(tmp_path: Path) -> None:
    """A review: the Online figure, stored by year, put its day assumption on an answer giving
    the Total figure read at June 30, 2019 (the day asked)."""
    total = dataclasses.replace(
        _fact("revenue", "acme", "FY2019", "100"),
        locator="t.pdf, table 1, row 2, column 1 'June 30, 2019'",
    )
    online = _fact("revenue", "acme", "FY2019", "70", channel="online")
    ws = _channels(tmp_path / "ws", [total, online])
    answer = ws.ask("What was ACME's revenue at June 30, 2019?", principal=PUBLIC)
    assert answer.status is AnswerStatus.ANSWERED and "was 100 million" in answer.text
    assert not [line for line in answer.assumptions if line.startswith("Day:")], answer.text
    by_year = ws.ask("What was ACME's online revenue at June 30, 2019?", principal=PUBLIC)
    assert "was 70 million" in by_year.text
    assert [line[:24] for line in by_year.assumptions if line.startswith("Day:")] == [
        "Day: June 30, 2019 is re"
    ]
