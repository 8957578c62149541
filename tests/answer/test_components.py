"""The rows a table lists under a heading or above its total ("What were the components of
current assets?", "How many items are there under deferred tax assets?"): read from the facts'
locators only, a total found by exact arithmetic, hidden rows neither listed nor counted."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from ragspine import Workspace
from ragspine.answer.components import ComponentsAsk, components_asked
from ragspine.answer.options import AskOptions
from ragspine.answer.types import AnswerStatus, FigureKind
from ragspine.eval.qa import QAItem, fabricated_numbers, score_answer
from ragspine.security import PUBLIC, Principal, Sensitivity
from ragspine.structured.facts import Scale

TABLE = [
    ["", "2019", "2018"],
    ["Deferred tax assets", "", ""],
    ["Pension costs", "1,169", "1,111"],
    ["Net operating loss carryforwards", "2,000", "1,500"],
    ["Other", "134", "120"],
    ["Gross deferred tax assets", "3,303", "2,731"],
    ["Less valuation allowance", "(100)", "(90)"],
    ["Deferred tax liabilities", "", ""],
    ["Property, plant and equipment", "(500)", "(400)"],
    ["Other", "(20)", "(10)"],
    ["Gross deferred tax liabilities", "(520)", "(410)"],
    ["Stock-based compensation", "", ""],
    ["Research and development", "30", "20"],
    ["Sales and marketing", "70", "60"],
    ["Total stock-based compensation expense", "100", "80"],
    ["Costs", "", ""],
    ["Cost of revenue", "55", "50"],
    ["Operating costs", "45", "35"],
    ["Total costs", "99", "85"],
]
"""One table of a report's kind: two headed sections (the first with its total and a row after
it), a total of the two rows right above it, and a 'Total costs' row that is no sum of the rows
above it (55 + 45 is 100, not 99)."""


@pytest.fixture()
def ws(tmp_path: Path) -> Workspace:
    source = tmp_path / "t.json"
    docs = [{"table": {"uid": "t-1", "table": TABLE}, "paragraphs": [], "questions": []}]
    source.write_text(json.dumps(docs), "utf-8")
    workspace = Workspace.init(tmp_path / "ws")
    workspace.ingest_tatqa(source)
    return workspace


def _ask(ws: Workspace, question: str, principal: Principal = PUBLIC, channel: str = "auto"):  # type: ignore[no-untyped-def]
    return ws.ask(question, AskOptions(entity="tatqa-t-1", channel=channel), principal=principal)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What were the components making up current assets?", ("current assets", False)),
        (
            "What are the items under the deferred tax liabilities?",
            ("deferred tax liabilities", False),
        ),
        ("What financial items does free cash flow consist of?", ("free cash flow", False)),
        ("What types of accounts receivable are there?", ("accounts receivable", False)),
        ("How many components are there under deferred tax assets?", ("deferred tax assets", True)),
        ("How many types of intangible assets are there?", ("intangible assets", True)),
        ("What was the revenue in 2019?", None),
        ("What are the respective values of revenue in 2018 and 2019?", None),
        ("How many years did revenue exceed 100?", None),
    ],
)
def test_which_questions_ask_for_a_tables_rows(
    question: str, expected: tuple[str, bool] | None
) -> None:
    asked = components_asked(question)
    assert (asked and (asked.target, asked.count)) == expected
    if expected is not None:
        assert asked == ComponentsAsk(*expected)


def test_the_rows_under_a_heading_stop_at_their_total(ws: Workspace) -> None:
    listed = _ask(ws, "What are the components of deferred tax assets?")
    assert listed.status is AnswerStatus.ANSWERED and listed.route == "structured"
    assert [s.text for s in listed.sentences] == [
        "Pension costs",
        "Net operating loss carryforwards",
        "Other",  # as the table shows it, not 'Deferred tax assets: Other'
    ]
    assert all(len(s.markers) == 1 for s in listed.sentences)
    assert {
        src.source_locator.split(" under ")[0].rsplit(", row ", 1)[1] for src in listed.sources
    } == {
        "3 'Pension costs'",
        "4 'Net operating loss carryforwards'",
        "5 'Deferred tax assets: Other'",
    }
    counted = _ask(ws, "How many items are there under deferred tax liabilities?")
    rows = [f for f in counted.figures if f.kind is FigureKind.ROWS]
    assert [f.value.value for f in rows if f.value] == [2], counted.text
    assert "Property, plant and equipment; Other" in counted.text


def test_the_rows_above_a_total_are_found_by_exact_arithmetic(ws: Workspace) -> None:
    counted = _ask(
        ws, "How many categories are there under total stock-based compensation expense?"
    )
    rows = [f for f in counted.figures if f.kind is FigureKind.ROWS]
    assert [f.value.value for f in rows if f.value] == [2], counted.text
    assert "Research and development; Sales and marketing" in counted.text
    # 55 + 45 = 100 is not 99: no rows are its parts, and none is guessed
    guessed = _ask(ws, "How many components are there under total costs?")
    assert not [f for f in guessed.figures if f.kind is FigureKind.ROWS], guessed.text
    assert "Cost of revenue; Operating costs" not in guessed.text


def test_a_hidden_row_is_neither_listed_nor_counted_nor_its_heading_named(
    ws: Workspace,
) -> None:
    stored = list(ws.facts.scan(max_level=99, entity="tatqa-t-1"))
    hidden = [f for f in stored if f.metric == "net_operating_loss_carryforwards"]
    assert hidden
    ws.facts.write([replace(f, sensitivity=Sensitivity.CONFIDENTIAL) for f in hidden])
    public = _ask(ws, "What are the components of deferred tax assets?")
    # with a row between them hidden, where the rows' total is cannot be proven: a listing
    # would take 'Gross deferred tax assets' for a part, so none is given
    assert not [s for s in public.sentences if s.text == "Pension costs"], public.text
    assert "Gross deferred tax assets" not in public.text
    assert "carryforwards" not in public.text and "2,000" not in public.text
    cleared = Principal(Sensitivity.CONFIDENTIAL, name="auditor")
    seen = _ask(ws, "What are the components of deferred tax assets?", principal=cleared)
    assert "Net operating loss carryforwards" in [s.text for s in seen.sentences]
    # a section of hidden rows only: its heading is not named to a public asker
    section = [f for f in stored if f.metric.startswith(("research", "sales_and"))]
    ws.facts.write([replace(f, sensitivity=Sensitivity.CONFIDENTIAL) for f in section])
    total = _ask(ws, "How many categories are there under total stock-based compensation expense?")
    assert "Research and development" not in total.text
    assert not [f for f in total.figures if f.kind is FigureKind.ROWS]


def test_rows_are_not_read_when_the_narrative_channel_is_asked(ws: Workspace) -> None:
    answer = _ask(ws, "What are the components of deferred tax assets?", channel="narrative")
    assert answer.route == "narrative" and "Pension costs" not in answer.text


def test_a_count_of_rows_is_a_computed_number_and_lists_score_as_sets(ws: Workspace) -> None:
    question = "How many components are there under deferred tax assets?"
    counted = _ask(ws, question)
    fabricated, invalid = fabricated_numbers(counted, question, ws.facts, {})
    assert fabricated == [] and not invalid
    forged = replace(counted, text=counted.text.replace("3 rows", "4 rows"))
    forged = replace(
        forged,
        sentences=tuple(
            replace(s, text=s.text.replace("3 rows", "4 rows")) for s in forged.sentences
        ),
    )
    assert fabricated_numbers(forged, question, ws.facts, {})[0] == ["4"]
    listed_question = "What are the components of deferred tax assets?"
    listed = _ask(ws, listed_question)
    gold = ("Other", "Pension costs", "Net operating loss carryforwards")
    item = QAItem("q1", listed_question, gold, "multi-span", "table", "", "tatqa-t-1", "t-1")
    assert score_answer(ws, item, listed, "t-1").exact
    short = QAItem("q2", listed_question, gold[:2], "multi-span", "table", "", "tatqa-t-1", "t-1")
    assert not score_answer(ws, short, listed, "t-1").exact


def _one_table(tmp_path: Path, rows: list[list[str]]) -> Workspace:
    tmp_path.mkdir(parents=True, exist_ok=True)
    source = tmp_path / "one.json"
    docs = [{"table": {"uid": "t-1", "table": rows}, "paragraphs": [], "questions": []}]
    source.write_text(json.dumps(docs), "utf-8")
    workspace = Workspace.init(tmp_path / "one")
    workspace.ingest_tatqa(source)
    return workspace


def _listed(answer) -> list[str]:  # type: ignore[no-untyped-def]
    return [s.text for s in answer.sentences] if "Rows:" in answer.text else []


def test_review_wrong_lists_are_not_given(tmp_path: Path) -> None:
    """A review of the first version found: a total rounded apart from its parts listed as a
    part with a row after it; a first row hidden or unread making the total a part; a part
    that happened to equal the sum above it cutting the list; a nil row left out of a total's
    parts; and glossary labels ('Revenue') listed for the table's own ('Net sales')."""
    ws = _one_table(
        tmp_path,
        [
            ["", "2019", "2018"],
            ["Current assets", "", ""],
            ["Cash", "100", "90"],
            ["Receivables", "201", "150"],
            ["Inventories", "50", "40"],
            ["Current assets, net", "352", "280"],  # 351 and 280: rounded apart
            ["Goodwill", "500", "500"],
            ["Costs", "", ""],
            ["Cost A", "—", "—"],  # never stored: its row is unread
            ["Cost B", "10", "20"],
            ["Cost C", "5", "5"],
            ["Operating expenses", "", ""],
            ["Research", "0", "0"],
            ["Marketing", "30", "20"],
            ["Administration", "70", "50"],
            ["Total operating expenses", "100", "70"],
            ["Results", "", ""],
            ["Net sales", "900", "800"],
            ["Operating profit", "90", "80"],
            ["Total results", "990", "880"],
            ["Other data", "", ""],
            ["Employees", "10", "9"],
        ],
    )
    rounded = _ask(ws, "What are the components of current assets?")
    assert _listed(rounded) == [] and "Goodwill" not in rounded.text, rounded.text
    unread = _ask(ws, "What are the components of costs?")
    assert _listed(unread) == [], unread.text
    nil = _ask(ws, "How many components are there under total operating expenses?")
    assert [f.value.value for f in nil.figures if f.kind is FigureKind.ROWS and f.value] == [3]
    under = _ask(ws, "What are the components of operating expenses?")
    assert _listed(under) == ["Research", "Marketing", "Administration"], under.text
    own = _ask(ws, "What are the items under results?")
    assert _listed(own) == ["Net sales", "Operating profit"], own.text
    chance = _one_table(
        tmp_path / "chance",
        [
            ["", "Amount"],
            ["Revenue by type", ""],
            ["Product", "100"],
            ["Services", "50"],
            ["Licenses", "150"],  # the sum above it in the only period: a total, or by chance
            ["Support", "20"],
        ],
    )
    one = _ask(chance, "What are the components of revenue by type?")
    assert _listed(one) == [], one.text


def test_the_trace_counts_no_hidden_fact(ws: Workspace) -> None:
    """The first version's trace stage counted every fact the asker sees: a cleared asker's
    count differed from a public one's where hidden rows lie in another section."""
    stored = list(ws.facts.scan(max_level=99, entity="tatqa-t-1"))
    hidden = [f for f in stored if f.metric.startswith("cost_of_revenue")]
    ws.facts.write([replace(f, sensitivity=Sensitivity.CONFIDENTIAL) for f in hidden])
    question = "What are the components of deferred tax assets?"
    public = _ask(ws, question)
    cleared = _ask(ws, question, principal=Principal(Sensitivity.CONFIDENTIAL, name="auditor"))
    assert [s.text for s in public.sentences] == [s.text for s in cleared.sentences]
    stages = [
        [
            (s.name, s.candidates_in, s.candidates_out)
            for s in a.trace.stages
            if s.name == "answer:rows"
        ]
        for a in (public, cleared)
    ]
    assert stages[0] and stages[0] == stages[1]


def test_digits_of_a_listed_rows_label_are_no_fabricated_number(tmp_path: Path) -> None:
    ws = _one_table(
        tmp_path,
        [
            ["", "2019", "2018"],
            ["Long-term debt", "", ""],
            ["Notes due 2025", "300", "300"],
            ["3.5% senior notes", "200", "100"],
            ["Total long-term debt", "500", "400"],
        ],
    )
    question = "What are the components of long-term debt?"
    listed = _ask(ws, question)
    assert _listed(listed) == ["Notes due 2025", "3.5% senior notes"], listed.text
    assert fabricated_numbers(listed, question, ws.facts, {}) == ([], False)


def test_second_review_wrong_lists_are_not_given(tmp_path: Path) -> None:
    """A second review found: one period of a part hidden made the total a part (5 rows for
    a public asker, 3 for a cleared one); a hidden last row of a section with no total was
    left out of the list and the count; 'Total subscription' under 'Revenue' was taken for the
    section's total; a total stored in another scale was listed as a part."""
    ws = _one_table(
        tmp_path,
        [
            ["", "2019", "2018"],
            ["Deferred tax assets", "", ""],
            ["Pension costs", "1,169", "1,111"],
            ["Net operating loss carryforwards", "2,000", "1,500"],
            ["Other", "134", "120"],
            ["Gross deferred tax assets", "3,303", "2,731"],
            ["Other income", "", ""],
            ["Interest", "10", "20"],
            ["Dividends", "5", "7"],
            ["Royalties", "3", "4"],
            ["Total other income", "18", "31"],
            ["Revenue", "", ""],
            ["Subscription US", "50", "40"],
            ["Subscription international", "30", "20"],
            ["Total subscription", "80", "60"],
            ["Services", "20", "10"],
            ["Total revenue", "100", "70"],
        ],
    )
    stored = list(ws.facts.scan(max_level=99, entity="tatqa-t-1"))
    cleared = Principal(Sensitivity.CONFIDENTIAL, name="auditor")
    one_year = [
        f for f in stored if f.metric == "net_operating_loss_carryforwards" and f.period == "FY2018"
    ]
    royalties = [f for f in stored if f.metric == "royalties"]
    assert one_year and royalties
    ws.facts.write([replace(f, sensitivity=Sensitivity.CONFIDENTIAL) for f in one_year + royalties])
    for principal in (PUBLIC, cleared):
        assets = _ask(ws, "What are the components of deferred tax assets?", principal)
        assert "Gross deferred tax assets" not in _listed(assets), assets.text
    public = _ask(ws, "How many items are there under other income?")
    assert not [f for f in public.figures if f.kind is FigureKind.ROWS], public.text
    seen = _ask(ws, "How many items are there under other income?", cleared)
    assert [f.value.value for f in seen.figures if f.kind is FigureKind.ROWS and f.value] == [3]
    revenue = _ask(ws, "What are the components of revenue?")
    assert _listed(revenue) == [], revenue.text
    scaled = [f for f in stored if f.metric == "gross_deferred_tax_assets"]
    ws.facts.write(
        [
            replace(f, value=f.value / 1000, scale=Scale.MILLION, sensitivity=f.sensitivity)
            for f in scaled
        ]
    )
    forged = _ask(ws, "What are the components of deferred tax assets?", cleared)
    assert _listed(forged) == [], forged.text


def test_third_review_wrong_lists_are_not_given(tmp_path: Path) -> None:
    """A third review found: a run above a total checked only in the periods all its rows
    have (a row of 2017 only left out of 'total revenue'); a bare 'Subtotal' taken for the
    heading's total; a row nil only in the periods the asker sees added to a total's parts;
    and a wrong count excused by a digit of a listed row's label."""
    ws = _one_table(
        tmp_path,
        [
            ["", "2019", "2018", "2017"],
            ["Revenue", "", "", ""],
            ["Legacy product", "—", "—", "20"],
            ["Product", "50", "40", "30"],
            ["New product", "25", "15", "—"],
            ["Total revenue", "75", "55", "50"],
            ["Sales", "", "", ""],
            ["Hardware", "50", "40", "30"],
            ["Software", "30", "20", "10"],
            ["Subtotal", "80", "60", "40"],
            ["Other sales", "5", "7", "9"],
            ["Total sales", "85", "67", "49"],
            ["Costs", "", "", ""],
            ["Memo item", "0", "5", "0"],
            ["Cost A", "10", "20", "30"],
            ["Cost B", "30", "40", "50"],
            ["Total costs", "40", "60", "80"],
            ["Investments", "", "", ""],
            ["Level 1", "10", "10", "10"],
            ["Level 2", "20", "20", "20"],
            ["Level 3", "40", "40", "40"],
            ["Total investments", "70", "70", "70"],
        ],
    )
    revenue = _ask(ws, "What are the components of total revenue?")
    assert _listed(revenue) in ([], ["Legacy product", "Product", "New product"]), revenue.text
    sales = _ask(ws, "What are the components of sales?")
    assert _listed(sales) in ([], ["Hardware", "Software", "Other sales"]), sales.text
    stored = list(ws.facts.scan(max_level=99, entity="tatqa-t-1"))
    memo = [f for f in stored if f.metric == "memo_item" and f.period == "FY2018"]
    ws.facts.write([replace(f, sensitivity=Sensitivity.CONFIDENTIAL) for f in memo])
    costs = _ask(ws, "What are the components of total costs?")
    assert _listed(costs) == ["Cost A", "Cost B"], costs.text
    question = "How many items are there under investments?"
    counted = _ask(ws, question)
    assert [f.value.value for f in counted.figures if f.kind is FigureKind.ROWS and f.value] == [3]
    assert fabricated_numbers(counted, question, ws.facts, {}) == ([], False)
    forged = replace(
        counted,
        sentences=tuple(
            replace(s, text=s.text.replace("3 rows", "2 rows")) for s in counted.sentences
        ),
    )
    assert "2" in fabricated_numbers(forged, question, ws.facts, {})[0]


def test_fourth_review_wrong_lists_are_not_given(tmp_path: Path) -> None:
    """A fourth review found: a section with no total took in the row after it ('Operating
    income' read under 'Operating expenses:'); a repeated 'Subtotal', stored as 'Sales:
    Subtotal', passed the label checks; a row nil in the total's visible periods only was left
    out of its parts; 'How many negative items' counted every row."""
    ws = _one_table(
        tmp_path,
        [
            ["", "2019", "2018", "2017"],
            ["Operating expenses:", "", "", ""],
            ["Selling", "100", "90", "80"],
            ["Administrative", "50", "40", "30"],
            ["Operating income", "250", "270", "260"],
            ["Sales", "", "", ""],
            ["Hardware", "50", "40", "30"],
            ["Software", "30", "20", "10"],
            ["Subtotal", "80", "60", "40"],
            ["Other sales", "5", "7", "9"],
            ["Total sales", "85", "67", "49"],
            ["Costs", "", "", ""],
            ["Restructuring", "0", "0", "5"],
            ["Cost A", "10", "20", "30"],
            ["Cost B", "5", "5", "5"],
            ["Total costs", "15", "25", "40"],
        ],
    )
    expenses = _ask(ws, "What are the components of operating expenses?")
    assert _listed(expenses) == [], expenses.text
    sales = _ask(ws, "What are the components of sales?")
    assert _listed(sales) in ([], ["Hardware", "Software", "Other sales"]), sales.text
    stored = list(ws.facts.scan(max_level=99, entity="tatqa-t-1"))
    hidden = [f for f in stored if f.metric == "total_costs" and f.period == "FY2017"]
    ws.facts.write([replace(f, sensitivity=Sensitivity.CONFIDENTIAL) for f in hidden])
    costs = _ask(ws, "What are the components of total costs?")
    assert _listed(costs) in ([], ["Restructuring", "Cost A", "Cost B"]), costs.text
    assert components_asked("How many negative items are there under sales?") is None
    assert components_asked("What were the largest components of sales?") is None


def test_fifth_review_a_larger_total_never_closes_a_headings_rows(tmp_path: Path) -> None:
    """A fifth review found: a larger total right after a heading's rows closed them, with rows
    of another section read in ('Total assets' after 'Current assets' listed property, plant
    and equipment; a bare 'Total' after 'Liabilities' counted equity; a blank total after
    'Current liabilities:' listed long-term debt). The closing total must name the heading."""
    ws = _one_table(
        tmp_path,
        [
            ["", "2019", "2018"],
            ["Current assets", "", ""],
            ["Cash", "10", "20"],
            ["Receivables", "30", "40"],
            ["Property, plant and equipment", "55", "70"],
            ["Total assets", "95", "130"],
            ["Liabilities", "", ""],
            ["Accounts payable", "100", "90"],
            ["Debt", "200", "180"],
            ["Shareholders' equity", "400", "350"],
            ["Total", "700", "620"],
            ["Current liabilities:", "", ""],
            ["Trade payables", "10", "9"],
            ["Accrued expenses", "20", "18"],
            ["Long-term debt", "35", "28"],
            ["", "65", "55"],
            ["Current investments", "", ""],
            ["Bonds", "5", "4"],
            ["Notes", "6", "5"],
            ["Total current investments", "11", "9"],
            ["Other", "", ""],
            ["Memo", "1", "1"],
        ],
    )
    assert _listed(_ask(ws, "What are the components of current assets?")) == []
    counted = _ask(ws, "How many items are there under liabilities?")
    assert not [f for f in counted.figures if f.kind is FigureKind.ROWS], counted.text
    assert _listed(_ask(ws, "What are the components of current liabilities?")) == []
    named = _ask(ws, "What are the components of current investments?")
    assert _listed(named) == ["Bonds", "Notes"], named.text
