"""Text analysis: every way RAGSpine turns text into comparable units, in one module.

Each caller takes a named analyzer from here and never tokenizes on its own. The analyzers differ
on purpose, because each one's output is persisted or pinned (index segments and manifests,
stored routing profiles, answers); the choices, and why they stay apart:

- **Index terms** (:class:`Analyzer`, ``Analyzer(...).tokens``; the lexical index, its
  segments and manifests). :func:`fold` (NFKC, case folding, diacritics stripped), the index
  tokenizer (words, numbers with their decimal point and without thousands separators, CJK runs
  as character bigrams, runs over :data:`MAX_TOKEN_CHARS` dropped), the language's stop list
  (:data:`ragspine.stopwords.STOPWORDS`) and its Snowball stemmer (PyStemmer). Configurable per
  index and versioned (:data:`ANALYSIS_VERSION`): changing it means rebuilding indexes.
- **Routing terms** (:func:`routing_terms`; routing profiles in ``stores/sqlite/profiles.py`` and
  ``narrative/retrieve/profile_router.py``, and the question/sentence overlap of the extractive
  answer). NFKC and case folding with accents kept, the word tokenizer :func:`routing_words`
  (letters and digits, one inner apostrophe kept: ``don't``), the short English stop list
  :data:`ragspine.stopwords.ROUTING_STOPWORDS` and :func:`light_stem`, a light suffix stripper
  that leaves non-English words nearly whole (``umsätze`` -> ``umsätz``). It is not Snowball:
  library profiles stored in workspaces hold its terms, and routing decisions and extractive
  answers are pinned by tests, so swapping in the index stemmer would change both.
- **Word sets** (:func:`word_set`; Jaccard similarity for near-duplicate removal and MMR).
  ``\\w+`` words (underscores kept inside), case-folded, as a set: no stemming, no stop words,
  so two snippets count as duplicates only when their words really are the same.
- **Match keys** (:func:`match_key`; glossary terms, filter aliases found in questions, periods,
  section-label names, suggestions). A whole-string form for exact matching, not tokens: NFKC,
  case folding, invisible characters dropped, white space collapsed and trimmed.

Shared: every analyzer starts from Unicode NFKC and case folding; the stop lists are declared
once, as data, in :mod:`ragspine.stopwords`; each stemmer is made once (a Snowball stemmer per
language and configuration, the light stemmer memoised). The tokenizers are not shared because
they do not agree (CJK bigrams and decimals for the index, inner apostrophes for routing,
underscores for word sets): each is declared beside its analyzer.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import Stemmer

from ragspine.errors import ConfigError
from ragspine.stopwords import ROUTING_STOPWORDS, STOPWORDS

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
# The same tokens as _TOKEN on lower-case ASCII text, found faster: ``\d+(?:[.,]\d+)+|[a-z0-9]+``
# written to start with one character class (the search skips to it in C).
_ASCII_TOKEN = re.compile(r"[a-z0-9](?:(?<=[0-9])[0-9]*(?:[.,][0-9]+)+|[a-z0-9]*)")
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
_MANY_GROUP = 256
"""Texts whose raw words :meth:`Analyzer.tokens_many` holds at once."""


def stopwords_for(language: str | None) -> frozenset[str]:
    """The folded index stop list of ``language`` (empty when there is no list for it)."""
    if language is None:
        return frozenset()
    return STOPWORDS.get(language, frozenset())


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
        cached = self.cache.get
        for raw in raws:
            token = cached(raw)
            if token is None:
                if _CJK_CHAR.match(raw):  # CJK runs are never cached
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
        cache = pipeline.cache
        mapped = list(map(cache.get, raws))
        if None in mapped:
            missing = set(raws).difference(cache)
            if any(_CJK_CHAR.match(raw) for raw in missing):
                return pipeline.slow_tokens(raws)
            for raw in missing:  # new words: cache them, then map again
                pipeline.word(raw)
            mapped = list(map(cache.get, raws))
            if None in mapped:  # the cache was cleared meanwhile
                return pipeline.slow_tokens(raws)
        return list(filter(None, mapped))  # "" marks a dropped word

    def tokens_many(self, texts: Sequence[str]) -> list[list[str]]:
        """:meth:`tokens` of each text, with the words new to the cache looked up once per
        group of texts (groups keep the raw words held at once bounded)."""
        pipeline = self._pipeline()
        cache = pipeline.cache
        out: list[list[str]] = []
        for start in range(0, len(texts), _MANY_GROUP):
            raw_lists = [
                _ASCII_TOKEN.findall(text.lower()) if text.isascii() else _TOKEN.findall(fold(text))
                for text in texts[start : start + _MANY_GROUP]
            ]
            for raw in set().union(*raw_lists).difference(cache):
                if not _CJK_CHAR.match(raw):  # CJK runs are never cached
                    pipeline.word(raw)
            for raws in raw_lists:
                mapped = list(map(cache.get, raws))
                if None in mapped:  # CJK runs, or the cache was cleared meanwhile
                    out.append(pipeline.slow_tokens(raws))
                else:
                    out.append(list(filter(None, mapped)))  # "" marks a dropped word
        return out

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


# --- routing terms -------------------------------------------------------------------------

_ROUTING_WORD = re.compile("[^\\W_]+(?:['\u2019][^\\W_]+)?")

_LIGHT_SUFFIXES = (
    "ational",
    "ization",
    "fulness",
    "ousness",
    "iveness",
    "ations",
    "ation",
    "ments",
    "ment",
    "ness",
    "ings",
    "ing",
    "ies",
    "ied",
    "edly",
    "ed",
    "es",
    "ly",
    "s",
)


@lru_cache(maxsize=1 << 18)
def light_stem(word: str) -> str:
    """Strip one common English suffix and a final "e", keeping a stem of at least three letters."""
    if len(word) <= 3 or not word.isalpha():
        return word
    base = word
    for suffix in _LIGHT_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            if suffix in ("ies", "ied"):
                base += "y"
            elif suffix == "es" and not base.endswith(("s", "x", "z", "ch", "sh")):
                base = word[:-1]
            elif suffix == "s" and word.endswith(("ss", "us", "is")):
                base = word
            elif suffix in ("ing", "ings", "ed") and len(base) > 3 and base[-1] == base[-2]:
                base = base[:-1]
            break
    if base.endswith("e") and len(base) > 4:
        base = base[:-1]
    return base


# On ASCII text NFKC changes nothing, case folding is lower(), and ``[^\W_]`` is [a-z0-9]
# after it: the same words as _ROUTING_WORD, found without the Unicode tables.
_ASCII_ROUTING_WORD = re.compile(r"[a-z0-9]+(?:'[a-z0-9]+)?")


def routing_words(text: str) -> list[str]:
    """Lower-cased words of ``text`` in order (NFKC-normalised, accents kept)."""
    if text.isascii():
        return _ASCII_ROUTING_WORD.findall(text.lower())
    return _ROUTING_WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def routing_terms(text: str) -> list[str]:
    """Light-stemmed content words of ``text`` in order, routing stop words removed."""
    return [light_stem(w) for w in routing_words(text) if w not in ROUTING_STOPWORDS]


def routing_term_counts(texts: Iterable[str]) -> Counter[str]:
    """How often each routing term occurs in ``texts``: the counts of :func:`routing_terms`
    over all of them, with each distinct word stemmed once."""
    # One pass over the texts joined by line breaks: no routing word spans one, and NFKC and
    # case folding never reach across it, so the words are those of each text in turn.
    texts = list(texts)
    words = Counter(routing_words("\n".join(t for t in texts if t.isascii())))
    words.update(routing_words("\n".join(t for t in texts if not t.isascii())))
    counts: Counter[str] = Counter()
    for word, n in words.items():
        if word not in ROUTING_STOPWORDS:
            counts[light_stem(word)] += n
    return counts


# --- word sets -----------------------------------------------------------------------------

_SET_WORD = re.compile(r"\w+", re.UNICODE)


def word_set(text: str) -> frozenset[str]:
    """Case-folded ``\\w+`` words of ``text``, for Jaccard similarity."""
    return frozenset(token.casefold() for token in _SET_WORD.findall(text))


# --- match keys ----------------------------------------------------------------------------


def _dropped_for_matching(ch: str) -> bool:
    category = unicodedata.category(ch)
    return category in ("Cf", "Cs") or (category == "Cc" and not ch.isspace())


def match_key(text: str) -> str:
    """The matching form of ``text``: NFKC, case-folded, invisible characters dropped, white
    space collapsed to single spaces and trimmed.

    Two spellings match when their match keys are equal. Never stored or shown.
    """
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    if not folded.isascii():
        dropped = {ch for ch in set(folded) if not ch.isprintable() and _dropped_for_matching(ch)}
        if dropped:  # looked up once per distinct character, not once per character
            folded = "".join(ch for ch in folded if ch not in dropped)
    elif not folded.isprintable():
        folded = "".join(ch for ch in folded if ch.isprintable() or ch.isspace())
    return " ".join(folded.split())
