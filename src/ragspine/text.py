"""Unicode rules shared by every input path: one form for storing and showing, and suggestions.

- **Matching** is an analyzer (:func:`ragspine.analysis.match_key`: NFKC, case folding, invisible
  characters dropped, white space collapsed). Glossary terms (TOML spellings and query values
  alike), periods, filter field names and the words the glossary looks for in free text all go
  through it, so a full-width ``FY2024``, a decomposed and a composed ``Café``, and ``net sales``
  with a no-break space all match their plain forms.
- **Storing and showing** (:func:`display_text`): NFC (canonically equal text is stored one
  way, compatibility characters such as full-width letters are kept as written), with control
  characters, bidirectional controls and other invisible format characters removed, so a title
  cannot reorder or hide what a terminal, a browser or a log shows.
- **Suggestions** (:func:`closest`): candidates ranked by closeness to the input.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from difflib import SequenceMatcher

from ragspine.analysis import match_key

_KEEP_FORMAT = frozenset("\u200c\u200d")
"""Zero-width (non-)joiners: they shape Persian, Indic scripts and emoji and reorder nothing."""

_DROP_NONCHARACTERS = frozenset("\ufffe\uffff")


def _display_char(ch: str) -> str:
    category = unicodedata.category(ch)
    if category in ("Cc", "Zl", "Zp"):
        return " " if ch.isspace() else ""
    if category == "Cf":
        return ch if ch in _KEEP_FORMAT else ""
    if category == "Cs" or ch in _DROP_NONCHARACTERS:
        return ""
    return ch


def display_text(text: str) -> str:
    """The stored/shown form of ``text``: NFC; line breaks and tabs become spaces; other control
    characters, bidirectional controls (U+202A..U+202E, U+2066..U+2069, U+200E, U+200F, U+061C),
    zero-width and other invisible format characters (except the joiners U+200C / U+200D), lone
    surrogates and the non-characters U+FFFE / U+FFFF are removed."""
    if text.isascii() and text.isprintable():
        return text
    cleaned = "".join(map(_display_char, text))
    return unicodedata.normalize("NFC", cleaned)


def has_hidden_characters(text: str) -> bool:
    """True when ``text`` holds a character :func:`display_text` would remove or replace."""
    return not (text.isascii() and text.isprintable()) and any(
        _display_char(ch) != ch for ch in text
    )


def closest(
    raw: str,
    candidates: Iterable[tuple[str, str]],
    *,
    limit: int = 3,
    cutoff: float = 0.5,
) -> list[str]:
    """Up to ``limit`` values whose spellings are closest to ``raw``, best first.

    ``candidates`` are ``(spelling, value)`` pairs; a value scores as its closest spelling.
    Closeness is :class:`difflib.SequenceMatcher` ratio between match keys
    (:func:`ragspine.analysis.match_key`); values scoring below ``cutoff`` are left out; ties go
    to the smaller value, so the result depends only on the input and the candidates.
    """
    key = match_key(raw)
    if not key or limit <= 0:
        return []
    matcher: SequenceMatcher[str] | None = None
    best: dict[str, float] = {}
    for spelling, value in candidates:
        target = match_key(spelling)
        total = len(key) + len(target)
        if not target or 2 * min(len(key), len(target)) / total < cutoff:
            continue  # not even a perfect overlap could reach the cutoff
        if matcher is None:
            matcher = SequenceMatcher(None, autojunk=False)
            matcher.set_seq2(key)
        matcher.set_seq1(target)
        if matcher.quick_ratio() < cutoff:
            continue
        score = matcher.ratio()
        if score >= cutoff and score > best.get(value, -1.0):
            best[value] = score
    ranked = sorted(best.items(), key=lambda item: (-item[1], item[0]))
    return [value for value, _ in ranked[:limit]]
