from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from conftest import shared_data
from ragspine import Principal, Workspace
from ragspine.answer.options import AskOptions
from ragspine.answer.types import AnswerStatus
from ragspine.errors import IngestError
from ragspine.glossary import Glossary, load_glossary
from ragspine.structured.facts import Fact, Scale
from ragspine.structured.tatqa import (
    entity_code,
    header_period,
    import_tatqa,
    load_tatqa,
    stated_scale,
)

PUBLIC = Principal.of("public")


def _documents(*uids: str) -> list[dict]:
    """The real TAT-QA dev documents with these table uids."""
    source = shared_data("tatqa", "tatqa_dataset_dev.json")
    by_uid = {d["table"]["uid"]: d for d in json.loads(source.read_text("utf-8"))}
    return [by_uid[u] for u in uids]


SALES = "3ffd9053-a45d-491c-957a-1b2fa0af0570"  # "$  1,452.4" cells, years in row 2


def test_real_table_becomes_facts_with_locators() -> None:
    result = import_tatqa(_documents(SALES), Glossary.from_terms([]))
    facts = {(f.metric, f.period): f for f in result.facts}
    fact = facts[("fixed_price", "FY2019")]
    assert fact.value == Decimal("1452.4") and fact.entity == entity_code(SALES)
    assert fact.scale is Scale.UNKNOWN and "scale not stated" in fact.locator
    assert SALES in fact.locator and "'Fixed Price'" in fact.locator and "'2019'" in fact.locator
    assert facts[("total_sales", "FY2017")].value == Decimal("1107.7")
    assert len(result.facts) == 9
    assert result.texts[0].entity == entity_code(SALES) and len(result.texts[0].paragraphs) == 2


def test_non_period_columns_and_collisions_are_reported_not_guessed() -> None:
    documents = json.loads(shared_data("tatqa", "tatqa_dataset_dev.json").read_text("utf-8"))
    result = import_tatqa(documents, Glossary.from_terms([]))
    reasons = result.skip_reasons()
    assert reasons["column header is not a period"] > 0
    assert reasons["another row gives the same metric and period (ambiguous)"] > 0
    reported = {s.column for s in result.skipped if s.reason.startswith("column header")}
    assert any("As reported" in c or "Adjustments" in c for c in reported)
    # A skipped (ambiguous) key is never stored.
    ambiguous = {
        (s.document, s.column)
        for s in result.skipped
        if s.reason.startswith("another row gives the same metric")
    }
    stored = {(f.source_doc_id, f.period) for f in result.facts}
    locators = {f.locator for f in result.facts}
    assert not any(s.row in locators for s in result.skipped)
    assert ambiguous  # and each ambiguous locator above is absent from the stored facts
    assert stored


TEEKAY = "3789d7da"  # "Revenues | Income ..." over "2019 | 2018" each (a uid's start)
APPROPRIATION = "d7d65228"  # a scale stated in one group's caption only


def _document(prefix: str) -> dict:
    source = shared_data("tatqa", "tatqa_dataset_dev.json")
    return next(
        d for d in json.loads(source.read_text("utf-8")) if d["table"]["uid"].startswith(prefix)
    )


def test_column_groups_sharing_years_are_told_apart_by_their_captions() -> None:
    """'Revenues' and 'Income (loss) from vessel operations' each head a '2019 | 2018' pair:
    every column was dropped as sharing its period with another (no fact at all). Each
    caption now prefixes its rows' metrics, with its own stated scale."""
    teekay = import_tatqa([_document(TEEKAY)], Glossary.from_terms([]))
    by_label = {(t.label, f.period): f for f in teekay.facts for t in teekay.new_terms
                if t.code == f.metric}  # fmt: skip
    revenue = by_label[("Revenues: Teekay LNG", "FY2019")]
    assert revenue.value == Decimal("601256") and revenue.scale is Scale.THOUSAND
    assert "'Revenues / 2019'" in revenue.locator
    income = by_label[("Income (loss) from vessel operations: Teekay LNG", "FY2018")]
    assert income.value == Decimal("148599") and "Revenues" not in income.locator
    reasons = teekay.skip_reasons()
    assert not reasons["another column has the same period (ambiguous)"]
    # the scale "(in thousand NT dollars)" heads the first group only: the dividend per share
    # of the second group is in NT dollars, not thousands of them
    shares = import_tatqa([_document(APPROPRIATION)], Glossary.from_terms([]))
    scales = {
        t.label.split(":")[0]: f.scale
        for f in shares.facts
        for t in shares.new_terms
        if t.code == f.metric
    }
    assert scales == {
        "Appropriation of earnings": Scale.THOUSAND,
        "Cash dividend per share": Scale.ONE,
    }


def test_captions_that_do_not_separate_every_shared_year_leave_the_columns_out() -> None:
    table = [
        ["", "Revenues", "", "", ""],
        ["", "2019", "2018", "2019", "2017"],
        ["Segment A", "10", "9", "8", "7"],
    ]
    document = {"table": {"uid": "u1", "table": table}, "paragraphs": [], "questions": []}
    result = import_tatqa([document], Glossary.from_terms([]))
    assert {f.period for f in result.facts} == {"FY2018", "FY2017"}
    assert result.skip_reasons()["another column has the same period (ambiguous)"] == 2


def test_negative_percent_and_stated_scale_on_real_rows() -> None:
    documents = json.loads(shared_data("tatqa", "tatqa_dataset_dev.json").read_text("utf-8"))
    result = import_tatqa(documents, Glossary.from_terms([]))
    negatives = [f for f in result.facts if f.value < 0]
    percents = [f for f in result.facts if f.unit == "%"]
    scaled = {f.scale for f in result.facts}
    assert negatives and percents
    assert {Scale.THOUSAND, Scale.MILLION} <= scaled
    assert all(f.scale is Scale.ONE for f in percents)


@pytest.mark.parametrize(
    ("header", "period"),
    [
        ("2019", "FY2019"),
        ("Fiscal Year 2018", "FY2018"),
        ("2019 €m", "FY2019"),
        ("2018 (4)", "FY2018"),
        ("FY 2019 `", "FY2019"),  # a currency sign lost in extraction (a rupee)
        ("2019  $\u2019000", "FY2019"),
        ("Q4 2019", "FY2019-Q4"),
        ("F18 (3)", "FY2018"),
        ("2018/2019", "FY2019"),  # a split year: the year it ends in
        ("2018/19", "FY2019"),
        ("2015/2014", None),  # two years, not one split year
        ("2019/2017", None),
        ("Year-ended 31 March 2019", "FY2019"),
        # a restatement mark names the same period (TAT-QA dev: a table read as having one
        # period column, its five questions refused)
        ("Year-ended 31 March 2018 Restated See note 2", "FY2018"),
        ("2018 $\u2019000 RESTATED3", "FY2018"),
        ("2018 (restated, Note 3)", "FY2018"),
        ("2018 (Restated)", "FY2018"),
        ("Restated", None),
        # days in figures and Italian balance dates (none was a period before: such a table
        # stored nothing); a half year ending on a day is no fiscal year
        ("31.12.2019", "FY2019"),
        ("31/12/2018", "FY2018"),
        ("2019-12-31", "FY2019"),
        ("Al 31 dicembre 2019", "FY2019"),
        ("Esercizio chiuso al 31 dicembre 2019", "FY2019"),
        ("Semestre chiuso al 30 giugno 2019", None),
        ("13/13/2019", None),
        ("F2019", None),
        ("As reported", None),
        ("Adjustments", None),
        ("Change", None),
    ],
)
def test_header_period(header: str, period: str | None) -> None:
    assert header_period(header) == period


def test_stated_scale() -> None:
    assert stated_scale(["(in millions)"]) == (Scale.MILLION, "")
    assert stated_scale(["", "$\u2019000"]) == (Scale.THOUSAND, "")
    assert stated_scale(["2019"]) == (None, "not stated")
    assert stated_scale(["(in millions)", "(in thousands)"])[0] is None


def test_ingest_tatqa_workspace_facts_glossary_and_paragraphs(tmp_path: Path) -> None:
    source = tmp_path / "sample.json"
    source.write_text(json.dumps(_documents(SALES)), "utf-8")
    ws = Workspace.init(tmp_path / "ws")
    result, summary, report = ws.ingest_tatqa(source)
    assert summary.added == len(result.facts) == 9
    generated = load_glossary(tmp_path / "ws" / "glossary.d" / "tatqa.toml")
    assert "total_sales" in generated.metrics.terms
    assert entity_code(SALES) in generated.entities.terms
    res = ws.query_metric("Total sales", entity_code(SALES), "2019", principal=PUBLIC)
    assert res.status == "found" and res.value == Decimal("1496.5")
    hits = ws.search("cost-plus type contract", libraries=("tatqa",), principal=PUBLIC)
    assert hits.snippets and hits.snippets[0].doc_id == SALES
    assert report.failures == ()
    # Re-importing changes nothing.
    _, again, _ = ws.ingest_tatqa(source)
    assert (again.added, again.replaced) == (0, 0)


def test_load_tatqa_rejects_wrong_shapes(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"table": {"uid": "x", "table": [[1]]}}]), "utf-8")
    with pytest.raises(IngestError, match="document 1 is not a TAT-QA document"):
        load_tatqa(bad)
    twice = tmp_path / "twice.json"
    doc = {"table": {"uid": "x", "table": [["", "2019"]]}, "paragraphs": []}
    twice.write_text(json.dumps([doc, doc]), "utf-8")
    with pytest.raises(IngestError, match="appears 2 times"):
        load_tatqa(twice)


def test_measure_tables_take_the_period_their_sections_title_or_corner_state() -> None:
    """Tables whose columns are measures ('Accounts Receivable, Gross | Allowance for Losses')
    gave no fact at all. The period stated by each row's section ('December 31, 2019', then
    'December 31, 2018'), by a title row alone above the columns ('As of December 31, 2019',
    and again above the 2018 block) or by the header's corner cell ('30 June 2019') is each
    row's, and the column names the measure."""
    sections = import_tatqa([_document("b6fa85a0")], Glossary.from_terms([]))
    titled = import_tatqa([_document("8b43d33f")], Glossary.from_terms([]))
    corner = import_tatqa([_document("736f65a8")], Glossary.from_terms([]))

    def by_label(result: object) -> dict[tuple[str, str], Decimal]:
        labels = {t.code: t.label for t in result.new_terms}  # type: ignore[attr-defined]
        return {(labels[f.metric], f.period): f.value for f in result.facts}  # type: ignore[attr-defined]

    facts = by_label(sections)
    assert facts[("Transaction related: Accounts Receivable, Gross", "FY2019")] == Decimal("12863")
    assert facts[("Transaction related: Allowance for Losses", "FY2019")] == Decimal("-238")
    assert {period for _, period in facts} == {"FY2019", "FY2018"}
    assert not sections.skip_reasons()["column header is not a period"]
    facts = by_label(titled)
    assert facts[("U.S. government obligations: Fair Value", "FY2019")] == Decimal("97719")
    assert facts[("U.S. government obligations: Fair Value", "FY2018")] == Decimal("91203")
    facts = by_label(corner)
    assert facts[("Expected loss rate: 31 to 60 days past due", "FY2019")] == Decimal("7.5")


def test_measure_columns_that_are_changes_quarters_or_dates_are_read_as_such() -> None:
    """Found by review: an 'Increase / (Decrease)' column answered 'What was accounts
    receivable in 2019?' (a change stored like a level); quarter columns were labelled
    'Net sales: First'; the second block's facts cited the first block's title; date fragments
    ('September 29,') were taken as column-group captions."""

    def labels(prefix: str) -> dict[str, str]:
        result = import_tatqa([_document(prefix)], Glossary.from_terms([]))
        names = {t.code: t.label for t in result.new_terms}
        return {names[f.metric]: f.locator for f in result.facts}

    changes = labels("82dca6c3")
    assert changes and not any("Increase" in label for label in changes)
    quarters = labels("13d33e02")
    assert "Net sales: First quarter" in quarters
    titled = import_tatqa([_document("8b43d33f")], Glossary.from_terms([]))
    late = [f for f in titled.facts if f.period == "FY2018"]
    assert late and all("(FY2018)" in f.locator and "2019" not in f.locator for f in late)
    assert not import_tatqa([_document("e5fc54e8")], Glossary.from_terms([])).facts


def _labelled(result: object) -> dict[tuple[str, str], object]:
    names = {t.code: t.label for t in result.new_terms}  # type: ignore[attr-defined]
    return {(names[f.metric], f.period): f for f in result.facts}  # type: ignore[attr-defined]


def test_a_sections_unlabelled_total_row_is_read_only_when_it_is_the_sum() -> None:
    """TAT-QA tables often print a section's total on a row without a label (the EPS table's
    '206.2' under 'Basic earnings per share (cents per share)'): it was left out, so 'the total
    basic earnings per share' had no fact. It is now 'section: Total' when every value is the
    sum of the rows above it in the section, and cites that."""
    table = [
        ["", "2019", "2018"],
        ["Inventories:", "", ""],
        ["Raw material", "1,000", "900"],
        ["Work-in-process", "2,370", "2,929"],
        ["", "3,370", "3,829"],
        ["Other assets:", "", ""],
        ["Deposits", "5", "6"],
        ["Prepaid", "7", "8"],
        ["", "12", "15"],  # 2018 is not 6 + 8: not the section's total
        ["", "1", "2"],  # outside any row run: no total either
        ["Revenue:", "", ""],
        ["Product", "10", "1"],
        ["Service", "20", "2"],
        ["", "30", "3"],  # a subtotal: rows of the section follow (found by review)
        ["Other", "5", "4"],
        ["", "35", "7"],
        ["Per share data (cents per share)", "", ""],
        ["Continuing", "114.3", "123.4"],
        ["Discontinued", "91.9", "9.2"],
        ["", "206.2", "132.6"],
        ["Earnings (in millions, except per share amounts)", "", ""],
        ["Net income", "100", "90"],
    ]
    document = {"table": {"uid": "u-tot", "table": table}, "paragraphs": [], "questions": []}
    result = import_tatqa([document], Glossary.from_terms([]))
    facts = _labelled(result)
    total = facts[("Inventories: Total", "FY2018")]
    assert total.value == Decimal("3829")  # type: ignore[attr-defined]
    assert "without a label, the sum of rows 3-4 under 'Inventories:'" in total.locator  # type: ignore[attr-defined]
    assert not any(label.startswith("Other assets: Total") for label, _ in facts)
    # neither the subtotal (30) nor the total past it (35, not the sum of the run above it)
    assert not any(label.startswith("Revenue") for label, _ in facts)
    assert result.skip_reasons()["empty row label"] == 4
    # a section stating its unit (cents) keeps its rows out of the table's scale (millions)
    cents = facts[("Per share data (cents per share): Total", "FY2019")]
    assert cents.value == Decimal("206.2") and cents.scale is Scale.ONE  # type: ignore[attr-defined]
    assert facts[("Net income", "FY2019")].scale is Scale.MILLION  # type: ignore[attr-defined]
    real = _labelled(import_tatqa([_document("fd7e14ed")], Glossary.from_terms([])))
    assert real[("Basic earnings per share (cents per share): Total", "FY2019")].value == (  # type: ignore[attr-defined]
        Decimal("206.2")
    )


def test_a_section_stating_its_own_unit_prefixes_its_rows() -> None:
    """'Basic earnings per share 1,305.7' under 'Weighted average number of shares used in
    earnings per share (shares, millions)' is a number of shares: it was stored as 'Basic
    earnings per share' and averaged as one (1,303.1 for a gold 169.4)."""
    facts = _labelled(import_tatqa([_document("fd7e14ed")], Glossary.from_terms([])))
    assert ("Basic earnings per share", "FY2019") not in facts
    shares = facts[
        (
            "Weighted average number of shares used in earnings per share (shares, millions): "
            "Basic earnings per share",
            "FY2019",
        )
    ]
    assert shares.value == Decimal("1305.7")  # type: ignore[attr-defined]


def test_a_row_stating_its_own_unit_is_not_at_the_tables_scale() -> None:
    """Under '$ million', 'ROFE (%) 15.2' and 'Basic earnings per share (cents) 12.79' were
    stored as millions, and answered '15.2 million' (a magnitude no table gave). A row label
    stating a unit that is no amount at the table's scale keeps its figures as written; one
    stating its own scale is read at it; other rows stay at the table's."""
    table = [
        ["$ million", "2019", "2018"],
        ["Revenue", "503.6", "476.9"],
        ["Gross margin (%)", "73.2", "72.2"],
        ["Operating margin (% of revenue)", "18.4", "16.2"],
        ["Cost to income %", "51.0", "52.3"],
        ["Basic earnings per share (cents)", "12.79", "9.14"],
        ["Average headcount (employees)", "1,204", "1,150"],
        ["Shares in issue (shares, thousands)", "9,120", "9,004"],
        ["Margin percentage change", "1.0", "0.5"],  # no unit of its own: as the table says
    ]
    document = {"table": {"uid": "u-unit", "table": table}, "paragraphs": [], "questions": []}
    facts = _labelled(import_tatqa([document], Glossary.from_terms([])))
    assert facts[("Revenue", "FY2019")].scale is Scale.MILLION  # type: ignore[attr-defined]
    for label in (
        "Gross margin (%)",
        "Operating margin (% of revenue)",
        "Cost to income %",
        "Basic earnings per share (cents)",
        "Average headcount (employees)",
    ):
        assert facts[(label, "FY2019")].scale is Scale.ONE, label  # type: ignore[attr-defined]
    shares = facts[("Shares in issue (shares, thousands)", "FY2018")]
    assert shares.scale is Scale.THOUSAND and shares.value == Decimal("9004")  # type: ignore[attr-defined]
    assert facts[("Margin percentage change", "FY2019")].scale is Scale.MILLION  # type: ignore[attr-defined]
    real = _labelled(import_tatqa([_document("00addb09")], Glossary.from_terms([])))
    assert real[("ROFE (%)", "FY2019")].scale is Scale.ONE  # type: ignore[attr-defined]
    assert real[("Sales", "FY2019")].scale is Scale.MILLION  # type: ignore[attr-defined]


def test_per_share_years_and_terms_are_not_at_the_tables_scale() -> None:
    """'(in millions, except per share amounts)' excepted 'Earnings per share' but not 'Cash
    dividends declared per common share' (0.81 million), nor the rows under a 'Per Common Share
    Data:' heading; a 'Last Fiscal Year of Expiration' column stored the year 2029 as 2029
    thousand."""
    table = [
        ["(in millions, except per share amounts)", "2019", "2018"],
        ["Net income", "11,083", "3,587"],
        ["Cash dividends declared per common share", "$0.81", "$0.76"],
        ["Per Common Share Data:", "", ""],
        ["Book Value", "18.43", "16.82"],
        ["Expected term (in years)", "4.6", "4.7"],
    ]
    document = {"table": {"uid": "u-pershare", "table": table}, "paragraphs": [], "questions": []}
    facts = _labelled(import_tatqa([document], Glossary.from_terms([])))
    assert facts[("Net income", "FY2019")].scale is Scale.MILLION  # type: ignore[attr-defined]
    for label in (
        "Cash dividends declared per common share",
        "Book Value",
        "Expected term (in years)",
    ):
        assert facts[(label, "FY2019")].scale is Scale.ONE, label  # type: ignore[attr-defined]
    expiring = [
        ["(dollars in thousands)", "Last Fiscal Year of Expiration", "Amount"],
        ["Domestic-federal", "2029", "$39,784"],
        ["Domestic-state", "2027", "$3,313"],
    ]
    document = {"table": {"uid": "u-expiry", "table": expiring}, "paragraphs": [], "questions": []}
    result = import_tatqa([document], Glossary.from_terms([]))
    by_column = {(f.value, f.scale) for f in result.facts}  # type: ignore[attr-defined]
    assert (Decimal("2029"), Scale.ONE) in by_column
    assert (Decimal("39784"), Scale.THOUSAND) in by_column
    assert (Decimal("2029"), Scale.THOUSAND) not in by_column


def test_unit_notes_never_drop_a_stated_scale() -> None:
    """Found by review of the unit rules above: a column header's '(Shares in thousands)',
    a scale statement ending in '%', a rate in an instrument's name, a roman-numeral footnote
    '(x)', a share count 'per common share' and rows past a 'Per common share data:' heading's
    total all lost the scale the table states (3,380 thousand shares answered as 3,380)."""

    def scales(rows: list[list[str]]) -> dict[str, Scale]:
        document = {"table": {"uid": "u-review", "table": rows}, "paragraphs": [], "questions": []}
        facts = _labelled(import_tatqa([document], Glossary.from_terms([])))
        return {label: f.scale for (label, period), f in facts.items() if period == "FY2019"}  # type: ignore[attr-defined]

    shares = scales(
        [
            ["", "2019", "2018"],
            ["", "(Shares in thousands)", "(Shares in thousands)"],
            ["Shares repurchased", "3,380", "262"],
        ]
    )
    assert shares["Shares repurchased"] is Scale.THOUSAND
    amounts = scales(
        [
            ["In millions, except %", "2019", "2018"],
            ["Revenue", "100", "90"],
            ["Senior notes 4.5%", "500", "500"],
            ["Convertible notes (x)", "20", "20"],
            ["Borrowings with maturity dates after one year", "250", "240"],
            ["Cost to income %", "51.0", "52.3"],
        ]
    )
    for label in (
        "Revenue",
        "Senior notes 4.5%",
        "Convertible notes",
        "Borrowings with maturity dates after one year",
    ):
        assert amounts[label] is Scale.MILLION, label
    assert amounts["Cost to income %"] is Scale.ONE
    per_share = scales(
        [
            ["(in millions, except per share amounts)", "2019", "2018"],
            ["Shares used in computing diluted net income per common share", "3,732", "4,238"],
            ["Per common share data:", "", ""],
            ["Dividends", "0.81", "0.76"],
            ["Total per share", "0.81", "0.76"],
            ["Net income", "11,083", "3,587"],
        ]
    )
    assert per_share["Shares used in computing diluted net income per common share"] is (
        Scale.MILLION
    )
    assert per_share["Dividends"] is Scale.ONE
    assert per_share["Net income"] is Scale.MILLION  # past the heading's total
    euro = scales([["€ million", "2019", "2018"], ["Income taxes", "\u2212298", "\u2212216"]])
    assert euro["Income taxes"] is Scale.MILLION


def test_a_rows_own_scale_note_is_that_rows_only() -> None:
    """'Gross profit (in thousands)' gave its scale to the whole table: the egg price below it
    (1.27) was stored as 1.27 thousand. And 'Normalised per $ million of revenues' made a table
    of tonnes of CO2e millions. A row label's note now scales that row only, an amount
    something is measured per is no scale, and without a heading stating one the other rows'
    scale is unknown (said in the locator), never invented."""
    table = [
        ["Fiscal Year ended", "June 1, 2019", "June 2, 2018"],
        ["Net income - (in thousands)", "$54,229", "$125,932"],
        ["Gross profit (in thousands)", "222,859", "361,046"],
        ["Net average selling price", "1.27", "1.40"],
        ["Emissions normalised per $ million of revenues", "9.50", "10.67"],
    ]
    document = {"table": {"uid": "u-rowscale", "table": table}, "paragraphs": [], "questions": []}
    facts = _labelled(import_tatqa([document], Glossary.from_terms([])))
    profit = facts[("Gross profit (in thousands)", "FY2019")]
    assert profit.scale is Scale.THOUSAND and profit.value == Decimal("222859")  # type: ignore[attr-defined]
    for label in ("Net average selling price", "Emissions normalised per $ million of revenues"):
        fact = facts[(label, "FY2019")]
        assert fact.scale is Scale.UNKNOWN, label  # type: ignore[attr-defined]
        assert fact.locator.endswith("scale not stated"), label  # type: ignore[attr-defined]
    eggs = _labelled(import_tatqa([_document("82aee0df")], Glossary.from_terms([])))
    price = eggs[("Net average shell egg selling price (rounded)", "FY2019")]
    assert price.value == Decimal("1.27") and price.scale is Scale.UNKNOWN  # type: ignore[attr-defined]
    assert eggs[("Gross profit (in thousands)", "FY2019")].scale is Scale.THOUSAND  # type: ignore[attr-defined]
    emissions = _labelled(import_tatqa([_document("7d228e82")], Glossary.from_terms([])))
    assert emissions[("Total emissions", "FY2019")].scale is Scale.UNKNOWN  # type: ignore[attr-defined]


def test_a_period_beside_two_columns_of_another_same_period_is_kept() -> None:
    """TAT-QA dev's emissions table heads 'FY19** | FY18** | FY18***' (restated and as first
    reported): the two FY18 columns are ambiguous and left out, and FY19, the only period
    left, was then read as a header that may span them (the table stored nothing; 'the total
    gross emissions for FY19' was refused). A column with a period of its own is under no
    other header; one with none still may be."""
    emissions = [
        ["Emissions from:", "FY19**", "FY18**", "FY18***"],
        ["Total gross emissions (Scope 1 and 2)", "87,128", "98,725", "143,354"],
    ]
    spanning = [["", "2019", ""], ["Revenue", "10", "12"]]
    documents = [
        {"table": {"uid": uid, "table": table}, "paragraphs": [], "questions": []}
        for uid, table in (("em", emissions), ("sp", spanning))
    ]
    result = import_tatqa(documents, Glossary.from_terms([]))
    stored = {(f.source_doc_id, f.period): f.value for f in result.facts}
    assert stored == {("em", "FY2019"): Decimal("87128")}
    reasons = {(s.document, s.reason) for s in result.skipped}
    assert ("em", "another column has the same period (ambiguous)") in reasons
    assert ("sp", "the only period header may span several columns") in reasons


def test_one_caption_over_each_years_column_prefixes_its_rows() -> None:
    """TAT-QA dev: 'Fiscal 2019 Net Sales | Fiscal 2018 Net Sales | % Inc (Dec)' stored
    nothing ('the total net sales in fiscal year 2018' was refused). One caption with a year
    in each column is read as in a column group: the period, and the caption before each
    row's name. Quarter prices beside a dividend ('2016 high | 2016 low | 2016 dividend') or
    two captions are no such group: the caption would be lost or two things mixed."""
    sales = [
        ["Reporting Segment", "Fiscal 2019 Net Sales", "Fiscal 2018 Net Sales", "% Inc (Dec)"],
        ["International", "793.4", "843.5", "(6)%"],
        ["Total", "$9,538.4", "$7,938.3", "20%"],
    ]
    prices = [["", "2016 high", "2016 low", "2016 dividend"], ["Second", "34.50", "26.34", "0.09"]]
    mixed = [["", "2019 Revenue", "2018 Cost"], ["Retail", "10", "4"]]
    # a second review: instruments and programmes named by a year, and spans shorter than a
    # year, were stored as fiscal years
    notes = [["", "2019 Notes", "2021 Notes", "2024 Notes"], ["Principal", "500", "600", "700"]]
    program = [["", "2019 Restructuring Program", "2018 Restructuring Program"], ["Cost", "1", "2"]]
    due = [["", "Senior Notes due 2021", "Senior Notes due 2022"], ["Principal", "1", "2"]]
    half = [["", "Semestre chiuso al 30 giugno 2019", "Semestre chiuso al 30 giugno 2018"]]
    half.append(["Ricavi", "1", "2"])
    read = _tables_read(
        sales=sales, prices=prices, mixed=mixed, notes=notes, program=program, due=due, half=half
    )
    assert {key: fact.value for key, fact in read.items()} == {
        ("sales", "Net Sales: International", "FY2019"): Decimal("793.4"),
        ("sales", "Net Sales: International", "FY2018"): Decimal("843.5"),
        ("sales", "Net Sales: Total", "FY2019"): Decimal("9538.4"),
        ("sales", "Net Sales: Total", "FY2018"): Decimal("7938.3"),
    }


def test_a_period_header_spanning_measure_columns_keeps_each_measure_apart() -> None:
    """TAT-QA dev: 'December 31, 2019 | | December 31, 2018 |' over 'Carrying Amount | Fair
    Value | ...': the fair values were reported as no period, and 'the fair value of total
    debt' was answered with the carrying amount (the only 'Total debt'). The column a period
    header spans is now its own figure, its caption first; the span's first column stays the
    period's own. One column per period ('F19 | F18 | |') or unit captions ('$ | %') span
    nothing."""
    debt = [
        ["", "December 31, 2019", "", "December 31, 2018", ""],
        ["(In millions)", "Carrying Amount", "Fair Value", "Carrying Amount", "Fair Value"],
        ["Other borrowings", "89.0", "89.5", "168.4", "170.0"],
        ["Total debt(2)", "$ 3,774.4", "$ 4,073.9", "$ 3,474.2", "$ 3,535.1"],
    ]
    weeks = [
        ["", "F19", "F18", "", ""],
        ["$ MILLION", "53 WEEKS", "52 WEEKS", "CHANGE", "CHANGE NORMALISED"],
        ["Sales", "8,657", "8,244", "5.0%", "3.1%"],
    ]
    units = [
        ["", "December 31, 2019", "", "December 31, 2018", ""],
        ["", "$", "%", "$", "%"],
        ["Sales", "100", "60.0", "90", "58.0"],
    ]
    read = _tables_read(debt=debt, weeks=weeks, units=units)
    assert read[("debt", "Total debt", "FY2019")].value == Decimal("3774.4")
    fair = read[("debt", "Fair Value: Total debt", "FY2019")]
    assert fair.value == Decimal("4073.9") and "'Fair Value (FY2019)'" in fair.locator
    assert read[("debt", "Fair Value: Total debt", "FY2018")].value == Decimal("3535.1")
    assert read[("debt", "Fair Value: Other borrowings", "FY2018")].value == Decimal("170.0")
    assert {k for k in read if k[0] != "debt"} == {
        ("weeks", "Sales", "FY2019"),
        ("weeks", "Sales", "FY2018"),
        ("units", "Sales", "FY2019"),
        ("units", "Sales", "FY2018"),
    }


def _tables_read(**tables: list[list[str]]) -> dict[tuple[str, str, str], Fact]:
    """One TAT-QA document per table (uid = keyword), imported; facts by (uid, label, period)."""
    documents = [
        {"table": {"uid": uid, "table": table}, "paragraphs": [], "questions": []}
        for uid, table in tables.items()
    ]
    result = import_tatqa(documents, Glossary.from_terms([]))
    names = {t.code: t.label for t in result.new_terms}
    return {(f.entity.removeprefix("tatqa-"), names[f.metric], f.period): f for f in result.facts}


def test_spans_leave_share_and_amount_captions_unread_and_scales_keep_exceptions() -> None:
    """A review found: a spanned '% of total revenue' column stored as thousands (2 % read as
    2 thousand), a 'Years | Years' row taken for captions, an 'Amount' caption no question can
    name apart, and per-share figures under '(In thousands, except per share data)' stored as
    thousands (1.89 read as 1.89 thousand). Such columns are not read; excepted rows and
    columns are at no scale."""
    share = [
        ["(In thousands, except percentages)", "2019", "", "2018", ""],
        ["", "Amount", "% of total revenue", "Amount", "% of total revenue"],
        ["Maintenance", "1,000", "2", "900", "3%"],
    ]
    years = [
        ["", "2019", "", "2018", ""],
        ["", "Years", "Years", "Years", "Years"],
        ["", "Men", "Women", "Men", "Women"],
        ["Member aged 65", "86.9", "88.9", "86.8", "88.8"],
    ]
    stock = [
        ["(In thousands, except per share data)", "2019", "", "2018", ""],
        ["", "Shares", "Amount", "Shares", "Amount"],
        ["Common stock", "1,500", "15", "1,400", "14"],
    ]
    options = [
        ["(In thousands, except per share data)", "2019", "", "2018", ""],
        ["", "Number of Shares", "Weighted Average Exercise Price", "Number of Shares",
         "Weighted Average Exercise Price"],
        ["Granted", "300", "$15.20", "250", "$13.10"],
        ["Diluted earnings per share", "$1.89", "", "$1.70", ""],
    ]  # fmt: skip
    read = _tables_read(share=share, years=years, stock=stock, opt=options)
    assert {(e, m) for e, m, _ in read} == {
        ("share", "Maintenance"),
        ("years", "Member aged 65"),
        ("years", "Women: Member aged 65"),
        ("stock", "Shares: Common stock"),
        ("opt", "Granted"),
        ("opt", "Weighted Average Exercise Price: Granted"),
        ("opt", "Diluted earnings per share"),
    }
    assert read[("share", "Maintenance", "FY2019")].scale is Scale.THOUSAND
    assert read[("years", "Women: Member aged 65", "FY2019")].value == Decimal("88.9")
    price = read[("opt", "Weighted Average Exercise Price: Granted", "FY2019")]
    assert (price.value, price.scale) == (Decimal("15.20"), Scale.ONE)
    assert read[("opt", "Diluted earnings per share", "FY2018")].scale is Scale.ONE
    assert read[("opt", "Granted", "FY2019")].scale is Scale.THOUSAND  # a number of shares


def test_a_share_count_beside_a_plain_amount_is_never_the_amount(tmp_path: Path) -> None:
    """A known gap: under 'Shares | Amount', the shares column was read as the row's own
    figure, so 'the amount of common stock' was answered with the share count. The first
    column is now named by its caption; the plain 'Amount' is reported, not read."""
    stock = [
        ["", "2019", "", "2018", ""],
        ["", "Shares", "Amount", "Shares", "Amount"],
        ["Common stock", "1,500", "15", "1,400", "14"],
    ]
    documents = [{"table": {"uid": "stock", "table": stock}, "paragraphs": [], "questions": []}]
    result = import_tatqa(documents, Glossary.from_terms([]))
    assert [s.reason for s in result.skipped] == [
        "column caption is a share or names no measure of its own"
    ] * 2
    path = tmp_path / "stock.json"
    path.write_text(json.dumps(documents))
    workspace = Workspace.open(tmp_path / "ws", create=True)
    workspace.ingest_tatqa(path)
    entity = workspace.glossary.entities.resolve("stock")
    options = AskOptions(entity=entity, libraries=("tatqa",))
    amount = workspace.ask(
        "What was the amount of common stock in 2019?", options, principal=PUBLIC
    )
    assert amount.status is not AnswerStatus.ANSWERED and "1,500" not in amount.text
    shares = workspace.ask(
        "What was the number of shares of common stock in 2019?", options, principal=PUBLIC
    )
    assert [f.decimal_value for f in shares.figures] == ["1500"]


def test_scale_exceptions_keep_to_what_a_label_measures_and_a_total_caption_makes_parts() -> None:
    """A second review found money rows put at no scale by the exceptions ('Gross margin' and
    'Interest rate swaps' under 'except percentages', 'Share price hedge' under 'except per
    share data'), an 'except' inside a row label read as the header's, and a span 'Domestic |
    Foreign | Total' read with its first column as the row's own figure (the Total unread)."""
    money = [
        ["(In millions, except percentages and per share amounts)", "2019", "2018"],
        ["Gross margin", "82,933", "72,007"],
        ["Interest rate swaps", "10", "12"],
        ["Share price hedge", "1,250", "100"],
        ["Repurchases of common shares", "(25,000)", "(20,000)"],
        ["Diluted earnings per share", "$5.06", "$2.13"],
        ["Effective tax rate (%)", "10.2", "12.1"],
    ]
    label = [
        ["(In millions)", "2019", "2018"],
        ["Revenue from all regions except U.S. (% of total)", "40", "38"],
        ["Interest rate swaps", "10", "12"],
    ]
    regions = [
        ["(In millions)", "2019", "", "", "2018", "", ""],
        ["", "Domestic", "Foreign", "Total", "Domestic", "Foreign", "Total"],
        ["Revenue", "600", "400", "1,000", "550", "400", "950"],
    ]
    read = _tables_read(money=money, label=label, regions=regions)
    scales = {(e, m): f.scale for (e, m, p), f in read.items() if p == "FY2019"}
    assert scales[("money", "Gross margin")] is Scale.MILLION
    assert scales[("money", "Interest rate swaps")] is Scale.MILLION
    assert scales[("money", "Share price hedge")] is Scale.MILLION
    assert scales[("money", "Repurchases of common shares")] is Scale.MILLION
    assert scales[("money", "Diluted earnings per share")] is Scale.ONE
    assert scales[("money", "Effective tax rate (%)")] is Scale.ONE
    assert scales[("label", "Interest rate swaps")] is Scale.MILLION
    assert {m: f.value for (e, m, p), f in read.items() if e == "regions" and p == "FY2019"} == {
        "Domestic: Revenue": Decimal("600"),
        "Foreign: Revenue": Decimal("400"),
        "Total: Revenue": Decimal("1000"),
    }


def test_only_a_table_that_states_no_period_anywhere_is_undated() -> None:
    """A measure table with no period in its header, corner, sections, row labels or column
    names is stored as undated; one whose columns name years ('Fiscal 2019 Net Sales') states
    periods and is read by them, never as undated. One whose rows are years
    (future lease payments by year: TAT-QA dev's 'the operating leases for 2021' was refused)
    stores each year's figures as the columns' measures; its other rows ('Thereafter') name
    no period and are reported."""
    obligations = [
        ["", "Total", "Less Than 1 Year", "More Than 5 Years"],
        ["Operating leases", "$98,389", "$37,427", "$11,825"],
    ]
    leases = [
        ["", "Operating Leases", "Finance Leases"],
        ["2021", "$138", "$6"],
        ["2022", "135", "6"],
        ["Thereafter", "500", "10"],
    ]
    sales = [
        ["Reporting Segment", "Fiscal 2019 Net Sales", "Fiscal 2018 Net Sales"],
        ["Americas", "1,000", "900"],
    ]
    read = _tables_read(obligations=obligations, leases=leases, sales=sales)
    assert {(e, m, p) for e, m, p in read} == {
        ("obligations", "Operating leases: Total", "undated"),
        ("obligations", "Operating leases: Less Than 1 Year", "undated"),
        ("obligations", "Operating leases: More Than 5 Years", "undated"),
        ("leases", "Operating leases", "FY2021"),
        ("leases", "Operating leases", "FY2022"),
        ("leases", "Finance Leases", "FY2021"),
        ("leases", "Finance Leases", "FY2022"),
        ("sales", "Net Sales: Americas", "FY2019"),
        ("sales", "Net Sales: Americas", "FY2018"),
    }
    assert read[("leases", "Operating leases", "FY2022")].value == Decimal("135")
    documents = [{"table": {"uid": "leases", "table": leases}, "paragraphs": [], "questions": []}]
    skipped = import_tatqa(documents, Glossary.from_terms([])).skipped
    assert [(s.row, s.reason) for s in skipped] == [
        ("'Thereafter'", "row names no period in a table whose rows are periods")
    ]
    located = read[("obligations", "Operating leases: Total", "undated")].locator
    assert "'Total (undated)'" in located


def test_a_year_in_a_corner_or_title_keeps_a_measure_table_from_being_undated() -> None:
    """A review found: a measure table whose corner says 'Fiscal year 2019 (in thousands)', or
    whose title row says 'As of December 31, 2019 and 2018' (periods the layout does not read),
    was stored as 'a table that states no period'. Any year in the table keeps it unread."""
    corner = [
        ["Fiscal year 2019 (in thousands)", "Gross", "Net"],
        ["Patents", "500", "420"],
    ]
    title = [
        ["As of December 31, 2019 and 2018", "", ""],
        ["", "Gross", "Net"],
        ["Patents", "500", "420"],
    ]
    assert _tables_read(corner=corner, title=title) == {}


def test_rows_are_periods_only_when_labels_are_periods_and_the_corner_says_no_more() -> None:
    """A review found: rows under a corner 'Grant year' or 'Year of expiration' were read as
    the figures' periods (the options granted in 2018 answered 'the options outstanding at 31
    December 2018'), and row captions holding a date ('At 31 December 2018', 'Year ended 31
    December 2019': a balance and a flow) were read as bare periods, dropping the caption."""
    grants = [
        ["Grant year", "Options outstanding", "Exercise price"],
        ["2017", "100", "5.00"],
        ["2018", "200", "6.00"],
    ]
    captions = [
        ["", "Shares", "Amount"],
        ["At 31 December 2018", "1,000", "10"],
        ["Year ended 31 December 2019", "200", "2"],
    ]
    quarters = [
        ["(in millions)", "Revenue", "Net income"],
        ["Q1 2019", "100", "10"],
        ["Q2 2019", "110", "12"],
    ]
    read = _tables_read(grants=grants, captions=captions, quarters=quarters)
    assert {(e, m, p) for e, m, p in read} == {
        ("quarters", "Revenue", "FY2019-Q1"),
        ("quarters", "Revenue", "FY2019-Q2"),
        ("quarters", "Net income", "FY2019-Q1"),
        ("quarters", "Net income", "FY2019-Q2"),
    }


def _asker(tmp_path: Path, documents: list[dict]) -> Any:
    """A workspace with ``documents`` ingested, and a function asking it about one table
    (by uid) as the public."""
    path = tmp_path / "dev.json"
    path.write_text(json.dumps(documents), "utf-8")
    ws = Workspace.open(tmp_path / "ws", create=True)
    ws.ingest_tatqa(path)

    def ask(question: str, uid: str) -> Any:
        return ws.ask(question, AskOptions(entity=entity_code(uid)), principal=PUBLIC)

    return ask


ROLL = [
    ["", "Number of Shares", "Weighted-Average Exercise Price"],
    ["Outstanding at September 30, 2017", "1,000", "$4.00"],
    ["Granted", "300", "$8.00"],
    ["Exercised", "(200)", "$3.00"],
    ["Outstanding at September 30, 2018", "1,100", "$5.00"],
    ["Granted", "50", "$9.00"],
    ["Canceled", "(150)", "$6.00"],
    ["Outstanding at September 30, 2019", "1,000", "$5.50"],
    ["Exercisable at September 30, 2019", "400", "$4.50"],
]


def test_a_roll_forward_reads_balances_at_dates_and_movements_in_the_year_between() -> None:
    """Balances at dates with each year's movements between them ('Outstanding at September
    30, 2017', 'Granted', 'Exercised', 'Outstanding at September 30, 2018') were not read at
    all: no column is a period and the movements name none. Where a column rolls forward
    exactly, a balance is its caption in its date's year and a movement its own label in the
    year ending at the next balance; a later balance of another caption is read at its date.
    ('Exercised' and 'Exercisable' under 'Exercise Price' are left out: their words are the
    column's own, see below.)"""
    read = _tables_read(roll=ROLL)
    got = {(m, p): f.value for (_, m, p), f in read.items()}
    assert got == {
        ("Outstanding: Number of Shares", "FY2017"): Decimal(1000),
        ("Outstanding: Number of Shares", "FY2018"): Decimal(1100),
        ("Outstanding: Number of Shares", "FY2019"): Decimal(1000),
        ("Granted: Number of Shares", "FY2018"): Decimal(300),
        ("Granted: Number of Shares", "FY2019"): Decimal(50),
        ("Exercised: Number of Shares", "FY2018"): Decimal(-200),
        ("Canceled: Number of Shares", "FY2019"): Decimal(-150),
        ("Exercisable: Number of Shares", "FY2019"): Decimal(400),
        ("Outstanding: Weighted-Average Exercise Price", "FY2017"): Decimal("4.00"),
        ("Outstanding: Weighted-Average Exercise Price", "FY2018"): Decimal("5.00"),
        ("Outstanding: Weighted-Average Exercise Price", "FY2019"): Decimal("5.50"),
        ("Granted: Weighted-Average Exercise Price", "FY2018"): Decimal("8.00"),
        ("Granted: Weighted-Average Exercise Price", "FY2019"): Decimal("9.00"),
        ("Canceled: Weighted-Average Exercise Price", "FY2019"): Decimal("6.00"),
    }
    granted = read[("roll", "Granted: Number of Shares", "FY2019")]
    assert "between 'Outstanding at September 30, 2018' and 'Outstanding at September 30, " \
        "2019'" in granted.locator  # fmt: skip


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ((3, 1, "(201)"), "no column rolls forward: 1,000 + 300 - 201 is not 1,100"),
        ((4, 0, "Outstanding at September 30, 2020"), "two balances two years apart"),
        ((1, 0, "Granted before"), "a row before the first balance"),
        ((8, 0, "Expected to vest"), "a row after the last balance that is no balance"),
        ((2, 0, ""), "a movement without a label"),
    ],
)
def test_a_roll_forward_the_table_does_not_prove_is_not_read(
    change: tuple[int, int, str], why: str
) -> None:
    table = [list(r) for r in ROLL]
    row, column, text = change
    table[row][column] = text
    if row == 1 and text == "Granted before":
        table.insert(1, ["Granted before", "5", "$1.00"])
        table[2][0] = "Outstanding at September 30, 2017"
    read = _tables_read(roll=table)
    assert not any(m.startswith(("Granted", "Exercised", "Canceled")) for _, m, _ in read), why


def test_a_roll_forward_movement_is_found_by_its_balance_caption_too(tmp_path: Path) -> None:
    """'the number of non-vested shares granted in 2019' says both the balance ('Non-vested:
    Shares') and the movement ('Granted: Shares'): the movement's alias with the balance's
    caption makes it the one row named, so the granted figure is answered, not asked back.
    The real table's 'Vested', whose words are all the balance's, stays a tie that is asked
    back; the balances and movements of a table with distinct words are answered."""
    documents = [
        *_documents("bee68d71-44ca-4177-a1c7-8c127f6f9203"),
        {"table": {"uid": "roll", "table": ROLL}, "paragraphs": [], "questions": []},
    ]
    ask = _asker(tmp_path, documents)

    real = "bee68d71-44ca-4177-a1c7-8c127f6f9203"
    granted = ask("What is the number of non-vested shares granted in 2019?", real)
    assert granted.status is AnswerStatus.ANSWERED and "473,550" in granted.text
    vested = ask("What is the number of non-vested shares vested in 2019?", real)
    assert vested.status is AnswerStatus.NEEDS_CLARIFICATION
    opening = ask("What was the number of shares outstanding at September 30, 2018?", "roll")
    assert opening.status is AnswerStatus.ANSWERED and "1,100" in opening.text
    moved = ask("What was the number of shares granted in fiscal 2019?", "roll")
    assert moved.status is AnswerStatus.ANSWERED and " 50" in moved.text


@pytest.mark.parametrize(
    ("labels", "why"),
    [
        (
            {1: "Outstanding at December 31, 2019", 4: "Outstanding at March 31, 2020"},
            "a quarter apart: its grants are no year's",
        ),
        (
            {1: "Outstanding at December 31, 2016", 4: "Outstanding at December 31, 2018"},
            "two years apart: the movements of both stored under one",
        ),
        (
            {1: "Outstanding at January 1, 2018", 4: "Outstanding at January 1, 2019"},
            "a first-week balance may close the 52-week year before its date's",
        ),
        ({2: "Exercisable at December 31, 2017"}, "a balance of another caption among them"),
    ],
)
def test_balances_a_year_apart_with_movements_only_between_them_are_a_roll_forward(
    labels: dict[int, str], why: str
) -> None:
    """A review found: balances only had to fall in consecutive fiscal years (a quarter's
    grants, or two years of them, were stored as one fiscal year's), and a dated balance of
    another caption between two balances was read as a movement of the later year."""
    table = [list(r) for r in ROLL[:5]]
    for row, label in labels.items():
        table[row][0] = label
    if 2 in labels:  # its cell in the rolling column is blank: the sum still holds
        table[2][1] = ""
        table[3][1] = "100"
    read = _tables_read(roll=table)
    assert not any(m.startswith(("Granted", "Exercised", "Exercisable")) for _, m, _ in read), why


def test_a_roll_forward_row_its_column_names_already_is_not_read(tmp_path: Path) -> None:
    """A review found 'the weighted-average grant date fair value of shares vested in 2019'
    answered with the granted shares' 53.53 (vested: 41.83), and 'the weighted-average exercise
    price per share in 2018' with the exercised options' 2.96: 'Granted' is a word of 'Grant
    Date Fair Value' and 'Exercised' of 'Exercise Price', so those rows' figures under those
    columns looked like the columns themselves. Such a cell is reported, not stored; and a
    question for the start of a year is asked back, not answered with its closing balance."""
    documents = [
        *_documents("bee68d71-44ca-4177-a1c7-8c127f6f9203"),
        {"table": {"uid": "roll", "table": ROLL}, "paragraphs": [], "questions": []},
    ]
    result = import_tatqa(documents, Glossary.from_terms([]))
    names = {t.code: t.label for t in result.new_terms}
    labels = {names[f.metric] for f in result.facts}
    assert "Granted: Weighted-Average Grant Date Fair Value" not in labels
    assert "Exercised: Weighted-Average Exercise Price" not in labels
    assert "Vested: Weighted-Average Grant Date Fair Value" in labels
    assert "Granted: Weighted-Average Exercise Price" in labels
    said = "row label says nothing its column's name does not"
    assert {(s.row, s.reason) for s in result.skipped} >= {("Granted", said), ("Exercised", said)}

    ask = _asker(tmp_path, documents)

    real = "bee68d71-44ca-4177-a1c7-8c127f6f9203"
    vested = ask(
        "What was the weighted-average grant date fair value of shares vested in 2019?", real
    )
    assert "53.53" not in vested.text
    price = ask("What was the weighted-average exercise price per share in 2018?", "roll")
    assert price.status is not AnswerStatus.ANSWERED or "3.00" not in price.text
    start = ask(
        "What was the number of shares outstanding at the beginning of fiscal 2019?", "roll"
    )
    assert start.status is AnswerStatus.NEEDS_CLARIFICATION and "1,000" not in start.text


def test_a_row_told_apart_only_by_its_columns_word_is_not_read_beside_shared_words() -> None:
    """A review found 'Options exercised' under 'Weighted average exercise price' still read:
    'options' is in every row label, so the one word telling the row apart, 'exercised', is
    the column's own ('the weighted average exercise price of options in 2018' gave the
    exercised options' price). Words the table's row labels share do not tell a row apart."""
    table = [
        ["", "Options", "Weighted average exercise price"],
        ["Options outstanding at December 31, 2017", "1,000", "$4.00"],
        ["Options granted", "300", "$8.00"],
        ["Options exercised", "(200)", "$3.00"],
        ["Options outstanding at December 31, 2018", "1,100", "$5.00"],
    ]
    read = _tables_read(roll=table)
    got = {m for _, m, _ in read}
    assert "Options exercised: Weighted average exercise price" not in got
    assert "Options granted: Weighted average exercise price" in got
    assert "Options exercised: Options" in got


def test_a_caption_over_every_column_names_no_column_apart() -> None:
    """A review found every 'Outstanding at ...' balance dropped under a caption 'Options
    Outstanding' spanning both columns: the caption's words are every column's, so they do
    not make a row's words the column's own; 'Exercised' under 'Exercise Price' still is."""
    table = [
        ["", "Options Outstanding", "Options Outstanding"],
        ["", "Number of Shares", "Weighted-Average Exercise Price"],
        ["Outstanding at December 31, 2017", "1,000", "$4.00"],
        ["Granted", "300", "$8.00"],
        ["Exercised", "(200)", "$3.00"],
        ["Outstanding at December 31, 2018", "1,100", "$5.00"],
    ]
    got = {(m, p) for _, m, p in _tables_read(roll=table)}
    names = {m for m, _ in got}
    assert any(m.startswith("Outstanding:") and "Exercise Price" in m for m in names), names
    assert any(m.startswith("Outstanding:") and "Number of Shares" in m for m in names), names
    assert not any(m.startswith("Exercised:") and "Exercise Price" in m for m in names), names


def _table_document(uid: str, value: str) -> dict:
    table = [["", "2019", "2018"], ["Revenue", value, "1"]]
    return {"table": {"uid": uid, "table": table}, "paragraphs": [], "questions": []}


def test_documents_whose_ids_become_one_entity_are_reported_not_merged(tmp_path: Path) -> None:
    """'acme_q' and 'acme.q' both become the entity 'tatqa-acme-q': before, the second's
    facts silently replaced the first's. The second is reported (in the same file or in a
    later import) and the first keeps its figures; the same id imported again is an update."""
    source = tmp_path / "two.json"
    source.write_text(
        json.dumps([_table_document("acme_q", "10"), _table_document("acme.q", "20")]), "utf-8"
    )
    ws = Workspace.init(tmp_path / "ws")
    result, _, _ = ws.ingest_tatqa(source)
    assert [s.document for s in result.skipped if "rename" in s.reason] == ["acme.q"]
    found = ws.query_metric("Revenue", entity_code("acme_q"), "2019", principal=PUBLIC)
    assert found.value == Decimal("10")

    later = tmp_path / "later.json"
    later.write_text(json.dumps([_table_document("ACME-Q", "30")]), "utf-8")
    result, summary, _ = ws.ingest_tatqa(later)
    assert [s.document for s in result.skipped if "rename" in s.reason] == ["ACME-Q"]
    assert summary.replaced == 0
    found = ws.query_metric("Revenue", entity_code("acme_q"), "2019", principal=PUBLIC)
    assert found.value == Decimal("10")

    again = tmp_path / "again.json"
    again.write_text(json.dumps([_table_document("acme_q", "11")]), "utf-8")
    result, summary, _ = ws.ingest_tatqa(again)
    assert not [s for s in result.skipped if "rename" in s.reason]
    assert summary.replaced == 1


def test_a_year_0000_header_and_an_id_in_another_form_do_not_break_an_import(
    tmp_path: Path,
) -> None:
    """A review found a header 'As at December 0000' failing the whole import (year 0), and
    an id stored in its display form ('cafe' + a combining accent) reported as colliding
    with itself when imported again, so its update was dropped."""
    odd = {
        "table": {"uid": "x", "table": [["", "As at December 0000"], ["Revenue", "5"]]},
        "paragraphs": [],
        "questions": [],
    }
    accented = "cafe\u0301-doc"
    source = tmp_path / "odd.json"
    source.write_text(json.dumps([odd, _table_document(accented, "10")]), "utf-8")
    ws = Workspace.init(tmp_path / "ws")
    ws.ingest_tatqa(source)
    again = tmp_path / "again.json"
    again.write_text(json.dumps([_table_document(accented, "12")]), "utf-8")
    result, summary, _ = ws.ingest_tatqa(again)
    assert not [s for s in result.skipped if "rename" in s.reason]
    assert summary.replaced == 1


def test_a_per_share_figure_is_never_at_the_tables_scale() -> None:
    """Found by an adversarial pass: under '(in millions)' with no 'except per share data',
    'Diluted earnings per share' 2.10 was stored as 2.10 million. A row that is a per-share
    figure by its whole name is read in units; a review of a first version found rates,
    ratios and days rows that were amounts (`Effect of foreign tax rates`, `Past due over 90
    days`) and a section's own '($M)' losing their scale: those keep it."""
    read = _tables_read(
        scaled=[
            ["", "2019", "2018"],
            ["", "(in millions)", ""],
            ["Revenue", "1,234", "1,100"],
            ["Diluted earnings per share", "$2.10", "$1.90"],
            ["Basic EPS", "2.10", "1.90"],
            ["Cash dividends declared per common share", "0.50", "0.45"],
            ["Effect of foreign tax rates", "(35)", "(30)"],
            ["Past due over 90 days", "120", "100"],
            ["Net income used in computing basic earnings per share", "45,000", "40,000"],
            ["Interest rate swaps", "40", "30"],
        ]
    )
    scales = {label: fact.scale for (_, label, period), fact in read.items() if period == "FY2019"}
    for label in (
        "Diluted earnings per share",
        "Basic EPS",
        "Cash dividends declared per common share",
    ):
        assert scales[label] is Scale.ONE, label
    for label in (
        "Revenue",
        "Effect of foreign tax rates",
        "Past due over 90 days",
        "Net income used in computing basic earnings per share",
        "Interest rate swaps",
    ):
        assert scales[label] is Scale.MILLION, label


def test_counts_days_ratios_and_per_unit_rows_take_no_money_scale() -> None:
    """Found by an adversarial pass: under '(in millions, except per share data)' the number
    of employees was read as 12,000 million, days sales outstanding as 45 million, a ratio as
    0.8 million; under '(in millions)', book value per share as 25.30 million. Such rows, by
    their whole name, state no scale (per-share ones are in units); amounts around them,
    including a return on plan assets, keep the table's."""
    facts = _tables_read(
        t1=[
            ["(in millions, except per share data)", "2019", "2018"],
            ["Revenue", "1,200", "1,000"],
            ["Number of employees", "12,000", "11,600"],
            ["Days sales outstanding", "45", "50"],
            ["Debt to equity ratio", "0.8", "0.9"],
            ["Average revenue per user", "12.50", "11.00"],
            ["Return on equity", "15.2", "14.1"],
            ["Expected return on plan assets", "30", "28"],
        ],
        t2=[
            ["(in millions)", "2019", "2018"],
            ["Revenue", "1,200", "1,000"],
            ["Book value per share", "25.30", "22.10"],
            ["Headcount (in thousands)", "4.4", "4.0"],
            ["Staff", "500", "450"],
        ],
    )
    for label in (
        "Number of employees",
        "Days sales outstanding",
        "Debt to equity ratio",
        "Average revenue per user",
        "Return on equity",
    ):
        assert facts[("t1", label, "FY2019")].scale is Scale.UNKNOWN, label
    assert facts[("t1", "Revenue", "FY2019")].scale is Scale.MILLION
    assert facts[("t1", "Expected return on plan assets", "FY2019")].scale is Scale.MILLION
    assert facts[("t2", "Book value per share", "FY2019")].scale is Scale.ONE
    assert facts[("t2", "Headcount (in thousands)", "FY2019")].scale is Scale.THOUSAND
    assert facts[("t2", "Staff", "FY2019")].scale is Scale.MILLION  # a cost line (review)


def test_rates_coverages_and_turns_take_no_money_scale() -> None:
    """Found by a third adversarial pass: under '(in thousands, except per share data and
    percentages)' an unmarked 'Effective tax rate' of 21.0 was 21.0 thousand, under '(in
    millions, except ratios)' an 'Interest coverage' of 8.5 was 8.5 million. A rate, a
    coverage or inventory turns by its whole name states no scale; an effect of a rate is an
    amount and keeps the table's, and a rate in a '%' column stays as written."""
    facts = _tables_read(
        t1=[
            ["(in thousands, except per share data and percentages)", "2019", "2018"],
            ["Net sales", "5,000", "4,000"],
            ["Effective tax rate", "21.0", "24.5"],
            ["Weighted average interest rate", "4.1", "3.9"],
            ["Effect of foreign tax rate", "(120)", "(80)"],
        ],
        t2=[
            ["(in millions, except ratios)", "2019", "2018"],
            ["Total debt", "500", "450"],
            ["Interest coverage", "8.5", "9.1"],
            ["Inventory turns", "6.2", "5.9"],
        ],
        t3=[["(in millions)", "2019", "2018"], ["", "%", "%"], ["Discount rate", "3.1", "3.9"]],
    )
    for table, label in (
        ("t1", "Effective tax rate"),
        ("t1", "Weighted average interest rate"),
        ("t2", "Interest coverage"),
        ("t2", "Inventory turns"),
    ):
        assert facts[(table, label, "FY2019")].scale is Scale.UNKNOWN, label
    assert facts[("t1", "Net sales", "FY2019")].scale is Scale.THOUSAND
    assert facts[("t1", "Effect of foreign tax rate", "FY2019")].scale is Scale.THOUSAND
    assert facts[("t2", "Total debt", "FY2019")].scale is Scale.MILLION
    assert facts[("t3", "Discount rate", "FY2019")].scale is Scale.ONE


def test_a_bad_library_name_fails_before_any_fact_is_written(tmp_path: Path) -> None:
    """As for ConvFinQA: an invalid library name for the paragraphs fails first, so no fact
    and no glossary file is left behind by half an ingest."""
    from ragspine.errors import ConfigError

    document = {
        "table": {"uid": "t1", "table": [["", "2019"], ["Revenue", "100"]]},
        "paragraphs": [{"uid": "p1", "order": 1, "text": "Revenue grew."}],
        "questions": [],
    }
    source = tmp_path / "t.json"
    source.write_text(json.dumps([document]), "utf-8")
    ws = Workspace.open(tmp_path / "ws", create=True)
    with pytest.raises(ConfigError, match="invalid library name"):
        ws.ingest_tatqa(source, library="no spaces allowed")
    assert list(ws.facts.scan(max_level=9)) == []
    assert not (tmp_path / "ws" / "glossary.d" / "tatqa.toml").exists()


def test_a_uid_naming_another_entity_is_left_out_never_merged(tmp_path: Path) -> None:
    """A CLI attack: a TAT-QA uid 'acme' beside the glossary's ACME, or 'x' beside a uid
    'tatqa-x' in the same file, failed the whole import with a glossary error naming no input;
    a ConvFinQA company whose ticker is a TAT-QA uid ('IP' after a uid 'ip') had its facts
    stored under that document's entity. Each is now left out and reported; the rest lands."""
    source = tmp_path / "named.json"
    documents = [_table_document("acme", "10"), _table_document("x", "1")]
    source.write_text(json.dumps([*documents, _table_document("tatqa-x", "2")]), "utf-8")
    ws = Workspace.init(tmp_path / "ws")
    result, summary, _ = ws.ingest_tatqa(source)
    left_out = sorted(s.document for s in result.skipped if "already names" in s.reason)
    assert left_out == ["acme", "tatqa-x"] and summary.added == 2, result.skipped
    assert ws.query_metric("Revenue", "acme", "2019", principal=PUBLIC).status == "not_found"

    ip = tmp_path / "ip.json"
    ip.write_text(json.dumps([_table_document("ip", "5")]), "utf-8")
    ws.ingest_tatqa(ip)
    filing = {
        "id": "Single_IP/2009/page_1.pdf",
        "doc": {"pre_text": [], "post_text": [], "table": {"2009": {"revenue": 3060.0}}},
        "dialogue": {"conv_questions": ["q"], "executed_answers": [1.0]},
    }
    convfinqa = tmp_path / "c.json"
    convfinqa.write_text(json.dumps([filing]), "utf-8")
    imported, _, _ = ws.ingest_convfinqa(convfinqa)
    assert [s.reason for s in imported.skipped if "ticker names" in s.reason]
    stored = {f.entity for f in ws.facts.scan(max_level=9)}
    assert stored == {entity_code("ip"), entity_code("x")}
    ws.close()


@pytest.mark.parametrize(
    ("first", "second"),
    [("Assets > 1 year", "Assets < 1 year"), ("مبيعات", "収益"), ("Résultat net", "Rüsultat net")],
)
def test_labels_that_say_different_things_never_share_a_metric(
    tmp_path: Path, first: str, second: str
) -> None:
    """A CLI attack: labels in another script all became the metric 'unnamed', and labels
    told apart only by a sign or an accented letter one metric with the other as its alias, so
    a question about one document's row got another document's differently named row. Each
    label now has its own metric."""
    tables = [
        {"table": {"uid": uid, "table": [["", "2019"], [label, value]]}, "paragraphs": []}
        for uid, label, value in (("doc-a", first, "100"), ("doc-b", second, "200"))
    ]
    source = tmp_path / "labels.json"
    source.write_text(json.dumps(tables), "utf-8")
    ws = Workspace.init(tmp_path / "ws")
    ws.ingest_tatqa(source)
    metrics = {f.entity: f.metric for f in ws.facts.scan(max_level=9)}
    assert len(set(metrics.values())) == 2, metrics
    wrong = ws.query_metric(second, entity_code("doc-a"), "2019", principal=PUBLIC)
    assert wrong.status == "not_found", wrong.text
    right = ws.query_metric(second, entity_code("doc-b"), "2019", principal=PUBLIC)
    assert right.value == Decimal("200")
    ws.close()


def test_an_empty_list_of_documents_changes_nothing(tmp_path: Path) -> None:
    """'[]' was imported with exit 0 and left an empty library and glossary file behind."""
    source = tmp_path / "empty.json"
    source.write_text("[]", "utf-8")
    ws = Workspace.init(tmp_path / "ws")
    with pytest.raises(IngestError, match="empty"):
        ws.ingest_tatqa(source)
    assert not (tmp_path / "ws" / "glossary.d").exists()
    ws.close()


@pytest.mark.parametrize("where", ["uid", "label", "paragraph"])
def test_a_lone_surrogate_escape_is_refused_before_anything_is_written(
    tmp_path: Path, where: str
) -> None:
    """A CLI attack: a JSON escape of half a character ('\\ud800') in a uid, a row label or a
    paragraph was an internal error after the glossary file and some facts were written."""
    bad = "s\ud800u"
    document = _table_document(bad if where == "uid" else "doc", "10")
    if where == "label":
        document["table"]["table"][1][0] = bad
    if where == "paragraph":
        document["paragraphs"] = [{"uid": "p", "order": 1, "text": bad}]
    source = tmp_path / "bad.json"
    source.write_text(json.dumps([document]), "utf-8")  # ASCII: the escape stays an escape
    ws = Workspace.init(tmp_path / "ws")
    with pytest.raises(IngestError, match="lone surrogate"):
        ws.ingest_tatqa(source)
    assert not (tmp_path / "ws" / "glossary.d").exists()
    assert not list(ws.facts.scan(max_level=9))
    ws.close()


def test_a_file_saved_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    """A CLI attack: a TAT-QA file saved on Windows (UTF-8 with a byte order mark) was refused
    as invalid JSON, in Python's words."""
    source = tmp_path / "bom.json"
    source.write_bytes(b"\xef\xbb\xbf" + json.dumps([_table_document("bom-doc", "7")]).encode())
    ws = Workspace.init(tmp_path / "ws")
    result, summary, _ = ws.ingest_tatqa(source)
    assert summary.added == 2 and not result.skipped, result.skipped
    ws.close()
