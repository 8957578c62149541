"""The compact text syntax of metadata filters, as typed after ``--filter`` on the command line.

One expression is one condition: ``year>=2020``, ``status!=draft``, ``region in [EMEA,APAC]``,
``x nin [a,b]``, ``date between [2020-01-01,2021-12-31]``. Several expressions are ANDed by the
caller (:func:`ragspine.narrative.filters.expr.parse_filter` on a list). Values are typed: numbers,
``true``/``false``, quoted strings (``"007"`` stays a string), bare words as strings.

The expression is read in NFKC (full-width letters, digits and operators, and no-break spaces,
become their plain forms, so a full-width ``year>=2020`` is ``year>=2020``), except inside
quotes, where text is kept as written (in NFC). An expression may be at most
:data:`MAX_EXPRESSION_CHARS` characters long; reading it takes time linear in its length.
"""

from __future__ import annotations

import re
import unicodedata

from ragspine.errors import QueryError, quote_input
from ragspine.narrative.filters.expr import VALID_FORMS, Condition, Op, Scalar
from ragspine.narrative.filters.limits import MAX_INTEGER

MAX_EXPRESSION_CHARS = 1_000_000
"""Longest text expression read (a 10,000-value ``in`` list of short words fits easily)."""

# Matched against stripped text, so the value needs no lazy quantifier (which made a long run of
# white space inside a value quadratic to read).
_EXPR_RE = re.compile(
    r"(?P<field>[A-Za-z_][A-Za-z0-9_-]*)\s*"
    r"(?:(?P<sym>==|!=|>=|<=|=|>|<)|\s(?P<word>not\s+in|nin|in|between|eq|ne|gte|gt|lte|lt)\s)"
    r"\s*(?P<value>.*)",
    re.ASCII | re.IGNORECASE | re.DOTALL,
)
_QUOTED = re.compile(r"(\"[^\"]*\"|'[^']*')")
_SYMBOLS = {
    "=": Op.EQ,
    "==": Op.EQ,
    "!=": Op.NE,
    ">": Op.GT,
    ">=": Op.GTE,
    "<": Op.LT,
    "<=": Op.LTE,
}
_NUMBER_RE = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)
_INT_RE = re.compile(r"[+-]?[0-9]+", re.ASCII)


def parse_filter_text(text: str) -> Condition:
    """Parse one text expression such as ``year>=2020`` into a :class:`Condition`."""
    if len(text) > MAX_EXPRESSION_CHARS:
        raise QueryError(
            f"a filter expression may be at most {MAX_EXPRESSION_CHARS:,} characters long "
            f"(this one has {len(text):,})"
        )
    text = normalize_expression(text)
    match = _EXPR_RE.fullmatch(text.strip())
    if match is None or not match.group("value"):
        raise QueryError(f"cannot read the filter expression {quote_input(text)}\n{VALID_FORMS}")
    if match.group("sym"):
        op = _SYMBOLS[match.group("sym")]
    else:
        word = " ".join(match.group("word").lower().split())
        op = Op.NIN if word == "not in" else Op(word)
    raw = match.group("value")
    value: Scalar | tuple[Scalar, ...]
    if op in (Op.IN, Op.NIN, Op.BETWEEN):
        if not (raw.startswith("[") and raw.endswith("]")):
            raise QueryError(
                f"'{match.group('field')} {op}' needs a list in brackets, e.g. [a,b]; "
                f"got {quote_input(raw)}\n{VALID_FORMS}"
            )
        value = tuple(_scalar(item) for item in _split_list(raw[1:-1], text))
    else:
        value = _scalar(raw)
    return Condition(match.group("field"), op, value)


def normalize_expression(text: str) -> str:
    """``text`` in NFKC outside quotes and NFC inside them."""
    parts = _QUOTED.split(text)
    return "".join(
        unicodedata.normalize("NFC" if index % 2 else "NFKC", part)
        for index, part in enumerate(parts)
    )


def _split_list(body: str, text: str) -> list[str]:
    """Split a bracketed list body on commas outside quotes."""
    items: list[str] = []
    current: list[str] = []
    quote = ""
    for char in body:
        if quote:
            current.append(char)
            if char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
            current.append(char)
        elif char == ",":
            items.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    if quote:
        raise QueryError(f"unclosed quote in filter expression {quote_input(text)}\n{VALID_FORMS}")
    last = "".join(current).strip()
    if last or items:
        items.append(last)
    if any(not item for item in items):
        raise QueryError(f"empty list item in filter expression {quote_input(text)}\n{VALID_FORMS}")
    return items


def _scalar(raw: str) -> Scalar:
    raw = raw.strip()
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
        return raw[1:-1]
    lowered = raw.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if _INT_RE.fullmatch(raw):
        if len(raw.lstrip("+-").lstrip("0")) > len(str(MAX_INTEGER)):
            raise QueryError(
                f"filter number {quote_input(raw)} is beyond ±{MAX_INTEGER}, the range of 64-bit "
                f"integers: write it as a float, e.g. 1e30\n{VALID_FORMS}"
            )
        return int(raw)
    if _NUMBER_RE.fullmatch(raw):
        return float(raw)
    return raw
