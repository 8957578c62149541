"""Every analyzer returns exactly what the code before the one-module refactor returned.

``fixtures/analysis_equivalence.json`` was written (commit 2dcac72) by the pre-refactor
functions (``Analyzer``, ``terms.terms`` / ``terms.words`` / ``terms.stem``,
``postprocess.word_set``, ``text.normalize_input``, ``extractive.numbers_in``; now
``routing_terms``, ``routing_words``, ``light_stem``, ``word_set``, ``match_key`` and the guard's
``numbers_in``) for the inline strings below and for real strings from ``../shared/data``
(stored by reference, see :mod:`real_text`; their outputs as the first 12 hex digits of the
SHA-256 of their JSON, one list per analyzer in string order).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from ragspine.analysis import (
    Analyzer,
    fold,
    light_stem,
    match_key,
    routing_terms,
    routing_words,
    word_set,
)
from ragspine.answer.guard import numbers_in

FIXTURE = Path(__file__).parent / "fixtures" / "analysis_equivalence.json"

INLINE = [
    "The revenues of the Growing markets",
    "Umsätze im Jahr 2024 stiegen um 3,5 %",
    "Città, café, naïve façade; Ærøskøbing and Łódź",
    "\uff26\uff39\uff12\uff10\uff12\uff14 net\u00a0sales — full-width and no-break space",
    "Revenue in EMEA grew 12% to 1,200 million in 2023; APAC fell (1,234) or $3.4bn.",
    "12.5% of 1,234,567.89 and 0.5 and 1.2.3 and 3,4 and 10,00",
    "don't won\u2019t it's o'clock rock'n'roll snake_case_name __init__",
    "東京都の売上高は増加した 서울 매출 增长 中",
    "x" * 80 + " short " + "7" * 70,
    "studies classes status statuses running hopped nationalization happiness",
    "Αθήνα Москва İstanbul straße STRASSE ǅemal ﬁnancial",
    "",
    "   \t\n  ",
    "a the of and but",
    "e.g. U.S. 3.5-fold 2-3 H2O CO2 COVID-19 IL-6 p<0.05 n=1,000",
    "zero\u200bwidth\u200djoin\u202eRLO\u0007bell",
]

Outputs = Callable[[str], object]

ANALYZERS: dict[str, Outputs] = {
    "index_english": Analyzer().tokens,
    "index_no_stem": Analyzer(stem=False).tokens,
    "index_no_stopwords": Analyzer(stopwords=False).tokens,
    "index_no_language": Analyzer(language=None).tokens,
    "index_german": Analyzer(language="german").tokens,
    "fold": fold,
    "routing_terms": routing_terms,
    "routing_words": routing_words,
    "light_stem": lambda text: [light_stem(w) for w in routing_words(text)],
    "word_set": lambda text: sorted(word_set(text)),
    "match_key": match_key,
    "numbers": numbers_in,
}


def outputs(text: str) -> dict[str, object]:
    """Every analyzer's output for ``text`` (JSON-ready)."""
    return {name: analyzer(text) for name, analyzer in ANALYZERS.items()}


def digest(output: object) -> str:
    """The short digest a real string's output is stored as."""
    return hashlib.sha256(json.dumps(output, ensure_ascii=False).encode()).hexdigest()[:12]


def _expected() -> dict[str, dict[str, object]]:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


def test_inline_strings_analyze_as_before() -> None:
    expected = _expected()["inline"]
    assert sorted(expected) == sorted(INLINE)
    for text in INLINE:
        assert outputs(text) == expected[text], text


def test_real_strings_analyze_as_before() -> None:
    from real_text import real_strings

    expected = _expected()["real"]
    strings = real_strings()
    assert [ref for ref, _ in strings] == expected["refs"], "the real-string selection changed"
    assert len(strings) > 500
    for index, (ref, text) in enumerate(strings):
        for name, got in outputs(text).items():
            if digest(got) != expected[name][index]:
                pytest.fail(f"{name} differs on {ref}: now {got!r}")


def test_index_terms_of_lines_joined_are_each_lines_terms_joined() -> None:
    """What lets the lexical index analyze a title, heading and text once for every field set
    (``AnalyzedRows`` in ``narrative/index/lexical/library_indexes.py``)."""
    from real_text import real_strings

    texts = INLINE + [text for _, text in real_strings()]
    for analyzer in (Analyzer(), Analyzer(language=None), Analyzer(language="german")):
        for first, second in zip(texts, texts[1:] + texts[:1], strict=True):
            joined = analyzer.tokens(f"{first}\n{second}")
            assert joined == analyzer.tokens(first) + analyzer.tokens(second), (first, second)


def test_routing_term_counts_are_the_counts_of_routing_terms() -> None:
    from collections import Counter

    from ragspine.analysis import routing_term_counts
    from real_text import real_strings

    # texts meet at the joints of one pass: a combining mark, an apostrophe, a ligature
    edges = ["cafe", "\u0301tude first", "rock'", "'n roll", "ﬁ", "ﬂow", "Straße", "ǅ"]
    texts = INLINE + edges + [text for _, text in real_strings()]
    expected: Counter[str] = Counter()
    for text in texts:
        expected.update(routing_terms(text))
    assert routing_term_counts(texts) == expected
    assert routing_term_counts([]) == Counter()


def test_tokens_of_many_texts_are_each_texts_tokens() -> None:
    from real_text import real_strings

    texts = INLINE + [text for _, text in real_strings()]
    for analyzer in (Analyzer(), Analyzer(language=None), Analyzer(language="german")):
        analyzer._pipeline().cache.clear()  # every word new: the look-up path is taken
        many = analyzer.tokens_many(texts)
        analyzer._pipeline().cache.clear()
        assert many == [analyzer.tokens(text) for text in texts]
    assert Analyzer().tokens_many([]) == []
