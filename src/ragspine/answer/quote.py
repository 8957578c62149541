"""The figure a narrative answer's cited sentence states for what the question asks.

``What was the stock-based compensation cost in 2010?``, answered from the sentence "Total
stock-based compensation cost was $36 million, $52 million and $34 million in 2011, 2010 and
2009, respectively.", names ``$52 million`` as what the sentence gives for 2010. The figure
is read from the sentence, never computed, stored or passed on as a fact (contract 2: prose
is never promoted); the answer still shows the whole sentence it comes from. A figure is
named only where a sentence states it plainly, the way a reader would point at it:

- the question asks for one amount (``what ...`` / ``how much ...`` with a year, a day, ``the
  amount of``, ``the value of`` or ``total``), one lookup (no change, sum, share or pick), at
  most one period, which is a fiscal year, and no other number (``by 1000``, ``less an
  initial $100 investment``) and no month alone;
- the sentence states it in one of three forms: ``<subject> was / were / is / are / totaled
  / amounted to [approximately] <figure>`` (or a list of figures), ``had / recorded /
  includes <figure> of <subject>`` (``includes $9.9 million of pre-tax legal expense``) or
  ``<subject> of <figure>`` (``a net loss of $12.3 million``, not after ``to``, ``from``,
  ``than`` or ``in``: ``compared to net income of ...``); the subject says every content word
  of the question and no other content word than dates and a few plain words (``total``,
  ``our``, ``incurred``): ``net income attributable to noncontrolling interests``, ``adjusted
  EBITDA``, ``domestic net revenue`` or ``revenue for the fourth quarter`` is another figure,
  and so is one narrowed after it (``$5 million related to the notes``);
- the year asked is tied to it: the subject's only year (``Revenue in 2019 was $5.0
  billion, up from ...``), a year right after it (``$6.1 billion in 2011``, each so tied
  once), a place in two equal lists joined by ``respectively``, or the sentence's only year;
  a day the sentence names is the day asked or, with none asked, a fiscal year's end; with
  no period asked, the sentence names no year;
- nothing makes it another kind of figure: no word of a forecast or a condition (``expect``,
  ``will``, ``would``, ``may``, ``estimated``), no comparison or change in the subject, no
  range or bound (``$1.0 to $1.2 billion``, ``up to``), no ``(in thousands)`` note whose scale
  the figure does not carry, and it is written as an amount (a currency, a scale word or a
  percent; a percent exactly when a rate, a percentage, a share or a margin is asked).

Every sentence of the answer is read; when two name different figures, none is named. Anything
else names no figure: the sentences are the answer, as before. English questions only.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass, replace
from datetime import date
from decimal import Decimal

from ragspine.analysis import routing_terms
from ragspine.answer.locale import TEXTS, Locale
from ragspine.answer.question import Operation, QuestionReading, asks_count
from ragspine.answer.types import Answer, Quote
from ragspine.structured.headers import MONTH_WORDS, days_in

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
_MONTH_RE = re.compile(rf"\b(?:{_MONTHS})\b", re.IGNORECASE)
_YEAR_RE = re.compile(r"(?<![\w$€£.,])(?:fy\s?)?((?:19|20)\d{2})(?![\w%]|[.,]\d)", re.IGNORECASE)
_SHORT_YEAR_RE = re.compile(r"\b(?:fy|f)\s?-?'?\d{2}\b|'\d{2}\b", re.IGNORECASE)
_FIGURE = (
    r"(?P<sign>[-\u2212])?(?P<currency>(?:US)?[$€£]\s?)?(?P<inner>[-\u2212])?"
    r"(?P<number>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?![\w/]|[.,]\d)"
    r"(?P<magnitude>\s?%|\s+percent\b|\s+(?:thousand|million|billion)\b)?"
)
_FIGURE_RE = re.compile(_FIGURE, re.IGNORECASE)
_APPROXIMATELY = r"(?:(?:approximately|about|nearly|roughly)\s+)?"
_COPULA_RE = re.compile(
    r"\b(?:was|were|is|are|totaled|totalled|amounted\s+to|equaled|equalled)\s+" + _APPROXIMATELY,
    re.IGNORECASE,
)
_LIST_JOIN_RE = re.compile(r"\s*(?:,\s*(?:and\s+)?|and\s+)", re.IGNORECASE)
_TIED_YEAR_RE = re.compile(
    r"\s*(?:in|for|during|at)\s+(?:fiscal\s+(?:year\s+)?|the\s+(?:fiscal\s+)?year\s+)?"
    r"((?:19|20)\d{2})(?!\d)",
    re.IGNORECASE,
)
_OF_RE = re.compile(r"\s+of\s+(?!(?:the|our|its|their|this|that|these|those|which)\b)", re.I)
_RANGE_AFTER_RE = re.compile(r"\s*(?:to|through|-|\u2013|\u2014)\s*[-\u2212$€£]?\s?\d", re.I)
_HAD_RE = re.compile(
    r"\b(?:had|has|have|held|holds|recorded|recognized|incurred|includes?|included|including"
    r"|experienced|accrued|carried)\s+" + _APPROXIMATELY + r"$",
    re.IGNORECASE,
)
"""What may come before ``<figure> of <subject>``: a level held or recorded (``had $0.3
million of tax credit carryforwards``), not a flow or a part (``repaid $500 million of
debt``, ``an additional $500 million of``)."""
_SUBJECT_END_RE = re.compile(
    r"[;:(]|(?<!\d),(?=\s+[^\W\d_])|\s(?:that|which|who|whom|whose|where|while)\b", re.I
)
"""Where a subject starts, looking back from its verb: after a clause's comma (``In
connection with ... PSUs, the tax benefits ... were``), never one of a date or a list of
years (``On February 11, 2011, the closing price``, ``In 2019, revenue``)."""
_PHRASE_END_RE = re.compile(
    r"[,;:.()]|\s(?:that|which|who|whose|and|or|but|while|as|in|for|during|at|on)\s", re.I
)
_RESPECTIVELY_RE = re.compile(r"\brespectively\b", re.IGNORECASE)
_OF_FIGURE_RE = re.compile(r"\s+of\s+" + _APPROXIMATELY + r"(?=[-\u2212$€£.\d]|US\$)")
_NOUN_PHRASE_START_RE = re.compile(
    r"^|[,;:(]|\b(?:a|an|the|our|its|their|had|has|have|recorded|recognized|incurred|reported"
    r"|experienced|amounts?|amounted|totaled|includes?|included|including|was|were|is|are|to"
    r"|from|with|compared|versus|than|and|or|by|of|in|for|during|at|on)\b",
    re.IGNORECASE,
)
_NOT_THE_FIGURE = frozenset(
    {"to", "from", "with", "compared", "versus", "than", "and", "or", "by", "of", "in", "for",
     "during", "at", "on"}
)  # fmt: skip
"""Words before ``<subject> of <figure>`` that make it another figure than the subject's
(``compared to net income of ...``, ``a decrease in revenue of ...``)."""
_RESPECTIVELY_STEMS = frozenset(routing_terms("respectively"))
_MONTH_STEMS = frozenset(routing_terms(" ".join(sorted(MONTH_WORDS | {"sept"}))))
_SCALE_NOTE_RE = re.compile(r"\bin\s+(?:thousands|millions|billions)\b", re.IGNORECASE)
_NOT_AN_ACTUAL_RE = re.compile(
    r"\b(?:expects?|expected|expecting|anticipat\w*|will|would|might|could|should|"
    r"estimat\w*|project(?:ed|ion|ions)|forecast\w*|guidance|targeted|plans?\s+to|planned|"
    r"intends?|intended|budget\w*|if|pro\s+forma|up\s+to|at\s+least|at\s+most|between)\b"
    r"|(?<!in\s)\bmay\b(?!\s+\d)",
    re.IGNORECASE,
)
_PART_OF_YEAR_RE = re.compile(
    r"\b(?:quarters?|q[1-4]|months?|half|halves|weeks?|ytd|year-to-date|semester|interim)\b",
    re.IGNORECASE,
)
_PLAIN = frozenset(
    routing_terms(
        "what was is were are the a an value amount total number of in for during at as on by "
        "year years fiscal how much did end ended ending our its their company company's "
        "incurred recognized recorded provided each day"
    )
)
"""Content words a subject may say besides the question's (dates and these)."""


@dataclass(frozen=True, slots=True)
class _Figure:
    start: int
    end: int
    written: str
    value: Decimal
    magnitude: str
    amount: bool  # written with a currency or a scale word or as a percent


def _figure(found: re.Match[str], lead: str = "") -> _Figure:
    magnitude = (found["magnitude"] or "").strip().casefold()
    magnitude = "%" if magnitude in ("%", "percent") else magnitude
    value = Decimal(found["number"].replace(",", ""))
    if found["sign"] or found["inner"]:
        value = -value
    amount = bool(found["currency"] or magnitude)
    written = f"{lead}{found.group(0).strip()}".replace("\u2212", "-")
    return _Figure(found.start(), found.end(), written, value, magnitude, amount)


def _asked_year(question: str, reading: QuestionReading) -> int | bool | None:
    """The fiscal year asked (``None``: no period asked), or ``False`` when the question asks
    for no single amount a sentence could state."""
    if reading.operation is not Operation.LOOKUP or reading.second_operation:
        return False
    if not _FIGURE_ASKED_RE.match(question):
        return False
    if not reading.days and _MONTH_RE.search(question):
        return False  # "in february of 2009": a month's figure, which a year's is not
    years = set(reading.periods)
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


def _years(text: str) -> list[int]:
    return [int(m.group(1)) for m in _YEAR_RE.finditer(text)]


def _words(text: str) -> set[str]:
    """The content words of ``text`` (stems), dates and numbers left out."""
    undated = _YEAR_RE.sub(" ", _DATE_RE.sub(" ", text))
    words = {w.removesuffix("'s") for w in routing_terms(undated)}
    return {w for w in words if len(w) > 1 and not any(c.isdigit() for c in w)}


def _said_plainly(subject: str, wanted: set[str]) -> bool:
    """Whether ``subject`` says every word ``wanted`` and no other content word than dates,
    months and :data:`_PLAIN` ones."""
    said = _words(subject)
    return wanted <= said and said - wanted - _PLAIN - _MONTH_STEMS == set()


def _items(sentence: str, at: int) -> tuple[list[tuple[_Figure, int | None]], int]:
    """The figures listed from ``at`` (``$6.8 billion in 2012, $6.1 billion in 2011 and $5.5
    billion in 2010``), each with the year right after it (or ``None``), and where the list
    ends."""
    items: list[tuple[_Figure, int | None]] = []
    end = at
    while True:
        found = _FIGURE_RE.match(sentence, at)
        if found is None or found.start() != at:
            return items, end
        figure = _figure(found)
        if not figure.amount and re.fullmatch(r"(?:19|20)\d{2}", found["number"]):
            return items, end  # "... in 2011, 2010 and 2009": the years, not figures
        tied = _TIED_YEAR_RE.match(sentence, found.end())
        items.append((figure, int(tied[1]) if tied else None))
        end = tied.end() if tied else found.end()
        join = _LIST_JOIN_RE.match(sentence, end)
        if join is None:
            return items, end
        at = join.end()


def _plain_after(sentence: str, at: int, wanted: set[str]) -> bool:
    """Whether the words from ``at`` to the next ``,`` ``;`` or sentence end say nothing more
    of the figure than dates and plain words (``... $5 million related to the notes`` is a
    part of the figure asked)."""
    stop = re.compile(r"[,;]|\.(?!\d)").search(sentence, at)
    said = _words(sentence[at : stop.start() if stop else len(sentence)])
    return said - wanted - _PLAIN - _MONTH_STEMS - _RESPECTIVELY_STEMS == set()


def _listed_years(sentence: str, after: int) -> list[int]:
    """The years listed after ``after`` before ``respectively`` (``in 2011, 2010 and 2009,
    respectively``)."""
    tail = sentence[after:]
    end = _RESPECTIVELY_RE.search(tail)
    return _years(tail[: end.start()]) if end else []


def _stated(sentence: str, wanted: set[str], year: int | None) -> list[tuple[_Figure, str]]:
    """Each figure ``sentence`` states plainly for ``wanted`` in ``year`` (module docstring),
    with how the sentence ties it."""
    found: list[tuple[_Figure, str]] = []
    every_year = _years(sentence)
    if _SHORT_YEAR_RE.search(sentence):
        every_year.append(0)  # "FY18", "'19": a year, though not one read
    for copula in _COPULA_RE.finditer(sentence):
        before = sentence[: copula.start()]
        boundaries = list(_SUBJECT_END_RE.finditer(before))
        subject = before[boundaries[-1].end() :] if boundaries else before
        if not _said_plainly(subject, wanted) or _PART_OF_YEAR_RE.search(subject):
            continue
        lead = sentence[copula.start() : copula.end()]
        approximately = re.search(_APPROXIMATELY + r"$", lead)
        items, end = _items(sentence, copula.end())
        if not items or _RANGE_AFTER_RE.match(sentence, items[-1][0].end):
            continue
        if not _plain_after(sentence, end, wanted):
            continue
        said_years = _years(subject)
        ties = [tied for _, tied in items]
        respectively = len(items) > 1 and bool(_RESPECTIVELY_RE.search(sentence))
        chosen: tuple[_Figure, str] | None = None
        if year is None:
            if not every_year and len(items) == 1:
                chosen = (items[0][0], "the subject's only figure")
        elif respectively:
            # "... $34 million in 2011, 2010 and 2009, respectively": the last figure's "in
            # 2011" opens the list of years; it is no year of that figure alone
            opens = ties[-1] is not None and not any(ties[:-1])
            listed = said_years or (
                _listed_years(sentence, items[-1][0].end) if opens or not any(ties) else []
            )
            if len(listed) == len(items) and listed.count(year) == 1:
                chosen = (items[listed.index(year)][0], "respectively")
        elif all(t is not None for t in ties):
            if ties.count(year) == 1 and len(set(ties)) == len(ties) and not said_years:
                chosen = (items[ties.index(year)][0], "tied to its year")
        elif ties == [None] and (said_years == [year] or (not said_years and every_year == [year])):
            chosen = (items[0][0], "the only figure for its year")
        if chosen is not None:
            figure, how = chosen
            if approximately is not None and figure is items[0][0] and approximately.group(0):
                figure = replace(figure, written=f"{approximately.group(0)}{figure.written}")
            found.append((figure, how))
    for of in _OF_RE.finditer(sentence):
        figure_match = None
        for candidate in _FIGURE_RE.finditer(sentence, 0, of.start()):
            if candidate.end() == of.start():
                figure_match = candidate
        if figure_match is None or not _HAD_RE.search(sentence, 0, figure_match.start()):
            continue
        closing = _PHRASE_END_RE.search(sentence, of.end())
        subject = sentence[of.end() : closing.start() if closing else len(sentence)]
        if not _said_plainly(subject, wanted) or _PART_OF_YEAR_RE.search(subject):
            continue
        if closing is not None and not _plain_after(sentence, closing.start(), wanted):
            continue
        if (year is None and not every_year) or (year is not None and every_year == [year]):
            found.append((_figure(figure_match), "the figure of its subject"))
    for of in _OF_FIGURE_RE.finditer(sentence):  # "a net loss of $12.3 million in 2019"
        figure_match = _FIGURE_RE.match(sentence, of.end())
        if figure_match is None or _RANGE_AFTER_RE.match(sentence, figure_match.end()):
            continue
        opening = list(_NOUN_PHRASE_START_RE.finditer(sentence, 0, of.start()))
        if not opening or opening[-1].group(0).strip().casefold() in _NOT_THE_FIGURE:
            continue  # "compared to net income of $500 million", "an increase of ..."
        subject = sentence[opening[-1].end() : of.start()]
        if not _said_plainly(subject, wanted) or _PART_OF_YEAR_RE.search(subject):
            continue
        tied = _TIED_YEAR_RE.match(sentence, figure_match.end())
        end_at = tied.end() if tied else figure_match.end()
        if not _plain_after(sentence, end_at, wanted):
            continue
        if year is None and every_year:
            continue
        if year is not None and not (
            (tied is not None and int(tied[1]) == year) or (tied is None and every_year == [year])
        ):
            continue
        figure = _figure(figure_match)
        if of.group(0).strip().casefold() != "of":  # "of approximately $16 million"
            figure = replace(figure, written=f"{of.group(0).split(None, 1)[1]}{figure.written}")
        found.append((figure, "the figure its subject is of"))
    return found


def quoted_figure(
    question: str, reading: QuestionReading, sentence: str, fiscal_start_month: int = 1
) -> Quote | None:
    """The figure ``sentence`` states for what ``question`` asks (module docstring), as a
    quote without its citation marker (0), or ``None``."""
    year = _asked_year(question, reading)
    if year is False or _SCALE_NOTE_RE.search(sentence):
        return None
    said = {m.group(0).casefold() for m in _NOT_AN_ACTUAL_RE.finditer(question)}
    if any(m.group(0).casefold() not in said for m in _NOT_AN_ACTUAL_RE.finditer(sentence)):
        return None  # a forecast or a condition, unless the question names it (an "expected
        # long-term rate of return" asked for is a term, not a forecast)
    days = days_in(sentence)
    if reading.days and set(days) != set(reading.days):
        return None  # "as of 2/11/11": the sentence must name that day, and no other
    if not reading.days and not all(_year_end(day, fiscal_start_month) for day in days):
        return None  # "on february 13, 2009, the closing price was ...": a day's, not a year's
    if year is not None and _PART_OF_YEAR_RE.search(sentence):
        return None  # "revenue was $1.2 billion in the fourth quarter of 2019"
    wanted = _words(question) - _PLAIN
    if not wanted:
        return None
    rate = bool(_RATE_RE.search(question))
    counted = asks_count(question)  # "the number of employees was 15,000": a bare count
    stated = [
        (figure, how)
        for figure, how in _stated(sentence, wanted, year)
        if (figure.amount or (counted and not figure.magnitude))
        and (figure.magnitude == "%") == rate
    ]
    if len({(f.value, f.magnitude) for f, _ in stated}) != 1:
        return None
    figure, how = stated[0]
    shown_year = next(
        (m.group(1) for m in _YEAR_RE.finditer(sentence) if int(m.group(1)) == year), ""
    )
    return Quote(figure.written, figure.value, figure.magnitude, shown_year, 0, how)


def with_quote(
    answer: Answer, question: str, reading: QuestionReading, fiscal_start_month: int = 1
) -> Answer:
    """``answer`` (a narrative one) leading with the figure its cited sentences state for
    ``question`` (:func:`quoted_figure`), when they state one (the first such sentence cites
    it; two naming different figures name none); unchanged otherwise."""
    if answer.locale is not Locale.EN or not answer.sentences:
        return answer
    quotes = [
        replace(found, marker=sentence.markers[0])
        for sentence in answer.sentences
        if sentence.markers
        and (found := quoted_figure(question, reading, sentence.text, fiscal_start_month))
    ]
    if not quotes or len({(q.value, q.magnitude) for q in quotes}) != 1:
        return answer
    quote = quotes[0]
    texts = TEXTS[answer.locale]
    period = texts["quoted_period"].format(period=quote.period) if quote.period else ""
    lead = texts["quoted"].format(figure=quote.written, period=period, marker=quote.marker)
    return replace(answer, text=f"{lead}\n\n{answer.text}", quote=quote)
