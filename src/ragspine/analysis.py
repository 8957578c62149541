"""Text analysis for lexical search: the same tokens for documents and queries.

Steps: Unicode NFKC, case folding, diacritic folding ("città" -> "citta"), tokenization into
words, numbers and CJK runs; CJK runs (Chinese, Japanese kana, Korean hangul) become overlapping
character bigrams (a lone character stays a unigram); words lose stopwords and are stemmed with
the Snowball stemmer of the language. Numbers keep their decimal point ("3.5") and drop thousands
separators ("1,234" -> "1234").
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import Stemmer

from ragspine.errors import ConfigError
from ragspine.stopwords import stopwords_for

ANALYSIS_VERSION = 1
"""Bumped whenever the tokens produced for the same text and options change."""

MAX_TOKEN_CHARS = 64
"""Longer runs (hashes, base64, URLs without separators) are dropped, not indexed."""

_CJK = (
    "\u1100-\u11ff"  # hangul jamo
    "\u3040-\u309f"  # hiragana
    "\u30a0-\u30ff"  # katakana
    "\u3130-\u318f"  # hangul compatibility jamo
    "\u31f0-\u31ff"  # katakana phonetic extensions
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uac00-\ud7af"  # hangul syllables
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\U00020000-\U0002ffff"  # CJK extensions B and later
)
_TOKEN = re.compile(rf"[{_CJK}]+|\d+(?:[.,]\d+)+|[^\W_{_CJK}]+")
# The same tokens as _TOKEN on lower-case ASCII text, found faster.
_ASCII_TOKEN = re.compile(r"\d+(?:[.,]\d+)+|[a-z0-9]+")
_CJK_CHAR = re.compile(rf"[{_CJK}]")
_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")
# Combining marks of Latin, Greek and Cyrillic diacritics and Arabic/Hebrew vowel points; the
# kana voicing marks (U+3099, U+309A) and Indic vowel signs are letters' parts and stay.
_MARKS = re.compile(
    "[\u0300-\u036f\u0483-\u0489\u0591-\u05c7\u064b-\u065f\u0670"
    "\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]"
)
# Letters that carry a diacritic without decomposing under Unicode normalization.
_LETTERS = str.maketrans(
    {
        "ø": "o",
        "đ": "d",
        "ð": "d",
        "ł": "l",
        "ħ": "h",
        "\u0131": "i",
        "ŧ": "t",
        "æ": "ae",
        "œ": "oe",
        "þ": "th",
        "ŋ": "n",
        "ƒ": "f",
    }
)
_CACHE_LIMIT = 1_000_000


def fold(text: str) -> str:
    """Normalize ``text`` (NFKC), case-fold it and strip diacritics."""
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text).casefold()
    return unicodedata.normalize("NFC", _MARKS.sub("", decomposed)).translate(_LETTERS)


class _Pipeline:
    """Per-configuration state: the stemmer and a cache from raw word to final token.

    Threads share it: the cache is a memo whose entries never change (a word any thread adds,
    or a clear that drops them all, only decides whether the next thread computes the same token
    again). PyStemmer's stemmers are not thread-safe, so one thread stems at a time.
    """

    __slots__ = ("_stemming", "cache", "stem_word", "stopwords")

    def __init__(self, language: str | None, stem: bool, stopwords: bool) -> None:
        stemmer = Stemmer.Stemmer(language) if stem and language is not None else None
        self.stem_word = stemmer.stemWord if stemmer is not None else None
        self.stopwords = stopwords_for(language) if stopwords else frozenset()
        self.cache: dict[str, str] = {}
        self._stemming = threading.Lock()

    def slow_tokens(self, raws: list[str]) -> list[str]:
        """Tokens of raw matches when some are not cached yet (and CJK runs, never cached)."""
        out: list[str] = []
        for raw in raws:
            if _CJK_CHAR.match(raw):
                out.extend(cjk_bigrams(raw))
                continue
            token = self.word(raw)
            if token:
                out.append(token)
        return out

    def word(self, raw: str) -> str:
        """The token for one folded word or number ("" when it is dropped)."""
        token = self.cache.get(raw)
        if token is not None:
            return token
        if len(raw) > MAX_TOKEN_CHARS or raw in self.stopwords:
            token = ""
        elif raw[0].isdigit() and ("," in raw or "." in raw):
            token = raw.replace(",", "") if _THOUSANDS.fullmatch(raw) else raw
        elif self.stem_word is not None and raw.isalpha():
            with self._stemming:
                token = self.stem_word(raw)
        else:
            token = raw
        if len(self.cache) >= _CACHE_LIMIT:
            self.cache.clear()
        self.cache[raw] = token
        return token


_PIPELINES: dict[tuple[str | None, bool, bool], _Pipeline] = {}
_PIPELINES_LOCK = threading.Lock()  # one pipeline per configuration, made by one thread


@dataclass(frozen=True, slots=True)
class Analyzer:
    """Turns text into index terms; documents and queries must use the same analyzer.

    ``language`` names a Snowball stemmer (``Stemmer.algorithms()``) or is ``None`` for no
    stemming and no stopwords; ``stem`` and ``stopwords`` switch those steps off.
    """

    language: str | None = "english"
    stem: bool = True
    stopwords: bool = True

    def __post_init__(self) -> None:
        if self.language is not None and self.language not in _languages():
            valid = ", ".join(sorted(_languages()))
            raise ConfigError(
                f"unknown analyzer language {self.language!r}: use one of {valid}, or None"
            )

    def tokens(self, text: str) -> list[str]:
        """The index terms of ``text`` in order (repeats kept)."""
        pipeline = self._pipeline()
        ascii_text = text.isascii()
        raws = (_ASCII_TOKEN if ascii_text else _TOKEN).findall(
            text.lower() if ascii_text else fold(text)
        )
        mapped = list(map(pipeline.cache.get, raws))
        if None in mapped:
            return pipeline.slow_tokens(raws)
        return [token for token in mapped if token]

    def to_config(self) -> dict[str, Any]:
        """A JSON-ready description, stored with an index to detect analyzer changes."""
        return {
            "language": self.language,
            "stem": self.stem,
            "stopwords": self.stopwords,
            "version": ANALYSIS_VERSION,
        }

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> Analyzer:
        """Rebuild an analyzer from :meth:`to_config` output."""
        version = config.get("version", ANALYSIS_VERSION)
        if version != ANALYSIS_VERSION:
            raise ConfigError(
                f"analyzer config has version {version!r}, this RAGSpine analyzes with version "
                f"{ANALYSIS_VERSION}: rebuild the index"
            )
        unknown = set(config) - {"language", "stem", "stopwords", "version"}
        if unknown:
            raise ConfigError(f"unknown analyzer options {sorted(unknown)}")
        language = config.get("language", "english")
        if language is not None and not isinstance(language, str):
            raise ConfigError(f"analyzer language must be a string or null, got {language!r}")
        stem, stopwords = config.get("stem", True), config.get("stopwords", True)
        if not isinstance(stem, bool) or not isinstance(stopwords, bool):
            raise ConfigError(
                f"analyzer stem and stopwords must be true or false, got {stem!r}, {stopwords!r}"
            )
        return cls(language=language, stem=stem, stopwords=stopwords)

    def _pipeline(self) -> _Pipeline:
        key = (self.language, self.stem, self.stopwords)
        pipeline = _PIPELINES.get(key)
        if pipeline is None:
            with _PIPELINES_LOCK:
                pipeline = _PIPELINES.get(key)
                if pipeline is None:
                    pipeline = _PIPELINES[key] = _Pipeline(*key)
        return pipeline


def cjk_bigrams(run: str) -> list[str]:
    """Overlapping character bigrams of a CJK run; a single character stays a unigram."""
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


_LANGUAGES: frozenset[str] = frozenset()


def _languages() -> frozenset[str]:
    global _LANGUAGES
    if not _LANGUAGES:
        _LANGUAGES = frozenset(Stemmer.algorithms())
    return _LANGUAGES
