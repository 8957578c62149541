"""Deterministic filter extraction from the question."""

from __future__ import annotations

from ragspine.narrative.filter_extraction import extract_filter
from ragspine.narrative.filters import Condition, Group, GroupMode, Op

VOCAB = {
    "region": {"EMEA": "EMEA", "Europe": "EMEA", "Asia Pacific": "APAC", "Asia": "APAC"},
    "segment": {"retail": "Retail"},
}


def test_aliases_on_word_boundaries_become_conditions() -> None:
    found = extract_filter("How did retail revenue in asia  pacific and Europe develop?", VOCAB)
    assert found.filter == Group(
        GroupMode.AND,
        (Condition("region", Op.IN, ("APAC", "EMEA")), Condition("segment", Op.EQ, "Retail")),
    )
    assert found.matches == (
        ("segment", "retail", "Retail"),
        ("region", "asia pacific", "APAC"),
        ("region", "europe", "EMEA"),
    )
    assert "region in" in found.describe()


def test_no_guessing_and_no_partial_words() -> None:
    assert extract_filter("Euro area and retailers in Asian markets", VOCAB).filter is None
    assert extract_filter("nothing here", VOCAB).describe() == "no filter found in the question"


def test_extra_extractors_add_conditions() -> None:
    def fiscal_year(question: str) -> list[Condition]:
        return [Condition("year", Op.EQ, 2024)] if "FY2024" in question else []

    found = extract_filter("EMEA in FY2024", VOCAB, extractors=[fiscal_year])
    assert found.filter is not None
    assert found.filter.matches({"region": "EMEA", "year": 2024})
    assert not found.filter.matches({"region": "EMEA", "year": 2023})
