"""The figure a narrative answer's cited sentence states for what the question asks.

``What was the rent expense in 2007?``, answered from the sentence "Rent expense ... during
the years ended December 31, 2007, 2006 and 2005 was $106.4 million, $81.5 million and $61.1
million, respectively.", names ``$106.4 million`` as what the sentence gives for 2007. The
figure is read from the sentence, never computed, stored or passed on as a fact (contract 2:
prose is never promoted); the answer still shows the whole sentence it comes from. A figure
is named only when one reading is left:

- the question asks for one amount (``what ...`` / ``how much ...`` with a year, a day, ``the
  amount of``, ``the value of`` or ``total``), one lookup (no change, sum, share or pick), at
  most one period, which is a fiscal year, and no other number (``by 1000``, ``less an
  initial $100 investment``: a constant of the question is never applied);
- the sentence says at least 60 % of the question's content words;
- the figure is written as an amount (a currency, a scale word or a percent; a bare number only
  for ``the number of ...`` questions, followed by a word the question says), a percent
  exactly when the question asks for a rate, a percentage, a share or a margin;
- and the sentence ties it to the year asked: by position in two lists joined by
  ``respectively`` (``... 2007, 2006 and 2005 was $106.4 million, $81.5 million and $61.1
  million, respectively``), by ``in`` / ``for`` / ``during`` / ``at`` right after it (``$6.1
  billion in 2011``, each year so tied once), or by being the sentence's only number where
  the year asked is its only year. With no period asked, the only number of a sentence
  naming no year.

Anything else names no figure: the sentences are the answer, as before. English questions
only (a question in another locale gets its sentences).
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date
from decimal import Decimal

from ragspine.analysis import routing_terms
from ragspine.answer.locale import TEXTS, Locale
from ragspine.answer.question import Operation, QuestionReading, asks_count
from ragspine.answer.types import Answer, Quote
from ragspine.structured.headers import MONTH_WORDS, days_in

MIN_SAID = 0.6
"""The least share of the question's content words the sentence must say."""

_FIGURE_ASKED_RE = re.compile(r"^\s*(?:what|how\s+much)\b", re.IGNORECASE)
_AMOUNT_RE = re.compile(
    r"\b(?:the\s+(?:total\s+)?(?:amount|value)\s+of|how\s+much|total)\b", re.IGNORECASE
)
_RATE_RE = re.compile(
    r"(?:\b(?:rates?|percent|percentage|fraction|portion|proportion|ratio|margins?|yield"
    r"|share\s+of)\b|%)",
    re.IGNORECASE,
)
_MONTHS = "|".join(sorted(MONTH_WORDS | {"sept"}, key=len, reverse=True))
_DATE_RE = re.compile(
    rf"\b(?:{_MONTHS})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?\b|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?"
    rf"(?:{_MONTHS})\b|\b\d{{1,2}}[/.-]\d{{1,2}}[/.-]\d{{2,4}}\b",
    re.IGNORECASE,
)
_YEAR_RE = re.compile(r"(?<![\w$€£.,])(?:fy\s?)?((?:19|20)\d{2})(?![\w%]|[.,]\d)", re.IGNORECASE)
_SHORT_YEAR_RE = re.compile(r"\b(?:fy|f)\s?-?'?\d{2}\b|'\d{2}\b", re.IGNORECASE)
_NUMBER_RE = re.compile(
    r"(?<![\w.,/-])(?P<currency>(?:US)?[$€£]\s?)?"
    r"(?P<number>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?![\w/]|[.,]\d)"
    r"(?P<magnitude>\s?%|\s+percent\b|\s+(?:thousand|million|billion)\b)?",
    re.IGNORECASE,
)
_MONTH_RE = re.compile(rf"\b(?:{_MONTHS})\b", re.IGNORECASE)
_DAY_BEFORE_RE = re.compile(rf"\b(?:{_MONTHS})\.?\s*$", re.IGNORECASE)
_LIST_JOIN_RE = re.compile(r"\s*(?:,\s*(?:and\s+)?|and\s+)")
_TIED_YEAR_RE = re.compile(
    r"\s*(?:in|for|during|at)\s+(?:fiscal\s+(?:year\s+)?|the\s+(?:fiscal\s+)?year\s+)?"
    r"((?:19|20)\d{2})(?!\d)",
    re.IGNORECASE,
)
_RESPECTIVELY_RE = re.compile(r"\brespectively\b", re.IGNORECASE)
_PLAIN_WORDS = frozenset(
    routing_terms(
        "what was is were are the value amount total number of in for during year years "
        "fiscal how much did at as end ended company"
    )
)


@dataclass(frozen=True, slots=True)
class _Number:
    start: int
    end: int
    written: str
    value: Decimal
    magnitude: str
    amount: bool  # written with a currency or a scale word or as a percent


def _numbers(sentence: str) -> tuple[list[_Number], list[tuple[int, int, int]]]:
    """The numbers of ``sentence`` (not years, nor days of a month, nor a percent repeated in
    parentheses), and its years (start, end, year)."""
    years = [(m.start(1), m.end(1), int(m.group(1))) for m in _YEAR_RE.finditer(sentence)]
    at_years = {start for start, _, _ in years}
    dates = [m.span() for m in _DATE_RE.finditer(sentence)]
    found: list[_Number] = []
    for match in _NUMBER_RE.finditer(sentence):
        if match.start("number") in at_years and not match["currency"] and not match["magnitude"]:
            continue
        if _DAY_BEFORE_RE.search(sentence, 0, match.start()) or any(
            start <= match.start() < end for start, end in dates
        ):
            continue  # "december 31, 2007", "2/11/11"
        magnitude = (match["magnitude"] or "").strip().casefold()
        magnitude = "%" if magnitude in ("%", "percent") else magnitude
        written = match.group(0).strip()
        value = Decimal(match["number"].replace(",", ""))
        previous = found[-1] if found else None
        if (
            previous is not None
            and previous.value == value
            and sentence[previous.end : match.start()].strip() == "("
        ):
            continue  # "3.375% (3.375%)": the cleaned source's repeat
        amount = bool(match["currency"] or magnitude)
        found.append(_Number(match.start(), match.end(), written, value, magnitude, amount))
    return found, years


def _runs(items: Sequence[tuple[int, int]], sentence: str) -> list[list[int]]:
    """Indexes of ``items`` (spans, in order) grouped into lists joined by ``,`` / ``and``."""
    runs: list[list[int]] = []
    for index, (start, _) in enumerate(items):
        if runs and _LIST_JOIN_RE.fullmatch(sentence[items[runs[-1][-1]][1] : start]):
            runs[-1].append(index)
        else:
            runs.append([index])
    return runs


def _asked_year(question: str, reading: QuestionReading) -> int | bool | None:
    """The fiscal year asked (``None``: no period asked), or ``False`` when the question asks
    for no single amount a sentence could state."""
    if reading.operation is not Operation.LOOKUP or reading.second_operation:
        return False
    if not _FIGURE_ASKED_RE.match(question):
        return False
    if not reading.days and _MONTH_RE.search(question):
        return False  # "in february of 2009": a month's figure, which a year's is not
    years = {p for p in reading.periods}
    if len(years) > 1 or any(not re.fullmatch(r"FY\d{4}", p) for p in years):
        return False
    if not years and not _AMOUNT_RE.search(question):
        return False
    unnamed = _SHORT_YEAR_RE.sub(" ", _YEAR_RE.sub(" ", _DATE_RE.sub(" ", question)))
    if re.search(r"\d", unnamed):
        return False  # "by 1000", "less 100", "$ 26 million": never applied or matched
    return int(next(iter(years))[2:]) if years else None


def _year_end(day: date, fiscal_start_month: int) -> bool:
    """Whether ``day`` is the last day of a fiscal year starting in ``fiscal_start_month``."""
    month = (fiscal_start_month - 2) % 12 + 1
    return day.month == month and day.day == calendar.monthrange(day.year, month)[1]


def quoted_figure(
    question: str, reading: QuestionReading, sentence: str, fiscal_start_month: int = 1
) -> Quote | None:
    """The figure ``sentence`` states for what ``question`` asks (module docstring), as a
    quote without its citation marker (0), or ``None``."""
    year = _asked_year(question, reading)
    if year is False:
        return None
    wanted = {t for t in routing_terms(question) if not t.isdigit()} - _PLAIN_WORDS
    said = set(routing_terms(sentence))
    if not wanted or len(wanted & said) < MIN_SAID * len(wanted):
        return None
    days = days_in(sentence)
    if reading.days and set(days) != set(reading.days):
        return None  # "as of 2/11/11": the sentence must name that day, and no other
    if not reading.days and not all(_year_end(day, fiscal_start_month) for day in days):
        return None  # "on february 13, 2009, the closing price was ...": a day's, not a year's
    numbers, years = _numbers(sentence)
    rate = bool(_RATE_RE.search(question))
    counted = asks_count(question)

    def fits(number: _Number) -> bool:
        if (number.magnitude == "%") != rate:
            return False
        if number.amount:
            return True
        after = re.match(r"\s*([^\W\d_]+)", sentence[number.end :])
        return counted and after is not None and bool(set(routing_terms(after[1])) & wanted)

    chosen: tuple[_Number, str] | None = None
    if isinstance(year, int) and _RESPECTIVELY_RE.search(sentence):
        value_runs = [r for r in _runs([(n.start, n.end) for n in numbers], sentence) if len(r) > 1]
        year_runs = [r for r in _runs([(s, e) for s, e, _ in years], sentence) if len(r) > 1]
        if len(value_runs) == 1 and len(year_runs) == 1:
            listed = [years[i][2] for i in year_runs[0]]
            if len(listed) == len(value_runs[0]) and listed.count(year) == 1:
                chosen = (numbers[value_runs[0][listed.index(year)]], "respectively")
    elif isinstance(year, int):
        tied = [
            (number, int(found[1]))
            for number in numbers
            if (found := _TIED_YEAR_RE.match(sentence, number.end)) is not None
        ]
        mine = [number for number, said_year in tied if said_year == year]
        if len(mine) == 1 and len({y for _, y in tied}) == len(tied):
            chosen = (mine[0], "tied to its year")
        elif not tied and len(numbers) == 1 and {y for _, _, y in years} == {year}:
            chosen = (numbers[0], "the sentence's only figure")
    elif len(numbers) == 1 and not years:
        chosen = (numbers[0], "the sentence's only figure")
    if chosen is None or not fits(chosen[0]):
        return None
    number, how = chosen
    shown_year = next((sentence[s:e] for s, e, y in years if y == year), "")
    return Quote(number.written, number.value, number.magnitude, shown_year, 0, how)


def with_quote(
    answer: Answer, question: str, reading: QuestionReading, fiscal_start_month: int = 1
) -> Answer:
    """``answer`` (a narrative one) leading with the figure its first cited sentence states
    for ``question`` (:func:`quoted_figure`), when there is one; unchanged otherwise."""
    if answer.locale is not Locale.EN or not answer.sentences:
        return answer
    first = answer.sentences[0]
    quote = quoted_figure(question, reading, first.text, fiscal_start_month)
    if quote is None or not first.markers:
        return answer
    quote = replace(quote, marker=first.markers[0])
    texts = TEXTS[answer.locale]
    period = texts["quoted_period"].format(period=quote.period) if quote.period else ""
    lead = texts["quoted"].format(figure=quote.written, period=period, marker=quote.marker)
    return replace(answer, text=f"{lead}\n\n{answer.text}", quote=quote)
