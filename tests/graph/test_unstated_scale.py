"""A scale no source states (``Scale.UNKNOWN``): said in every answer, never converted, and
combined only with figures of the same source document.

A table that says nothing of thousands or millions was stored at scale ``one``: answers and
JSON then claimed units, and two such tables (one in thousands, one in millions, neither
saying so) were summed and compared as if alike.
"""

from __future__ import annotations

import json
from dataclasses import replace
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest

from conftest import ask_table, tatqa_workspace
from graph.builders import GLOSSARY, PUBLIC, fact, make_workspace
from ragspine.answer.options import AskOptions
from ragspine.answer.types import AnswerStatus
from ragspine.errors import QueryError
from ragspine.graph.compare import SetStatus
from ragspine.graph.derive import DeriveStatus
from ragspine.structured.facts import Scale

UNSTATED = "(scale not stated in the source)"


def _unstated(metric: str, entity: str, value: str, source: str = "", **kw: object) -> object:
    made = fact(metric, entity, value, scale=Scale.UNKNOWN, **kw)  # type: ignore[arg-type]
    return replace(made, source_doc_id=source) if source else made


def test_a_table_without_a_scale_is_answered_as_written_and_says_so(tmp_path: Path) -> None:
    ws = tatqa_workspace(
        tmp_path,
        {
            "t-plain": [["", "2019", "2018"], ["Revenue", "1,452.4", "1,146.2"]],
            "t-millions": [["($ in millions)", "2019", "2018"], ["Revenue", "10", "9"]],
        },
    )
    answer = ask_table(ws, "t-plain", "What was the revenue in 2019?")
    assert answer.status is AnswerStatus.ANSWERED
    (figure,) = answer.figures
    assert figure.result is not None and figure.result.scale is Scale.UNKNOWN
    assert f"1,452.4 {UNSTATED}" in answer.text
    assert json.loads(json.dumps(answer.to_dict()))["figures"][0]["scale"] == "unknown"
    change = ask_table(ws, "t-plain", "What was the change in revenue from 2018 to 2019?")
    assert change.status is AnswerStatus.ANSWERED  # one table's scale: the change is its own
    assert f"= 306.2 {UNSTATED}" in change.text
    stated = ask_table(ws, "t-millions", "What was the revenue in 2019?")
    assert "10 million" in stated.text and UNSTATED not in stated.text


def test_unstated_scales_of_two_sources_are_never_combined(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path / "ws",
        [
            _unstated("revenue", "de", "1"),  # report-de
            _unstated("revenue", "fr", "1"),  # report-fr: perhaps thousands, perhaps not
            fact("revenue", "it", "5", scale=Scale.MILLION),
        ],
    )
    compared = ws.graph.compare(
        "revenue", entities=["de", "fr"], periods=["FY2024"], principal=PUBLIC
    )
    assert compared.status is SetStatus.NOT_COMPUTABLE and compared.total is None
    assert "not stated in their source" in compared.note
    assert all(step.difference is None for step in compared.steps)
    mixed = ws.graph.compare("revenue", entities=["de", "it"], periods=["FY2024"], principal=PUBLIC)
    assert mixed.status is SetStatus.NOT_COMPUTABLE and mixed.total is None
    with pytest.raises(QueryError, match="scale of de \\(report-de\\), fr \\(report-fr\\) is not"):
        ws.graph.roll_up("revenue", entity="eu", period="FY2024", principal=PUBLIC)


def test_one_sources_unstated_scale_combines_with_itself(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path / "ws",
        [
            _unstated("revenue", "us", "300", period="FY2023"),
            _unstated("revenue", "us", "400"),
            _unstated("cogs", "us", "100"),
            _unstated("headcount", "us", "8", source="hr-survey", unit="people", currency=""),
        ],
    )
    compared = ws.graph.compare(
        "revenue", entities=["us"], periods=["FY2023", "FY2024"], principal=PUBLIC
    )
    assert compared.status is SetStatus.COMPLETE and compared.scale is Scale.UNKNOWN
    assert compared.total == Decimal("700") and UNSTATED in compared.text
    derived = ws.graph.derive("gross_profit", entity="us", period="FY2024", principal=PUBLIC)
    assert derived.status is DeriveStatus.FOUND and derived.scale is Scale.UNKNOWN
    assert derived.value is not None and derived.value.value == 300
    assert UNSTATED in derived.text
    # a ratio of one source's figures: the unstated scale cancels out
    options = AskOptions(entity="us")
    ratio = ws.ask("What is the ratio of revenue to cogs in 2024?", options, principal=PUBLIC)
    assert ratio.status is AnswerStatus.ANSWERED
    assert [f.value.value for f in ratio.figures if f.value is not None] == [Fraction(4)]
    # revenue per head divides figures of two sources, each at a scale nobody stated
    with pytest.raises(QueryError, match="is not stated in its source"):
        ws.graph.derive("revenue_per_head", entity="us", period="FY2024", principal=PUBLIC)
    apart = ws.ask("What is the sum of revenue and headcount in 2024?", options, principal=PUBLIC)
    assert apart.status is AnswerStatus.REFUSED and not any(
        f.value is not None for f in apart.figures
    )


def test_review_cases_never_combine_or_claim_a_scale(tmp_path: Path) -> None:
    """Found by review: 'which year was highest' ordered a figure in millions against one at
    a scale nobody stated; a product of two unstated scales was shown at scale one (s * s does
    not cancel); a stored figure of another source was subtracted from a derived one; a
    section heading saying 'per share' put the net income under it at scale one."""
    extra = '\n[metrics.revenue_times_cogs]\nlabel = "Revenue times COGS"\nunit = "USD"\n'
    extra += 'kind = "currency"\nderivation = "revenue * cogs"\n'
    ws = make_workspace(
        tmp_path / "ws",
        [
            fact("revenue", "us", "5", period="FY2023", scale=Scale.MILLION),
            _unstated("revenue", "us", "3000", source="report-b"),
            _unstated("revenue", "de", "400"),
            _unstated("cogs", "de", "100"),
            _unstated("gross_profit", "de", "0.3", source="other-doc"),
        ],
        glossary=GLOSSARY + extra,
    )
    highest = ws.ask(
        "In which year was revenue highest?", AskOptions(entity="us"), principal=PUBLIC
    )
    assert highest.status is AnswerStatus.REFUSED
    assert "not stated in their source" in highest.text
    assert not any(f.periods for f in highest.figures)
    with pytest.raises(QueryError, match="not stated in their source"):
        ws.graph.derive("revenue_times_cogs", entity="de", period="FY2024", principal=PUBLIC)
    derived = ws.graph.derive("gross_profit", entity="de", period="FY2024", principal=PUBLIC)
    assert derived.value is not None and derived.value.value == 300
    assert derived.stored is not None and derived.difference is None
    table = [
        ["", "2019", "2018"],
        ["Earnings per share computation:", "", ""],
        ["Net income", "45,210", "40,100"],
        ["Basic EPS", "4.52", "4.01"],
    ]
    (tmp_path / "tat").mkdir()
    tat = tatqa_workspace(tmp_path / "tat", {"t-eps": table})
    answer = ask_table(tat, "t-eps", "What was the net income in 2019?")
    assert f"45,210 {UNSTATED}" in answer.text
