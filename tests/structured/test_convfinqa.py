from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from conftest import shared_data
from ragspine import Principal, Workspace
from ragspine.answer.options import AskOptions
from ragspine.answer.types import AnswerStatus
from ragspine.glossary import load_glossary
from ragspine.structured.convfinqa import DASH_PLACEHOLDER

PUBLIC = Principal.of("public")


def test_full_convfinqa_import(tmp_path: Path) -> None:
    source = shared_data("convfinqa", "convfinqa_dev.json")
    ws = Workspace.init(tmp_path / "ws")
    result, summary, _ = ws.ingest_convfinqa(source)
    assert result.filings == 421
    assert summary.added == len(result.facts) > 900
    reasons = result.skip_reasons()
    assert reasons["column header is not a year or a year-end date"] > 0
    assert reasons["2014.0 stands for a dash (missing value)"] > 0
    assert all(f.value != DASH_PLACEHOLDER for f in result.facts)
    assert all(f.period.startswith("FY") and len(f.period) == 6 for f in result.facts)
    generated = load_glossary(tmp_path / "ws" / "glossary.d" / "convfinqa.toml")
    assert len(generated.metrics.terms) > 100
    # A row label becomes a metric code with the label as alias; the ticker is the entity.
    res = ws.query_metric("tier 1 capital", "C", "FY2008", principal=PUBLIC)
    assert res.status == "found" and res.value == Decimal("71.0")
    assert res.source_doc_id == "Double_C/2008/page_102.pdf"
    assert res.locator is not None and "page 102" in res.locator and "'2008'" in res.locator
    # Re-importing the same file changes nothing.
    _, again, _ = ws.ingest_convfinqa(source)
    assert (again.added, again.replaced) == (0, 0)


def test_a_table_with_periods_as_rows_is_read_turned(tmp_path: Path) -> None:
    """Rows ``31-dec-2013`` under columns ``citi`` / ``s&p 500``: the columns are the series."""
    import json

    filing = {
        "id": "Single_C/2017/page_328.pdf-1",
        "doc": {
            "pre_text": [],
            "post_text": [],
            "table": {
                "citi": {"31-dec-2012": 100.0, "31-dec-2013": 131.8, "thereafter": 5.0},
                "s&p 500": {"31-dec-2012": 100.0, "31-dec-2013": 132.4},
            },
        },
        "dialogue": {"conv_questions": ["q"], "executed_answers": [1.0]},
    }
    unit_only = {
        "id": "Single_X/2003/page_84.pdf",
        "doc": {"table": {"( in thousands )": {"2004": 10.0, "2005": 20.0}}},
        "dialogue": {"conv_questions": ["q"], "executed_answers": [1.0]},
    }
    source = tmp_path / "c.json"
    source.write_text(json.dumps({"dev": [filing, unit_only]}), "utf-8")
    ws = Workspace.init(tmp_path / "ws")
    result, _, _ = ws.ingest_convfinqa(source)
    res = ws.query_metric("citi", "C", "FY2013", principal=PUBLIC)
    assert res.status == "found" and res.value == Decimal("131.8")
    assert res.locator is not None and "row '31-dec-2013', column 'citi'" in res.locator
    # "thereafter" is no period; a unit-only header is no metric: nothing read from that table.
    assert {f.entity for f in result.facts} == {"c"}
    assert len(result.facts) == 4


def _filing(filing_id: str, table: dict[str, dict[str, float]]) -> dict[str, object]:
    return {
        "id": filing_id,
        "doc": {"pre_text": [], "post_text": [], "table": table},
        "dialogue": {"conv_questions": ["q"], "executed_answers": [1.0]},
    }


def _imported(
    tmp_path: Path, filings: list[dict[str, object]], entities: str = "ticker"
) -> tuple[Workspace, Any]:
    """A new workspace with ``filings`` imported (by ticker unless told), and the result."""
    import json

    source = tmp_path / "c.json"
    source.write_text(json.dumps(filings), "utf-8")
    ws = Workspace.init(tmp_path / "ws")
    result, _, _ = ws.ingest_convfinqa(source, entities=entities)
    return ws, result


def _ask_filing(ws: Workspace, filing_id: str, question: str) -> Any:
    """``question`` asked of one filing's entity, as the public."""
    entity = ws.glossary.entities.resolve(filing_id)
    return ws.ask(question, AskOptions(entity=entity), principal=PUBLIC)


CHAINED = {
    "2015": {"balance at january 1": 2.0, "additions": 3.0, "balance at december 31": 5.0},
    "2016": {"balance at january 1": 5.0, "additions": 1.0, "balance at december 31": 6.0},
}
"""A two-year roll-forward: each opening balance is the year before's closing one."""


def _read(result: Any) -> dict[tuple[str, str, str], Decimal]:
    return {(f.entity, f.metric, f.period): f.value for f in result.facts}


def test_filing_entities_keep_two_tables_of_one_company_and_year_apart(tmp_path: Path) -> None:
    """Two pages of one 2008 filing both have a ``total`` row for 2008. Under tickers they
    collide: neither is kept (no guess) and both are reported as ambiguous; with
    ``entities="filing"`` each page is its own entity, and each question about a page finds
    that page's figure."""
    import json

    import pytest

    from ragspine.errors import IngestError
    from ragspine.structured.convfinqa import filing_entity

    first = _filing("Single_UNP/2008/page_77.pdf-2", {"2008": {"total": 2560.0}})
    second = _filing("Single_UNP/2008/page_80.pdf-1", {"2008": {"total": 31.0}})
    source = tmp_path / "c.json"
    source.write_text(json.dumps([first, second]), "utf-8")
    by_ticker = Workspace.init(tmp_path / "a")
    result, _, _ = by_ticker.ingest_convfinqa(source)
    assert result.facts == ()
    assert len(result.skipped) == 2 and all("ambiguous" in s.reason for s in result.skipped)
    by_filing = Workspace.init(tmp_path / "b")
    result, _, _ = by_filing.ingest_convfinqa(source, entities="filing")
    assert not result.skipped
    for filing, value in ((first, "2560.0"), (second, "31.0")):
        entity = filing_entity(str(filing["id"]))
        res = by_filing.query_metric("total", entity, "FY2008", principal=PUBLIC)
        assert res.status == "found" and res.value == Decimal(value)
        assert res.source_doc_id == filing["id"]
        # the filing id is the entity's label, so a user may name it as written
        assert by_filing.glossary.entities.resolve(str(filing["id"])) == entity
    with pytest.raises(IngestError, match="entities must be one of ticker, filing"):
        by_filing.ingest_convfinqa(source, entities="page")


def test_header_dates_and_captions(tmp_path: Path) -> None:
    """``dec . 31 2008`` (spaced abbreviation), ``as of december 2012`` (a month), and a
    column group's caption over its years (``pension plans 2018``) name periods; two different
    captions, or a caption naming a shorter span or a change, do not."""

    from ragspine.structured.headers import captioned_period, dated_period

    assert dated_period("dec . 31 2008") == "FY2008"
    assert dated_period("dec . 312013") == "FY2013"  # day and year run together
    assert dated_period("as of december 2012") == "FY2012"
    assert captioned_period("pension plans 2018") == ("pension plans", "FY2018")
    assert captioned_period("shipment volume for the years ended december 31 , 2012") == (
        "shipment volume",
        "FY2012",
    )
    for header in ("three months ended dec . 28 2013", "% change 2014 v 2013", "2002 high"):
        assert captioned_period(header) is None, header
    filings = [
        _filing("Single_PM/2018/page_24.pdf-1", {"pension plans 2018": {"service cost": 5.0},
                                                  "pension plans 2017": {"service cost": 4.0}}),
        _filing("Single_X/2010/page_1.pdf", {"gross goodwill at december 31 2010": {"a": 1.0},
                                              "net goodwill at december 31 2010": {"a": 2.0}}),
        _filing("Single_UNP/2008/page_77.pdf-2", {"dec . 31 2008": {"other": 546.0}}),
        _filing("Single_V/2013/page_9.pdf", {"december 31 2013 ( in millions )": {"revenue": 4.0}}),
    ]  # fmt: skip
    _, result = _imported(tmp_path, filings)
    assert _read(result) == {
        ("pm", "service_cost", "FY2018"): Decimal("5.0"),
        ("pm", "service_cost", "FY2017"): Decimal("4.0"),
        ("unp", "other", "FY2008"): Decimal("546.0"),
        ("v", "revenue", "FY2013"): Decimal("4.0"),  # a unit mark beside the date
    }
    # the goodwill table's two captions are two different things: both columns reported
    skipped = [s.column for s in result.skipped if s.filing_id == "Single_X/2010/page_1.pdf"]
    assert len(skipped) == 2


def test_one_month_in_following_years_heads_each_years_column(tmp_path: Path) -> None:
    """A performance graph's ``12/09`` ... ``12/11`` is December of each year (no period
    before: ConvFinQA's 'the price of e*trade financial corporation in 2014' was refused). A
    lone ``12/14``, months that differ or years that skip may be days without a year: no
    period is guessed for them."""
    graph = {"12/09": {"acme": 100.0}, "12/10": {"acme": 90.9}, "12/11": {"acme": 45.2}}
    lone = {"12/14": {"acme": 7.0}}
    mixed = {"12/09": {"acme": 1.0}, "06/10": {"acme": 2.0}}
    skipped = {"12/09": {"acme": 1.0}, "12/11": {"acme": 2.0}}
    # two December days: later than the report's own year (2014), whatever today's is
    future = {"12/24": {"acme": 1.0}, "12/25": {"acme": 2.0}}
    filings = [
        _filing("Single_G/2011/page_1.pdf", graph),
        _filing("Single_L/2014/page_1.pdf", lone),
        _filing("Single_M/2014/page_1.pdf", mixed),
        _filing("Single_S/2014/page_1.pdf", skipped),
        _filing("Single_F/2014/page_1.pdf", future),
    ]
    _, result = _imported(tmp_path, filings)
    assert _read(result) == {
        ("g", "acme", "FY2009"): Decimal("100.0"),
        ("g", "acme", "FY2010"): Decimal("90.9"),
        ("g", "acme", "FY2011"): Decimal("45.2"),
    }
    # a review: a figure of '12/11' is December's, so it answers no other day of 2011
    (tmp_path / "asked").mkdir()
    ws, _ = _imported(tmp_path / "asked", [_filing("Single_G/2011/page_1.pdf", graph)])
    options = AskOptions(entity="g")
    june = ws.ask("What was acme at June 30, 2011?", options, principal=Principal.of("public"))
    assert june.status is AnswerStatus.NEEDS_CLARIFICATION and "45.2" not in june.text
    december = ws.ask("What was acme at 12/31/2011?", options, principal=Principal.of("public"))
    assert december.status is AnswerStatus.ANSWERED and "45.2" in december.text


def test_a_leading_day_without_its_year_is_the_day_its_figures_were_read(tmp_path: Path) -> None:
    """A review: once 'march 31 , shares outstanding' could be named without its day, 'the
    shares outstanding at December 31, 2019' was answered with the March 31 figure (it was
    refused before). The day is the one of the figure's year it was read at."""
    table = {"2019": {"march 31 , shares outstanding": 120.0}}
    ws, _ = _imported(tmp_path, [_filing("Single_A/2019/page_1.pdf", table)])
    options = AskOptions(entity="a")
    public = Principal.of("public")
    other = ws.ask(
        "what were the shares outstanding at december 31, 2019?", options, principal=public
    )
    assert other.status is AnswerStatus.NEEDS_CLARIFICATION and "120" not in other.text
    same = ws.ask("what were the shares outstanding at march 31, 2019?", options, principal=public)
    assert same.status is AnswerStatus.ANSWERED and "120" in same.text


def test_a_single_column_naming_no_period_is_read_by_dated_rows(tmp_path: Path) -> None:
    """A net-revenue bridge under ``amount ( in millions )``: ``2015 net revenue`` and ``2016
    net revenue`` name their years, so they are the metric ``net revenue`` for FY2015 and
    FY2016 (the locator keeps the row as written); the bridge rows between them name no
    period and are reported, never dated by a guess. Two rows giving one key two values keep
    neither."""

    bridge = {
        "amount ( in millions )": {
            "2015 net revenue": 1666.0,
            "nuclear volume": -20.0,
            "2016 net revenue": 1542.0,
            "balance december 31 2016": 7.0,
        }
    }
    clash = {"( in thousands )": {"2015 sales": 1.0, "sales 2015": 2.0}}  # one key, twice
    twice = {"amount": {"2015 sales": 1.0}, "other": {"x": 1.0}}
    filings = [
        _filing("Single_ETR/2017/page_26.pdf-1", bridge),
        _filing("Single_Q/2016/page_1.pdf", clash),
        _filing("Single_Z/2016/page_1.pdf", twice),
    ]
    _, result = _imported(tmp_path, filings)
    assert _read(result) == {
        ("etr", "net_revenue", "FY2015"): Decimal("1666.0"),
        ("etr", "net_revenue", "FY2016"): Decimal("1542.0"),
        ("etr", "balance", "FY2016"): Decimal("7.0"),
    }  # neither of Q's two values for sales in FY2015 is kept
    assert sum("ambiguous" in s.reason for s in result.skipped) == 2
    located = {f.locator for f in result.facts if f.entity == "etr"}
    assert any("row '2015 net revenue'" in loc for loc in located)
    reasons = {(s.row, s.reason) for s in result.skipped if s.filing_id.startswith("Single_ETR")}
    assert ("nuclear volume", "neither the column header nor the row label names a period") in (
        reasons
    )
    # two value columns that name no period: the rows are not read as dated (which column?)
    assert not any(f.entity == "z" for f in result.facts)


def test_numbers_and_dates_are_no_figure_names(tmp_path: Path) -> None:
    """``$ 1150786`` above a column of years is a garbled first value, not a series: the
    table is not turned into a metric of that name; a row ``$ 2014`` or ``30 september`` is
    no metric either (both reported)."""
    import json

    filings = [
        _filing("Single_ETR/2003/page_1.pdf", {"$ 1150786": {"2004": 30.2, "2005": 40.0}}),
        _filing("Single_ETR/2004/page_2.pdf", {"2004": {"$ 2014": 1.0, "30 september": 2.0,
                                                        "sinking fund": 3.0}}),
    ]  # fmt: skip
    source = tmp_path / "c.json"
    source.write_text(json.dumps(filings), "utf-8")
    ws = Workspace.init(tmp_path / "ws")
    result, _, _ = ws.ingest_convfinqa(source)
    assert [(f.metric, f.period) for f in result.facts] == [("sinking_fund", "FY2004")]
    reasons = {(s.row, s.reason) for s in result.skipped}
    assert ("$ 2014", "row label names no figure (only numbers or dates)") in reasons
    assert ("30 september", "row label names no figure (only numbers or dates)") in reasons


def test_a_later_filing_restates_in_any_file_order(tmp_path: Path) -> None:
    """Filings are read in id order, so ``Double_X/2009`` comes before ``Single_X/2007``: the
    2009 filing's figure still wins over the 2007 one (found by review: both were dropped as
    ambiguous), and a later filing settles a year that one filing gave twice."""
    import json

    filings = [
        _filing("Single_X/2007/page_1.pdf", {"2006": {"sales": 1.0}}),
        _filing("Double_X/2009/page_2.pdf", {"2006": {"sales": 2.0}}),
        _filing("Single_Y/2007/page_1.pdf", {"2006": {"sales": 1.0}}),
        _filing("Single_Y/2007/page_2.pdf", {"2006": {"sales": 3.0}}),
        _filing("Single_Y/2008/page_3.pdf", {"2006": {"sales": 4.0}}),
    ]
    source = tmp_path / "c.json"
    source.write_text(json.dumps(filings), "utf-8")
    ws = Workspace.init(tmp_path / "ws")
    result, _, _ = ws.ingest_convfinqa(source)
    read = {(f.entity, f.period): (f.value, f.source_doc_id) for f in result.facts}
    assert read == {
        ("x", "FY2006"): (Decimal("2.0"), "Double_X/2009/page_2.pdf"),
        ("y", "FY2006"): (Decimal("4.0"), "Single_Y/2008/page_3.pdf"),
    }
    replaced = [s.filing_id for s in result.skipped if s.reason.startswith("replaced")]
    assert "Single_X/2007/page_1.pdf" in replaced


def test_captions_of_plans_spans_and_ratios_are_no_fiscal_year() -> None:
    from ragspine.structured.headers import captioned_period, split_year_period

    for header in ("q4 2012", "ytd 2019", "budget 2019", "pro forma 2012", "per share 2019",
                   "% of total 2019", "forecast 2020"):  # fmt: skip
        assert captioned_period(header) is None, header
    assert split_year_period("1999/00") == "FY2000"


def test_a_rate_shown_only_negative_is_reported_not_stored(tmp_path: Path) -> None:
    """The cleaned source writes ``11.4% ( 11.4 % )`` as -11.4: a rate row whose every value is
    negative, or any row of a table holding only negative values, has an unknown sign and is
    reported; a negative amount (a loss) and a rate with one positive year are kept."""
    filings = [
        _filing(
            "Single_AON/2014/page_47.pdf",
            {
                "2014": {"revenue": 4264.0, "operating margin": -11.4, "net loss": -12.0,
                         "tax rate": 21.0},
                "2013": {"revenue": 4057.0, "operating margin": -7.8, "net loss": -9.0,
                         "tax rate": -1.5},
            },
        ),
        _filing(
            "Single_PM/2015/page_38.pdf",
            {"2015": {"u.s . pension plans": -4.3, "postretirement plans": -4.45},
             "2014": {"u.s . pension plans": -3.95, "postretirement plans": -4.2}},
        ),
        _filing(  # a rate only qualifying an amount is no rate; a zero or a change column
            "Single_GS/2017/page_1.pdf",  # not read does not make a rate's sign known
            {"2017": {"interest rate swaps": -12.0, "interest rates net": -410.0,
                      "gross margin": 30.0, "effective tax rate": -35.0,
                      "segment margin": 0.0},
             "2016": {"interest rate swaps": -8.0, "interest rates net": -381.0,
                      "gross margin": 12.0, "effective tax rate": -34.0,
                      "segment margin": -11.4},
             "change": {"effective tax rate": 1.0, "gross margin": 18.0}},
        ),
    ]  # fmt: skip
    _, result = _imported(tmp_path, filings)
    kept = {(f.metric, f.period, f.value) for f in result.facts}
    assert ("net_loss", "FY2014", Decimal("-12.0")) in kept
    assert ("tax_rate", "FY2013", Decimal("-1.5")) in kept
    assert {m for m, _, _ in kept} == {
        "revenue", "net_loss", "tax_rate", "interest_rate_swaps", "interest_rates_net",
        "gross_margin",
    }  # fmt: skip
    unsigned = {(s.filing_id, s.row) for s in result.skipped if "sign is unknown" in s.reason}
    assert unsigned == {
        ("Single_AON/2014/page_47.pdf", "operating margin"),
        ("Single_PM/2015/page_38.pdf", "u.s . pension plans"),
        ("Single_PM/2015/page_38.pdf", "postretirement plans"),
        ("Single_GS/2017/page_1.pdf", "effective tax rate"),
        ("Single_GS/2017/page_1.pdf", "segment margin"),
    }


def test_the_parts_of_a_walk_are_parts_of_its_change(tmp_path: Path) -> None:
    """``2009 net revenue``, parts naming no period, ``2010 net revenue``: when the parts add up
    to the change, each is stored (by filing) as a part of it in the later year; when they do
    not, or the two ends are not one year apart, or entities are tickers (two walks of one
    company would mix), the parts are reported as before."""
    import json

    from ragspine.structured.convfinqa import filing_entity

    walk = {"2009 net revenue": 536.7, "volume/weather": 18.9, "other": -0.3,
            "2010 net revenue": 555.3}  # fmt: skip
    off = {**walk, "other": 0.3}
    gap = {"2008 net revenue": 536.7, "volume/weather": 18.9, "other": -0.3,
           "2010 net revenue": 555.3}  # fmt: skip
    filings = [
        _filing("Single_ETR/2011/page_1.pdf", {"amount ( in millions )": walk}),
        _filing("Single_ABC/2011/page_1.pdf", {"amount ( in millions )": off}),
        _filing("Single_XYZ/2011/page_1.pdf", {"amount ( in millions )": gap}),
    ]
    source = tmp_path / "c.json"
    source.write_text(json.dumps(filings), "utf-8")
    ws = Workspace.init(tmp_path / "ws")
    result, _, _ = ws.ingest_convfinqa(source, entities="filing")
    etr = filing_entity("Single_ETR/2011/page_1.pdf")
    read = _read(result)
    assert read[(etr, "net_revenue_volume_weather", "FY2010")] == Decimal("18.9")
    assert read[(etr, "net_revenue_other", "FY2010")] == Decimal("-0.3")
    assert {m for e, m, _ in read if e != etr} == {"net_revenue"}
    part = ws.query_metric("net revenue: volume/weather", etr, "FY2010", principal=PUBLIC)
    assert part.locator is not None
    assert part.locator.endswith("(part of the change in net revenue from FY2009 to FY2010)")
    reported = {(s.filing_id[7:10], s.row) for s in result.skipped}
    assert {("ABC", "volume/weather"), ("XYZ", "other")} <= reported
    (tmp_path / "t").mkdir()
    _, by_ticker = _imported(tmp_path / "t", filings)
    assert {m for _, m, _ in _read(by_ticker)} == {"net_revenue"}


def test_a_table_that_states_no_period_is_read_undated_by_filing(tmp_path: Path) -> None:
    """ConvFinQA dev: 'what is the amount of the goodwill?' over a purchase price allocation
    (one column headed by a garbled first value, '$ 28.1') was refused: no column or row
    names a period, so nothing was stored. By filing, such a table's figures are stored as
    undated, several value columns named 'row: column'; by ticker (where two such tables of
    one company would read as restatements) they are reported as before. A table whose rows
    name years, or with a column that names no figure, is not undated."""

    from ragspine.answer.options import AskOptions
    from ragspine.answer.types import AnswerStatus
    from ragspine.structured.convfinqa import filing_entity

    allocation = {"$ 28.1": {"goodwill": 258.9, "ipr&d": 190.0, "total cash purchase price": 348.0}}
    regions = {"americas": {"long-term retail": 298.0}, "total": {"long-term retail": 403.5}}
    notes = {"carrying value": {"notes due 2015": 750.0}, "fair value": {"notes due 2015": 753.0}}
    garbled = {"$ 602011": {"goodwill": 1.0}, "other": {"goodwill": 2.0}}
    filings = [
        _filing("Single_EW/2016/page_79.pdf", allocation),
        _filing("Single_BLK/2012/page_37.pdf", regions),
        _filing("Single_BLK/2014/page_119.pdf", notes),
        _filing("Single_DRE/2007/page_59.pdf", garbled),
    ]
    ws, result = _imported(tmp_path, filings, entities="filing")
    read = {(f.entity.split("-")[1], f.metric, f.period): f.value for f in result.facts}
    assert read == {
        ("single", "goodwill", "undated"): Decimal("258.9"),
        ("single", "ipr_d", "undated"): Decimal("190.0"),
        ("single", "total_cash_purchase_price", "undated"): Decimal("348.0"),
        ("single", "long_term_retail_americas", "undated"): Decimal("298.0"),
        ("single", "long_term_retail_total", "undated"): Decimal("403.5"),
    }
    entity = filing_entity("Single_EW/2016/page_79.pdf")
    asked = ws.ask("what is the amount of the goodwill?", AskOptions(entity=entity),
                   principal=PUBLIC)  # fmt: skip
    assert asked.status is AnswerStatus.ANSWERED and asked.route == "structured"
    assert [f.decimal_value for f in asked.figures] == ["258.9"]
    assert "in an undated table was 258.9" in asked.text
    total = ws.ask("what is the total goodwill?", AskOptions(entity=entity), principal=PUBLIC)
    assert [f.decimal_value for f in total.figures] == ["258.9"]  # "the total": a figure
    plain = ws.ask("what is goodwill?", AskOptions(entity=entity), principal=PUBLIC)
    assert plain.route == "narrative"  # a term alone may ask what it means
    (tmp_path / "ticker").mkdir()
    _, result = _imported(tmp_path / "ticker", filings)
    assert result.facts == ()


def test_one_column_naming_a_change_or_a_year_is_not_undated(tmp_path: Path) -> None:
    """A review found: a one-column table headed '2016 vs 2015' or 'increase ( decrease )'
    was stored undated under the bare row label, so 'how much was the net revenue?' was
    answered with a change (125.0). Such headers name a change, a share or a span, not a
    level; a plain header ('total') leaves the row label alone, a named one qualifies it."""

    filings = [
        _filing("Single_ABC/2016/page_5.pdf", {"2016 vs 2015": {"net revenue": 125.0}}),
        _filing("Single_ABC/2016/page_6.pdf", {"increase ( decrease )": {"sales": 3.0}}),
        _filing("Single_ABC/2016/page_7.pdf", {"% ( % ) of total": {"sales": 40.0}}),
        _filing("Single_ABC/2016/page_8.pdf", {"total": {"goodwill": 9.0}}),
        _filing("Single_ABC/2016/page_9.pdf", {"fair value": {"goodwill": 8.0}}),
    ]
    _, result = _imported(tmp_path, filings, entities="filing")
    assert sorted((f.metric, f.period, str(f.value)) for f in result.facts) == [
        ("goodwill", "undated", "9.0"),
        ("goodwill_fair_value", "undated", "8.0"),
    ]


def test_the_total_asks_for_one_figure_only_when_it_names_one(tmp_path: Path) -> None:
    """A third review found: with 'the total' read as asking for a figure, 'the total current
    and non-current operating leases' was answered with one cell (80; the sum is 100), 'the
    total goodwill' beside a 'total' row with two figures, and 'which item is the largest in
    the total fair value' with the total. 'The total X' asks for one figure only when it names
    one metric and no 'and' / 'or' or pick."""
    from ragspine.answer.options import AskOptions
    from ragspine.answer.types import AnswerStatus
    from ragspine.structured.convfinqa import filing_entity

    leases = {"current": {"operating leases": 20.0}, "non-current": {"operating leases": 80.0}}
    allocation = {"$ 28.1": {"goodwill": 258.9, "ipr&d": 190.0, "total": 448.9}}
    filings = [
        _filing("Single_ABC/2016/page_1.pdf", leases),
        _filing("Single_ABC/2016/page_2.pdf", allocation),
    ]
    ws, _ = _imported(tmp_path, filings, entities="filing")

    def ask(page: str, question: str) -> Any:
        entity = filing_entity(f"Single_ABC/2016/page_{page}.pdf")
        return ws.ask(question, AskOptions(entity=entity), principal=PUBLIC)

    both = ask("1", "What is the total current and non-current operating leases?")
    assert both.status is AnswerStatus.ANSWERED, both.text  # both rows, by the ellipsis
    assert Decimal(both.figures[-1].decimal_value or "nan") == 100, both.text
    beside = ask("2", "what is the total goodwill?")
    assert [f.decimal_value for f in beside.figures] in ([], ["258.9"]), beside.text
    largest = ask("2", "Which item is the largest in the total?")
    assert "448.9" not in largest.text


def _dev_filing(filing_id: str) -> dict[str, Any]:
    import json

    source = shared_data("convfinqa", "convfinqa_dev.json")
    filings = json.loads(source.read_text("utf-8"))["dev"]
    return next(f for f in filings if f["id"] == filing_id)


def test_a_year_schedule_under_a_unit_is_named_by_its_lead_in_sentence(tmp_path: Path) -> None:
    """Entergy's debt maturities: one column headed 'amount ( in thousands )' over rows
    '2014' .. '2018'. The table names no figure, so nothing was read; the sentence before it
    does ('the annual long-term debt maturities ( ... ) for debt outstanding as of december 31
    , 2013 , for the next five years are as follows'), and each year's row is now that figure
    in its year, the locator saying where the name came from. A sentence that starts with
    anything but the name (a heading run into it), a header that names a figure of its own, or
    a row that is no year leave the rows as before: unread and reported."""
    real = _dev_filing("Single_ETR/2013/page_118.pdf-1")
    heading = _filing(
        "Single_H/2010/page_1.pdf",
        {"( in thousands )": {"2011": 5.0, "2012": 6.0}},
    )
    heading["doc"]["pre_text"] = (  # type: ignore[index]
        "notes to consolidated financial statements 2014 ( continued ) future minimum lease "
        "payments are as follows : ."
    )
    listed = _filing(
        "Single_L/2010/page_1.pdf",
        {"amount": {"2011": 7.0, "thereafter": 8.0}},
    )
    listed["doc"]["pre_text"] = [  # type: ignore[index]
        "rent was $ 5 million .",
        "future minimum commitments as of december 31 , 2010 are as follows : .",
    ]
    ws, result = _imported(tmp_path, [real, heading, listed], entities="filing")
    read = {(f.source_doc_id, f.metric, f.period): (f.value, f.locator) for f in result.facts}
    value, locator = read[
        ("Single_ETR/2013/page_118.pdf-1", "annual_long_term_debt_maturities", "FY2017")
    ]
    assert value == Decimal("766801.0")
    assert "row '2017' (the table of 'annual long-term debt maturities')" in locator
    assert not any(doc == "Single_H/2010/page_1.pdf" for doc, _, _ in read)
    assert {(m, p) for doc, m, p in read if doc == "Single_L/2010/page_1.pdf"} == {
        ("future_minimum_commitments", "FY2011")
    }
    reasons = {(s.filing_id, s.row) for s in result.skipped}
    assert ("Single_L/2010/page_1.pdf", "thereafter") in reasons
    answer = _ask_filing(
        ws,
        "Single_ETR/2013/page_118.pdf-1",
        "what was the total of annual long-term debt maturities in 2017?",
    )
    assert answer.status is AnswerStatus.ANSWERED and "766,801" in answer.text


def test_a_year_schedule_is_not_named_by_its_lead_in_under_tickers(tmp_path: Path) -> None:
    """By ticker, the 2013 and 2015 schedules of one company would both give 'annual long-term
    debt maturities' for 2016 to 2018, as of different dates: one would replace the other as a
    restatement. Only a filing's own entity reads a schedule by its lead-in."""
    filings = [
        _dev_filing("Single_ETR/2013/page_118.pdf-1"),
        _dev_filing("Single_ETR/2015/page_131.pdf-1"),
    ]
    _, result = _imported(tmp_path, filings)
    assert not any(f.metric == "annual_long_term_debt_maturities" for f in result.facts)


def test_a_roll_forwards_closing_balance_is_named_by_its_lead_in(tmp_path: Path) -> None:
    """AES's unrecognized tax benefits: 'balance at january 1', the year's additions and
    reductions, 'balance at december 31', for 2014 to 2016. Only the sentence before the
    table names the figure ('a reconciliation of the beginning and ending amounts of
    unrecognized tax benefits'), so 'the total of unrecognized tax benefits in 2015' found
    nothing. The figures prove the roll-forward (each year's first row plus the rows between
    is its last, and each opening balance is the year before's closing one), so each year's
    closing balance is now also that figure. A table whose first row is only a part (its
    first row not the year before's last), or one whose lead-in names nothing, is not."""
    real = _dev_filing("Double_AES/2016/page_191.pdf")
    parts = {
        "2015": {"finished goods": 2.0, "raw materials": 3.0, "inventories": 5.0},
        "2016": {"finished goods": 4.0, "raw materials": 1.0, "inventories": 5.0},
    }
    lead_in = (
        "the following is a reconciliation of the beginning and ending amounts of loss reserves :"
    )
    no_roll = _filing("Single_P/2016/page_1.pdf", parts)
    no_roll["doc"]["pre_text"] = lead_in  # type: ignore[index]
    unnamed = _filing("Single_U/2016/page_1.pdf", CHAINED)
    unnamed["doc"]["pre_text"] = "the table below is in millions ."  # type: ignore[index]
    named = _filing("Single_N/2016/page_1.pdf", CHAINED)
    named["doc"]["pre_text"] = lead_in  # type: ignore[index]
    ws, result = _imported(tmp_path, [real, no_roll, unnamed, named], entities="filing")
    read = {(f.source_doc_id, f.metric, f.period): (f.value, f.locator) for f in result.facts}
    value, locator = read[("Double_AES/2016/page_191.pdf", "unrecognized_tax_benefits", "FY2015")]
    assert value == Decimal("373.0")
    assert "row 'balance at december 31' (the closing balance of 'unrecognized" in locator
    assert {
        (m, p) for doc, m, p in read if doc == "Single_N/2016/page_1.pdf" and m == "loss_reserves"
    }
    assert not any(m == "loss_reserves" for doc, m, _ in read if doc != "Single_N/2016/page_1.pdf")
    answer = _ask_filing(
        ws,
        "Double_AES/2016/page_191.pdf",
        "what was the total of unrecognized tax benefits in 2015?",
    )
    assert answer.status is AnswerStatus.ANSWERED and "373" in answer.text
    (tmp_path / "t").mkdir()
    _, by_ticker = _imported(tmp_path / "t", [real])
    assert not any(f.metric == "unrecognized_tax_benefits" for f in by_ticker.facts)


@pytest.mark.parametrize(
    "sentence",
    [
        # two figures: the allowance would be answered as the assets
        "the changes in our net deferred tax assets and the related valuation allowance are as "
        "follows : .",
        # the source's garbled apostrophe: 'company' is no figure's name
        "the following table summarizes the changes in the company 2019s unrecognized tax "
        "benefits : .",
        # the name runs on past 'allowance': 'allowance' alone is another figure
        "the following table summarizes the activity in our allowance for doubtful accounts : .",
        "changes in the liability for asset retirement obligations are as follows : .",
        "the following table shows the changes : .",  # one plain word
        # what moves is the options, not the plans that hold them
        "the following table summarizes stock option activity in our equity compensation "
        "plans for the years ended december 31 : .",
        "share activity in treasury stock was as follows : .",
    ],
)
def test_a_roll_forward_lead_in_that_names_no_one_figure_names_nothing(
    tmp_path: Path, sentence: str
) -> None:
    """A review found closing balances named by half a name: 'net deferred tax assets' for a
    valuation allowance's roll, 'company' (answering 'the company's total revenue'), 'allowance'
    and 'liability'. A name must end where the sentence says no more of it."""
    filing = _filing("Single_N/2016/page_1.pdf", CHAINED)
    filing["doc"]["pre_text"] = sentence  # type: ignore[index]
    _, result = _imported(tmp_path, [filing], entities="filing")
    assert not any("(the closing balance of" in f.locator for f in result.facts)


@pytest.mark.parametrize(
    "sentence",
    [
        "long-term debt by maturity is as follows : .",  # only each year's slice
        "the tax credit carryforwards by year of expiration are as follows : .",
        "maturities are as follows : .",  # one plain word
        # the phrase says which payments: 'minimum payments under operating leases' are others
        "minimum payments under purchase obligations are as follows : .",
        "expected benefit payments for the postretirement plan are as follows : .",
        "the following table sets forth our contractual obligations : .",  # no lead-in
    ],
)
def test_a_schedule_lead_in_that_narrows_or_names_no_figure_names_nothing(
    tmp_path: Path, sentence: str
) -> None:
    """A review found 'long-term debt by maturity is as follows' naming the 2017 row
    'long-term debt' in 2017 (only the slice maturing in 2017): a phrase that may narrow the
    figure makes the sentence name nothing."""
    filing = _filing(
        "Single_M/2015/page_1.pdf", {"amount ( in millions )": {"2016": 50.0, "2017": 75.0}}
    )
    filing["doc"]["pre_text"] = sentence  # type: ignore[index]
    _, result = _imported(tmp_path, [filing], entities="filing")
    assert not result.facts


def test_a_closing_balance_does_not_answer_for_the_start_of_its_year(tmp_path: Path) -> None:
    """A review found 'the unrecognized tax benefits at the beginning of 2016' answered with
    2016's closing balance (369; the opening one is 373), and 'the dac balance at january 1 ,
    2011' with December 31's. A question asking for the start of a period in words its metric's
    name does not hold is asked back; a row named as the opening balance still answers."""
    real = _dev_filing("Single_AES/2016/page_191.pdf-2")
    ws, _ = _imported(tmp_path, [real], entities="filing")
    entity = ws.glossary.entities.resolve("Single_AES/2016/page_191.pdf-2")

    def ask(question: str) -> Any:
        return ws.ask(question, AskOptions(entity=entity), principal=PUBLIC)

    for question in (
        "what were the unrecognized tax benefits at the beginning of 2016?",
        "what were the unrecognized tax benefits at january 1 , 2016?",
        "what was the opening amount of unrecognized tax benefits in 2016?",
    ):
        answer = ask(question)
        assert answer.status is AnswerStatus.NEEDS_CLARIFICATION, question
        assert "369" not in answer.text, question
    closing = ask("what were the unrecognized tax benefits in 2016?")
    assert closing.status is AnswerStatus.ANSWERED and "369" in closing.text
    opening = ask("what was the balance at january 1 in 2016?")
    assert opening.status is AnswerStatus.ANSWERED and "373" in opening.text


@pytest.mark.parametrize(
    ("sentence", "name"),
    [
        ("a summary of activity in the allowance account is as follows : .", "allowance_account"),
        (
            "the following is a reconciliation of changes in the carrying amount of goodwill : .",
            "carrying_amount_of_goodwill",
        ),
    ],
)
def test_a_roll_forward_lead_in_after_of_names_its_figure(
    tmp_path: Path, sentence: str, name: str
) -> None:
    filing = _filing("Single_N/2016/page_1.pdf", CHAINED)
    filing["doc"]["pre_text"] = sentence  # type: ignore[index]
    _, result = _imported(tmp_path, [filing], entities="filing")
    assert {(f.metric, f.period, f.value) for f in result.facts if f.metric == name} == {
        (name, "FY2015", Decimal("5.0")),
        (name, "FY2016", Decimal("6.0")),
    }


def test_filings_whose_ids_become_one_entity_are_reported_not_merged(tmp_path: Path) -> None:
    """Two filing ids that differ only in punctuation become one entity by filing: the second
    is reported, and the first keeps its figures (before, their facts merged)."""
    table = {"2019": {"revenue": 10.0}, "2018": {"revenue": 1.0}}
    other = {"2019": {"revenue": 20.0}, "2018": {"revenue": 2.0}}
    ws, result = _imported(
        tmp_path,
        [
            _filing("Single_ABC/2019/page_1.pdf-1", table),
            _filing("Single_ABC/2019/page_1_pdf-1", other),
        ],
        entities="filing",
    )
    assert [s.filing_id for s in result.skipped if "rename" in s.reason] == [
        "Single_ABC/2019/page_1_pdf-1"
    ]
    answer = _ask_filing(ws, "Single_ABC/2019/page_1.pdf-1", "What was the revenue in 2019?")
    assert "was 10.0" in answer.text


def test_a_filing_states_its_tables_scale_or_it_is_unknown() -> None:
    """Every ConvFinQA fact was stored at scale one: `IP's revenue in FY2006 was 2,455.0` for
    a table the sentence before it says is in millions. The scale is now read from a column
    header or from the sentence right before the table when exactly one is stated there; a
    rate, a per-share row and (where the statement excepts shares) a number of shares stay as
    written; with no statement the scale is unknown, never one."""
    from ragspine.structured.facts import Scale

    def filing(filing_id: str, pre: str, table: dict[str, dict[str, float]]) -> dict[str, Any]:
        made: dict[str, Any] = _filing(filing_id, table)
        # prose further up saying "million" states no scale of the table
        made["doc"]["pre_text"] = ["Revenue grew 5 % in 2006 to $ 20 million .", pre]
        return made

    filings = [
        filing(
            "Double_IP/2006/page_32.pdf",
            "consumer packaging in millions 2006 2005 2004 .",
            {"2006": {"sales": 2455.0, "operating margin": 5.3}, "2005": {"sales": 2445.0}},
        ),
        filing(
            "Double_ADBE/2018/page_86.pdf",
            "changes are summarized as follows ( in thousands , except share amounts ) : .",
            {"2018": {"beginning balance": 172945.0, "shares outstanding": 491.0}},
        ),
        filing(
            "Double_ETR/2013/page_118.pdf",
            "the annual long-term debt maturities are as follows : .",
            {"amount ( in thousands )": {"2014": 385373.0}},
        ),
        filing(
            "Double_ADI/2011/page_81.pdf",
            "the components of the investments were as follows : .",
            {"2011": {"investments": 1.0, "earnings per share": 2.0}},
        ),
    ]
    from ragspine.glossary import Glossary
    from ragspine.structured.convfinqa import import_convfinqa

    result = import_convfinqa(
        filings, Glossary.from_terms([]), source_name="c.json", entities="filing"
    )
    scales = {(f.source_doc_id.split("/")[0], f.metric): f.scale for f in result.facts}
    assert scales[("Double_IP", "sales")] is Scale.MILLION
    assert scales[("Double_IP", "operating_margin")] is Scale.ONE
    assert scales[("Double_ADBE", "beginning_balance")] is Scale.THOUSAND
    assert scales[("Double_ADBE", "shares_outstanding")] is Scale.ONE
    etr = [f for f in result.facts if f.source_doc_id.startswith("Double_ETR")]
    assert [f.scale for f in etr] == [Scale.THOUSAND]
    assert scales[("Double_ADI", "investments")] is Scale.UNKNOWN
    assert scales[("Double_ADI", "earnings_per_share")] is Scale.ONE


def test_review_cases_of_convfinqa_scales() -> None:
    """Found by review of the rule above: a header's `( in millions except percentages )` on
    one garbled column was applied to a column of percentages; a `date completed` column beside
    `sales proceeds ( in millions )` stored the year 2003 as 2,003 million; market inputs
    (`correlation`, `credit spreads ( bps )`, `recovery rates`) and a glued `amountper share`
    were in millions; and `2013.0`, the cleaned source's en dash, was stored as a value."""
    from ragspine.glossary import Glossary
    from ragspine.structured.convfinqa import import_convfinqa
    from ragspine.structured.facts import Scale

    def filing(filing_id: str, pre: str, table: dict[str, dict[str, float]]) -> dict[str, Any]:
        made: dict[str, Any] = _filing(filing_id, table)
        made["doc"]["pre_text"] = [pre]
        return made

    filings = [
        filing(
            "Single_AES/2003/page_52.pdf-1",
            "the following sales were completed in 2003 ( in millions ) : .",
            {
                "date completed": {"kelvin": 2003.0, "songas": 2003.0},
                "sales proceeds ( in millions )": {"kelvin": 29.0, "songas": 94.0},
                "other": {"kelvin": 5.0},
            },
        ),
        filing(
            "Single_GS/2017/page_143.pdf-1",
            "the ranges of significant unobservable inputs are as follows : $ in millions .",
            {
                "2017": {
                    "correlation": -36.0,
                    "credit spreads ( bps )": 30.0,
                    "recovery rates": 22.0,
                    "fair value decrease in interest rates": 12.0,
                    "total level 3 assets": 5000.0,
                    "inventory step-up": 2013.0,
                }
            },
        ),
        filing(
            "Single_HUM/2017/page_133.pdf-4",
            "dividends declared ( in millions , except per share amounts and shares ) : .",
            {
                "2017": {
                    "amountper share": 1.49,
                    "total cost of shares purchased": 500.0,
                    "shares purchased": 2.5,
                }
            },
        ),
    ]
    result = import_convfinqa(
        filings, Glossary.from_terms([]), source_name="c.json", entities="filing"
    )
    scales = {(f.source_doc_id.split("/")[0], f.metric): f.scale for f in result.facts}
    values = {f.value for f in result.facts}
    assert Decimal("2003.0") not in values and Decimal("2013.0") not in values
    assert scales[("Single_AES", "kelvin_sales_proceeds_in_millions")] is Scale.MILLION
    assert scales[("Single_AES", "kelvin_other")] is Scale.UNKNOWN  # its own header says none
    for metric in ("correlation", "credit_spreads_bps", "recovery_rates"):
        assert scales[("Single_GS", metric)] is Scale.ONE, metric
    assert scales[("Single_GS", "fair_value_decrease_in_interest_rates")] is Scale.MILLION
    assert scales[("Single_GS", "total_level_3_assets")] is Scale.MILLION
    assert scales[("Single_HUM", "amountper_share")] is Scale.ONE
    assert scales[("Single_HUM", "total_cost_of_shares_purchased")] is Scale.MILLION
    assert scales[("Single_HUM", "shares_purchased")] is Scale.ONE
    reasons = result.skip_reasons()
    assert reasons["2013.0 stands for a dash (missing value)"] == 1
    assert reasons["column holds dates, not amounts"] == 2


_RENT = (
    "rent expense incurred under all operating leases during the years ended december 31 , "
    "2007 , 2006 and 2005 was $ 106.4 million , $ 81.5 million and $ 61.1 million , "
    "respectively . the company leases office space in jacksonville ."
)


def _with_text(filing_id: str, pre: object, post: object) -> dict[str, object]:
    filing = _filing(filing_id, {"2007": {"revenue": 500.0}, "2006": {"revenue": 450.0}})
    filing["doc"] = {**filing["doc"], "pre_text": pre, "post_text": post}  # type: ignore[dict-item]
    return filing


@pytest.mark.parametrize("entities", ["ticker", "filing"])
def test_each_filings_text_becomes_a_document_of_its_entity(tmp_path: Path, entities: str) -> None:
    """The text before and after a filing's table is a document of the ``convfinqa`` library,
    readable (``$106.4 million,``), every number as written, with the entity of the filing's
    facts in its metadata: a question about the entity finds it, one about another does not."""
    filings = [
        _with_text("Single_FIS/2007/page_94.pdf-3", _RENT, ["the table shows revenue ."]),
        _with_text("Single_ABC/2007/page_3.pdf-1", "margins fell on higher costs .", ""),
    ]
    ws, result = _imported(tmp_path, filings, entities)
    fis = next(f.entity for f in result.facts if f.source_doc_id.startswith("Single_FIS"))
    texts = {t.document: t for t in result.texts}
    assert texts["Single_FIS/2007/page_94.pdf-3"].entity == fis
    first = texts["Single_FIS/2007/page_94.pdf-3"].paragraphs[0]
    assert "$106.4 million, $81.5 million and $61.1 million, respectively." in first
    assert texts["Single_ABC/2007/page_3.pdf-1"].paragraphs == ("Margins fell on higher costs.",)
    docs = ws.chunks.documents("convfinqa", sorted(texts))
    assert set(docs) == set(texts)
    answer = ws.ask(
        "What did the company say about rent expense under operating leases?",
        AskOptions(entity=fis),
        principal=PUBLIC,
    )
    assert answer.route == "narrative" and answer.status is AnswerStatus.ANSWERED
    assert "$106.4 million" in answer.text
    assert all(s.doc_id == "Single_FIS/2007/page_94.pdf-3" for s in answer.sources)
    other = next(t.entity for t in result.texts if t.entity != fis)
    elsewhere = ws.ask(
        "What did the company say about rent expense under operating leases?",
        AskOptions(entity=other),
        principal=PUBLIC,
    )
    assert "106.4" not in elsewhere.text


def test_the_text_is_imported_once_and_can_be_left_out(tmp_path: Path) -> None:
    import json

    source = tmp_path / "c.json"
    source.write_text(json.dumps([_with_text("Single_FIS/2007/page_94.pdf-3", _RENT, "")]))
    ws = Workspace.init(tmp_path / "ws")
    _, _, report = ws.ingest_convfinqa(source, library="filings")
    assert report is not None and [o.status for o in report.outcomes] == ["added"]
    _, _, again = ws.ingest_convfinqa(source, library="filings")
    assert again is not None and [o.status for o in again.outcomes] == ["unchanged"]
    bare = Workspace.init(tmp_path / "bare")
    result, summary, none = bare.ingest_convfinqa(source, library=None)
    assert none is None and summary.added == 2 and len(result.texts) == 1
    assert [lib.library_id for lib in bare.libraries()] == []


@pytest.mark.parametrize(
    ("doc", "paragraphs"),
    [
        ({"pre_text": ["net sales rose .", "costs fell ."], "post_text": " . "}, 1),
        ({"pre_text": "", "post_text": ""}, 0),
        ("not a mapping", 0),
        ({"table": {}}, 0),
    ],
)
def test_a_filings_text_in_any_shape(doc: object, paragraphs: int) -> None:
    from ragspine.structured.convfinqa import filing_paragraphs

    found = filing_paragraphs({"id": "x", "doc": doc})
    assert len(found) == paragraphs
    if paragraphs:
        assert found == ("Net sales rose. Costs fell.",)


def test_a_bad_library_name_fails_before_any_fact_is_written(tmp_path: Path) -> None:
    """Found by a second read: with an invalid library name the facts landed and the text
    failed (half an ingest). The name is checked first; nothing is written."""
    import json

    from ragspine.errors import ConfigError

    source = tmp_path / "c.json"
    source.write_text(json.dumps([_with_text("Single_FIS/2007/page_94.pdf-3", _RENT, "")]))
    ws = Workspace.init(tmp_path / "ws")
    with pytest.raises(ConfigError, match="invalid library name"):
        ws.ingest_convfinqa(source, library="bad name/../x")
    assert list(ws.facts.scan(max_level=9)) == []
    assert not (tmp_path / "ws" / "glossary.d" / "convfinqa.toml").exists()
