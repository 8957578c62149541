"""One Unicode rule for matching (NFKC + casefold) and one for storing and showing (NFC)."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from ragspine.analysis import match_key
from ragspine.text import closest, display_text, has_hidden_characters

COMPOSED = "caf\u00e9"
DECOMPOSED = "cafe\u0301"


def fullwidth(text: str) -> str:
    """``text`` with ASCII letters and digits typed as their full-width forms."""
    return "".join(chr(ord(ch) + 0xFEE0) if ch.isalnum() else ch for ch in text)


def test_matching_form_folds_compatibility_case_and_spaces() -> None:
    assert match_key(DECOMPOSED) == match_key(COMPOSED) == "café"
    assert match_key(fullwidth("FY2024")) == "fy2024"
    assert match_key("Net\u00a0\u00a0SALES ") == "net sales"
    assert match_key("Straße") == match_key("STRASSE") == "strasse"
    assert match_key("ﬁnance") == "finance"
    assert match_key("rev\u200benue\u202e") == "revenue"
    assert match_key("a\x1bb\tc") == "ab c"


@given(st.text())
def test_matching_form_is_idempotent(text: str) -> None:
    once = match_key(text)
    assert match_key(once) == once


def test_display_form_is_nfc_and_drops_invisible_and_control_characters() -> None:
    assert display_text(DECOMPOSED) == COMPOSED
    assert display_text(fullwidth("FY2024")) == fullwidth("FY2024")  # shown as written
    assert display_text("Safe\u202eexe.txt") == "Safeexe.txt"
    assert display_text("\x1b[31mred") == "[31mred"
    for ch in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c":
        assert display_text(f"a{ch}b") == "ab"
    assert display_text("a\u200bb\u2060c\ufeffd\u00ade\U000e0041") == "abcde"
    assert display_text("a\x85b\nc\u2028d") == "a b c d"
    assert display_text("lone \ud800 surrogate\uffff") == "lone  surrogate"
    assert display_text("\U0001f469\u200d\U0001f4bb") == "\U0001f469\u200d\U0001f4bb"


@given(st.text())
def test_display_form_has_no_control_or_bidi_characters(text: str) -> None:
    shown = display_text(text)
    assert unicodedata.is_normalized("NFC", shown)
    assert all(
        unicodedata.category(ch) not in ("Cc", "Cs", "Zl", "Zp")
        and (unicodedata.category(ch) != "Cf" or ch in "\u200c\u200d")
        for ch in shown
    )


def test_closest_ranks_by_closeness_and_breaks_ties_by_value() -> None:
    candidates = [("revenue", "revenue"), ("revenues", "rev2"), ("turnover", "turnover")]
    assert closest("revenu", candidates) == ["revenue", "rev2"]
    # "ab" is exactly as close to "abx" as to "aby": the smaller value wins the tie
    assert closest("ab", [("aby", "z"), ("abx", "y"), ("abz", "x")], limit=2) == ["x", "y"]
    assert closest(fullwidth("REVENUE"), candidates)[0] == "revenue"
    assert closest("nothing alike", candidates) == []


def test_closest_scores_a_value_by_its_best_spelling() -> None:
    candidates = [("zzzzzz", "metric_a"), ("sales", "metric_a"), ("salary", "metric_b")]
    assert closest("sale", candidates) == ["metric_a", "metric_b"]


def test_closest_is_fast_on_a_huge_input() -> None:
    assert closest("x" * 1_000_000, [("revenue", "revenue")]) == []


def test_hidden_characters_are_detected() -> None:
    assert not has_hidden_characters("node-1 café")
    assert has_hidden_characters("node\u202e1")
    assert has_hidden_characters("node\x001")
    assert not has_hidden_characters(DECOMPOSED)  # visible, only not NFC
