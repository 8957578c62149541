"""Contract 1: no number without a fact. Each check is shown to catch a broken implementation."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from ragspine import Principal, Workspace
from ragspine.security import Sensitivity
from ragspine.stores.facts import FactStore, StoredFact
from ragspine.structured import query as query_module
from ragspine.structured.facts import Fact, FactKey, Scale
from ragspine.structured.query import MetricResult, MetricStatus

INTERNAL = Principal.of("internal")
REF = date(2025, 2, 1)
STORED = {
    ("revenue", "acme", "FY2024", "total"): "1234567.891",
    ("revenue", "acme", "FY2024", "online"): "0.30000000000000004",
    ("gross_margin", "acme", "FY2024-Q3", "total"): "41.5",
    ("net_income", "acme_cn", "FY2024", "total"): "-27.1",
}

UNITS = {"gross_margin": ("%", "", Scale.ONE)}


@pytest.fixture()
def ws(tmp_path: Path) -> Workspace:
    workspace = Workspace.init(tmp_path / "ws")
    workspace.facts.write(
        Fact(
            m,
            e,
            p,
            c,
            Decimal(v),
            *UNITS.get(m, ("USD", "USD", Scale.THOUSAND)),
            f"doc-{m}",
            f"{m}.csv row 2",
            Sensitivity.INTERNAL,
            "2024-12-31",
            "t",
        )
        for (m, e, p, c), v in STORED.items()
    )
    workspace.facts.write(
        [
            Fact(
                "revenue",
                "acme_cn",
                "FY2024",
                "total",
                Decimal("999"),
                "USD",
                "USD",
                Scale.ONE,
                "secret-doc",
                "board.pdf p1",
                Sensitivity.CONFIDENTIAL,
                "",
                "t",
            ),
        ]
    )
    return workspace


QUESTIONS = [
    ("revenue", "ACME", "FY24", None),
    ("sales", "acme corp", "2024", "web"),
    ("gross margin", "acme", "Q3 2024", None),
    ("net profit", "ACME CN", "last year", None),
    ("revenue", "acme", "FY2019", None),
    ("revenue", "acme", "last quarter", "retail"),
    ("headcount", "acme", "2024-03", None),
    ("revenue", "acme cn", "FY2024", None),  # exists but confidential
]


def digits(text: str) -> list[str]:
    return re.findall(r"\d", text)


def check_no_number_without_fact(results: list[MetricResult]) -> None:
    """Every found value is a stored value; every other answer carries no number."""
    for result in results:
        if result.status is MetricStatus.FOUND:
            key = (result.metric, result.entity, result.period, result.channel)
            assert key in STORED, f"found a value for a key never stored: {key}"
            assert result.value == Decimal(STORED[key])
            assert query_module.format_value(Decimal(STORED[key])) in result.text
        else:
            assert result.value is None and result.unit is None
            check_refusal_digits(result)


def check_refusal_digits(result: MetricResult) -> None:
    if result.status is MetricStatus.NOT_FOUND:
        assert result.period is not None
        assert sorted(digits(result.text)) == sorted(digits(result.period)), result.text


def ask_all(ws: Workspace, principal: Principal = INTERNAL) -> list[MetricResult]:
    return [ws.query_metric(*q, principal=principal, reference_date=REF) for q in QUESTIONS]


def test_contract_holds_for_the_real_store(ws: Workspace) -> None:
    results = ask_all(ws)
    statuses = [r.status.value for r in results]
    assert statuses == [
        "found",
        "found",
        "found",
        "found",
        "not_found",
        "not_found",
        "not_found",
        "not_found",
    ]
    check_no_number_without_fact(results)


class InventingStore:
    """A broken store that makes up a value when a key is missing."""

    def __init__(self, inner: FactStore) -> None:
        self.inner = inner

    def lookup(self, key: FactKey, *, max_level: int) -> StoredFact | None:
        stored = self.inner.lookup(key, max_level=max_level)
        return stored or StoredFact(
            Decimal("42"), "USD", "USD", Scale.ONE, "guess", "nowhere", Sensitivity.PUBLIC, ""
        )


def test_contract_check_catches_an_inventing_store(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = InventingStore(ws.facts)
    monkeypatch.setattr(Workspace, "facts", property(lambda self: broken))
    with pytest.raises(AssertionError, match="never stored"):
        check_no_number_without_fact(ask_all(ws))


def test_refusal_digit_check_catches_a_leaky_refusal(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        query_module, "not_found_text", lambda label: f"No fact for {label}; last known was 1,234."
    )
    with pytest.raises(AssertionError):
        check_no_number_without_fact(ask_all(ws))


def test_found_answer_is_rebuilt_from_the_fact(ws: Workspace) -> None:
    res = ws.query_metric("revenue", "ACME", "FY24", principal=INTERNAL)
    assert res.status is MetricStatus.FOUND
    assert res.text == (
        "ACME Corp's Revenue in FY2024 was 1,234,567.891 thousand US dollars. "
        "Source: doc-revenue, revenue.csv row 2."
    )
    assert (res.source_doc_id, res.locator, res.valid_as_of) == (
        "doc-revenue",
        "revenue.csv row 2",
        "2024-12-31",
    )
    pct = ws.query_metric("gross margin", "acme", "2024Q3", principal=INTERNAL)
    assert "in FY2024-Q3 was 41.5 percent. Source:" in pct.text
    assert "e" not in format(Decimal("1E+3"), ",f")


def test_invisible_fact_is_reported_exactly_like_a_missing_one(ws: Workspace) -> None:
    hidden = ws.query_metric("revenue", "acme cn", "FY2024", principal=INTERNAL)
    missing = ws.query_metric("revenue", "acme cn", "FY2022", principal=INTERNAL)
    assert hidden.status is missing.status is MetricStatus.NOT_FOUND
    assert replace(hidden, period="x", text="") == replace(missing, period="x", text="")
    assert hidden.text == missing.text.replace("FY2022", "FY2024")
    cleared = ws.query_metric(
        "revenue", "acme cn", "FY2024", principal=Principal.of("confidential")
    )
    assert cleared.status is MetricStatus.FOUND and cleared.value == Decimal("999")


@pytest.mark.parametrize(
    ("args", "param", "raw", "suggestion"),
    [
        (("revnue", "acme", "FY2024", None), "metric", "revnue", "revenue"),
        (("revenue", "acmee", "FY2024", None), "entity", "acmee", "acme"),
        (("revenue", "acme", "FY2024", "onlin"), "channel", "onlin", "online"),
        (("revenue", "acme", "FY20244", None), "period", "FY20244", "FY2024"),
    ],
)
def test_unrecognized_param_names_input_and_suggests(
    ws: Workspace, args: tuple[str, str, str, str | None], param: str, raw: str, suggestion: str
) -> None:
    res = ws.query_metric(*args, principal=INTERNAL)
    assert res.status is MetricStatus.UNRECOGNIZED_PARAM
    assert (res.param, res.raw) == (param, raw)
    assert suggestion in res.suggestions and len(res.suggestions) <= 3
    assert res.value is None and raw in res.text


def test_to_dict_has_decimal_string(ws: Workspace) -> None:
    data = ws.query_metric("revenue", "acme", "FY2024", principal=INTERNAL).to_dict()
    assert data["value"] == "1234567.891"
    for key in (
        "status",
        "unit",
        "currency",
        "scale",
        "metric",
        "entity",
        "period",
        "channel",
        "source_doc_id",
        "locator",
        "text",
    ):
        assert key in data


def fullwidth(text: str) -> str:
    """``text`` with ASCII letters and digits typed as their full-width forms."""
    return "".join(chr(ord(ch) + 0xFEE0) if ch.isalnum() else ch for ch in text)


@pytest.mark.parametrize(
    "args",
    [
        (fullwidth("REVENUE"), fullwidth("ACME"), fullwidth("FY2024"), None),
        ("net\u00a0sales", "acme\u00a0corp", "FY\u00a02024", "total"),
        ("Revenue", "ACME", "Q\uff14 2024", "TOTAL"),
        ("rev\u200benue", "acme", "fy 2024", None),
    ],
)
def test_unicode_spellings_find_the_same_fact(
    ws: Workspace, args: tuple[str, str, str, str | None]
) -> None:
    res = ws.query_metric(*args, principal=INTERNAL, reference_date=REF)
    assert res.status is not MetricStatus.UNRECOGNIZED_PARAM, res.text
    assert (res.metric, res.entity) == ("revenue", "acme")


@pytest.mark.parametrize(
    ("args", "closest"),
    [
        (("revenue", "acme", "lst quarter", None), "last quarter"),
        (("revenue", "acme", "2024/03", None), "2024-03"),
        (("revenue", "acme", "Q3 2O24", None), "FY2024-Q3"),
        (("revenue", "acme", "H3 2024", None), "FY2024-H1"),
        (("revenu", "acme", "FY2024", None), "revenue"),
        (("revenue", "acme cm", "FY2024", None), "acme_cn"),
        (("revenue", "acme", "FY2024", "onlne"), "online"),
    ],
)
def test_suggestions_put_the_closest_value_first(
    ws: Workspace, args: tuple[str, str, str, str | None], closest: str
) -> None:
    res = ws.query_metric(*args, principal=INTERNAL, reference_date=REF)
    assert res.status is MetricStatus.UNRECOGNIZED_PARAM
    assert res.suggestions[0] == closest
    assert closest in res.text


def test_a_period_nothing_like_a_period_gets_no_suggestion_but_the_forms(ws: Workspace) -> None:
    res = ws.query_metric("revenue", "acme", "banana", principal=INTERNAL, reference_date=REF)
    assert res.suggestions == ()
    assert "Periods look like FY2024, 2024Q3" in res.text


def test_suggestions_do_not_depend_on_stored_facts_or_the_asker(
    ws: Workspace, tmp_path: Path
) -> None:
    """No oracle: the same malformed input gets the same suggestions from an empty workspace."""
    empty = Workspace.init(tmp_path / "empty")
    malformed = [
        ("revenue", "acme", "FY2O24", None),
        ("revenue", "acme", "Q5 2024", None),
        ("revenue", "acme cm", "FY2024", None),
        ("revnue", "acme", "FY2024", None),
    ]
    for args in malformed:
        seen = {
            workspace.query_metric(*args, principal=principal, reference_date=REF).suggestions
            for workspace in (ws, empty)
            for principal in (INTERNAL, Principal.of("public"), Principal.of("confidential"))
        }
        assert len(seen) == 1, (args, seen)


@pytest.mark.parametrize("param", ["metric", "entity", "period", "channel"])
def test_a_huge_input_is_echoed_in_at_most_80_characters(ws: Workspace, param: str) -> None:
    huge = "z" * 100_000
    args = {"metric": "revenue", "entity": "acme", "period": "FY2024", "channel": None}
    args[param] = huge
    res = ws.query_metric(**args, principal=INTERNAL, reference_date=REF)  # type: ignore[arg-type]
    assert (res.status, res.param) == (MetricStatus.UNRECOGNIZED_PARAM, param)
    assert "z" * 80 + "…' (100000 characters)" in res.text and "z" * 81 not in res.text
    assert len(res.text) < 300
    assert res.raw == "z" * query_module.MAX_RAW_CHARS + "…"
    assert res.suggestions == ()
