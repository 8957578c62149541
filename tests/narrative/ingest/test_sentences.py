"""Sentence splitting keeps numbers, abbreviations and list numbers intact."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragspine.narrative.ingest.sentences import split_sentences


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Revenue grew 3.5% to $1,234.5 million. Costs fell 0.25 points.",
            ["Revenue grew 3.5% to $1,234.5 million.", "Costs fell 0.25 points."],
        ),
        (
            "Sales in the U.S. rose sharply. Apple Inc. reported gains, e.g. in services.",
            ["Sales in the U.S. rose sharply.", "Apple Inc. reported gains, e.g. in services."],
        ),
        (
            "We sell paper, ink, etc. and toner. Dr. J. Smith agreed.",
            ["We sell paper, ink, etc. and toner.", "Dr. J. Smith agreed."],
        ),
        (
            "1. First item here.\n2. Second item.\n3. Third",
            ["1. First item here.", "2. Second item.", "3. Third"],
        ),
        ("Margins were 12.5%. In 2023. Growth!", ["Margins were 12.5%.", "In 2023.", "Growth!"]),
        (
            "收入增长了。利润下降\uff01好吗\uff1f",
            ["收入增长了。", "利润下降\uff01", "好吗\uff1f"],
        ),
        ('He said "Stop." Then he left?  Yes.', ['He said "Stop."', "Then he left?", "Yes."]),
    ],
)
def test_split_sentences(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_list_number_mid_text_still_splits_after_a_year() -> None:
    assert split_sentences("Profit rose in 2023. 2024 looks better.") == [
        "Profit rose in 2023.",
        "2024 looks better.",
    ]


@given(st.text(alphabet=st.sampled_from(list("ab .!?3,\n")), max_size=60))
def test_splitting_loses_no_words(text: str) -> None:
    assert " ".join(split_sentences(text)).split() == text.split()
