"""The one grammar for fact values: what a cell may hold to become a stored number.

A text cell, after the white space around it is removed, is one of::

    amount  |  -amount  |  (amount)  |  currency (number[%])

(the minus may be the hyphen-minus ``-`` or the typographic minus sign, U+2212)

    amount   = [currency] number [%]
    currency = ("$" | "€" | "£" | "¥" | a three-letter ISO code such as USD) followed by at most
               one space
    number   = integer [. digits] [(e|E) [+|-] digits]
    integer  = digits  |  1-3 digits not starting with 0, then groups of ",ddd"

So ``1234.5``, ``1,234,567.89``, ``-27.1``, ``(27.1)``, ``$ 12``, ``$(1,234)``, ``USD 12``,
``-€5``, ``7.5%`` and ``1.5E+3`` are numbers; ``1,23``, ``1.234,5``, ``(5``, ``(-5)``, ``--5``,
``+5``, ``5.``, ``1 234``, ``NaN`` and ``1e999999999`` are not. A percent sign is accepted only for
percent metrics and a currency only for currency metrics, where it must agree with the fact's
currency (``$`` stands for any dollar currency, ``¥`` for JPY or CNY).

Every value, whether text or a number cell (int, float, Decimal), is bounded: at most
:data:`MAX_DIGITS` significant digits and at most :data:`MAX_WRITTEN_DIGITS` digits when written
out without an exponent, so rendering or comparing a stored value is always cheap, and a value
written out the way answers show it (``1,000,000``) is itself a valid cell.
Floats are read through their shortest repr, so ``0.30000000000000004`` stays exact.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal

from ragspine.errors import IngestError
from ragspine.glossary import MetricKind

MAX_DIGITS = 30
"""Most significant digits a value may have, from its first to its last non-zero digit (``1.50``
and ``1500`` have two), so writing a value with or without an exponent never changes the count."""
MAX_WRITTEN_DIGITS = 40
"""Most digits a value may need when written out without an exponent."""
MAX_TEXT_LENGTH = 100
"""Longest text cell read as a value (a bounded number never needs more)."""
SHOWN_LENGTH = 60
"""Raw values longer than this are cut (with …) in error messages."""

CURRENCY_SYMBOLS: dict[str, frozenset[str]] = {
    "$": frozenset({"USD", "CAD", "AUD", "NZD", "HKD", "SGD", "MXN"}),
    "€": frozenset({"EUR"}),
    "£": frozenset({"GBP"}),
    "¥": frozenset({"JPY", "CNY"}),
}
"""The currency symbols a value may carry, and the ISO codes each may stand for."""

_ISO_CODE = re.compile(r"[A-Z]{3}")
_NUMBER = r"[0-9][0-9,]*(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
_TOKEN = re.compile(
    rf"""
    (?P<minus>[-\u2212])?
    (?P<open>\()?
    (?:(?P<currency>[$€£¥]|[A-Z]{{3}})\ ?)?
    (?P<inner_open>\()?
    (?P<number>{_NUMBER})
    (?P<percent>%)?
    (?P<close>\))?
    """,
    re.VERBOSE,
)
_SHAPES = {
    # (minus, open, inner_open, close): is the value negative?
    (False, False, False, False): False,
    (True, False, False, False): True,
    (False, True, False, True): True,
    (False, False, True, True): True,
}
_NOT_FINITE = re.compile(r"[-+]?\(?\s*[-+]?\s*(?:s?nan|inf|infinity)\s*\)?%?", re.IGNORECASE)
_EXPONENT = re.compile(r"[eE]([+-]?)([0-9]*)$")
_EXPONENT_SIGN = re.compile(r"(?<=[0-9])[eE][+-]")
_DIGIT_RUN = re.compile(r"[0-9.,]*[0-9][0-9.,]*(?:[eE][+-]?[0-9]*)?")
_HINT = "write it like 1234.5, 1,234.5, -27.1, (27.1), $ 12 or 7.5%"


def is_currency_code(text: str) -> bool:
    """Whether ``text`` has the form of an ISO 4217 code (three capital letters)."""
    return _ISO_CODE.fullmatch(text) is not None


def shown(raw: object) -> str:
    """``raw`` quoted for an error message, cut to :data:`SHOWN_LENGTH` characters."""
    text = raw if isinstance(raw, str) else str(raw) if isinstance(raw, Decimal) else repr(raw)
    if len(text) > SHOWN_LENGTH:
        text = text[: SHOWN_LENGTH - 1] + "…"
    return repr(text) if isinstance(raw, str) else text


def parse_value(
    raw: object, *, kind: MetricKind = MetricKind.NUMBER, currency: str = ""
) -> Decimal:
    """The exact value of one cell under the fact-value grammar (see the module docstring).

    ``kind`` is the metric's kind (a percent sign needs ``percent``, a currency needs
    ``currency``); ``currency`` is the fact's ISO code, which a currency in the cell must match.
    Raises :class:`IngestError` saying why, without a location (callers prefix file and row).
    """
    if isinstance(raw, bool):
        raise IngestError(f"value {shown(raw)} is a boolean, not a number")
    if isinstance(raw, str):
        value = _parse_text(raw, kind, currency)
    elif isinstance(raw, int):
        if raw.bit_length() > 4 * MAX_WRITTEN_DIGITS:  # 2**160 > 10**48: too long to convert
            raise IngestError(
                f"value {shown(raw)} has more than {MAX_WRITTEN_DIGITS} digits, "
                f"at most {MAX_WRITTEN_DIGITS} are allowed"
            )
        value = Decimal(raw)
    elif isinstance(raw, float):
        if not math.isfinite(raw):
            raise IngestError(f"value {shown(raw)} is not a finite number")
        value = Decimal(repr(raw))
    elif isinstance(raw, Decimal):
        value = raw
    else:
        raise IngestError(f"value {shown(raw)} is a {type(raw).__name__}, not a number")
    check_bounds(value, raw)
    if value.is_zero() and value.is_signed():
        value = value.copy_abs()  # "-0" and "(0)" are zero: no answer may read "-0"
    return value


def check_bounds(value: Decimal, raw: object = None) -> None:
    """Raise unless ``value`` is finite and within :data:`MAX_DIGITS` / ``MAX_WRITTEN_DIGITS``."""
    if not value.is_finite():
        raise IngestError(f"value {shown(value if raw is None else raw)} is not a finite number")
    _, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)  # finite values have an integer exponent
    # Integer digits (at least the 0 of 0.001) plus fraction digits.
    written = max(len(digits) + exponent, 1) + max(-exponent, 0)
    if written > MAX_WRITTEN_DIGITS:
        raise IngestError(
            f"value {shown(value if raw is None else raw)} is too large or too small: written "
            f"out it needs {written:,} digits, at most {MAX_WRITTEN_DIGITS} are allowed"
        )
    if len(digits) > MAX_DIGITS:
        significant = len(digits)
        while significant > 1 and digits[significant - 1] == 0:
            significant -= 1
        if significant > MAX_DIGITS:
            raise IngestError(
                f"value {shown(value if raw is None else raw)} has {significant} significant "
                f"digits; at most {MAX_DIGITS} are kept exactly"
            )


def _parse_text(raw: str, kind: MetricKind, currency: str) -> Decimal:
    text = raw.strip()
    if len(text) > MAX_TEXT_LENGTH:
        raise IngestError(
            f"value {shown(raw)} is too long ({len(text):,} characters; "
            f"a value has at most {MAX_TEXT_LENGTH})"
        )
    match = _TOKEN.fullmatch(text)
    if match is None:
        raise IngestError(f"value {shown(raw)} {_diagnose(text)}")
    shape = (
        match["minus"] is not None,
        match["open"] is not None,
        match["inner_open"] is not None,
        match["close"] is not None,
    )
    negative = _SHAPES.get(shape)
    if negative is None:
        raise IngestError(f"value {shown(raw)} {_diagnose(text)}")
    number = match["number"]
    # Without a comma or an exponent the token pattern already admits only well-formed numbers.
    problem = _number_problem(number) if "," in number or "e" in number.lower() else None
    if problem:
        raise IngestError(f"value {shown(raw)} {problem}")
    if match["percent"] and kind is not MetricKind.PERCENT:
        raise IngestError(
            f"value {shown(raw)} has a percent sign, which only percent metrics accept "
            f"(this metric's kind is {kind.value})"
        )
    symbol = match["currency"]
    if symbol:
        _check_currency(raw, symbol, kind, currency)
    value = Decimal(number.replace(",", ""))
    # copy_negate is exact; unary minus would round to the context precision (28 digits).
    return value.copy_negate() if negative else value


def _check_currency(raw: str, symbol: str, kind: MetricKind, currency: str) -> None:
    if kind is not MetricKind.CURRENCY:
        raise IngestError(
            f"value {shown(raw)} has a currency ({symbol}), which only currency metrics accept "
            f"(this metric's kind is {kind.value}); write the number without it"
        )
    if not currency:
        return
    codes = CURRENCY_SYMBOLS.get(symbol, frozenset({symbol}))
    if currency not in codes:
        raise IngestError(
            f"value {shown(raw)} is in {symbol} but the fact's currency is {currency}: "
            "fix the cell or the currency column"
        )


def _number_problem(number: str) -> str | None:
    """Why a digits-commas-point run is not a number of the grammar, or None."""
    mantissa = number
    exponent = _EXPONENT.search(number)
    if exponent is not None:
        mantissa = number[: exponent.start()]
        if not exponent[2]:
            return "has an exponent without digits"
        if len(exponent[2].lstrip("0")) > 2:
            return (
                f"has an exponent out of range (written out, a value has at most "
                f"{MAX_WRITTEN_DIGITS} digits)"
            )
    if mantissa.count(".") > 1:
        return (
            "has more than one '.': '.' is the decimal point, so 1.234.567 is ambiguous; "
            "write thousands with ',' (1,234,567) or without a separator"
        )
    if "," in mantissa.partition(".")[2]:
        return (
            "has ',' after the decimal point (a decimal comma as in 1.234,5 is ambiguous); "
            "write 1234.5 or 1,234.5"
        )
    integer, point, fraction = mantissa.partition(".")
    if point and (not integer or not fraction):
        return "needs digits on both sides of the decimal point"
    if "," in integer:
        groups = integer.split(",")
        first, rest = groups[0], groups[1:]
        if not 1 <= len(first) <= 3 or any(len(g) != 3 for g in rest):
            return (
                "has a comma group that is not three digits: ',' only separates thousands "
                "(1,234,567.89) and the decimal separator is '.', so this is ambiguous"
            )
        if first.startswith("0"):
            return "starts with 0 before a thousands separator, so its ',' is ambiguous"
    return None


def _diagnose(text: str) -> str:
    """Why ``text`` (not matching the grammar) is not a value: the first problem found."""
    if not text:
        return "is empty"
    if _NOT_FINITE.fullmatch(text):
        return "is not a finite number (NaN and infinity are not values)"
    opens, closes = text.count("("), text.count(")")
    if opens != closes or (opens and text.index("(") > text.index(")")):
        return "has an unbalanced parenthesis"
    if opens > 1:
        return "has nested parentheses"
    signs = _EXPONENT_SIGN.sub("", text).replace("\u2212", "-")
    if "+" in signs:
        return "has a plus sign; write a positive value without a sign"
    if signs.count("-") > 1:
        return "has more than one minus sign"
    if "-" in signs and opens:
        return "has both a minus sign and parentheses; use one of them for a negative value"
    if "-" in signs and not signs.startswith("-"):
        return "has a minus sign that is not at the start; write -$12 or ($12)"
    if _TOKEN.fullmatch("".join(text.split())):
        return (
            "has white space inside the number; only one space after a currency symbol "
            "or code is allowed"
        )
    if "%" in text and not text.rstrip(")").endswith("%"):
        return "has a percent sign that is not at the end of the number"
    run = _DIGIT_RUN.search(text)
    if run is not None:
        problem = _number_problem(run.group(0))
        if problem:
            return problem
    return f"is not a number; {_HINT}"
