"""Deterministic filter extraction from the question."""

from __future__ import annotations

from ragspine.narrative.filters.expr import Condition, Group, GroupMode, Op
from ragspine.narrative.filters.extraction import extract_filter

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


def test_questions_and_aliases_are_normalized_like_glossary_terms() -> None:
    vocab = {"city": {"Zu\u0308rich": "ZRH"}, "region": {"Asia Pacific": "APAC"}}
    full_width_asia = "\uff21\uff53\uff49\uff41"
    question = f"Sales in Z\u00fcrich and {full_width_asia}\u00a0pacific, or Z\u00fc\u200brich"
    found = extract_filter(question, vocab)
    assert found.filter == Group(
        GroupMode.AND, (Condition("city", Op.EQ, "ZRH"), Condition("region", Op.EQ, "APAC"))
    )
    assert [alias for _, alias, _ in found.matches] == ["zürich", "asia pacific", "zürich"]
