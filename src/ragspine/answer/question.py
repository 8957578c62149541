"""Reading a question: glossary terms, periods, explanation cues and the operation asked for.

Pure and deterministic. Everything is read from the question's matching form
(:func:`ragspine.analysis.match_key`: NFKC, case folding) on word boundaries. Glossary terms are
found first (:meth:`ragspine.glossary.Glossary.find_terms`, longest match first); their spans are
then blanked, so a period, a cue or an operation word inside a metric name (``amortization 2014
dac``, ``driver costs``) is never read as one. Only the question is read: conversation history
never reaches this module.

The route (:func:`choose_route`): a metric with an entity or a period and no explanation cue is
``structured``; a cue with such a metric is ``composite``; anything else is ``narrative``.
"""

from __future__ import annotations

import calendar
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from enum import StrEnum
from functools import lru_cache

from ragspine.analysis import match_key
from ragspine.answer.metric_match import MetricMatch, placed_within
from ragspine.errors import PeriodError
from ragspine.glossary import Glossary, TermType
from ragspine.periods import (
    ITALIAN_MONTHS,
    RELATIVE_SHIFTS,
    Period,
    PeriodKind,
    parse_period,
    period_of_date,
    shift_period,
)
from ragspine.structured.headers import date_of, split_year_period


class Route(StrEnum):
    STRUCTURED = "structured"
    NARRATIVE = "narrative"
    COMPOSITE = "composite"


class Operation(StrEnum):
    """What a structured question asks of its facts."""

    LOOKUP = "lookup"
    CHANGE = "change"
    PERCENT_CHANGE = "percent_change"
    AVERAGE = "average"
    SHARE = "share"
    RATIO = "ratio"
    SUM = "sum"
    WHICH_PERIODS = "which_periods"
    COUNT_PERIODS = "count_periods"


CALCULATIONS = frozenset(
    {
        Operation.PERCENT_CHANGE,
        Operation.AVERAGE,
        Operation.SHARE,
        Operation.RATIO,
        Operation.SUM,
        Operation.WHICH_PERIODS,
        Operation.COUNT_PERIODS,
    }
)
"""Operations whose answer is a computed number: a passage cannot answer them."""
CHANGES = frozenset({Operation.CHANGE, Operation.PERCENT_CHANGE})
"""The operations that compute a change between periods."""


_DIVIDED = r"(?:divided|diviso)\s+(?:by|per)(?!\s+(?:an?\s+)?[$€£]?\s*\d)"
"""``divided by`` before a figure, not before a number the question gives."""

_OPERATION_WORDS: tuple[tuple[Operation, str], ...] = (
    (
        Operation.PERCENT_CHANGE,
        r"(?:percentage|percent|%) (?:change|increase|decrease|growth|rise|fall|decline"
        r"|difference)"
        r"|change in percent|growth rate"
        r"|(?:change|increase|decrease|growth|variation)\s*\(\s*(?:%|in\s*%|percent|percentage)\s*\)"
        r"|variazione percentuale|variazione %|crescita percentuale",
    ),
    (
        Operation.SHARE,
        r"as a (?:percentage|percent|share) of|share of|percentage of|portion of"
        r"|(?:what|which) (?:percentage|percent|portion|fraction|share)"
        r" (?:is|was|were|are)(?= .{0,120}? of )"
        r"|in percentuale (?:di|del|della|dei|delle|sul|sulla|sui|sulle)"
        r"|quota (?:di|del|della|dei|delle|sul|sulla)|percentuale (?:di|del|della|dei|delle)",
    ),
    (
        Operation.RATIO,
        r"ratio|rapporto|(?:as a )?proportion of|represent(?:s|ed)? in relation to|multiple of"
        # "X divided by the total": one figure over another ("divided by 100" is a constant)
        rf"|{_DIVIDED}",
    ),
    (Operation.AVERAGE, r"(?<!weighted )(?<!weighted-)(?:average|mean)|media|medio"),
    (
        Operation.CHANGE,
        # "the absolute percentage change in the risk-free rate", "the change in percentage
        # points": the difference of two percentages, not their relative change
        r"absolute (?:percentage|percent|%) (?:change|difference)"
        r"|(?:percentage|percent) points? (?:change|difference)|change in percentage points"
        r"|change|changed|changes|grow|grew|grown|growth|increase|increased|decrease|decreased"
        r"|rise|rose|risen|fall|fell|fallen|decline|declined|difference|variation"
        r"|gap|spread|how\s+much\s+(?:higher|more|greater|larger|bigger|lower|smaller|less"
        r"|fewer)(?=\s.{1,120}\sthan\s+(?!(?:\S+\s+){0,3}?\S*\d|twice|double|triple|half))"
        # "how much less were expenses in 2019 compared to 2018": no "than", still the gap
        r"|how\s+much\s+(?:lower|smaller|less|fewer)(?!.{0,120}\sthan\s)"
        r"|variance"
        r"|fluctuation|less(?! than)|minus"
        r"|variazione|variato|variata|cambiato|cambiata|crescita|cresciuto|cresciuta"
        r"|aumento|aumentato|aumentata|calo|calato|calata|diminuito|diminuita|differenza",
    ),
)
_OPERATION_RE = re.compile(
    "|".join(rf"(?<!\w)(?P<{op.name}>{words})(?!\w)" for op, words in _OPERATION_WORDS)
)
_SUM_RE = re.compile(
    r"(?<!\w)(?:sum|summed|combined|total|totals|altogether|cumulative|plus|somma|totale"
    r"|complessivo)(?!\w)"
)
"""Words asking for a sum; read only when no other operation word is present, and only over
two or more periods or metrics (one of each is a lookup). ``respectively`` asks for each value
instead."""
_BOTH_RE = re.compile(r"(?<!\w)(?:both|across|entrambi)(?!\w)")
_WHICH_PERIODS_RE = re.compile(
    r"(?<!\w)(?:(?:in|for|during)\s+)?(?:which|what)\s+(?:of\s+the\s+|are\s+the\s+)?"
    r"(?:fiscal\s+|financial\s+)?(?:years?|periods?|fys?|quarters?|halves|half|months?)(?!\w)"
    r"|(?<!\w)(?:in\s+)?quale\s+(?:anno|periodo)(?!\w)"
)
_OVER_WHAT_PERIOD_RE = re.compile(
    r"(?<!\w)(?:over|within)\s+(?:what|which)\s+(?:period|length|time)(?!\w)"
)
"""``over what period is the cost recognised``: how long, a duration, not which years."""
_COUNT_PERIODS_RE = re.compile(
    r"(?<!\w)(?:in\s+)?how\s+many\s+(?:of\s+the\s+)?(?:fiscal\s+|financial\s+)?"
    r"(?:years|periods)(?!\w)|(?<!\w)(?:in\s+)?quanti\s+(?:anni|periodi)(?!\w)"
)


class Pick(StrEnum):
    """Which periods a ``which year`` / ``how many years`` question selects."""

    ALL = "all"
    HIGHEST = "highest"
    LOWEST = "lowest"
    ABOVE = "above"
    BELOW = "below"
    UNREAD = "unread"
    """A threshold written in a way not read here (``1 000``, ``1.000``, ``1,1 billion``)."""


@dataclass(frozen=True, slots=True)
class Selection:
    """The criterion of a period selection; ``threshold`` (as written, times ``scale`` when the
    question names one) only for ``above`` / ``below``."""

    pick: Pick
    threshold: Decimal | None = None
    scale: str | None = None
    inclusive: bool = False
    """Whether a value equal to the threshold is selected (``at least``, ``not more than``)."""
    bounds: bool = False
    """For :attr:`Pick.UNREAD`: a range or two bounds were said, not an unread number."""


_OR_EQUAL = r"\s+than\s+or\s+equal\s+to"
_ABOVE = (
    rf"(?:greater|more|higher|larger){_OR_EQUAL}|equal\s+to\s+or\s+(?:greater|more|higher|larger)"
    r"\s+than|more than|greater than|higher than|larger than|bigger than|above|over"
    r"|exceed(?:s|ed|ing)?|at least"
)
_BELOW = (
    rf"(?:less|lower|smaller|fewer){_OR_EQUAL}|equal\s+to\s+or\s+(?:less|lower|smaller|fewer)"
    r"\s+than|less than|lower than|fewer than|smaller than|below|under|at most"
)
_SYMBOLS = r">=|\u2265|>|<=|\u2264|<"
_OR_SO = r"\s+or\s+(?:more|above|higher|greater|over|less|below|lower|fewer|under)(?!\s*than\b)"
_NUMBER = r"(?P<num>\d(?:[\d,.]|[ \u00a0\u202f](?=\d{3}(?!\d)))*)"
_THRESHOLD_RE = re.compile(
    rf"(?:(?<!\w)(?P<dir>{_ABOVE}|{_BELOW})|(?<![^\s(])(?P<sym>{_SYMBOLS}))\s*(?:the\s+)?"
    rf"(?P<minus>[-\u2212])?\s*(?:[$€£¥]|usd|eur|gbp)?\s*{_NUMBER}%?"
    r"(?:\s*(?P<scale>thousands?|millions?|billions?|bn|m|k|b(?=\s*(?:[?.,;:)]|$|\s+(?:in|for|during|and|or)\b)))\b)?"
    rf"(?P<or_so>{_OR_SO}(?!\s*[$€£¥]?\s*\d))?"
)
"""A threshold: a comparison (in words, or a sign after a space: never ``/>`` of markup nor
``->``), then its number."""
_TRAILING_BOUND_RE = re.compile(
    rf"(?<![\w.,])(?:[$€£¥]|usd|eur|gbp)?\s*{_NUMBER}%?"
    r"(?:\s*(?P<scale>thousands?|millions?|billions?|bn|m|k|b(?=\s*(?:[?.,;:)]|$|\s+(?:in|for|during|and|or)\b)))\b)?"
    r"\s+or\s+(?P<dir>more|above|higher|greater|over|less|below|lower|fewer|under)(?!\w)"
)
"""A bound said after its number (``1,000 or more``): inclusive."""
_RANGE_RE = re.compile(
    r"(?<!\w)between\s+(?:[$€£¥]\s*)?(?P<low>-?\d[\d,.]*)\s*[^\W\d]*\s+and\s+(?:[$€£¥]\s*)?"
    r"(?P<high>-?\d[\d,.]*)"
)
"""A range as the criterion (``between 900 and 1,100``): not read, so never one bound; two
years (``between 2017 and 2019``) are periods."""
_A_YEAR_RE = re.compile(r"(?:19|20)\d{2}")
_BELOW_RE = re.compile(rf"^(?:{_BELOW})$")
_THRESHOLD_NUMBER_RE = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?")
"""A threshold as read: digits with comma thousands and a decimal point, or none. Digits
grouped by a space or a dot, or a decimal comma, are ambiguous (``1 000``, ``1.000``, ``1,1``)
and are not read as a smaller number."""
_DOT_THOUSANDS_RE = re.compile(r"[1-9]\d{0,2}\.\d{3}")
_NEGATED_RE = re.compile(
    r"(?:(?<!\w)(?:not|no|never|fail(?:s|ed)?\s+to)|n['\u2019]t)"
    r"(?:\s+(?:ever|once|go|goes|went|rise|rises|rose|get|gets|got|come|comes|came))?\s*$"
)
_HIGHEST_RE = re.compile(
    r"(?<!\w)(?:larger|largest|higher|highest|more|most|greater|greatest|bigger|biggest|maximum"
    r"|max|peak|better|best)(?!\w)"
)
_LOWEST_RE = re.compile(
    r"(?<!\w)(?:smaller|smallest|lower|lowest|less|least|fewer|fewest|minimum|min|worse|worst)"
    r"(?!\w)"
)
_SIGN_RE = re.compile(r"(?<!\w)(?P<sign>negative|positive)(?!\w)")


def pick_words(question: str, selection: Selection | None) -> tuple[str, ...]:
    """The words that say how a ``which year`` question picks (``higher`` in ``which year had
    a higher EBITDA``): they choose among periods, and name no figure."""
    if selection is None or selection.pick not in (Pick.HIGHEST, Pick.LOWEST):
        return ()
    pattern = _HIGHEST_RE if selection.pick is Pick.HIGHEST else _LOWEST_RE
    return tuple(found.group(0) for found in pattern.finditer(question.casefold()))


_EXPONENT_RE = re.compile(r"[eE][+-]?\d")


def _selection(rest: str) -> tuple[Selection, tuple[int, int] | None]:
    """The criterion in ``rest`` and the span of its threshold (blanked before periods are
    read, so ``more than 2,000`` is not a year)."""
    ranged = _RANGE_RE.search(rest)
    if ranged is not None and not all(
        _A_YEAR_RE.fullmatch(ranged[end].rstrip(",.")) for end in ("low", "high")
    ):  # "between 900 and 1,100": a range, not read
        return Selection(Pick.UNREAD, bounds=True), None
    found = _THRESHOLD_RE.search(rest)
    if found is not None and found["sym"] and _A_YEAR_RE.fullmatch(found["num"]):
        return Selection(Pick.UNREAD, bounds=True), found.span()  # "years > 2016": no value
    if found is not None and any(
        not _A_YEAR_RE.fullmatch(later["num"])
        for later in _THRESHOLD_RE.finditer(rest, found.end())
    ):
        return Selection(Pick.UNREAD, bounds=True), found.span()  # "under 1,000 but over 900"
    if found is None and (found := _TRAILING_BOUND_RE.search(rest)) is not None:
        below = found["dir"] in ("less", "below", "lower", "fewer", "under")
        inclusive = True  # "1,000 or more"
        if _NEGATED_RE.search(rest, 0, found.start()):  # "not 1,000 or more": below it
            below, inclusive = not below, False
    elif found is not None:
        said = found["dir"] or found["sym"]
        below = bool(_BELOW_RE.match(said)) or said in ("<", "<=", "\u2264")
        inclusive = said.startswith("at ") or "equal" in said or "=" in said
        inclusive = inclusive or said in ("\u2265", "\u2264")
        inclusive = inclusive or bool(found["or_so"])  # "more than 1,000 or more"
        if _NEGATED_RE.search(rest, 0, found.start()):  # "did not exceed": at most
            below, inclusive = not below, not inclusive
    if found is not None:
        written = found["num"].rstrip(",.")
        if not _THRESHOLD_NUMBER_RE.fullmatch(written) or _DOT_THOUSANDS_RE.fullmatch(written):
            return Selection(Pick.UNREAD), found.span()
        if _EXPONENT_RE.match(rest, found.end("num")):  # "exceed 1e3": never read as 1
            return Selection(Pick.UNREAD), found.span()
        try:
            number = Decimal(written.replace(",", ""))
            number = -number if found.groupdict().get("minus") else number
        except ArithmeticError:
            return Selection(Pick.ALL), None
        pick = Pick.BELOW if below else Pick.ABOVE
        return Selection(pick, number, found["scale"], inclusive), found.span()
    sign = _SIGN_RE.search(rest)
    if sign is not None:
        pick = Pick.BELOW if sign["sign"] == "negative" else Pick.ABOVE
        return Selection(pick, Decimal(0)), None
    if _HIGHEST_RE.search(rest):
        return Selection(Pick.HIGHEST), None
    if _LOWEST_RE.search(rest):
        return Selection(Pick.LOWEST), None
    return Selection(Pick.ALL), None


_CONSTANT_RE = re.compile(
    r"(?<!\w)(?:times|multiplied by|divided by|less|minus|plus)\s+"
    r"(?:(?:an?|and|assumed|initial|starting)\s+)*(?:(?:investment|amount|sum)\s+of\s+)?"
    r"[$€£]?\s*\d[\d,]*(?:\.\d+)?(?![\d,]|\.\d)"
    r"(?!\s*(?:%|percent|per\s+cent|bps|basis\s+points?))"
    r"|(?<![\w.,])\d[\d,]*(?:\.\d+)?\s+times(?!\w)(?!\s+(?:faster|slower|more|less|larger"
    r"|greater|higher|lower|bigger|smaller|as|the\s+(?:size|rate|pace)))"
)
"""A number the question gives to compute with (``less an initial $100 investment``, ``less an
initial investment of $100``, ``times 1000``); not a rate spread (``LIBOR plus 1.75%``) nor a
comparison (``2 times faster``). :func:`given_number` reads the other ways a question gives
one."""
_WORDED_RE = re.compile(
    r"(?<!\w)(?<!which\s)(?<!what\s)(?:(?:half|twice|double|triple|quadruple)"
    r"(?=\s+(?:of\s+)?(?:the|its|their|our|[^\s'\u2019]+['\u2019]s)\s)"
    r"|half(?=\s+of\s)|(?:a|one)\s+(?:third|quarter|fifth|tenth)(?=\s+of\s)"
    r"|(?:two|three)\s+(?:thirds|quarters)(?=\s+of\s))"
    r"(?!\s+(?:of\s+)?(?:the\s+|a\s+|an\s+)?(?:years?|months?|quarters?|weeks?|days?|periods?"
    r"|times|as|that|what|which|how|\d)(?!\w))"
)
"""A number in words: ``half of revenue``, ``twice the revenue``, ``a third of X`` (not
``twice a year``, ``a quarter of 2019``; nor ``the first half of 2019``: see
:func:`given_number`)."""
_THAN_NUMBER_RE = re.compile(
    r"(?<!\w)how\s+much\s+(?:higher|more|greater|larger|bigger|lower|smaller|less|fewer)"
    r"\s.{1,120}?\sthan\s+[$€£]?\s*(?!(?:19|20)\d\d(?![\d,]|\.\d))\d[\d,]*(?:\.\d+)?"
    r"(?![\d,]|\.\d)"
)
"""A number to compare with: ``how much higher was revenue than 500`` (not ``than 2018``)."""
_SUPPOSED_RE = re.compile(
    r"(?<!\w)(?:if|assuming|suppose|supposing)\s[^?]{0,80}?(?<![\w.,])\d[\d,]*(?:\.\d+)?"
    r"\s*(?:%|percent|per\s+cent)"
)
"""A number of a supposition: ``if it had grown 10%``, ``assuming a 5% increase``."""
_RARE_RE = re.compile(
    r"(?P<worded>half|twice|double|triple|quadruple|third|quarter|fifth|tenth)"
    r"|(?P<upto>through|thru|until|till|up to)|(?P<far>(?<!\d)(?:1[0-8]|2[1-9])\d\d(?!\d))"
)
"""Words the rarer readings need (:data:`_WORDED_RE`, :data:`_UP_TO_RE`,
:data:`_FAR_YEAR_RE`), found in one pass: the readings run only when theirs is there (this
runs on every question)."""


def _rare(text: str) -> frozenset[str]:
    """Which of :data:`_RARE_RE`'s groups ``text`` holds."""
    return frozenset(found.lastgroup or "" for found in _RARE_RE.finditer(text))


def given_number(text: str, rare: frozenset[str] | None = None) -> str:
    """The words giving a number to compute with (:data:`_CONSTANT_RE`, :data:`_WORDED_RE`,
    :data:`_THAN_NUMBER_RE`, :data:`_SUPPOSED_RE`), or an empty string. The rarer forms are
    looked for only when a word they need is there (``rare``: :func:`_rare` of ``text``)."""
    rare = _rare(text) if rare is None else rare
    found = _CONSTANT_RE.search(text)
    if found is None and "worded" in rare:
        found = next(
            (
                worded
                for worded in _WORDED_RE.finditer(text)
                if not text[: worded.start()].rstrip().endswith(("first", "second", "back"))
            ),
            None,
        )
    if found is None and "how much" in text and "than" in text:
        found = _THAN_NUMBER_RE.search(text)
    if found is None and ("%" in text or "percent" in text or "per cent" in text):
        found = _SUPPOSED_RE.search(text)
    return found.group(0) if found is not None else ""


_MOVED_RE = re.compile(
    r"(?<!\w)(?P<CHANGE>drop|dropped|jump|jumped|climb|climbed|expand|expanded|shrink|shrank"
    r"|shrunk|widen|widened|narrow|narrowed|improve|improved|worsen|worsened|deteriorate"
    r"|deteriorated|(?:go|goes|gone|went)\s+(?:up|down)|reduction|reduce|reduced|increment"
    r"|uplift|movement|contraction|contract|contracted|widening|narrowing|improvement"
    r"|deterioration|expansion)(?!\w)"
)
"""Words of a movement that ask for a change only in a question asking how much (``by how
much did operating expenses drop``, ``how much did revenue go up``, ``what was the drop in
X``): elsewhere they describe (``capital expenditures to expand capacity``, ``revenue after
the price drop``, ``when margins improved``) and the figure asked is a plain one."""
_ASKS_HOW_MUCH_RE = re.compile(
    r"^\W*(?:by\s+)?how\s+(?:much|far)\b|^\W*what\s+(?:was|is|were)\s+the\s+(?:size\s+of\s+the\s+)?"
    r"(?:drop|jump|climb|expansion|widening|narrowing|improvement|deterioration|reduction"
    r"|increment|uplift|movement|contraction)\s+(?:in|of)\b"
    r"|^\W*what\s+(?:was|is|were)\s+the\s+(?:[\w&'-]+\s+){1,6}?(?:increment|uplift|reduction"
    r"|movement|drop|jump|improvement|deterioration|widening|narrowing|expansion|contraction)"
    r"(?=\s+(?:in|for|from|during|between|of|over)\b|\W*$)"
)
_UNCOMPUTED_RE = re.compile(
    r"(?<!\w)(?:cagr|compound(?:ed)?\s+(?:annual\s+)?growth(?:\s+rate)?|annuali[sz]ed"
    r"|standard\s+deviation|median|squared|square\s+(?:root\s+)?of|reciprocal|inverse\s+of"
    r"|(?:natural\s+)?log(?:arithm)?\s+of|(?:to|by)\s+the\s+(?:\w+\s+)?power(?:\s+of)?"
    r"|raised\s+to|cubed|cube\s+of|(?:multiplied\s+by|times)\s+itself)(?!\w)"
)
"""Calculations the answer does not compute: a question naming one is shown its figures and
refused, never answered with them as if they were the result (``the CAGR of revenue from 2016
to 2019``). Read outside metric names (a row ``Annualized return`` is a stored figure)."""
_WHOLE_FIRST_RE = re.compile(
    r"\W*(?:in\s[^,?]{0,40},\s*)?(?:what|which)\s+(?:percentage|percent|portion|share"
    r"|proportion|fraction)\s+of(?!\w)"
)
"""``what percentage of X was Y``: X, named first, is the whole (``what is the percentage of X
in Y`` names the part first)."""
_WHOLE_MADE_OF_RE = re.compile(
    r"(?<!\w)(?:the|what|which)\s+(?:percentage|percent|portion|share|fraction) of"
    r"\s[^,;:?]{1,80}?\s(?:(?:that|which)\s+(?:is|was|are|were)\s+)?"
    r"(?:represented by|made up of|made of|accounted for by|comprised of|consisting of)(?!\w)"
)
"""``the percentage of sales represented by gross profit``, ``the percentage of total other
assets that was made of goodwill``: the whole is named first. Only for a share (a ratio
keeps the order it names), and never beside ``as a percentage of`` (that names the part
first) or across a comma (``..., where revenue is made up of ...`` describes a figure)."""
_AS_A_SHARE_RE = re.compile(r"(?<!\w)as\s+a\s+(?:percentage|percent|share|proportion) of(?!\w)")
_MORE_TERMS_RE = re.compile(r"(?<!\w)(?:than|and|plus|minus|less)(?!\w)|[,;&+]")
_PLANNED_RE = re.compile(r"(?<!\w)(?:budget|plan|forecast|target|estimate)s?(?!\w)")
_PERCENT_ASKED_RE = re.compile(
    r"^\W*(?:by\s+)?(?:what|which)\s+(?:percentage|percent|%)(?!\s+(?:of|share)\b)"
)
"""A question that asks for a percentage (``what percentage did X increase by``): its
change is a percentage change."""
_EXTREMES = "highest|lowest|largest|smallest|maximum|minimum|greatest|least"
"""The words that pick one value among several."""
_JOINED_RE = re.compile(
    rf"(?<!\w)(?:and|or|which|what\s+(?:item|component|part)s?|most|{_EXTREMES})(?!\w)"
)
"""Words by which a question names several figures or picks among them: ``the total X`` then
does not ask for one figure."""
_AMOUNT_ASKED_RE = re.compile(
    r"(?<!\w)(?:the\s+(?:total\s+)?(?:amount|value)\s+of|how\s+much|the\s+total)(?!\w)"
)
_COUNTED_RE = re.compile(r"(?<!\w)(?:how many|sum of|quanti|quante|somma d)(?!\w)")
_COUNT_WORDS = (
    r"(?<!\w)(?:how\s+many|number\s+of|count\s+of|quanti|quante"
    r"|numero\s+(?:di|dei|degli|delle|del|della|dello|d')|numero\s+d\u2019)"
)
_COUNT_ASKED_RE = re.compile(_COUNT_WORDS + r"(?!\w)")


def asks_count(question: str) -> bool:
    """Whether ``question`` asks for a number of something (``how many``, ``the number of``,
    ``the count of``, ``quanti``), of things or of days alike."""
    return bool(_COUNT_ASKED_RE.search(match_key(question)))


_ITEMS_COUNTED_RE = re.compile(
    _COUNT_WORDS
    + r"(?!\s*(?:days?|weeks?|months?|years?|quarters?|basis\s+points?|points?|bps|percent"
    r"|percentage\s+points?|times|dollars?|euros?|pounds?|yen|giorni|settimane|mesi|anni"
    r"|trimestri|punti|dollari|euro|sterline)(?!\w))"
)
"""A count of things asked for (``the number of non-vested shares forfeited``, ``how many
shares``, ``il numero delle azioni``): a count of things is never negative. A number of days,
years, points or dollars is a measure that may be (``how many days was the cash conversion
cycle``)."""
_RATIO_IN_PERCENT_RE = re.compile(
    r"(?<!\w)ratio\W{0,3}(?:in|as an?|expressed as an?)\s+(?:percentage|percent|%)"
)
"""``the ratio (in percentage) of X to Y``: the ratio, in the question's order, as a
percentage."""
_PERCENT_RE = re.compile(r"(?<!\w)(?:percentage|percent|per cent|percentuale)(?!\w)|%")
_NUMBER_WORDS = {
    "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8, "9": 9, "10": 10,
}  # fmt: skip
_YEARS_SPAN_RE = re.compile(
    r"(?<![\w.,])(?P<n>two|three|four|five|six|seven|eight|nine|ten|[2-9]|10)[\s-]+"
    r"(?:fiscal\s+|financial\s+)?years?\s+(?:period|span|time\s+frame)(?!\w)"
    r"|(?<!\w)(?:across|over|during)\s+(?:all\s+)?(?:the\s+)?(?:(?:past|last)\s+)?"
    r"(?P<m>two|three|four|five|six|seven|eight|nine|ten|[2-9]|10)\s+years(?!\w)"
    r"|(?<!\w)(?:for|in|over|during|across)\s+(?:each\s+of\s+)?(?:all\s+)?(?:the\s+)?"
    r"(?P<k>two|three|four|five|six|seven|eight|nine|ten|[2-9]|10)\s+(?:fiscal\s+|financial\s+)?"
    r"years\s+(?:ended|ending|through|to|up\s+to)(?!\w)"
    r"|(?<![\w.,])(?P<j>two|three|four|five|six|seven|eight|nine|ten|[2-9]|10)[\s-]+years?\s+"
    r"(?:total|sum|cumulative|aggregate|combined|average|mean|avg)(?!\w)"
    r"|(?<!\w)(?:for|in)\s+(?:the\s+)?(?:past|last|latest|previous|prior)\s+"
    r"(?P<p>two|three|four|five|six|seven|eight|nine|ten|[2-9]|10)\s+(?:fiscal\s+)?years(?!\w)"
)
"""A span of years named by its length (``the five year period``, ``over the past three
years``); not ``due within 5 years`` or ``matures in 3 years``, which say how long, not when."""


def _span_years(rest: str) -> int | None:
    """The number of years of a span the question names without its years."""
    found = _YEARS_SPAN_RE.search(rest)
    if found is None:
        return None
    return _NUMBER_WORDS[found["n"] or found["m"] or found["k"] or found["j"] or found["p"]]


_SHOWN_RE = re.compile(
    r"(?<!\w)(?:tables?|included|provided|shown|presented|covered|reported|available|listed"
    r"|disclosed)(?!\w)"
)
"""Words saying that ``what are the years ...`` asks which periods a table covers."""
_PERCENT_OF_RE = re.compile(
    r"(?<!\w)(?:percentage|percent|per cent|%|share|proportion|portion)\s+of(?!\w)"
)
_SHARE_OF_PROFIT_RE = re.compile(
    r"(?<!\w)share\s+of\s+(?:the\s+)?(?:net\s+)?(?:profits?|results?|loss(?:es)?|income"
    r"|earnings)(?!\w)"
)
"""IFRS's ``share of profit of associates``: an amount, no part of a whole asked."""
_DESCRIBED_RE = re.compile(
    r"\W*(?:how\s+(?:is|are|was|were|do|does|did|has|have)|why|describe|explain)(?!\w)"
)
_EACH_RE = re.compile(r"(?<!\w)(?:respectively|rispettivamente|each)(?!\w)")

_MONTH_NAMES = (
    "january|february|march|april|may|june|july|august|september|october|november|december"
    "|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec|" + "|".join(ITALIAN_MONTHS)
)
_FY = r"(?:fy\s*'?|fiscal\s+(?:year\s+)?)"
_F_YEAR_AFTER = "(?:" + "|".join(
    [rf"(?<=\b{word} )"
     for word in ("in", "for", "of", "from", "to", "and", "between", "vs", "versus", "during",
                  "since", "than", "by", "at", "on", "year", "years", "both", "or", "with",
                  "over", "compared")]
    + [rf"(?<={year}{re.escape(sep)})" for year in (r"f\d\d", r"\d{4}")
       for sep in (", ", " & ", "& ", "/", "/ ", "; ", " + ", "-", " - ", " to ")]
) + ")"  # fmt: skip
"""``F19`` is a year only after a word that leads to a period, or right after another year
in a list (``for F19``, ``between F19 and F18``, ``F17, F18 and F19``, ``F18/F19``,
``F18-F19``): elsewhere it may be a product (``the F20 product line``, ``F-16, F22``) or a
part (``Q3 F19``)."""
_PERIOD_RE = re.compile(
    r"(?<![\w.,])(?:"
    rf"(?:{'|'.join(RELATIVE_SHIFTS)})[\s-]+(?:fiscal\s+)?(?:year|half|quarter|month)"
    r"(?!-|\s*,?\s*(?:19|20)\d\d(?!\d))"
    r"|(?P<date>\d{1,2}/\d{1,2}/(?:\d{4}|\d{2})|\d{1,2}(?P<sep>[.-])\d{1,2}(?P=sep)\d{4}"
    r"|\d{4}(?P<ysep>[-/.])\d{1,2}(?P=ysep)\d{1,2})"
    rf"|(?P<split>(?:(?:{_FY})?(?:19|20)\d{{2}}\s*(?:/\s*\d{{1,2}}|[\u2013-]\s*\d{{2}})"
    rf"|(?<!/)(?<!/\s)(?:{_FY})?(?:19|20)\d{{2}}\s*/\s*(?:19|20)\d{{2}}(?!\s*/)"
    rf"|(?:{_FY})\d{{2}}\s*[/\u2013-]\s*\d{{2}})(?![\d/.\u2013-]))"
    rf"|(?:{_FY})?(?:\d{{4}}|\d{{2}})\s*-?\s*[qh]\d+"
    rf"|[qh]\d+\s*[-/ ]?\s*(?:{_FY})?(?:\d{{4}}|\d{{2}})(?!\s*[/\u2013-]\s*\d)"
    r"|\d{4}-(?:0[1-9]|1[0-2])"
    rf"|(?P<day>\d{{1,2}}(?:st|nd|rd|th|\s?°|o)?\s+(?:of\s+)?(?:{_MONTH_NAMES})\.?\s*,?\s*(?:of\s+)?\d{{4}}"
    rf"|\d{{1,2}}(?:st|nd|rd|th)?-(?:{_MONTH_NAMES})-(?:\d{{4}}|\d{{2}})"
    rf"|(?:{_MONTH_NAMES})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?\s*,?\s*(?:of\s+)?\d{{4}})"
    rf"|(?:{_MONTH_NAMES})\.?\s*,?\s*\d{{4}}"
    rf"|{_FY}[0-9a-z']*\d[0-9a-z']*"
    r"|fy\s*[-\u2010-\u2014]\s*\d{2}(?:\d{2})?|'\d{2}|y(?:19|20)\d{2}"
    rf"|(?=f\d){_F_YEAR_AFTER}f\d{{2}}(?:\d{{2}})?"
    r"|(?:19|20)\d{2}[aefpb]?"
    r")(?![\w]|[.,]\d|\s*/\s*\d{1,2}(?!\d))"  # "2018/2": a year's month, not the year
)
_MONTH_BEFORE_RE = re.compile(
    rf"(?<!\w)(?:{_MONTH_NAMES})\.?(?:\s+\d{{1,2}}(?:st|nd|rd|th)?)?\s*,?\s*(?:of\s+)?$"
)
_ONWARDS_RE = re.compile(r"(?<!\w)(?:onwards?|and\s+(?:after|later|beyond|since))(?!\w)")
_YEAR_END_BEFORE_RE = re.compile(r"(?:year|fy)\s+(?:ending|ended|end|to)\s*$")
"""``the fiscal year ending June '19``: the month says when the year ends, the year is read."""
_YEAR_MARK_RE = re.compile(
    r"fy\s*[-\u2010-\u2014]\s*(?P<dashed>\d{2}(?:\d{2})?)|f(?P<short>\d{2}(?:\d{2})?)|'(?P<quoted>\d{2})"
    r"|y(?P<y>(?:19|20)\d{2})|(?P<actual>(?:19|20)\d{2})a"
)
"""Other ways reports write a year (``FY-18``, ``F19``, ``'18``, ``Y2018``, ``2018A`` for the
actual year), read as the year; a year marked as a plan (``2019E``, ``2019F``, ``2019P``,
``2019B``) is no year here and is reported, never read as the year's actual figure."""


_RELATIVE_YEAR_RE = re.compile(rf"(?P<which>{'|'.join(RELATIVE_SHIFTS)})[\s-]+(?:fiscal\s+)?year")


def _years_beside(
    scanned: str,
    read: Sequence[tuple[int, int, Period]],
    periods: list[str],
    base_period: str | None,
) -> tuple[list[str], str | None]:
    """``periods`` (and the base period) with a year named relative to now (``the prior
    year``) read relative to the one year the question names instead: ``revenue in 2019
    compared with the prior year`` asks about 2018, not the year before today's."""
    relative: dict[str, int] = {}
    named: set[int] = set()
    for start, end, period in read:
        found = _RELATIVE_YEAR_RE.fullmatch(scanned[start:end])
        if found is not None:
            relative[period.label] = RELATIVE_SHIFTS[found["which"]]
        elif period.kind is PeriodKind.YEAR:
            named.add(period.year)
    if not relative or len(named) != 1:
        return periods, base_period
    year = next(iter(named))
    moved = {label: f"FY{year + shift}" for label, shift in relative.items()}
    kept = [moved.get(label, label) for label in periods]
    return kept, moved.get(base_period, base_period) if base_period is not None else None


_MAX_SPANNED = 1200
"""Most periods a span of quarters, halves or months is filled in with (a century of months;
the answer then refuses more than it may look up, naming the limit)."""


def _parts_spanned(scanned: str, read: Sequence[tuple[int, int, Period]]) -> tuple[str, ...]:
    """Every period of a span of quarters, halves or months the question names by its ends
    (``from Q1 2019 to Q4 2019``, ``between 2019-01 and 2019-06``, ``Q1 2019-Q3 2019``), in
    time order: a sum, an average or a list covers each, as a span of years does (a change runs
    between the ends). Empty when no such span is named."""
    for (before, end, first), (start, _, last) in itertools.pairwise(read):
        if first.kind is not last.kind or first.kind not in _PARTS or first == last:
            continue
        joined = scanned[end:start]
        between = _BETWEEN_RE.search(_before(scanned, before)) and _BETWEEN_AND_RE.fullmatch(joined)
        if not (_SPAN_RE.fullmatch(joined) or between):
            continue
        low, high = min(first, last), max(first, last)
        spanned = [low]
        while spanned[-1] != high and len(spanned) <= _MAX_SPANNED:
            spanned.append(shift_period(spanned[-1], 1))
        if spanned[-1] == high:
            return tuple(period.label for period in spanned)
    return ()


_PARTS = (PeriodKind.HALF, PeriodKind.QUARTER, PeriodKind.MONTH)


def _year_mark(said: str) -> str:
    """``said`` in the period grammar when it is one of :data:`_YEAR_MARK_RE`'s forms."""
    found = _YEAR_MARK_RE.fullmatch(said)
    if found is None:
        return said
    digits = next(group for group in found.groups() if group is not None)
    return f"fy{digits}"


"""Spans that look like periods: the period grammar's spellings, plus ``FY`` + anything and
quarter / half forms with any number, so that a malformed one (``FY2o24``, ``2024Q5``) is
reported rather than ignored. A bare number is a year only from 1900 to 2099. A day (``31
December 2019``, ``December 31 of 2019``, ``31-Dec-2019``, ``12/31/19``, ``31.12.2019``,
``2019-12-31``) is read as a header's date is: the fiscal year holding it, not the month
(:func:`_day_period`); figures that name no day (``13/13/2019``) are a malformed period. A
split year (``2018/19``, ``2018/2019``, ``FY18/19``, ``FY 2018-19``) is the fiscal year it
ends in, as a header's is (a question and the column it names agree); ``2015/14`` is a
malformed period, and so are ``2018-19`` without ``FY`` under calendar years (it may be the
two years) and a half or quarter said with a split year or a pair of years (``H1 2018/19``,
``Q4 2019/2018``). Other pairs of years (``2019/2018``, ``2017/2019``, ``2017-2019``) are two
years, as before."""


_ABBREVIATED = _MONTH_NAMES + "|gen|mag|giu|lug|ago|set|ott|dic"
_DAY_BEFORE_YEAR_RE = re.compile(
    rf"(?:(?<!\d)\d{{1,2}}\.?\s*[-/.,\s]\s*(?:\d{{1,2}}(?!\d)|(?:{_ABBREVIATED})(?!\w))"
    rf"|(?<!\w)(?:{_ABBREVIATED})\.?\s*[-/.,]\s*\d{{1,2}}(?!\d))\.?\s*[-/.,]?\s*(?:of\s+)?$"
    r"|(?<![\w/.-])\d{1,2}\s*[/-]\s*$"  # "06/2019", "6-2019": a month
    r"|(?<!\w)(?:[1-4]\s?[hq]|[1-9]\s?m|(?:three|six|nine|[369])[\s-]+months?"
    r"(?:\s+(?:ended|ending|to|of))?)\s*(?:of\s+)?(?:fy\s*|fiscal\s+(?:year\s+)?)?$"  # "1H 2019"
)
"""What is left of a day, a month or a part of a year the grammar does not read right before
its year (``31 12 2019``, ``31 dic 2019``, ``Dec-31-2019``, ``December, 31 2019``,
``31/Dec/2019``, ``06/2019``, ``1H 2019``, ``9M 2019``, ``six months 2019``): such a year is a
malformed period, never the year alone (another day's column of that year would answer it)."""


_PART_BEFORE_RE = re.compile(
    r"(?<!\w)(?:[hq][1-4]|[1-4][hq]|half|quarter(?:\s+[1-4])?|semestre|trimestre|ytd"
    r"|year[\s-]+to[\s-]+date)\s*,?\s*(?:-\s*)?(?:of\s+)?(?:the\s+)?(?:year\s+)?$"
)
_PART_AFTER_RE = re.compile(
    r"\s*(?:[-/,(]\s*)?(?:[hq][1-4]|[1-4]\s?[hq]|[1-9]\s?m|ytd|year[\s-]+to[\s-]+date)\)?(?!\w)"
)
"""A half, a quarter or a year to date said next to a year the grammar reads whole (``H1
2018/19``, ``2018/19 Q3``, ``the first half of 2018/19``, ``Q4, 2019``, ``2019/Q3``, ``2019
1H``, ``2019 (9M)``, ``YTD 2019``): a part of it, which no year's figure answers."""


_PART_APART_RE = re.compile(
    r"(?<!\w)(?:q[1-4]|[1-4]q|h[12]|[12]h|(?:first|second|third|fourth|1st|2nd|3rd|4th|last)"
    r"[\s-]+(?:fiscal\s+)?(?:quarter|half)|quarterly|monthly|weekly|(?:three|six|nine)[\s-]+"
    r"months?|half[\s-]+year(?:ly)?|semi[\s-]?annual(?:ly)?|year[\s-]+to[\s-]+date|ytd"
    r"|mid[\s-]+year)(?!\w)"
)
_OTHER_YEAR_RE = re.compile(
    r"(?<!\w)(?:years\s+(?:before|prior\s+to|after|preceding|following)\s+(?:the\s+)?"
    r"(?:fiscal\s+)?(?:year\s+)?(?:fy\s*)?|mid[\s-]+|calendar\s+(?:year\s+)?|cy\s*)(?:19|20)\d\d"
    r"(?!\w)"
)
_OPEN_SIDE_RE = re.compile(
    r"(?<!\w)(?:before|prior\s+to|after|beyond|(?:later|earlier)\s+than)\s+(?:the\s+)?"
    r"(?:end\s+of\s+)?(?:fiscal\s+)?(?:year\s+)?(?:fy\s*)?(?:19|20)\d\d(?!\w)"
    r"(?=\s*(?:[?.,;:)]|$)|\s+(?:and|or|in|for|to|was|were|is|are|did|do|does|compared"
    r"|versus|vs)\b)"
    r"|(?<![\w-])(?:19|20)\d\d\s+(?:and|or)\s+(?:thereafter|beyond|after|later)"
    r"(?=\s*(?:[?.,;:)]|$))"
)
_FAR_YEAR = r"(?:1[0-8]|2[1-9])\d\d(?![\w%$,]|\.\d)"
_FAR_NUMBER_RE = re.compile(r"(?<!\d)(?:1[0-8]|2[1-9])\d\d(?!\d)")
_FAR_YEAR_RE = re.compile(
    rf"(?<!\w)(?:in|during|since|until|year|fiscal|fy)\s*{_FAR_YEAR}"
    r"(?=\s*(?:[?.;:)]|,\s|$)|\s+(?:and|or|to|compared|vs|versus|was|were|is|are|did|do|does)\b)"
    rf"|(?<!\w)(?:from|between)\s+{_FAR_YEAR}\s+(?:to|and)\s+(?:fy\s*|fiscal\s+)?(?:19|20)\d\d(?!\d)"
    rf"|(?<!\w)(?:from|between)\s+(?:fy\s*|fiscal\s+)?(?:19|20)\d\d\s+(?:to|and)\s+{_FAR_YEAR}"
)
"""A year outside 1900-2099 said where a period goes (``revenue in 2100``, ``from 1899 to
2019``): the period grammar reads no such year, so it is reported, never left out. Not a
count (``from 1200 to 1500`` employees, ``equal to 1000``)."""
_CUMULATIVE_RE = re.compile(
    r"(?<!\w)(?:cumulative|aggregate|altogether|in\s+total)(?!\w)"
    r"(?!\s+(?:total\s+)?(?:shareholder\s+|stockholder\s+)?returns?(?!\w))"
)
"""Words of a sum over years; not ``cumulative total return``, a performance graph's level."""
_UP_TO_RE = re.compile(
    r"(?<!\d\s)(?<!\d)(?<!\w)(?:through|thru|until|till|up\s+to|up\s+until)\s+(?:the\s+)?"
    r"(?:end\s+of\s+)?(?:fiscal\s+)?(?:year\s+)?(?:fy\s*)?(?:19|20)\d\d(?!\w)"
    r"(?=\s*(?:[?.,;:)]|$)|\s+(?:and|or|in|for|was|were|is|are|did|do|does)\b)"
)
"""``cumulative revenue through 2019``: a sum up to that year from none named, a span open at
its start (``2017 through 2019``, ``from 2017 through 2019`` and ``the 3-year total through
2019`` are spans with both ends); read only with a word of a sum (``the value of the index
through 2019`` is its value then)."""
"""A part of a year (:data:`_PART_APART_RE`, matched on the question with its periods and
metric names blanked, so a row named ``Quarterly dividend`` is never taken for it) or another
year (this one) said apart from the year the question names: ``Q4 revenue in 2019``, ``the
fourth quarter revenue of 2019``, ``quarterly revenue in 2019``, ``mid-2019``, ``the years
before 2019``, ``calendar 2019`` (a fiscal year may end in another month), or
(:data:`_OPEN_SIDE_RE`) years open on one side (``revenue before 2019``, ``commitments due
after 2022``, ``in 2023 and thereafter``: a span, never that year's figure; a change ``after
2018`` is asked back for its end, as one ``since 2018`` is). No figure of that
year answers it, so the period is reported as not understood rather than read as the year.
(``The year before 2019`` is 2018: :data:`_YEAR_SHIFT_RE`; a change ``since 2018`` is asked
back for its end, as before.)"""


_SHORTER_SPAN_RE = re.compile(
    r"(?<!\w)(?:(?:three|six|nine|[369])[\s-]+months?|quarter|q[1-4]|half(?:[\s-]*year)?"
    r"|interim|(?:[1-9]|[12]\d)[\s-]+weeks?)(?:\s+period)?\s*,?\s+(?:ended|ending)\s*$"
    r"|(?<!\w)(?:(?:tre|sei|nove|[369])\s+mesi|semestre|trimestre|periodo\s+intermedio)"
    r"\s+(?:chius[oi]|terminat[oi])\s+(?:al|il)\s*$"
)
"""A span shorter than a year ending on the day that follows (``six months ended 30 June
2019``, ``the quarter ended``, ``13 weeks ended``, ``il semestre chiuso al 30 giugno 2019``):
no fiscal year answers it."""


_EITHER_ORDER_RE = re.compile(
    r"(?P<first>0?[1-9]|1[0-2])[/.-](?P<second>0?[1-9]|1[0-2])[/.-](?P<year>\d{4}|\d{2})"
)
"""A day in figures whose first two numbers may each be its month (``05-08-2019``)."""


def _day_period(day: str, before: str, fiscal_start_month: int) -> tuple[date, Period]:
    """The day ``day`` (said after the text ``before``) and the fiscal year holding it, as a
    header's date is read (so that a question and a table heading ``January 3, 2009`` agree);
    PeriodError when no such date exists, when it ends a span shorter than a year, or when it
    is in figures that may be read either way round (``05-08-2019``: May 8 or August 5) into
    two different fiscal years (with a fiscal year starting in July)."""
    when = date_of(re.sub(r"(?<=\d)(?:st|nd|rd|th|\s?°|o)(?!\w)", "", day))
    if when is None:
        raise PeriodError(f"no such date {day!r}")
    both = _EITHER_ORDER_RE.fullmatch(day)
    if both is not None:
        first, second = int(both["first"]), int(both["second"])
        readings = {
            period_of_date(date(when.year, m, d), PeriodKind.YEAR, fiscal_start_month)
            for m, d in ((first, second), (second, first))
        }
        if len(readings) > 1:
            raise PeriodError(f"{day!r} reads as two days of different fiscal years")
    if _SHORTER_SPAN_RE.search(before):
        raise PeriodError(f"{day!r} ends a span shorter than a year")
    period = period_of_date(when, PeriodKind.YEAR, fiscal_start_month)
    if fiscal_start_month != 1 and _YEAR_ENDED_RE.search(before):
        # "the year ended December 31, 2018" under a July year: twelve months that no fiscal
        # year is (July to June holds that day, and ends six months later)
        # a 53-week year may end a few days into the next fiscal year: the year it ends
        off, period = min(
            (abs((when - year.date_range(fiscal_start_month)[1]).days), year)
            for year in (period, shift_period(period, -1))
        )
        if off > _YEAR_END_DAYS:
            raise PeriodError(f"{day!r} ends no fiscal year")
    return when, period


_YEAR_ENDED_RE = re.compile(
    r"(?<!\w)(?:year|twelve[\s-]+months?|12[\s-]+months?|12-month\s+period|annual\s+period"
    r"|5[23][\s-]+weeks?)"
    r"\s*,?\s+(?:ended|ending|to)\s*(?:on\s+)?$"
)
"""Words before a day that make it the end of a twelve-month span (``the year ended``)."""
_YEAR_END_DAYS = 7
"""How far a year's last day may fall from its fiscal year's end (a 52/53-week year)."""


_ORDINALS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4,
    "primo": 1, "secondo": 2, "terzo": 3, "quarto": 4,
}  # fmt: skip
_PART_OF_YEAR_RE = re.compile(
    r"(?<!\w)(?P<nth>first|second|third|fourth|1st|2nd|3rd|4th|primo|secondo|terzo|quarto)\s+"
    r"(?P<part>half|quarter|semestre|trimestre)\s+(?:of\s+|del(?:l')?\s*)?(?:the\s+)?(?:year\s+)?"
    r"(?P<fy>(?:fiscal\s+(?:year\s+)?|fy\s*|esercizio\s+)?)(?P<year>(?:19|20)\d{2})(?![\w/\u2013-])"
)
"""A half or a quarter of a year said in words (``the first half of 2019``, ``the third
quarter of fiscal 2019``, ``il primo semestre 2019``): read as that half or quarter, never as
the year (a figure stored for the year is not the half's)."""


_COMPACT_PART_RE = re.compile(
    r"(?<![\w.,'/$€£])(?P<cn>[1-4])\s?(?P<cpart>[qh])\s?(?P<cfy>fy)?\s?'?"
    r"(?P<cyear>(?:19|20)\d{2}|\d{2})(?![\w/\u2013.,-]|\s*[/\u2013-]\s*\d)"
    r"|(?<![\w.,'/])(?P<qpart>[qh])(?P<qn>[1-4])\s?'(?P<qyear>\d{2})(?!\w)"
)
"""A quarter or a half in analysts' shorthand (``1Q19``, ``4Q 2019``, ``2H19``, ``Q4'19``):
read as that quarter or half (:func:`_compact_part`), never as the year nor dropped."""


def _compact_part(found: re.Match[str]) -> str:
    """``found`` (:data:`_COMPACT_PART_RE`) written as the period grammar's quarter or half
    (``19q1``), padded to its length; a third half is left as said."""
    part = found["cpart"] or found["qpart"]
    number = int(found["cn"] or found["qn"])
    if part == "h" and number > 2:
        return found.group(0)
    fiscal = "fy" if found["cfy"] else ""  # "4QFY19": the fourth quarter of fiscal 2019
    return f"{fiscal}{found['cyear'] or found['qyear']}{part}{number}".ljust(len(found.group(0)))


_PARTS_SAID_RE = re.compile(f"{_PART_OF_YEAR_RE.pattern}|{_COMPACT_PART_RE.pattern}")
"""A part of a year in words or in shorthand, rewritten in one pass."""


_BARE_PART_RE = re.compile(
    r"(?<![\w'])(?:q[1-4]|[1-4]q|h[12]|[12]h|(?:first|second|third|fourth|1st|2nd|3rd|4th)"
    r"[\s-]+(?:fiscal\s+)?(?:quarter|half))(?!\w)"
)
"""A quarter or a half said without its year beside periods that are read (``Q1 and Q2 2019``,
``Q1 to Q4 2019``): which year's it is is not read, so it is reported, never dropped."""
_LATEST_PART_RE = re.compile(
    r"(?<!\w)(?:(?:latest|most\s+recent|recent)\s+(?:fiscal\s+)?(?:quarters?|halves|half|months?)"
    r"|(?:last|past|previous|prior|first|next)\s+(?:two|three|four|five|six|seven|eight|nine"
    r"|ten|eleven|twelve|\d{1,2})\s+(?:fiscal\s+)?(?:quarters|halves|months))(?!\w)"
)
"""Quarters, halves or months named from now (``the latest quarter``, ``the last two
quarters``): no year's figure answers them, so they are reported as not read."""
_MONTH_DASH_RE = re.compile(
    rf"(?<!\w)(?:{_MONTH_NAMES})\.?(?:-|\s+'?)\d{{2}}(?![\w/-]|\s*,?\s*\d)"
    rf"|(?<![\w.,'/$€£])(?:[1-9]\s?m|[3-9]\s?h|[5-9]\s?q)\s?'?(?:(?:19|20)\d{{2}}|\d{{2}})(?!\w)"
)
"""``Mar-19``, ``Apr 19``: March 2019 or March 19th; ``9M19``, ``3H19``: nine months, or no
half at all. Either way no year's figure, so reported."""
_BARE_MONTH_RE = re.compile(
    r"(?<!\w)(?:january|february|march|april|june|july|august|september|october|november"
    r"|december|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)\.?(?!\w)"
)
"""A month named without its year beside a month read with one (``March and April 2019``,
``from January to March 2019``; not ``may``, a verb as often)."""


_APART_RE = re.compile(
    f"{_PART_APART_RE.pattern}|{_LATEST_PART_RE.pattern}|{_MONTH_DASH_RE.pattern}"
)
"""A part of a year apart from a year read, one named from now, or a month or a part in a
form not read: one search for the three."""
_BESIDE_PARTS_RE = re.compile(
    f"{_BARE_PART_RE.pattern}|{_LATEST_PART_RE.pattern}|{_MONTH_DASH_RE.pattern}"
)
"""The same beside quarters, halves or months read: a bare quarter instead of any part."""


_PART_HINT_RE = re.compile(
    rf"\d\s?'?[qhm]|[qh]\s?\d|quarter|half|halves|month|semestr|trimestr|ytd|date|recent"
    rf"|latest|weekly|semi|mid|{_MONTH_NAMES}"
)
"""Something every part of a year, in any form read or reported here, holds: the questions
without one (most) skip those readings (this runs on every question)."""


def _said_parts(found: re.Match[str]) -> str:
    """A part of a year in words or in shorthand (:data:`_PARTS_SAID_RE`), in the period
    grammar's form."""
    return _part_of_year(found) if found["nth"] else _compact_part(found)


_YEAR_SHIFT_RE = re.compile(
    r"(?<!\w)(?:the\s+)?(?:fiscal\s+)?year\s+(?P<way>before|prior\s+to|preceding|after"
    r"|following)\s+(?:the\s+)?(?:fiscal\s+)?(?:year\s+)?(?P<fy>fy\s*)?(?P<year>(?:19|20)\d\d)"
    r"(?![\w/\u2013-])"
)
"""A year named by the one next to it (``the year before 2019``, ``the fiscal year prior to
2019``, ``the year after 2018``): read as that year (2018, 2019), never as the year said."""


def _shifted_year(found: re.Match[str]) -> str:
    """``found`` written as the year it names (:data:`_YEAR_SHIFT_RE`), padded to its length
    so that every place in the question stays where it was."""
    later = found["way"] in ("after", "following")
    year = int(found["year"]) + (1 if later else -1)
    return f"{'fy' if found['fy'] else ''}{year}".ljust(len(found.group(0)))


def _part_of_year(found: re.Match[str]) -> str:
    """``found`` written as the period grammar's half or quarter (``2019 h1``), padded to its
    length so that every place in the question stays where it was; a second half-year or a
    fifth quarter is left as said (and read as a malformed period)."""
    number = _ORDINALS[found["nth"]]
    halves = found["part"] in ("half", "semestre")
    if halves and number > 2:
        return found.group(0)
    fiscal = "fy" if found["fy"] else ""
    period = f"{fiscal}{found['year']}{'h' if halves else 'q'}{number}"
    return period.ljust(len(found.group(0)))


_BASE_WORDS = (
    r"from", r"since", r"over", r"vs\.?", r"versus", r"compared (?:to|with)",
    r"rispetto (?:a|al|all'|allo)", r"dal", r"dall'", r"da",
)  # fmt: skip
_FROM_RE = re.compile(
    rf"(?<!\w)(?:(?:{'|'.join(_BASE_WORDS)})(?:\s+the\s+(?:end|close|start|beginning)\s+of)?"
    r"|after)\s*(?:fiscal\s+(?:year\s+)?)?$"
)
"""Words right before a period that make it the base of a change (``from``, ``since``, ``from
the end of``, ``after``)."""
_DAY = (
    rf"(?:(?:{_MONTH_NAMES})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?\s*,?"
    rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:{_MONTH_NAMES})\.?\s*,?"
    r"|\d{1,2}(?:st|nd|rd|th)?)"  # "31 December 2019": the month and year are one period
)
_START_RE = re.compile(rf"(?<!\w)(?:from|since|dal|dall'|da)\s*(?:{_DAY})?\s*$", re.IGNORECASE)
"""The base words that name where a span of time starts (not a comparison's other side),
before a year or a day of it (``from December 31, 2019``)."""
_JOINERS = "-|\u2013|\u2014|to|through|a|al"
_SPAN_TO_RE = re.compile(rf"\s*(?:{_JOINERS})\s*(?:{_DAY})?\s*", re.IGNORECASE)
"""What joins the two ends of a span, the second a year or a day of it (``to December 31,``)."""
_SPAN_RE = re.compile(rf"\s*(?:{_JOINERS})\s*")
_BETWEEN_RE = re.compile(r"(?<!\w)(?:between|tra|fra)\s*$")
_BETWEEN_AND_RE = re.compile(r"\s*(?:and|e)\s*")
"""What joins two years into a span (``2017 to 2019``, ``2017-2019``); ``and`` does only
after ``between`` (``between 2017 and 2019``, not ``2017, 2018 and 2019``)."""


@dataclass(frozen=True, slots=True)
class QuestionReading:
    """What a question names, each in order of first appearance without repeats."""

    metrics: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    channels: tuple[str, ...] = ()
    periods: tuple[str, ...] = ()
    """Normalized period labels (``FY2024``)."""
    cues: tuple[str, ...] = ()
    """Explanation cue words found, in their matching form."""
    operation: Operation = Operation.LOOKUP
    operation_word: str = ""
    bad_period: str | None = None
    """The first period-like text that the period grammar does not read."""
    base_period: str | None = None
    """The period a change is measured from, when the question says so (``from 2018``,
    ``since 2018``, ``rispetto al 2018``); otherwise changes run from the earliest period."""
    backward: bool = False
    """The question names a span from the later period to the earlier (``the change from 2018
    to 2017``, ``from Q4 2019 to Q4 2018``): a change over time runs the other way, so a plain
    change is computed forward (and says so), a rise or a fall is asked back. (``2017 from
    2018`` names no span: it is 2017 measured against 2018.)"""
    year_range: tuple[int, int] | None = None
    """Fiscal years named as a span (``from 2017 to 2019``, ``between 2017 and 2019``,
    ``2017-2019``): an average or a sum covers every year of it."""
    selection: Selection | None = None
    """What a ``which year`` / ``how many years`` question selects."""
    constant: str = ""
    """Arithmetic with a number the question gives (``less 100``, ``times 1000``): stored facts
    cannot answer it, so the figures are shown and the answer is refused."""
    counted: bool = False
    """The question asks how many of something, or for a sum of all of something: a number
    no passage is evidence for."""
    unexplained: tuple[str, ...] = ()
    """Words of the question that other stored metrics use and the matched ones lack: the
    answer asks rather than answering for a row the question may not mean."""
    ambiguous: tuple[str, ...] = ()
    """Metrics that tie for the same words of the question (:mod:`ragspine.answer.metric_match`):
    the answer asks which one rather than guessing."""
    whole_first: bool = False
    """The question names the whole of a share first (``what percentage of revenue was net
    income``): the second metric is the part."""
    uncomputed: str = ""
    """A calculation the answer does not compute (``the CAGR``, ``annualized``, ``the
    median``): the figures it would use are shown and the answer is refused."""
    percent_asked: bool = False
    """The question says ``percentage`` / ``percent`` / ``%`` outside its metrics' names: a
    stored amount that is no percentage does not answer it as a lookup."""
    percent_of: bool = False
    """The question asks about a part of a whole (``the percentage of sales from APAC``,
    ``as a percentage of``): a stored amount's change is not its change."""
    span_years: int | None = None
    """A span of years the question names without naming the years (``the five year period``,
    ``across the 3 years``): the assumed periods must be that span, or the answer asks."""
    respectively: bool = False
    """The question asks for each of several figures (``X and Y respectively``): values, not
    a passage about them."""
    duration_asked: bool = False
    """The question asks how many years (months, days) something lasts (``how many years is
    the lifespan of X``): an amount of money does not answer it."""
    second_operation: str = ""
    """A second calculation the question asks for besides ``operation`` (``the change in the
    average X``): one figure computes one operation, so the answer asks for them apart."""
    amount_asked: bool = False
    """The question asks for one amount (``what is the amount of the goodwill``, ``the total
    goodwill``, ``how much was ...``: one metric, no ``and`` / ``or``, no pick such as ``which``
    or ``the largest``): a figure, not a passage defining a term. The router keeps it only when
    the figure has no period to choose (stored undated only)."""
    total_over_periods: bool = False
    """``total`` belongs to the metric named (``Total cost of revenue``) and the question
    spans years (``in both 2019 and 2018``, ``between 2017 to 2019``): the row in each year
    or its sum over them, which is asked back."""
    opening: str = ""
    """The question asks for a figure at the start of a period in words outside its metrics'
    names: ``"word"`` (``at the beginning of 2016``, ``the opening balance``) or ``"date"``
    (``at January 1, 2011``; see :func:`opening_kind`). A figure stored for a year is its
    closing one (or its flow), so it is asked back rather than answered with the year's end,
    unless the figure was stored from a column of that first day."""
    start_to_end: bool = False
    """The question names both a start and an end (``from January 1, 2019 to December 31,
    2019``, ``from the beginning of 2019 to the end of 2019``), whether or not a metric's name
    holds one of them: a change over time would compare one row across years instead."""
    items_counted: bool = False
    """The question asks for a number of things (``the number of shares forfeited``, ``how
    many shares``), not of days, years, points or dollars: a figure stored negative
    (``(12,632)``, a movement's direction) is then no such count as it stands."""
    days: tuple[date, ...] = ()
    """The days the question names as its periods (``at December 31, 2019``, ``12/31/19``),
    each read as the fiscal year holding it: a figure read at another day of that year (a
    column ``June 30, 2019``) is not the one asked for."""
    day_words: tuple[str, ...] = ()
    """Each of :attr:`days` as the question writes it (``12/31/19``): a reply names a day in
    the asker's own words, so that it says no number of its own."""
    since: bool = False
    """The base period is said with ``since`` (``total revenue since 2017``): up to now."""
    described: bool = False
    """The question asks how something is done or why (``how are ... stated``, ``why``)."""
    crossed: str = ""
    """``"period"`` or ``"entity"``: a share or a ratio whose figures each have a year or a
    company of their own (``operating income in 2019 as a percentage of revenue in 2018``,
    ``ACME revenue to BETA net income``): computed here within one period and one entity only,
    so asked back rather than answered for each."""

    @property
    def calculation(self) -> bool:
        """The question asks for a computed number: a calculation operation, a number of its
        own to compute with (``less 100``, ``times 1000``), or a change between two named
        periods."""
        if self.operation in CALCULATIONS or self.counted or self.constant:
            return True
        return self.operation is Operation.CHANGE and (
            len(self.periods) >= 2 or self.year_range is not None
        )

    @property
    def structured(self) -> bool:
        """A metric with an entity or a period."""
        return bool(self.metrics) and bool(self.entities or self.periods)


@lru_cache(maxsize=64)
def _cue_pattern(cues: tuple[str, ...]) -> re.Pattern[str] | None:
    if not cues:
        return None
    ordered = sorted(set(cues), key=lambda s: (-len(s), s))
    alternation = "|".join(r"\s+".join(map(re.escape, cue.split())) for cue in ordered)
    return re.compile(rf"(?<!\w)(?:{alternation})(?!\w)")


_last_cues: tuple[object, re.Pattern[str] | None] | None = None


def _cues_of(glossary: Glossary) -> re.Pattern[str] | None:
    """The cue pattern of ``glossary``'s cue lists (the last one is remembered: one
    workspace asks with the same lists each time)."""
    global _last_cues
    cues = glossary.explanation_cues
    last = _last_cues
    if last is not None and last[0] is cues:
        return last[1]
    keys = tuple(match_key(cue) for words in cues.values() for cue in words if cue)
    pattern = _cue_pattern(keys)
    _last_cues = (cues, pattern)  # one assignment of a finished pair: safe between threads
    return pattern


def _before(text: str, end: int) -> str:
    """The few characters before ``end``: enough for the words read there (``from``,
    ``between``, ``rispetto al``), so a long question costs time in proportion to it."""
    return text[max(0, end - 40) : end]


def _blanked(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each span replaced by as many spaces, in one pass."""
    if not spans:
        return text
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def _unique(items: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def read_question(
    question: str,
    glossary: Glossary,
    reference_date: date | None = None,
    metrics_found: MetricMatch | None = None,
) -> QuestionReading:
    """The glossary terms, periods, cues and operation named in ``question``; with
    ``metrics_found`` (the entity's stored metrics the question names), those are its metrics
    and their words are blanked instead of the glossary's metric spellings."""
    text = match_key(question)
    metrics: list[str] = []
    entities: list[str] = []
    channels: list[str] = []
    blanked = list(text)
    outside_metrics = list(text)  # "total" may be the default channel's name, and still a sum
    by_type = {TermType.METRIC: metrics, TermType.ENTITY: entities, TermType.CHANNEL: channels}
    metric_spans: list[tuple[int, int]] = []
    entity_spans: list[tuple[int, int, str]] = []
    for hit in glossary.find_terms(question):
        if metrics_found is not None and hit.type is TermType.METRIC:
            continue
        by_type[hit.type].append(hit.code)
        if hit.type is TermType.ENTITY:
            entity_spans.append((hit.start, hit.end, hit.code))
        blanked[hit.start : hit.end] = " " * (hit.end - hit.start)
        if hit.type is TermType.METRIC:
            outside_metrics[hit.start : hit.end] = " " * (hit.end - hit.start)
            metric_spans.append((hit.start, hit.end))
    if metrics_found is not None:
        metrics.extend(metrics_found.metrics)
        for start, end in metrics_found.spans:
            blanked[start:end] = " " * (end - start)
            outside_metrics[start:end] = " " * (end - start)
    rest = "".join(blanked)
    # before periods are blanked: "at january 1"
    opening = opening_kind(rest, glossary.fiscal_year_start_month)
    # a change or an average from a start to an end, over one whole year too: "the change
    # in balance from January 1, 2019 to December 31, 2019" is no change of the row
    # "Balance at January 1" that the date's words would also match, and "from 1/1/2019 to
    # 12/31/2019" ends the span at a day no end word names
    month = glossary.fiscal_year_start_month
    any_start = bool(opening_kind(text, month, whole_years=False))
    start_to_end = any_start and (
        bool(_END_RE.search(text)) or not opening_kind(text, month)  # a whole-year span
    )

    over = _OVER_WHAT_PERIOD_RE.search(rest)
    which = _WHICH_PERIODS_RE.search(rest) or _COUNT_PERIODS_RE.search(rest)
    if which is not None and " are the " in which.group(0) and not _SHOWN_RE.search(rest):
        which = None  # "what are the years of service required", not the table's years
    selection = None
    if which is not None:
        rest = rest[: which.start()] + " " * (which.end() - which.start()) + rest[which.end() :]
        selection, span = _selection(rest)
        if span is not None:
            rest = rest[: span[0]] + " " * (span[1] - span[0]) + rest[span[1] :]
    if over is not None and (selection is None or selection.pick is Pick.ALL):
        which = selection = None  # "over what period is it recognised": how long
    else:
        over = None  # "over which period was revenue highest": a year picked

    periods: list[str] = []
    days: dict[date, str] = {}  # each day named, as the question writes it
    bad_period: str | None = None
    base_period: str | None = None
    since = False
    years: list[tuple[int, int, int]] = []  # (start, end, year) of each bare-year period
    reference = reference_date or date.today()
    parts = _PART_HINT_RE.search(text) is not None
    scanned = _PARTS_SAID_RE.sub(_said_parts, rest) if parts else rest
    scanned = _YEAR_SHIFT_RE.sub(_shifted_year, scanned)
    found_spans: list[tuple[int, int]] = []
    read: list[tuple[int, int, Period]] = []  # every period read, where it was said
    for match in _PERIOD_RE.finditer(scanned):
        try:
            day = match["date"] or match["day"]
            if match["split"]:  # "2018/19": the fiscal year it ends in, as a header's is
                said = match["split"]
                core = re.sub(r"^(?:fiscal\s+(?:year\s+)?|fy\s*'?)", "", said)
                label = split_year_period(f"fy {core}")
                if _PART_BEFORE_RE.search(_before(scanned, match.start())) or _PART_AFTER_RE.match(
                    scanned, match.end()
                ):  # "H1 2018/19", "Q4 2019/2018": a part of it, or of them, not read
                    raise PeriodError(f"a part of {match['split']!r}")
                pair = re.fullmatch(r"((?:19|20)\d{2})\s*/\s*((?:19|20)\d{2})", said)
                if label is None and pair is not None:  # "2019/2018": the two years
                    for year in pair.groups():
                        periods.append(f"FY{year}")
                        years.append((match.start(), match.end(), int(year)))
                    found_spans.append(match.span())
                    continue
                if label is None:  # "2019-12" is a month; "2015/14", "2018/2" no period
                    label = said
                elif core == said and "/" not in core and glossary.fiscal_year_start_month == 1:
                    # "2018-19" in calendar years: the two years, or a split year?
                    raise PeriodError(f"{said!r} may be two years or one split year")
                period = parse_period(label, reference, glossary.fiscal_year_start_month)
            elif day:  # "12/31/10", "31 December 2019": the fiscal year holding that day
                said = _before(scanned, match.start())
                when, period = _day_period(day, said, glossary.fiscal_year_start_month)
                days.setdefault(when, " ".join(day.split()))
            else:
                said = _year_mark(match.group(0))  # "FY-18", "F19", "'18", "2018A"
                month_said = _MONTH_BEFORE_RE.search(_before(scanned, match.start()))
                if (
                    said.startswith("fy")
                    and month_said is not None
                    and not _YEAR_END_BEFORE_RE.search(
                        _before(scanned, match.start() - len(month_said.group(0)))
                    )
                ):  # "June '19", "Dec 31 '19": a month or a day, never the year's figure
                    raise PeriodError(f"a month or a day of {match.group(0)!r}")
                period = parse_period(said, reference, glossary.fiscal_year_start_month)
                unread = _DAY_BEFORE_YEAR_RE.search(_before(scanned, match.start()))
                if unread is None and period.kind is PeriodKind.YEAR:  # "Q4 2019/2018"
                    unread = _PART_BEFORE_RE.search(_before(scanned, match.start()))
                    after = _PART_AFTER_RE.match(scanned, match.end())
                    if unread is None and after is not None:  # "2019 1H", "2019 (9M)"
                        bad_period = bad_period or scanned[match.start() : after.end()].strip()
                        continue
                if unread is not None:  # "31 dic 2019": said whole, as the question wrote it
                    said = scanned[max(0, match.start() - 40) + unread.start() : match.end()]
                    bad_period = bad_period or said.strip()
                    continue
        except PeriodError:
            if bad_period is None:
                bad_period = match.group(0)
            continue
        periods.append(period.label)
        if base_period is None and (base := _FROM_RE.search(_before(scanned, match.start()))):
            base_period = period.label
            since = base.group(0).startswith("since")
        if period.kind is PeriodKind.YEAR:
            years.append((match.start(), match.end(), period.year))
        read.append((match.start(), match.end(), period))
        found_spans.append(match.span())
    periods, base_period = _years_beside(scanned, read, periods, base_period)
    if base_period is not None and _ONWARDS_RE.search(scanned):
        since = True  # "from 2017 onwards": from it up to now, as "since 2017"
    left = _blanked(scanned, found_spans)
    apart = None
    if bad_period is None and all(p.kind is PeriodKind.YEAR for _, _, p in read):
        # "fourth-quarter revenue in 2019", "the year before 2019": a part of the year or
        # another year, said apart from the year read; no figure of that year answers it.
        # With no period read, "revenue in Q1", "YTD revenue", "quarterly revenue", "the
        # latest quarter": no figure of the latest year answers them either
        apart = _APART_RE.search(left) if parts else None
        apart = apart or (_OTHER_YEAR_RE.search(scanned) if read else None)
    elif bad_period is None and parts:  # "Q1 and Q2 2019", "Q1 to Q4 2019": which year's Q1?
        apart = _BESIDE_PARTS_RE.search(left)
        if apart is None and any(p.kind is PeriodKind.MONTH for _, _, p in read):
            apart = _BARE_MONTH_RE.search(left)
    if apart is not None:
        bad_period = " ".join(apart.group(0).split())
    spanned = _parts_spanned(scanned, read)
    rest = _blanked(rest, found_spans)
    year_range = None
    for (before, end, first), (start, _, last) in itertools.pairwise(years):
        joined = scanned[end:start]
        between = _BETWEEN_RE.search(_before(scanned, before)) and _BETWEEN_AND_RE.fullmatch(joined)
        if first != last and (_SPAN_RE.fullmatch(joined) or between):
            year_range = (min(first, last), max(first, last))
            break
    month = glossary.fiscal_year_start_month
    backward = any(  # "from 2019 to 2018", "from Q4 2019 to Q4 2018", "from Dec 31, 2019 to ..."
        _SPAN_TO_RE.fullmatch(scanned[end:start])
        and _START_RE.search(_before(scanned, before))
        and last.date_range(month)[1] < first.date_range(month)[0]
        for (before, end, first), (start, _, last) in itertools.pairwise(read)
    )

    pattern = _cues_of(glossary)
    cues = [] if pattern is None else [" ".join(m.group(0).split()) for m in pattern.finditer(rest)]

    operation, word, second = Operation.LOOKUP, "", ""
    found = _OPERATION_RE.search(rest)
    if found is None and _ASKS_HOW_MUCH_RE.search(text):  # "by how much did X drop"
        found = _MOVED_RE.search(rest)
    counted = which is not None and which.re is _COUNT_PERIODS_RE
    duration = over is not None or (
        counted
        and (selection is None or selection.pick not in (Pick.ABOVE, Pick.BELOW, Pick.UNREAD))
    )
    if duration:
        which = selection = None  # "how many years is the lifespan": a duration, not a count
    if which is not None:
        operation = Operation.COUNT_PERIODS if counted else Operation.WHICH_PERIODS
        word = " ".join(which.group(0).split())
        second = _second_operation(rest, operation)
    elif found is not None and found.lastgroup is not None:
        operation, word = Operation[found.lastgroup], found.group(0)
        if operation is Operation.RATIO and word != "ratio" and _PERCENT_RE.search(rest):
            operation = Operation.SHARE  # "the proportion, in percentage, of X over Y"
        if operation is Operation.RATIO and _RATIO_IN_PERCENT_RE.search(rest):
            operation = Operation.SHARE  # "the ratio (in percentage) of X to Y": X / Y in %
        if word == "variance" and _PLANNED_RE.search(rest):
            operation, word = Operation.LOOKUP, ""  # a variance against a budget: no change
        if operation is Operation.CHANGE and _PERCENT_ASKED_RE.search(rest):
            operation = Operation.PERCENT_CHANGE  # "what percentage did sales increase by"
        second = _second_operation(rest, operation)
        if operation in _TWO_METRICS and not second and len(set(entities)) >= 2:
            # "ACME's revenue share of the combined ACME and BETA revenue", "ACME revenue as a
            # percentage of total revenue of ACME and BETA" (one company named twice): a share
            # of a sum, not of one company's figure in the other's
            summed = _SUM_RE.search("".join(outside_metrics))
            if summed is not None:
                second = summed.group(0)
            elif len(entity_spans) > len(set(entities)) >= 2:
                second = text[entity_spans[-2][0] : entity_spans[-1][1]]
        if operation in CHANGES and not second and len(set(metrics)) >= 2:
            # "the difference between X and Y divided by X", "X less Y as a percentage of X":
            # a share of the difference (one metric's change divided by its base is its
            # percentage change, which is shown)
            second = next(
                (
                    later.group(0)
                    for later in _OPERATION_RE.finditer(rest, found.end())
                    if later.lastgroup in ("SHARE", "RATIO")
                ),
                "",
            )
        several = len(set(periods)) >= 2 or year_range is not None
        if operation in _TWO_METRICS and several and not second and not _EACH_RE.search(rest):
            # "the total proportion of X as a percentage of Y in 2017 and 2018": the shares
            # summed over the years, a second calculation ("total" may be read as a channel)
            summed = _SUM_RE.search("".join(outside_metrics))
            second = summed.group(0) if summed is not None else ""
        if word in ("less", "minus") and (
            _CONSTANT_RE.search(rest) or _MORE_TERMS_RE.search(rest, found.end())
        ):
            # "X less an initial $100": a constant; "how much less was X than Y", "X less Y
            # and Z": not one figure minus another; the figures are looked up and shown
            operation, word = Operation.LOOKUP, ""
    elif len(set(periods)) >= 2 or year_range is not None or len(set(metrics)) >= 2:
        summed = _SUM_RE.search("".join(outside_metrics))
        if summed is not None and not _EACH_RE.search(rest):
            operation, word = Operation.SUM, summed.group(0)
    elif metrics and (summed := _SUM_WORD_RE.search(rest)) is not None:
        # "the sum over the value of total assets acquired": a sum, yet one figure named
        # ("the combined total debt" is the total's own word)
        second = summed.group(0)
    outside = "".join(outside_metrics)
    rare = _rare(text)
    far = _FAR_YEAR_RE.search(scanned) if bad_period is None and "far" in rare else None
    if far is not None:  # "revenue in 2100": a year the grammar does not read, never ignored
        bad_period = next(_FAR_NUMBER_RE.finditer(far.group(0))).group(0)
    open_side = _OPEN_SIDE_RE.search(scanned) if bad_period is None and read else None
    up_to = "upto" in rare
    summed_up = up_to and (_SUMMED_RE.search(outside) or _CUMULATIVE_RE.search(outside))
    if open_side is None and bad_period is None and read and summed_up:
        # "cumulative revenue through 2019": a sum from a year not named ("the value of the
        # index through 2019" is its value then; "the 3-year total through 2019" a span)
        open_side = _UP_TO_RE.search(scanned) if _span_years(outside) is None else None
    if open_side is not None and (base_period is None or operation not in CHANGES):
        # "revenue after 2018": every later year, not 2018's figure; a change "after 2018"
        # is asked back for its end, as one "since 2018" is
        bad_period = " ".join(open_side.group(0).split())
    if spanned and operation in _SPANNED:  # a change runs between the span's two ends
        periods = [*spanned, *(label for label in periods if label not in spanned)]
    ambiguous = metrics_found.ambiguous if metrics_found is not None else ()
    named = metrics_found or MetricMatch(tuple(metrics), spans=tuple(metric_spans))
    if not ambiguous and placed_within(question, named):
        # "operating income in Europe" naming the rows "Operating income" and "Europe": one
        # said as a part of the other, so neither is the figure asked; which is asked back
        ambiguous, metrics = tuple(_unique(metrics)), []
    return QuestionReading(
        _unique(metrics),
        _unique(entities),
        _unique(channels),
        _unique(periods),
        _unique(cues),
        operation,
        word,
        bad_period,
        base_period,
        backward,
        year_range,
        selection,
        given_number(text, rare),
        bool(_COUNTED_RE.search(text)),
        uncomputed=found_uncomputed.group(0)
        if (found_uncomputed := _UNCOMPUTED_RE.search(rest))
        else "",
        ambiguous=ambiguous,
        whole_first=bool(
            _WHOLE_FIRST_RE.match(text)
            or (
                operation is Operation.SHARE
                and _WHOLE_MADE_OF_RE.search(text)
                and not _AS_A_SHARE_RE.search(text)
            )
        ),
        percent_asked=bool(_PERCENT_RE.search(rest)),
        second_operation=second,
        duration_asked=duration,
        items_counted=not duration
        and any(  # said outside the metrics' names: not "Net increase in number of shares"
            outside[found.start() : found.end()] == found.group(0)
            for found in _ITEMS_COUNTED_RE.finditer(text)
        ),
        respectively=bool(_EACH_RE.search(rest)),
        since=since,
        described=bool(_DESCRIBED_RE.match(text)),
        crossed=_crossing(operation, len(set(metrics)), scanned, named.spans, read, entity_spans),
        percent_of=bool(_PERCENT_OF_RE.search(rest)) and not _SHARE_OF_PROFIT_RE.search(text),
        span_years=_span_years(outside),  # "the 3-year total": "total" may be a channel
        amount_asked=bool(_AMOUNT_ASKED_RE.search(text))
        and len(set(metrics)) == 1
        and not _JOINED_RE.search(text),
        total_over_periods=operation is Operation.LOOKUP
        and not _EACH_RE.search(rest)
        and bool(_SUM_RE.search(text))
        and (year_range is not None or bool(_BOTH_RE.search(rest))),
        opening=opening,
        start_to_end=start_to_end,
        days=tuple(days),
        day_words=tuple(days.values()),
    )


_OPENING_WORDS_RE = re.compile(
    r"(?<!\w)(?:beginning|start|starting|outset|inizio)(?!\w)(?!\s*-?\s*up)"
    r"|(?<![\w-])(?:opening|apertura)(?!\w)"
    r"|(?<!\w)(?:first\s+day|brought\s+forward|initial\s+balances?)(?!\w)"
)
"""Words asking for a start (``start-up``, ``pre-opening`` and a lease's ``commencement`` are
no such words)."""
_FIRST_DAY_MONTHS = (
    ("january", "jan", "gennaio"),
    ("february", "feb", "febbraio"),
    ("march", "mar", "marzo"),
    ("april", "apr", "aprile"),
    ("may", "may", "maggio"),
    ("june", "jun", "giugno"),
    ("july", "jul", "luglio"),
    ("august", "aug", "agosto"),
    ("september", "sept|sep", "settembre"),
    ("october", "oct", "ottobre"),
    ("november", "nov", "novembre"),
    ("december", "dec", "dicembre"),
)


@lru_cache(maxsize=12)
def _first_day_marks(month: int) -> tuple[str, ...]:
    """What any first day :func:`first_day_re` finds holds: a name of its month, or the ``/``,
    ``.`` or ``-`` of a date written with digits (a cheap test before the pattern's search)."""
    months = sorted({1, month})
    names = (n for m in months for alt in _FIRST_DAY_MONTHS[m - 1] for n in alt.split("|"))
    return (*dict.fromkeys(names), "/", ".", "-")


@lru_cache(maxsize=12)
def first_day_re(month: int) -> re.Pattern[str]:
    """The first day of a fiscal year starting in ``month`` or of a calendar year, as a question
    writes it: ``january 1``, ``january 01``, ``1 january``, ``1st of jan``, ``1-jan``, ``1°
    gennaio`` (``1º`` reads ``1o``), ``1/1/2019`` (month first), ``01.01.2019`` (day first),
    ``2019-01-01``; not ``january 10``, a range of days ``jan 1-15``, nor ``may first`` (a
    verb)."""
    months = sorted({1, month})
    names = "|".join(n for m in months for n in _FIRST_DAY_MONTHS[m - 1])
    numbers = "|".join(f"0?{m}" for m in months)
    return re.compile(
        rf"(?<!\w)(?:{names})\.?\s+(?:0?1|1st)(?!\d)(?!\s*[-\u2013]\s*\d)"
        rf"|(?<![\w/])(?:0?1|1st|first|1o)\s*°?\s*(?:-\s*)?(?:of\s+)?(?:{names})(?!\w)"
        rf"|(?<![\d/])(?:{numbers})/0?1/(?:\d{{4}}|\d{{2}})(?![\d/])"
        rf"|(?<![\d.-])(?:0?1\.(?:{numbers})|(?:{numbers})-0?1)[.-]\d{{4}}(?![\d.-])"
        rf"|(?<![\d.-])\d{{4}}-(?:{numbers})-0?1(?![\d.-])"
    )


_END_RE = re.compile(
    r"(?<!\w)(?:end|ending|close|closing|fine|chiusura)(?!\w)"
    r"|(?<!\w)(?:december|dec)\.?\s+31(?!\d)|(?<!\d)31\s+(?:december|dec|dicembre)(?!\w)"
)
"""Words naming the end of a period (the calendar year's last day among them)."""
_DESCRIBED_BEFORE_RE = re.compile(
    r"(?<![\w-])year\s+(?:beginning|starting|commencing"
    r"|(?:that|which)\s+(?:began|begins|started|starts|commenced|commences))(?:\s+on)?\s*$"
    r"|esercizio\s+con\s+inizio(?:\s+il)?\s*$"
)
"""A year described by its first day (``the fiscal year beginning January 1, 2019``, ``the
year that began on January 1, 2019``, ``l'esercizio con inizio il 1 gennaio 2019``): the whole
year is asked for, not its start. A quarter or months so described are not a year, and
``year beginning 2019`` or ``the year-beginning balance`` is a start."""


def opening_kind(text: str, fiscal_start_month: int = 1, *, whole_years: bool = True) -> str:
    """Whether ``text`` asks for a figure at the start of a period: ``"word"`` (``at the
    beginning of 2016``, ``the opening``, ``the first day of``, ``brought forward``), ``"date"``
    (the first day of a fiscal year: ``at January 1, 2011``, ``1/1/2019``, ``1° gennaio``), or
    ``""``. A year described by its first day (:data:`_DESCRIBED_BEFORE_RE`) asks for no
    start, nor, with ``whole_years``, a span from a fiscal year's first day to its last (``from
    1 January 2019 to 31 December 2019``: that year); any other span from a first day (``from
    1 January 2018 to ...``) does: a change or an average over it starts from the year
    before's closing figure."""
    first_day = first_day_re(fiscal_start_month)
    for found in _OPENING_WORDS_RE.finditer(text):
        if _DESCRIBED_BEFORE_RE.search(text[: found.end()]) and first_day.match(
            re.sub(r"^\s*(?:on|il)?\s*", "", text[found.end() :])
        ):
            continue  # "the year beginning January 1, 2019": the date says which year
        return "word"
    if not any(mark in text for mark in _first_day_marks(fiscal_start_month)):
        return ""  # the usual question: no month of a first day, no date written with digits
    for found in first_day.finditer(text):
        if _DESCRIBED_BEFORE_RE.search(text[: found.start()]):
            continue
        if whole_years and _whole_year_from(text, found, fiscal_start_month):
            continue  # "from 1 January 2019 to 31 December 2019": the year 2019 itself
        return "date"
    return ""


_DAY_WITH_YEAR = (
    rf"(?:(?:{_MONTH_NAMES})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?\s*,?\s*\d{{4}}"
    rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTH_NAMES})\.?\s*,?\s*\d{{4}}"
    rf"|\d{{1,2}}(?:st|nd|rd|th)?-(?:{_MONTH_NAMES})-\d{{4}}"
    rf"|(?:{_MONTH_NAMES})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?\s*,?\s*of\s+\d{{4}}"
    r"|\d{1,2}/\d{1,2}/(?:\d{4}|\d{2})|\d{1,2}[.-]\d{1,2}[.-]\d{4}|\d{4}-\d{1,2}-\d{1,2})"
)
_WHOLE_YEAR_RE = re.compile(
    rf"\s*(?P<first>{_DAY_WITH_YEAR})\s*(?:to|through|thru|until|till|-|\u2013|\u2014)\s*"
    rf"(?:the\s+)?(?P<last>{_DAY_WITH_YEAR})(?![\d/])"
)
"""A span from one day to another, both with their years (``1 January 2019 to 31 December
2019``, ``1/1/2019 - 12/31/2019``, ``01.01.2019 - 31.12.2019``); two days joined by ``and``
are two figures, not a span."""


def _whole_year_from(text: str, found: re.Match[str], fiscal_start_month: int) -> bool:
    """Whether the first day ``found`` starts a span that runs to the last day of its own
    fiscal year (``from 1 January 2019 to 31 December 2019``, ``July 1, 2018 through June 30,
    2019`` with a July start): that names the year, not its start. A calendar year under
    another fiscal year, or a span of another length, is not a fiscal year."""
    span = _WHOLE_YEAR_RE.match(text, found.start())
    if span is None:
        return False
    first, last = (
        date_of(re.sub(r"(?<=\d)(?:st|nd|rd|th)(?!\w)|(?<!\w)of\s+", "", span[name]))
        for name in ("first", "last")
    )
    if first is None or last is None or first.day != 1 or first.month != fiscal_start_month:
        return False
    end_year = first.year + (first.month != 1)
    end_month = (first.month - 2) % 12 + 1
    return last == date(end_year, end_month, calendar.monthrange(end_year, end_month)[1])


_SUMMED_RE = re.compile(r"(?<!\w)(?:sum|summed|combined|somma)(?!\w)")
_SUM_WORD_RE = re.compile(r"(?<!\w)(?:sum|somma|plus(?=\s+(?:the\s+)?[^\W\d_]))(?!\w)")
_EXTREME_RE = re.compile(rf"(?<!\w)the\s+(?:{_EXTREMES})(?!\w)")
"""A value picked among several (``the highest``), not a word of a row's description (``the
total maximum exposure to loss``)."""
_AVERAGED = frozenset({Operation.AVERAGE})
_TWO_METRICS = frozenset({Operation.SHARE, Operation.RATIO})


def _crossing(
    operation: Operation,
    metrics: int,
    text: str,
    metric_spans: Sequence[tuple[int, int]],
    read: Sequence[tuple[int, int, Period]],
    entity_spans: Sequence[tuple[int, int, str]],
) -> str:
    """``"period"`` or ``"entity"`` when a share or a ratio of ``metrics`` (how many) names
    each of its two figures with a year or a company of its own (:func:`_crossed`), else an
    empty string."""
    if operation not in _TWO_METRICS or metrics < 2:
        return ""  # one metric over two years or two companies is one ratio of each
    if _crossed(text, metric_spans, [(start, end, p.label) for start, end, p in read]):
        return "period"
    return "entity" if _crossed(text, metric_spans, entity_spans) else ""


def _crossed(
    text: str, metric_spans: Sequence[tuple[int, int]], owners: Sequence[tuple[int, int, str]]
) -> bool:
    """Whether the metrics and their owners (periods or entities) a question names alternate,
    each metric with an owner of its own that differs from the other's (``X in 2019 as a
    percentage of Y in 2018``, ``2019 X to 2018 Y``, ``ACME revenue to BETA net income``);
    ``X and Y in 2019 and 2018``, ``X in 2019 and 2018 as a percentage of Y`` and ``X in 2019
    as a percentage of Y, and in 2018`` (the question asked again for another year) name the
    owners of both figures."""
    marks = sorted(
        [(start, end, "", "") for start, end in metric_spans]
        + [(start, end, "owner", label) for start, end, label in owners]
    )
    groups = [(kind, list(run)) for kind, run in itertools.groupby(marks, key=lambda mark: mark[2])]
    if len(groups) < 4:
        return False
    said = [frozenset(mark[3] for mark in run) for kind, run in groups if kind]
    if not any(not first & second for first, second in itertools.combinations(said, 2)):
        return False  # "X in 2019 as a percentage of Y in 2019 and 2018": a year shared
    for (kind, run), (_, following) in itertools.pairwise(groups):
        between = text[run[-1][1] : following[0][0]]
        if kind == "" and _AGAIN_RE.search(between):
            return False  # "..., and in 2018": the whole question again, for 2018
    return True


_SPANNED = (
    Operation.LOOKUP,
    Operation.SUM,
    Operation.AVERAGE,
    Operation.WHICH_PERIODS,
    Operation.COUNT_PERIODS,
)
"""The operations that cover every period of a span named by its ends."""


_AGAIN_RE = re.compile(r",|(?<!\w)(?:and|or|as\s+well\s+as)(?!\w)")


def names_operation(words: str) -> bool:
    """Whether ``words`` only name a calculation (``growth``, ``percentage change``)."""
    return bool(_OPERATION_RE.fullmatch(" ".join(words.split())))


def _second_operation(rest: str, operation: Operation) -> str:
    """The word of a second calculation outside the metrics' names: an average besides a
    change or a sum (``the change in the average X``, ``the sum of the average X``), a change
    besides an average or a period selection (``in which years did X increase``), the
    highest and lowest value or a sum besides a change (``the difference between the highest
    and the lowest payment``), or a change or an average inside a share or a ratio (``the
    ratio of the difference of X to Y``): a compound the answer does not compute."""
    if operation in _AVERAGED:
        summed = _SUMMED_RE.search(rest)
        if summed is not None:
            return summed.group(0)
        others = CHANGES
    elif operation in CHANGES:
        extreme = _EXTREME_RE.search(rest) or _SUMMED_RE.search(rest)
        if extreme is not None:
            return extreme.group(0)
        others = _AVERAGED
    elif operation in (Operation.WHICH_PERIODS, Operation.COUNT_PERIODS):
        others = CHANGES  # "in which years did sales increase": not the values' years
    elif operation in _TWO_METRICS:
        # "the ratio of the difference of X to Y", "the ratio of average X to average Y",
        # "what percentage of the change in X is the change in Y": not X over Y
        others = CHANGES | _AVERAGED
    else:
        return ""
    for match in _OPERATION_RE.finditer(rest):
        if match.lastgroup is not None and Operation[match.lastgroup] in others:
            return match.group(0)
    return ""


def choose_route(reading: QuestionReading, *, entity_given: bool = False) -> tuple[Route, str]:
    """The route of ``reading`` under ``auto`` and why (the terms and cues that decided).

    ``entity_given``: the call names the entity, which then counts as named for an operation
    (a metric alone with it, ``What is Audit Fees?``, may ask for a definition). A calculation
    (:attr:`QuestionReading.calculation`) without an explanation cue is ``structured`` even when
    no metric is recognised: a passage cannot compute it, so the answer asks which figure."""
    named = []
    if reading.metrics:
        named.append(f"metric {', '.join(reading.metrics)}")
    if reading.entities:
        named.append(f"entity {', '.join(reading.entities)}")
    if reading.periods:
        named.append(f"period {', '.join(reading.periods)}")
    terms = "; ".join(named) if named else "no glossary term"
    cues = (
        f"explanation cue {', '.join(map(repr, reading.cues))}"
        if reading.cues
        else "no explanation cue"
    )
    if entity_given and not reading.entities:
        terms += "; entity given with the call"
    described = reading.described and not (
        reading.entities or reading.periods or reading.operation is not Operation.LOOKUP
    )  # "How are land, property and equipment stated?": a passage, not which row
    if reading.ambiguous and not described:  # stored metrics named; which one is asked back
        route = Route.STRUCTURED
        terms += f"; metrics that fit equally: {', '.join(reading.ambiguous)}"
    elif reading.structured or (
        reading.metrics
        and entity_given
        and (
            reading.operation is not Operation.LOOKUP
            or reading.respectively
            or reading.amount_asked
        )
    ):
        route = Route.COMPOSITE if reading.cues else Route.STRUCTURED
    elif reading.calculation and not reading.cues and (entity_given or reading.entities):
        route = Route.STRUCTURED
        terms += f"; a calculation ({reading.operation.value}) that a passage cannot answer"
    else:
        route = Route.NARRATIVE
    if route is Route.NARRATIVE and reading.metrics:
        terms += " (a metric needs an entity or a period to be looked up)"
    return route, f"{route.value}: {terms}; {cues}"
