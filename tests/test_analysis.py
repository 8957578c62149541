"""Text analysis: normalization, folding, CJK bigrams, stemming, stopwords, numbers."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragspine.analysis import Analyzer, cjk_bigrams, fold, match_key
from ragspine.errors import ConfigError

PLAIN = Analyzer(language=None)


def test_nfkc_turns_ligatures_fullwidth_and_circled_digits_into_plain_text() -> None:
    assert PLAIN.tokens("\ufb01nance \uff21\uff22\uff23 \u2460") == ["finance", "abc", "1"]


def test_case_folding_includes_sharp_s() -> None:
    assert PLAIN.tokens("REVENUE Revenue revenue") == ["revenue"] * 3
    assert PLAIN.tokens("STRASSE Straße") == ["strasse", "strasse"]


@pytest.mark.parametrize(
    ("accented", "plain"),
    [
        ("città", "citta"),
        ("Zürich", "zurich"),
        ("São Paulo", "sao paulo"),
        ("Łódź", "lodz"),
        ("Ørsted", "orsted"),
        ("naïve café", "naive cafe"),
        ("Ελληνικά", "ελληνικα"),
    ],
)
def test_diacritics_fold_to_the_unaccented_form(accented: str, plain: str) -> None:
    assert PLAIN.tokens(accented) == PLAIN.tokens(plain)
    assert Analyzer().tokens(accented) == Analyzer().tokens(plain)


def test_fold_keeps_kana_voicing_and_hangul_syllables() -> None:
    assert fold("がぎぐ") == "がぎぐ"
    assert fold("한국어") == "한국어"


def test_cjk_runs_become_overlapping_bigrams() -> None:
    assert PLAIN.tokens("東京都") == ["東京", "京都"]
    assert PLAIN.tokens("한국어 텍스트") == ["한국", "국어", "텍스", "스트"]
    assert PLAIN.tokens("カタカナ") == ["カタ", "タカ", "カナ"]


def test_a_lone_cjk_character_is_a_unigram_and_latin_splits_off() -> None:
    assert PLAIN.tokens("中") == ["中"]
    assert cjk_bigrams("中") == ["中"]
    assert PLAIN.tokens("收入abc增长") == ["收入", "abc", "增长"]


def test_english_stemming_conflates_inflections() -> None:
    english = Analyzer()
    assert english.tokens("running") == english.tokens("runs") == ["run"]
    assert english.tokens("companies") == english.tokens("company")
    assert Analyzer(stem=False).tokens("running companies") == ["running", "companies"]


def test_stopwords_are_dropped_unless_switched_off() -> None:
    assert Analyzer().tokens("the revenue of the company") == ["revenu", "compani"]
    assert Analyzer(stopwords=False).tokens("the revenue") == ["the", "revenu"]
    assert PLAIN.tokens("the revenue") == ["the", "revenue"]


def test_other_snowball_languages_stem_with_their_own_rules() -> None:
    german = Analyzer(language="german")
    assert german.tokens("Häuser") == german.tokens("Hauser")
    assert "und" not in german.tokens("Umsatz und Gewinn")
    assert Analyzer(language="finnish").tokens("talossa") == ["talo"]


def test_decimals_and_thousands_stay_whole_numbers() -> None:
    assert PLAIN.tokens("grew 3.5% to 1,234.5 million, up from 1,234 in 2024.") == [
        "grew",
        "3.5",
        "to",
        "1234.5",
        "million",
        "up",
        "from",
        "1234",
        "in",
        "2024",
    ]
    assert Analyzer().tokens("3.5") == ["3.5"]
    assert PLAIN.tokens("FY2024 Q3") == ["fy2024", "q3"]


def test_over_long_runs_are_not_indexed() -> None:
    assert PLAIN.tokens("a" * 65 + " ok") == ["ok"]


def test_unknown_language_lists_the_valid_ones() -> None:
    with pytest.raises(ConfigError, match="english"):
        Analyzer(language="klingon")


def test_config_round_trips_and_rejects_other_versions() -> None:
    analyzer = Analyzer(language="french", stem=False)
    assert Analyzer.from_config(analyzer.to_config()) == analyzer
    with pytest.raises(ConfigError, match="version"):
        Analyzer.from_config({**analyzer.to_config(), "version": 999})
    with pytest.raises(ConfigError, match="unknown analyzer options"):
        Analyzer.from_config({**analyzer.to_config(), "lowercase": True})


def test_repeated_analysis_is_identical() -> None:
    text = "Die Umsätze in Zürich stiegen um 3,5 Prozent; 東京の売上"
    first = Analyzer(language="german").tokens(text)
    assert Analyzer(language="german").tokens(text) == first


def test_ascii_fast_path_tokenizes_like_the_unicode_path() -> None:
    text = "Q3 revenue: 1,234.5 (up 3.5%) vs. FY2023_total; e-mail x@y.com 0.5.1"
    assert PLAIN.tokens(text) == PLAIN.tokens(text + " é")[:-1]
    assert PLAIN.tokens(text) == [
        "q3",
        "revenue",
        "1234.5",
        "up",
        "3.5",
        "vs",
        "fy2023",
        "total",
        "e",
        "mail",
        "x",
        "y",
        "com",
        "0.5.1",
    ]


@given(st.text(st.characters(blacklist_categories=("Cf", "Cc", "Cs", "Co", "Cn"))))
def test_analysis_folds_everything_the_matching_form_folds(text: str) -> None:
    """Query analysis already applies NFKC and case folding: the matching form changes nothing."""
    assert PLAIN.tokens(text) == PLAIN.tokens(match_key(text))


@given(st.text(alphabet="ab09.,' x\n-", max_size=40))
def test_the_ascii_token_pattern_finds_what_the_plain_alternation_finds(text: str) -> None:
    """The ASCII token pattern, written to start with one character class, against the
    plain alternation it replaced."""
    import re

    from ragspine import analysis

    plain = re.compile(r"\d+(?:[.,]\d+)+|[a-z0-9]+")
    assert analysis._ASCII_TOKEN.findall(text) == plain.findall(text)
