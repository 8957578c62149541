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


PUNCTUATION_TEXT = st.text(
    alphabet=".!?\u2026\u3002\uff01\uff1f\"')]\u201d\u300d\uff09 \n\taZ1", max_size=40
)


@given(PUNCTUATION_TEXT)
def test_the_candidate_pattern_finds_what_the_plain_alternation_finds(text: str) -> None:
    """The sentence-end pattern, written to start with one character class, against the
    plain alternation it replaced."""
    import re

    from ragspine.narrative.ingest import sentences

    closers = sentences._CLOSERS
    plain = re.compile(f"[.!?\u2026]+[{closers}]*(?=\\s)|[{sentences._CJK_STOPS}]+[{closers}]*")
    found = [m.span() for m in sentences._CANDIDATE.finditer(text)]
    assert found == [m.span() for m in plain.finditer(text)]
