"""Column headers that are dates: the fiscal year a balance date or a year end belongs to.

Report tables head their columns with the date a balance is struck or a year ends more often
than with a year: ``At December 31, 2019``, ``As at 31 March 2019``, ``52 weeks ended 30 June
2019``, ``for the years ended december 31 , 2017``, ``12/31/2016``, ``december 30 2006``,
``31-dec-2013``, ``dec . 31 2008`` (a tokenizer's spaced abbreviation), ``as of december
2012`` (a month: its last day), ``31.12.2019``, ``2019-12-31``, ``Al 31 dicembre 2019``,
``Esercizio chiuso al 31 dicembre 2019``. Such a
header names the fiscal year that contains the date (:func:`ragspine.periods.period_of_date`),
also for a 52/53-week year that ends in early January (``1/3/2015`` is FY2015: moving it to the
year before was measured and made more TAT-QA and ConvFinQA answers wrong, not fewer). Headers
of shorter spans (``Three months ended ...``) and impossible dates (``February 30, 2019``) are
not periods.
"""

from __future__ import annotations

import calendar
import itertools
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import date
from typing import TypeVar

import Stemmer

from ragspine.periods import ITALIAN_MONTHS, PeriodKind, full_year, period_of_date

K = TypeVar("K")

_MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|december"
    "|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec|" + "|".join(ITALIAN_MONTHS)
)
_MONTH_NUMBERS = {
    name[:3]: number
    for names in (_MONTHS.split("|")[:12], ITALIAN_MONTHS)
    for number, name in enumerate(names, 1)
}
MONTH_WORDS = frozenset(_MONTHS.split("|"))
"""Month names and their abbreviations, lower case (English; Italian names in full)."""
_ORDINAL = r"(?:st|nd|rd|th)?"
_NUMERIC_DAY = (
    r"(?P<m3>\d{1,2})/(?P<d3>\d{1,2})/(?P<y3>\d{4}|\d{2})"
    r"|(?P<a6>\d{1,2})(?P<s6>[.-])(?P<b6>\d{1,2})(?P=s6)(?P<y6>\d{4})"
    r"|(?P<y7>\d{4})(?P<s7>[-/.])(?P<m7>\d{1,2})(?P=s7)(?P<d7>\d{1,2})"
)
"""A day in figures: ``12/31/2019`` and ``12/31/19`` (month first, as in US reports),
``31.12.2019`` (day first, as in European ones), ``12-31-2019``, ISO ``2019-12-31`` and
``2019/12/31`` (a year first is always followed by its month). Where
the first number cannot be a month (``31/12/2019``, ``31-12-2019``) the day comes first; where
the second cannot be (``12.31.2019``), the month does."""
_DATED = re.compile(
    r"(?:(?:balance\s+)?(?:at|as\s+at|as\s+of|(?:for\s+the\s+)?(?:fiscal\s+)?years?[\s-]+ended"
    r"|5[23]\s+weeks\s+ended|ended"
    r"|(?:saldo\s+)?(?:al|alla\s+data\s+del|(?:per\s+l['\u2019]\s*)?(?:esercizio|anno)\s+chiuso\s+al"
    r"|(?:per\s+gli\s+)?esercizi\s+chiusi\s+al))\s+)?"
    rf"(?:(?P<m1>{_MONTHS})\s*\.?\s+(?P<d1>\d{{1,2}}){_ORDINAL}\s*,?\s*(?:of\s+)?(?P<y1>\d{{4}})"
    rf"|(?P<d2>\d{{1,2}}){_ORDINAL}\s+(?:of\s+)?(?P<m2>{_MONTHS})\.?\s*,?\s*(?:of\s+)?(?P<y2>\d{{4}})"
    rf"|{_NUMERIC_DAY}"
    rf"|(?P<d4>\d{{1,2}})-(?P<m4>{_MONTHS})-(?P<y4>\d{{4}}|\d{{2}})"
    rf"|(?P<m5>{_MONTHS})\s*\.?\s*,?\s*(?P<y5>\d{{4}}))",
    re.IGNORECASE,
)


_SPLIT_YEAR = re.compile(
    r"(?:fy\s*)?(?P<first>(?:19|20)\d{2})\s*/\s*(?P<second>\d{4}|\d{2})"
    r"|fy\s*(?P<first2>(?:19|20)\d{2})\s*[\u2013-]\s*(?P<second2>\d{2})"
    r"|fy\s*(?P<short>\d{2})\s*[/\u2013-]\s*(?P<second3>\d{2})",
    re.I,
)


def split_year_period(text: str) -> str | None:
    """The fiscal year of a split-year header (``2018/2019``, ``2018/19``, ``FY 2018/19``, ``FY
    2018-19``, ``FY18/19``): the year it ends in; None unless the two years follow each other.
    A hyphen without ``FY`` is no split year (``2021-22`` heads a bucket of two years in a
    maturity table; ``2018-2019`` is a span of years)."""
    found = _SPLIT_YEAR.fullmatch(" ".join(text.split()))
    if found is None:
        return None
    if found["short"]:  # "FY18/19"
        first, second = 2000 + int(found["short"]), found["second3"]
    else:
        first = int(found["first"] or found["first2"])
        second = found["second"] or found["second2"]
    end = int(second) if len(second) == 4 else first // 100 * 100 + int(second)
    if len(second) == 2 and end <= first:  # 1999/00
        end += 100
    return f"FY{end}" if end == first + 1 else None


_MONTH_YEAR = re.compile(r"(?P<month>\d{1,2})\s*/\s*(?P<year>\d{2})")


def month_year_periods(
    headers: Sequence[str], fiscal_start_month: int = 1, latest_year: int | None = None
) -> list[str] | None:
    """The fiscal year of each of ``headers`` when they are the ends of one month in years
    that follow each other (``12/09``, ``12/10``, ... ``12/14``: a performance graph's
    December of each year), or None. A lone ``12/14``, months that differ, years that skip
    or a year after ``latest_year`` (the report's own year; this year when it is not known:
    ``12/30 | 12/31`` in a 2014 report are two days of December) are read as nothing: ``12/14``
    may be a day without its year."""
    ends = [month_end_of(header) for header in headers]
    days = [day for day in ends if day is not None]
    if len(days) < 2 or len(days) < len(ends) or len({day.month for day in days}) != 1:
        return None
    ordered = sorted(day.year for day in days)
    if any(later != earlier + 1 for earlier, later in itertools.pairwise(ordered)):
        return None
    if ordered[-1] > (latest_year or date.today().year):  # "12/30 | 12/31": two days
        return None
    return [period_of_date(day, PeriodKind.YEAR, fiscal_start_month).label for day in days]


def dated_period(text: str, fiscal_start_month: int = 1) -> str | None:
    """The fiscal-year label of a header that is a date (see the module docstring), or None."""
    when = date_of(text)
    if when is None:
        return None
    return period_of_date(when, PeriodKind.YEAR, fiscal_start_month).label


def date_of(text: str) -> date | None:
    """The day a header that is a date names (``31 December 2019``, ``December 31, 2019``,
    ``12/31/19``, ``As at 30 June 2019``; a month alone is its last day), or None."""
    found = _DATED.fullmatch(" ".join(text.split()))
    if found is None:
        return None
    return _day_of(found)


def _day_of(found: re.Match[str]) -> date | None:
    """The day matched by the groups ``m1``-``d1``-``y1`` ... ``m4``-``d4``-``y4``, the
    figures of :data:`_NUMERIC_DAY`, or the last day of the month ``m5``-``y5``; None for an
    impossible one (``February 30, 2019``, ``13/13/2019``)."""
    groups = found.groupdict()
    if groups.get("m3"):
        month, day = _month_and_day(int(found["m3"]), int(found["d3"]), day_first=False)
        year = int(found["y3"])
    elif groups.get("a6"):
        day_first = found["s6"] == "."
        month, day = _month_and_day(int(found["a6"]), int(found["b6"]), day_first=day_first)
        year = int(found["y6"])
    elif groups.get("y7"):
        month, day, year = int(found["m7"]), int(found["d7"]), int(found["y7"])
    elif groups.get("m5"):
        month, day, year = _MONTH_NUMBERS[found["m5"].casefold()[:3]], None, int(found["y5"])
    else:
        name = (found["m1"] or found["m2"] or found["m4"]).casefold()[:3]
        month, day = _MONTH_NUMBERS[name], int(found["d1"] or found["d2"] or found["d4"])
        year = int(found["y1"] or found["y2"] or found["y4"])
    year = full_year(str(year)) if year < 100 else year
    try:
        last = calendar.monthrange(year, month)[1] if 1 <= month <= 12 else 0
        return date(year, month, last if day is None else day)
    except ValueError:
        return None


_DAY_IN_TEXT = re.compile(
    rf"(?<![\w/])(?:(?P<m1>{_MONTHS})\s*\.?\s+(?P<d1>\d{{1,2}}){_ORDINAL}\s*,?\s*"
    r"(?:of\s+)?(?P<y1>\d{4})"
    rf"|(?P<d2>\d{{1,2}}){_ORDINAL}\s+(?:of\s+)?(?P<m2>{_MONTHS})\.?\s*,?\s*(?:of\s+)?(?P<y2>\d{{4}})"
    rf"|(?<![.-])(?:{_NUMERIC_DAY})"
    rf"|(?P<d4>\d{{1,2}})-(?P<m4>{_MONTHS})-(?P<y4>\d{{4}}|\d{{2}}))(?![\w/]|[.-]\d)",
    re.IGNORECASE,
)


def _month_and_day(first: int, second: int, *, day_first: bool) -> tuple[int, int]:
    """The month and the day of a day in figures whose first two numbers are ``first`` and
    ``second``: the order its separator implies (``day_first``), unless only the other one
    names a month."""
    month_first_only, day_first_only = second > 12 >= first, first > 12 >= second
    if (day_first and month_first_only) or (not day_first and day_first_only):
        day_first = not day_first
    return (second, first) if day_first else (first, second)


YEARLESS_DAY = re.compile(
    r"^\s*(?:(?:as\s+of|as\s+at|at|(?:for\s+the\s+)?(?:fiscal\s+)?years?\s+ended)\s+)?"
    rf"(?P<month>{'|'.join(sorted(MONTH_WORDS, key=len, reverse=True))})\s*\.?\s*"
    r"(?P<day>\d{1,2})(?:st|nd|rd|th)?\s*[,:](?:\s*[,:])*(?!\s*[-\u2013\d])",
    re.IGNORECASE,
)
"""A day without its year leading a label (``december 31 , average investments``, ``Year
Ended December 31,: Conventional Tankers``): a table's corner glued to its row or column, that
says at which day of its year each figure was read (:func:`yearless_day`), not which figure it
is; not a span of days (``december 1-31: shares purchased``, ``june 1, - june 30,: shares``
name a month)."""


def yearless_day(text: str, year_start: date, year_end: date) -> date | None:
    """The day of the year from ``year_start`` to ``year_end`` that a leading day without its
    year (:data:`YEARLESS_DAY`) in ``text`` names, or None."""
    found = YEARLESS_DAY.match(text)
    if found is None:
        return None
    month = _MONTH_NUMBERS[found["month"].casefold()[:3]]
    for year in (year_end.year, year_start.year):
        try:
            day = date(year, month, int(found["day"]))
        except ValueError:
            continue
        if year_start <= day <= year_end:
            return day
    return None


def month_end_of(text: str) -> date | None:
    """The last day of the month a ``12/14`` header names (December 2014: how
    :func:`month_year_periods` reads a series of them), or None."""
    found = _MONTH_YEAR.fullmatch(" ".join(text.split()))
    if found is None or not 1 <= (month := int(found["month"])) <= 12:
        return None
    year = full_year(found["year"])
    return date(year, month, calendar.monthrange(year, month)[1])


YEAR_END_TOLERANCE = 7
"""Days by which a column's day may miss its fiscal year's last day and still be its end (a
52/53-week year ending ``December 28, 2019``)."""

INTERIM_REASON = "a day inside its fiscal year beside a year end: an interim figure, not the year's"


def interim_days(days: Mapping[K, date], fiscal_start_month: int = 1) -> set[K]:
    """The keys (columns) of ``days`` whose day lies inside its fiscal year where the table
    also has a column at a fiscal year's end, or where its columns fall on unlike days: a
    half-year balance sheet's ``June 30, 2019`` beside ``December 31, 2018`` (read as the year
    2019 it would answer ``at the end of 2019``). A day within :data:`YEAR_END_TOLERANCE` of
    a fiscal year's end or start is at a year end (a 52/53-week year ending ``January 3,
    2015``; an IFRS 16 column ``1 January 2019``, left to the first-day rule), and columns
    all on one day of the year (``June 30, 2019 | June 30, 2018``: a June year end) are
    fiscal years as before. A column sharing its fiscal year with another is not returned:
    the two stay ambiguous (``november 17 2011 | december 31 2011``, a graph from a listing
    day: which one ``2011`` means is not known)."""
    if len(days) < 2:
        return set()
    near = {key: near_a_year_end(day, fiscal_start_month) for key, day in days.items()}
    if all(near.values()):
        return set()
    if not any(near.values()) and _one_day_of_the_year(list(days.values())):
        return set()
    years = Counter(
        period_of_date(day, PeriodKind.YEAR, fiscal_start_month) for day in days.values()
    )
    return {  # two columns of one year stay ambiguous, as any two are (neither is read)
        key
        for key, at_end in near.items()
        if not at_end and years[period_of_date(days[key], PeriodKind.YEAR, fiscal_start_month)] == 1
    }


def near_a_year_end(day: date, fiscal_start_month: int) -> bool:
    """Whether ``day`` is within :data:`YEAR_END_TOLERANCE` of a fiscal year's end or start."""
    start, end = period_of_date(day, PeriodKind.YEAR, fiscal_start_month).date_range(
        fiscal_start_month
    )
    return (day - start).days < YEAR_END_TOLERANCE or (end - day).days <= YEAR_END_TOLERANCE


def _one_day_of_the_year(days: Sequence[date]) -> bool:
    """Whether ``days`` all fall within :data:`YEAR_END_TOLERANCE` of one day of the year."""
    places = [
        date(2001, d.month, min(d.day, 28) if d.month == 2 else d.day).timetuple().tm_yday
        for d in days
    ]
    return all(
        min(abs(p - places[0]), 365 - abs(p - places[0])) <= YEAR_END_TOLERANCE for p in places
    )


def days_in(text: str) -> list[date]:
    """Every day a text names with its year (``December 31, 2019``, ``31 december 2019``,
    ``12/31/19``, ``31-dec-2019``, a tokenizer's ``december 31 , 2013``), in order; a month
    alone names no day."""
    found = (_day_of(match) for match in _DAY_IN_TEXT.finditer(" ".join(text.split())))
    return [day for day in found if day is not None]


_YEAR_WORD = re.compile(r"(?:19|20)\d{2}")
ANY_YEAR = re.compile(r"(?<!\d)(?:19|20)\d{2}(?!\d)")
"""A four-digit year anywhere in a text (not inside a longer number): a table whose texts hold
one states a period, and is never read as undated."""
_NOT_A_CAPTION = re.compile(
    r"(?<!\w)(?:months?|quarters?|q[1-4]|h[12]|weeks?|half|halves|ytd|mtd|qtd|change|changes"
    r"|v|vs|versus|to|through|from|since|until|high|low|first|second|third|fourth|budgets?"
    r"|forecasts?|estimated?|estimates|plan|planned|target|targets|projected|projections?"
    r"|pro|forma|outlook|guidance|per|percent|percentage|share"
    r"|notes?|loans?|bonds?|debentures?|tranches?|series|facility|programs?|programmes?|awards?"
    r"|grants?|cohorts?|vintages?|due|expiring|expires?|maturing|maturity|matures"
    r"|period|interim|mesi|semestre|trimestre|periodo)(?!\w)|%|(?:19|20)\d{2}",
    re.IGNORECASE,
)
"""Caption words that make a column something other than the fiscal year it names: a shorter
span (``q4 2012``, ``ytd 2019``, ``Semestre chiuso al 30 giugno 2019``, ``Period ended June
30, 2019``), a comparison, a plan rather than actuals (``budget 2019``, ``pro forma 2012``), a
ratio (``per share 2019``, ``% of total 2019``), another year, or an instrument or programme
named by its year (``2019 Notes``, ``2021 Term Loan``, ``Senior Notes due 2021``, ``2018
Awards``, ``Expiring 2021``)."""
_LONGEST_DATE = 10
"""The most words the date part of a header takes (``for the fiscal years ended december 31
, 2012``): only that many cuts are tried, so a long header costs time in proportion to it."""


_YEAR_FIRST_CAPTION = re.compile(
    r"(?:fiscal\s+(?:year\s+)?|fy\s*)?(?P<year>(?:19|20)\d{2})\s+(?P<caption>[^\W\d_][^%]*)",
    re.IGNORECASE,
)


def year_first_caption(text: str) -> tuple[str, str] | None:
    """``(caption, fiscal-year label)`` of a header that is a year over a caption (``Fiscal
    2019 Net Sales``, ``2019 Revenue``), footnote marks aside; None when the caption names
    what :func:`captioned_period` refuses (``2016 high``, ``2019 vs 2018``, ``2019 % of
    total``). Only for a reader that keeps the caption in its rows' names: a caption dropped
    would make ``2016 dividend``'s row ``second`` the second quarter's price."""
    first = _YEAR_FIRST_CAPTION.fullmatch(footnote_free(text))
    if first is None:
        return None
    caption = first["caption"]
    if _NOT_A_CAPTION.search(caption):
        return None
    return caption, f"FY{first['year']}"


def captioned_period(text: str, fiscal_start_month: int = 1) -> tuple[str, str] | None:
    """``(caption, fiscal-year label)`` of a header that is a caption over a year or a date
    (``pension plans 2018``, ``shipment volume for the years ended december 31 , 2012``,
    ``( losses ) earnings 2015``), footnote marks aside; None when the caption names a shorter
    span, a plan, a ratio, a change or another year (``three months ended dec . 28 2013``,
    ``budget 2019``, ``% change 2014 v 2013``, ``2002 high``). The caller decides whether a
    caption may be read past: only when every captioned column of a table shares it (one
    column group)."""
    words = footnote_free(text).split()
    for cut in range(max(1, len(words) - _LONGEST_DATE), len(words)):
        rest = " ".join(words[cut:])
        dated = dated_period(rest, fiscal_start_month)
        if dated is None and cut == len(words) - 1 and _YEAR_WORD.fullmatch(rest):
            dated = f"FY{rest}"
        if dated is None:
            continue
        caption = " ".join(words[:cut])
        if _NOT_A_CAPTION.search(caption) or not any(ch.isalpha() for ch in caption):
            return None
        return caption.rstrip(" ,"), dated
    return None


_FOOTNOTE = re.compile(r"\(\s*[0-9a-z]{1,2}\s*\)|\s*\*+$", re.IGNORECASE)


def footnote_free(label: str) -> str:
    """A row label without footnote marks (``delphi automotive plc ( 1 )``, ``Tax Fees (2)``,
    ``Revenue*``), whitespace collapsed; the label as written when nothing else is left."""
    cleaned = " ".join(_FOOTNOTE.sub(" ", label).split())
    return cleaned or " ".join(label.split())


_stemmer = Stemmer.Stemmer("english")


def label_stems(text: str) -> frozenset[str]:
    """The English stems of the words of a label or sentence (``Options exercised`` ->
    ``option``, ``exercis``), numbers left out."""
    return frozenset(_stemmer.stemWords(re.findall(r"[^\W\d_]+", text.casefold())))
