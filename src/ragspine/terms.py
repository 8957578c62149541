"""Deterministic word analysis shared by library routing and the extractive answer.

Lower-cased Unicode words (accents kept, digits kept), a small English stop list and a light
suffix-stripping stemmer so that "revenues" and "revenue", "growing" and "grow" meet.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_WORD_RE = re.compile("[^\\W_]+(?:['\u2019][^\\W_]+)?")

STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers him his how i if in into is it its itself just
    me more most my no nor not now of off on once only or other our ours out over own same she
    should so some such than that the their theirs them then there these they this those through
    to too under until up very was we were what when where which while who whom why will with
    would you your yours""".split()  # noqa: SIM905
)

_SUFFIXES = (
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
def stem(word: str) -> str:
    """Strip one common English suffix and a final "e", keeping a stem of at least three letters."""
    if len(word) <= 3 or not word.isalpha():
        return word
    base = word
    for suffix in _SUFFIXES:
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


def words(text: str) -> list[str]:
    """Lower-cased words of ``text`` in order (NFKC-normalised)."""
    return _WORD_RE.findall(unicodedata.normalize("NFKC", text).casefold())


def terms(text: str) -> list[str]:
    """Stemmed content words of ``text`` in order, stop words removed."""
    return [stem(w) for w in words(text) if w not in STOPWORDS]
