"""Which of an entity's stored metrics a question names, read loosely but answered strictly.

The glossary reading (:func:`ragspine.answer.question.read_question`) matches spellings exactly.
Report tables name their rows in many ways (``Net sales by segment``, ``Prepaid expenses and
other``), and people ask in others (``the prepaid expenses and other``, ``net sale``). When the
entity is known, the candidates are the metrics that entity has stored facts for, at the asker's
level (nothing above it is listed or named), and each candidate spelling matches the question
when all its words appear in it, compared by their stems, in any order, ignoring punctuation and
a few joining words (``of``, ``and``, ``the``, ...).

Strict where it matters:

- the most specific spelling wins: a candidate whose words are a subset of another matching
  candidate's is dropped (``Revenue`` under ``Total revenue``);
- two candidates of the same size that share a word both matching (``Deferred tax assets`` and
  ``Deferred tax liabilities`` for ``deferred tax assets and liabilities``), or two candidates
  with the same words, are a tie: the match is *ambiguous* and names them, and the answer is a
  refusal that lists them rather than a guess;
- a spelling made only of numbers and month names, or only of joining words, never matches.

A second, separate metric is taken only when the question joins it to the first (``and``, a
comma, ``vs``) or the operation needs two (a share, a ratio); otherwise a stray generic row
(``Total``, ``Other``) cannot turn a lookup into two.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType

import Stemmer

from ragspine.analysis import match_key
from ragspine.structured.headers import MONTH_WORDS, YEARLESS_DAY

_WORD = re.compile(r"[^\W_]+")
_JOINING = frozenset(
    re.split(
        r"\s+",
        "a an and the of in within for to on at by from as with or per its their our is are "
        "was were e di del della dei delle il la lo le gli da al",
    )
)
_JOINED = re.compile(r"(?<!\w)(?:and|e|vs\.?|versus|less|minus)(?!\w)|,|;|/|&")

_stemmer = Stemmer.Stemmer("english")


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return _NUMBER_WORDS.get(word) or str(_stemmer.stemWord(word))


_NUMBER_WORDS = {
    word: str(value)
    for value, word in enumerate(
        re.split(r"\s+", "zero one two three four five six seven eight nine ten eleven twelve")
    )
}
"""Small numbers written as words compare as their digits (``less than one year`` says the
column ``Less Than 1 Year``)."""


_MONTHS = MONTH_WORDS | frozenset(_stem(word) for word in MONTH_WORDS)
"""Month names as written and as stemmed (``december`` is compared as ``decemb``)."""


@lru_cache(maxsize=4096)
def _words(text: str) -> tuple[tuple[str, int, int], ...]:
    """(stem, start, end) of each word of ``text``'s matching form (kept per text: one
    question's words are read by several steps of one ``ask``)."""
    key = match_key(text)
    return tuple((_stem(m.group()), m.start(), m.end()) for m in _WORD.finditer(key))


def word_stems(text: str) -> set[str]:
    """The stem of every word of ``text`` (compared as a question's words are)."""
    return {stem for stem, _, _ in _words(text)}


@lru_cache(maxsize=4096)
def heading_words(heading: str) -> frozenset[str]:
    """The stems a section heading says outside parentheses (``Cash (used in) provided by:``:
    cash, provided, by), less words that only say "an amount" (``Amounts falling due within
    one year:`` is said by ``falling due within one year``; ``Average balance:`` still needs
    ``average``); none for a heading that is only a note (``(in thousands)``) or a date."""
    return spelling_words(_NOT_IN_PARENTHESES.sub(" ", heading)) - _AMOUNT_WORDS


def names_a_figure(word: str) -> bool:
    """Whether an unexplained word (:func:`unexplained_words`) only names a figure: not a word
    naming another measure of it (``adjusted``), nor a unit after ``per`` (``per share``)."""
    return word not in _QUALIFIERS and not word.startswith("per ")


_NOT_IN_PARENTHESES = re.compile(r"\([^()]*\)")


@lru_cache(maxsize=65536)
def spelling_words(spelling: str) -> frozenset[str]:
    """The stems a spelling must find in a question (empty: it never matches)."""
    words = [w for w, _, _ in _words(spelling) if w not in _JOINING]
    if all(w.isdigit() or w in _MONTHS for w in words):
        return frozenset()
    return frozenset(words)


@dataclass(frozen=True, slots=True)
class MetricMatch:
    """The metrics a question names among the candidates, in question order."""

    metrics: tuple[str, ...] = ()
    ambiguous: tuple[str, ...] = ()
    """Candidates that tie for the same words (a refusal names them); empty when clear."""
    spans: tuple[tuple[int, int], ...] = ()
    """Where the matched words are in the question's matching form (every occurrence)."""

    @property
    def found(self) -> bool:
        return bool(self.metrics or self.ambiguous)


@dataclass(frozen=True, slots=True)
class _Hit:
    code: str
    words: frozenset[str]
    places: frozenset[int]
    """Indexes of the question's tokens the spelling took (its tightest window)."""
    start: int
    end: int
    first: int
    """The first and last token of the window (for an elided hit: of its own words)."""
    last: int


_QUALIFYING = frozenset({"befor", "after", "exclud", "without", "except", "ex"})
"""Stems that, right before a row's words, make the question name another figure: a row
found right after one of them is not what the question asks for."""

MAX_GAP = 0
"""How many other words (joining words aside) may sit between a spelling's words in the
question: ``net sales of systems`` names ``Net sales``, ``net difference in sale`` does not."""


def _window(tokens: Sequence[tuple[str, int, int]], words: frozenset[str]) -> _Window | None:
    """The shortest run of tokens holding every one of ``words`` (of equal length, the first
    that no ``and`` / ``or`` splits: ``cost of revenue`` in ``revenue and cost of revenue``),
    if its gap is small. One pass with a sliding start: linear in the question's length, so a
    long hostile question costs time in proportion to it, never its square."""
    best: _Window | None = None
    split = False
    joins = [0]  # how many "and" / "or" come before each token
    for stem, _, _ in tokens:
        joins.append(joins[-1] + (stem in _COORDINATING and stem not in words))
    counts: dict[str, int] = {}
    first = 0
    for last, (stem, _, _) in enumerate(tokens):
        if stem not in words:
            continue
        counts[stem] = counts.get(stem, 0) + 1
        while len(counts) == len(words):  # every word inside [first, last]: shrink from the left
            splits = joins[last + 1] > joins[first]
            if (
                best is None
                or last - first < best[1] - best[0]
                or (last - first == best[1] - best[0] and split and not splits)
            ):
                best, split = (first, last), splits
            leaving = tokens[first][0]
            first += 1
            if leaving in counts:
                counts[leaving] -= 1
                if not counts[leaving]:
                    del counts[leaving]
    if best is None:
        return None
    run = tokens[best[0] : best[1] + 1]
    gap = sum(1 for stem, _, _ in run if stem not in words and stem not in _JOINING)
    return best if gap <= MAX_GAP else None


_Window = tuple[int, int]


_PLAIN = frozenset(
    re.split(
        r"\s+",
        "what which how much many was were is are be been did does do has have had than there "
        "their its it this "
        "that these those year years fiscal financial period periods respectively each both all "
        "value values amount amounts number figure figures company group table reported report "
        "change changes increase decrease difference percentage percent proportion ratio share "
        "average total sum growth rate compared between over during end ended ending",
    )
)
"""Words a question may add around a metric without naming anything of the table."""
_PLAIN_STEMS = frozenset(_stem(w) for w in _PLAIN)
_AMOUNT_WORDS = frozenset(_stem(w) for w in ("amount", "amounts", "value", "values", "figures"))
"""Plain words that only say "an amount" (not ``average``, ``total``, ``change``)."""


def words_amid(question: str, named: frozenset[str], allowed: frozenset[str]) -> list[str]:
    """The words of ``question`` between the first and the last word whose stem is in
    ``named`` that are neither ``named`` nor ``allowed`` nor plain or joining words (``deferred``
    in ``UK deferred revenue`` when ``UK`` and ``revenue`` are named)."""
    tokens = _words(question)
    places = [index for index, (stem, _, _) in enumerate(tokens) if stem in named]
    if not places:
        return []
    key = match_key(question)
    skip = named | allowed | _PLAIN_STEMS | _JOINING
    return [
        key[start:end]
        for stem, start, end in tokens[places[0] : places[-1] + 1]
        if stem not in skip and not stem.isdigit() and len(stem) > 1  # "the UK's revenue"
    ]


def unexplained_words(
    question: str,
    match: MetricMatch,
    candidates: Mapping[str, Sequence[str]],
    excused: Sequence[str] = (),
) -> list[str]:
    """Words of ``question`` that the matched metrics lack but other candidates' spellings
    use (``basic`` in ``basic net income per share`` matched to ``Net income``), and a word
    right before a matched row's words that no rule reads (``fuel surcharge program freight
    revenues`` matched to ``Freight revenues``): the question then says something about the
    table the match ignores, so the match is not trusted. The second check matters most where
    an entity has few rows (one table), so that few other rows' words can reveal it.
    ``excused``: texts whose words are never read as narrowing a row (the entity's names)."""
    chosen = set(match.metrics)
    taken = {stem for code in chosen for s in candidates[code] for stem in spelling_words(s)}
    others = {
        stem
        for code, spellings in candidates.items()
        if code not in chosen
        for s in spellings
        for stem in spelling_words(s)
    }
    plain = _PLAIN_STEMS | _JOINING
    key = match_key(question)
    found = []
    counted = _HOW_MANY.search(key)  # "how many categories": a count of rows, not a value
    if counted is not None and _stem(counted[1]) not in taken | plain:
        found.append(counted[1])
    tokens = _words(question)
    named_than = (  # "More than 5 years" as a row: its "more than" names it
        {
            _stem(found[1])
            for spellings in candidates.values()
            for s in spellings
            for found in _COMPARED.finditer(match_key(s))
        }
        if _THAN.search(key)
        else set()
    )
    for index, (stem, start, end) in enumerate(tokens):
        if stem.isdigit() and stem in others and stem not in taken and not _dated(tokens, index):
            # "the total ... due in 2-5 years" beside a row "... 2-5 Years": a number naming a
            # column or a row (never a year, a day or a split year's end, which name periods)
            found.append(key[start:end])
            continue
        if stem in taken or stem in plain or stem.isdigit() or stem in _MONTHS:
            continue
        if _net_of_operation(tokens, index):
            continue
        if stem in _COMPARING and stem not in named_than and _THAN.match(key, end):
            continue  # "in which year was X less than 500": how to pick, not which figure
        if stem in _PARTS_OF_YEAR and _part_of_a_year(tokens, index):
            continue  # "in the first quarter of 2019": a period, though a row says "first"
        if stem in others:
            found.append(key[start:end])
    for stem, start, end in tokens:  # "the unrevised value of Food Care": not Food Care
        if key[start:end] in _QUALIFIERS and stem not in taken:
            found.append(key[start:end])
    matched = {start for start, _ in match.spans}
    named = {stem for text in excused for stem, _, _ in _words(text)}
    leading = {  # "In-game net bookings": its "in" is the row's own, not the question's
        stem for code in chosen for s in candidates[code] for stem in _leading_joins(s)
    }
    for index in range(1, len(tokens)):  # "fuel surcharge program freight revenues"
        if tokens[index][1] not in matched:
            continue
        before = index - 1
        while before > 0 and tokens[before][0] in leading and tokens[before][1] not in matched:
            before -= 1  # "Blizzard in-game net bookings": the word before the row's "in"
        owned = before > 0 and tokens[before][0] == "s" and key[tokens[before][1] - 1] in "'\u2019"
        if owned:
            before -= 1  # "Europe's revenue": the owner before the possessive
        stem, start, end = tokens[before]
        if start in matched:
            continue
        if stem in _OF_A_ROW and before > 0:
            measure, measure_start, measure_end = tokens[before - 1]
            if (measure in _MEASURES_OF or measure in _CHARGED_ON) and measure not in taken:
                found.append(key[measure_start:measure_end])  # "the impairment of goodwill"
                continue
        if stem == _CURRENT and stem not in taken:
            found.append(key[start:end])  # "current deferred revenue": the current part
            continue
        if stem in plain or stem in _CONNECTING or stem in _OPERATIVE or len(stem) < 2:
            continue  # "the company's X", "X less Y", "the mean X": no word of the figure's own
        if owned and stem in _OWNERS:
            continue  # "the Corporation's revenue": the reporter itself
        if stem in _WHOLE_OF:
            continue  # "consolidated revenue": the whole company's
        if stem in taken or stem in named or stem in _MONTHS or _PERIODISH.match(stem):
            continue  # "income before income taxes", "ACME net revenues", "FY2019 revenues"
        found.append(key[start:end])  # a word right before the row's narrows it
    for index in range(len(tokens) - 2):  # "net income per share", "... attributable to"
        if tokens[index][1] not in matched or tokens[index + 1][1] in matched:
            continue
        # past a period phrase: "net income in 2019 per share", "... for 2019 attributable to"
        after = _past_periods(tokens, index + 1)
        if after >= len(tokens) - 1 or tokens[after][1] in matched:
            continue
        stem, start, end = tokens[after]
        unit = tokens[after + 1]
        dated = after > index + 1
        if stem == "per" and unit[1] not in matched and unit[0] not in taken | _DETERMINERS:
            found.append(key[start : unit[2]])  # not "per the income statement"
        elif (stem in _NARROWING_AFTER or stem in _CURRENT_LIKE) and stem not in taken:
            found.append(key[start:end])  # also "deferred revenue, current" / "non-current"
        elif stem in _QUALIFYING and stem not in taken and not _dating(unit[0]):
            # "net income before interest", "... without goodwill" ("before 2019" is a time)
            found.append(key[start:end])
        elif dated and stem == "net" and unit[0] == "of":
            found.append(key[start : unit[2]])  # "net income in 2019, net of tax"
    kinds = _KINDS_OF_UNIT_RE.search(key) is not None
    for index in range(len(tokens) - 2):  # "revenue in Europe", "interest expense on notes"
        if tokens[index][1] not in matched or tokens[index + 1][1] in matched:
            continue
        part = _placed_part(key, tokens, index + 1, matched, taken | named | plain)
        if part is None and kinds:  # "revenue of the Europe segment": a segment's, not the whole's
            kind = _OF_A_UNIT.match(key, tokens[index][2])
            words = {stem for stem, _, _ in _words(kind["part"])} if kind is not None else set()
            plainly = taken | named | plain | _OPERATIVE | _WHOLE_OF
            part = kind["part"] if kind is not None and not words <= plainly else None
        if part is not None:
            found.append(part)
    return list(dict.fromkeys(found))


_WHOLE_OF = frozenset(_stem(w) for w in ("entire", "whole", "consolidated", "combined", "overall"))
"""Words naming the whole company, not a part of it (``of the entire business``)."""
_KINDS_OF_UNIT_RE = re.compile("segment|division|region|business|unit|subsidiar|brand|reportable")
"""What :data:`_OF_A_UNIT` needs in a question (looked for first: it runs on every one)."""
_OF_A_UNIT = re.compile(
    r"\s+(?:of|from|for)\s+(?:the\s+|our\s+|its\s+)?(?P<part>[^\W\d_]+(?:\s+[^\W\d_]+)?)\s+"
    r"(?:segments?|divisions?|regions?|business|units?|subsidiar(?:y|ies)|brands?|reportable)"
    r"(?!\w)"
)
"""A part of a company named by its kind after a row (``revenue of the Europe segment``)."""


def placed_within(question: str, match: MetricMatch) -> bool:
    """Whether ``match`` names two or more rows, one right after the other's place word and
    nothing joining or relating them (``operating income in Europe`` matched to the rows
    ``Operating income`` and ``Europe``, the latter a region's revenue under its heading): one
    is said as a part of the other, no row is the figure asked, so neither is given."""
    if len(set(match.metrics)) < 2 or not match.spans:
        return False
    key = match_key(question)
    spans = sorted(match.spans)
    first, last = spans[0][0], spans[-1][1]
    if _JOINED.search(key, first, last) or _RELATING.search(key, first, last):
        return False
    if _PART_OF_WHOLE.search(key):  # "the percentage of audit fees in total fees"
        return False
    for (_, end), (start, _) in itertools.pairwise(spans):
        gap = [stem for stem, _, _ in _words(key[end:start])]
        if gap and gap[0] in _PLACING and all(stem in _DETERMINERS for stem in gap[1:]):
            return True
    return False


_RELATING = re.compile(r"(?<!\w)(?:to|than|over|per|divided|times)(?!\w)")
_PART_OF_WHOLE = re.compile(
    r"(?<!\w)(?:(?:percentage|percent|share|proportion|portion|fraction)\s+of|ratio|out\s+of"
    r"|constitut\w*|represent\w*|made\s+up|account\w*\s+for)(?!\w)"
)
"""Words relating two figures (``the ratio of X to Y``, ``X as a percentage of Y``): two rows
so related are both asked for."""


def _stems(words: str) -> frozenset[str]:
    """The stems of ``words`` (a list written as one string, split at white space)."""
    return frozenset(_stem(word) for word in words.split())


def _placed_part(
    key: str,
    tokens: Sequence[tuple[str, int, int]],
    at: int,
    matched: set[int],
    said: set[str],
) -> str | None:
    """The word a place phrase right after a row names as a part of it (``revenue in Europe``,
    ``interest expense on senior notes``, ``revenue for the cloud segment``), reading past
    words that only name a period or frame the figure (``revenue in 2019 in Europe``, ``for
    the year ended December 31, 2019 in Europe``, ``from consolidated hotels``); None when the
    phrases say nothing else, or only a scale, the entity, a plain word or a company with its
    legal form (``in thousands``, ``on a consolidated basis``, ``for Entergy Texas, Inc.``)."""
    count = len(tokens)
    sourced = at < count - 2 and tokens[at][0] in _SOURCING
    if sourced and tokens[at + 1][0] in _PLACING_PART | {"by"}:
        at += 1  # "revenue generated by Europe", "revenue derived from China"
    while at < count - 1 and (
        tokens[at][0] in _PLACING_PART or (sourced and tokens[at][0] == "by")
    ):
        sourced = False
        after, dated = _phrase_passed(tokens, at + 1)
        if after >= count:
            return None
        stem, start, end = tokens[after]
        if stem in _PLACING_PART:  # "in 2019 in Europe": the next phrase
            at = after
            continue
        if dated:
            return None  # "in 2019 based on ...": the period phrase ended, no part named
        if start in matched or len(stem) < 2 or stem in said or stem in _FISCAL_MARKS:
            return None  # "revenue in the prior year", "revenue for the company"
        if stem in _OPERATIVE or stem in _CONNECTING or stem in _SCALE_WORDS or stem in _BOUNDS:
            return None  # "revenue in thousands", "at least 1,000"
        following = _WORD.findall(key[end : end + 12])[:1]
        currency = key[end : end + 3].lstrip()[:1] in ("$", "€", "£")
        if currency or (following and _stem(following[0]) in _SCALE_WORDS):
            return None  # "in US dollars", "in US$"
        if any(word in _LEGAL_FORMS for word, _, _ in tokens[after + 1 : after + 5]):
            return None  # "net revenue for Entergy Texas, Inc.": a company, by its legal form
        return key[start:end]
    return None


def _past_periods(tokens: Sequence[tuple[str, int, int]], at: int) -> int:
    """The index of the first token at or after ``at`` that is not in a phrase naming a
    period (``in 2019``, ``for the year ended December 31, 2019``, ``in fiscal 2019``)."""
    while at < len(tokens) and tokens[at][0] in _PLACING:
        after, dated = _phrase_passed(tokens, at + 1)
        if not dated:
            return at
        at = after
    return at


def _phrase_passed(tokens: Sequence[tuple[str, int, int]], at: int) -> tuple[int, bool]:
    """The index of the first word from ``at`` on that a place phrase does not read past
    (:func:`_passed_over`), and whether the words passed name a period (``in 2019``, ``at
    the end of 2019``); ``in the statement of operations`` names which statement, no part."""
    count = len(tokens)
    dated = False
    while at < count and _passed_over(tokens[at][0]):
        dated = dated or _dating(tokens[at][0])
        if tokens[at][0] == _STATEMENT and at + 2 < count and tokens[at + 1][0] == "of":
            at += 2
        at += 1
    return at, dated


_SOURCING = frozenset(
    _stem(w) for w in ("generated", "derived", "earned", "coming", "originating", "sourced")
)
"""Participles saying where a figure comes from, before the phrase naming it (``revenue
generated by Europe``)."""


def _dating(stem: str) -> bool:
    """Whether a word of a place phrase names a period (``2019``, ``December``, ``year``)."""
    return (
        stem[0].isdigit()
        or stem in _MONTHS
        or bool(_PERIODISH.match(stem))
        or (stem in _FISCAL and stem not in _DETERMINERS and stem != "of")
        or stem in _PARTS_OF_YEAR
    )


def _passed_over(stem: str) -> bool:
    """Whether a word of a place phrase only names a period or frames the figure (read past
    for the word that names a part)."""
    return (
        stem in _DETERMINERS
        or stem in _FISCAL
        or stem in _FRAMING
        or stem in _OWNERS
        or stem in _MONTHS
        or stem in _PARTS_OF_YEAR
        or stem[0].isdigit()
        or bool(_PERIODISH.match(stem))
    )


_STATEMENT = _stem("statement")
_LEGAL_FORMS = frozenset(
    {"inc", "corp", "corpor", "llc", "ltd", "limit", "plc", "co", "sa", "ag", "nv", "gmbh", "lp"}
)
"""A company's legal form after a name (``Entergy Texas, Inc.``): the name is a company's,
which the question may name as the reporter; a part of a company carries none."""


_FISCAL = _stems(
    "fiscal financial year years fy the of ended ending end onward onwards prior previous "
    "preceding following subsequent next last"
)


def _part_of_a_year(tokens: Sequence[tuple[str, int, int]], index: int) -> bool:
    """Whether token ``index`` is an ordinal or its part in ``first quarter of (fiscal) 2019``
    / ``the second half of the year 2019``: words of a period the question names."""
    at = index + 1 if tokens[index][0] in _ORDINAL_STEMS else index
    if at >= len(tokens) or tokens[at][0] not in _PART_STEMS:
        return False
    if at == index and (index == 0 or tokens[index - 1][0] not in _ORDINAL_STEMS):
        return False
    at += 1
    while at < len(tokens) and tokens[at][0] in _OF_THE_YEAR:
        at += 1
    return at < len(tokens) and bool(_PERIODISH.match(tokens[at][0]))


_ORDINAL_STEMS = _stems("first second third fourth 1st 2nd 3rd 4th")
_PART_STEMS = _stems("quarter half")
_OF_THE_YEAR = _stems("of the fiscal year fy")
_PARTS_OF_YEAR = _stems("first second third fourth 1st 2nd 3rd 4th quarter quarters half halves")
"""Words of a part of a year (``in the first quarter of 2019``): a period, no narrowing."""
_FRAMING = _stems(
    "full whole entire consolidated basis level statement statements balance sheet sheets "
    "filing filings data books monetary close place hand beginning start opening closing "
    "aggregate",
)
"""Words after a place word that frame the figure rather than name a part of it (``for the
full year``, ``on a consolidated basis``, ``on the balance sheet``, ``cash on hand``, ``at the
beginning of 2019``)."""
_OWNERS = _stems(
    "firm corporation corp bank registrant issuer partnership trust fund reit business "
    "enterprise organization organisation entity management companies",
)
"""How a filing names its own reporter (``the Corporation's revenue``, ``revenue for the
firm``): the entity asked about, never a part of it."""
_CURRENT = _stem("current")
_CURRENT_LIKE = frozenset({_CURRENT, _stem("noncurrent"), "non"})
"""Right before a row's words, ``current`` names a part of it (``current deferred revenue``:
the part due within a year), not the period (``the current year`` puts ``year`` before)."""
_BOUNDS = frozenset({"least", "most"})
_FISCAL_MARKS = frozenset({"fy", "fye", "ye", "ytd"})
_PLACING = frozenset({"in", "for", "from", "on", "at", "within"})
"""Prepositions that, right after a row's words, may narrow it to a part: ``revenue in
Europe``, ``net sales for the cloud segment``, ``interest expense on senior notes``."""
_PLACING_PART = _PLACING | {_stem("under"), _stem("outside")}
"""Words before a phrase that may name a part of a row (``revenue under ASC 605``, ``revenue
outside the United States``); ``by`` too after a participle (``revenue generated by Europe``)."""
_DETERMINERS = frozenset({"the", "a", "an", "our", "its", "their", "this", "that", "each"})
_SCALE_WORDS = _stems(
    "thousand thousands million millions billion billions usd dollars dollar eur euro euros "
    "gbp pounds rmb yen cents terms",
)
"""Words saying how a figure is written (``revenue in thousands``, ``in USD``), not a part."""


def _leading_joins(spelling: str) -> list[str]:
    """The joining words a spelling begins with (``in`` of ``In-game net bookings``)."""
    leading = []
    for stem, _, _ in _words(spelling):
        if stem not in _JOINING:
            break
        leading.append(stem)
    return leading


_QUALIFIERS = frozenset(
    re.split(
        r"\s+",
        "adjusted unadjusted restated revised unrevised normalised normalized underlying organic"
        " proforma forma constant gaap guidance budget budgeted target targeted forecast"
        " forecasted outlook planned projected discontinued excluding shortfall originally",
    )
)  # as written: the stems of "normalized" and "underlying" are "normal" and "under"
"""Words naming another measure of a figure (``adjusted EBITDA``, ``the unrevised value``,
``in constant currency``, ``non-GAAP``), a plan rather than an outcome (``the revenue
guidance``, ``budgeted``, ``target``, ``projected``) or a part of it (``from discontinued
operations``, ``excluding acquisitions``): anywhere in the question, a row whose label lacks one
is not the figure asked for."""
_COMPARING = frozenset(
    _stem(w)
    for w in re.split(
        r"\s+", "less more greater higher lower larger smaller bigger fewer exceeding above below"
    )
)
"""Words comparing a value with a number right after ``than`` (``X less than 500``): how to pick
periods, never which figure; not when a row's own name says it (``More than 5 years``), nor
without ``than`` and a number (``Below-market leases``, ``Greater China``, ``higher
education`` are rows' words)."""
_THAN = re.compile(r"\s+than\s+(?:[$€£]\s*)?[-(]?\d")
_COMPARED = re.compile(r"(?<!\w)([^\W\d_]+)\s+than(?!\w)")
_MEASURES_OF = frozenset(
    _stem(w)
    for w in re.split(
        r"\s+",
        "impairment impairments turnover turns allowance allowances reserve reserves write "
        "writedown writedowns writeoff writeoffs maturities maturity repayment repayments "
        "issuance issuances proceeds backlog mix headroom compensation amortization "
        "depreciation accretion",
    )
)
"""Nouns naming another measure of a balance, beside or before its row (``goodwill
impairment``, ``the impairment of goodwill``, ``inventory turnover``, ``the allowance for
accounts receivable``, ``debt maturities``, ``employee compensation`` beside a row
``Employees``): the balance is not the figure asked."""
_CHARGED_ON = frozenset(_stem(w) for w in ("tax", "taxes", "interest", "dividend", "dividends"))
"""What is charged or paid on a figure (``the tax on net income``, ``the interest on the
notes``): before a row with ``on`` / ``of`` / ``for``, another figure than the row."""
_NARROWING_AFTER = (
    frozenset(
        {"attribut", "alloc", "relat", "associ", "avail", "gross"}
        | {_stem(w) for w in ("margin", "rate", "yield")}
    )
    | _MEASURES_OF
)
"""Stems that, right after a row's words, narrow it (``net income attributable to ...``) or
name another measure of it (``EBITDA margin`` beside a row ``EBITDA``: a ratio to revenue,
not the amount; ``tax rate``, ``dividend yield``; :data:`_MEASURES_OF`)."""
_OF_A_ROW = frozenset({"of", "for", "on"})
_CONNECTING = frozenset({"less", "minus", "plus", "vs", "versus", "than"})
_OPERATIVE = frozenset(
    _stem(w)
    for w in re.split(
        r"\s+",
        "mean median combined aggregate cumulative overall annual annually yearly quarterly "
        "monthly current prior previous last next latest respective reported actual "
        "approximate estimated absolute nominal relative",
    )
)
"""Words that say how to read or combine a figure, not which one it is."""
_PERIODISH = re.compile(r"^(?:(?:fy|f|y)?'?\d{2,4}[aefpb]?|q[1-4]|h[12])$")
_NET_OPERATIONS = frozenset({"chang", "differ", "increas", "decreas"})


def _net_of_operation(tokens: Sequence[tuple[str, int, int]], index: int) -> bool:
    """Whether token ``index`` is the ``net`` of ``net change`` / ``net difference``: part of
    the operation asked, not a word naming the figure."""
    return (
        tokens[index][0] == "net"
        and index + 1 < len(tokens)
        and tokens[index + 1][0] in _NET_OPERATIONS
    )


def _dated(tokens: Sequence[tuple[str, int, int]], index: int) -> bool:
    """Whether number token ``index`` is part of a date: a year (``2019``), a day beside a
    month (``December 31``, ``31 March``) or the end of a split year (``2017/18``)."""
    stem = tokens[index][0]
    if _YEAR_WORD.match(stem):
        return True
    near = [tokens[i][0] for i in (index - 1, index + 1) if 0 <= i < len(tokens)]
    if any(word in _MONTHS for word in near):
        return True
    return index > 0 and bool(_YEAR_WORD.match(tokens[index - 1][0])) and len(stem) <= 2


_HOW_MANY = re.compile(r"(?<!\w)how\s+many\s+(?:of\s+the\s+)?([^\W\d_]+)")


def match_metrics(
    question: str, candidates: Mapping[str, Sequence[str]], *, pairs: bool = False
) -> MetricMatch:
    """The candidates (code -> spellings) that ``question`` names; ``pairs``: the operation
    takes two metrics (a share, a ratio), so a second one need not be joined by ``and``."""
    tokens = _words(question)
    present = {stem for stem, _, _ in tokens}
    hits: list[_Hit] = []
    for code, spellings in candidates.items():
        best: tuple[frozenset[str], _Window, str] | None = None
        for spelling in spellings:
            words = spelling_words(spelling)
            if not words or not words <= present or (best and len(words) <= len(best[0])):
                continue
            window = _window(tokens, words)
            if window is not None:
                best = (words, window, spelling)
        if best is not None:
            words, (low, high), spelling = best
            if low and tokens[low - 1][0] in _QUALIFYING:
                continue  # "income before income tax expense" does not name the tax expense
            low, high = _grown(tokens, spelling, low, high)
            places = frozenset(i for i in range(low, high + 1) if tokens[i][0] in words)
            hits.append(_Hit(code, words, places, tokens[low][1], tokens[high][2], low, high))
    key = match_key(question)
    hits = _with_elided(tokens, key, candidates, hits)
    # a row whose words another row found holds is that row's part ("Revenue" in "Cost of
    # revenue"), unless the question says it elsewhere ("current" in "current and non-current")
    hits = [h for hit in hits if (h := _said_apart(tokens, hit, hits, candidates)) is not None]
    # a row of plain words only ("At end of the year") names less than any other row named
    hits.sort(key=lambda h: (not h.words - _PLAIN_STEMS, -len(h.words), h.start, h.code))
    chosen: list[_Hit] = []
    tied: list[_Hit] = []
    for hit in hits:
        clash = [c for c in chosen if c.places & hit.places]
        if clash:
            if any(len(c.words) == len(hit.words) for c in clash):
                tied.extend(c for c in clash if c not in tied)
                tied.append(hit)
            continue
        chosen.append(hit)
    if tied:
        return MetricMatch(ambiguous=tuple(dict.fromkeys(h.code for h in tied)))
    if not chosen:
        return MetricMatch()
    kept = [chosen[0]]
    others = chosen[1:]
    for other in sorted(others, key=lambda h: h.start):
        if pairs and len(kept) < 2:
            kept.append(other)
            continue
        nearest = min(kept, key=lambda k: abs(k.start - other.start))
        before, after = sorted((nearest, other), key=lambda h: h.start)
        if _JOINED.search(key[before.end : after.start]):
            kept.append(other)
    kept.sort(key=lambda h: h.start)
    if pairs and len(kept) > 2:  # a share or a ratio of which two?
        return MetricMatch(ambiguous=tuple(h.code for h in kept))
    used = sorted(frozenset().union(*(h.places for h in kept)))
    spans = tuple((tokens[i][1], tokens[i][2]) for i in used)
    return MetricMatch(tuple(h.code for h in kept), spans=spans)


def _grown(tokens: Sequence[tuple[str, int, int]], spelling: str, low: int, high: int) -> _Window:
    """The window ``low``-``high`` grown over the words that ``spelling`` says more than once
    and that stand next to it, across joining words the spelling has: ``cash and cash
    equivalents`` is one row's words both times it says ``cash`` (so a row ``Cash`` is not
    named beside it); ``Total notes payable: Total`` does not take the ``total`` of ``to total
    capital lease obligations``."""
    said = [stem for stem, _, _ in _words(spelling)]
    counts = Counter(stem for stem in said if stem not in _JOINING)
    joining = _JOINING.intersection(said)  # crossed only where the spelling has them
    have = Counter(tokens[i][0] for i in range(low, high + 1) if tokens[i][0] in counts)
    if have == counts:
        return low, high
    for step in (-1, 1):
        while True:
            edge = low if step < 0 else high
            near = edge + step
            while 0 <= near < len(tokens) and tokens[near][0] in joining:
                near += step
            if not 0 <= near < len(tokens) or have[tokens[near][0]] >= counts[tokens[near][0]]:
                break
            have[tokens[near][0]] += 1
            low, high = (near, high) if step < 0 else (low, near)
    return low, high


def _neighbours(tokens: Sequence[tuple[str, int, int]], low: int, high: int) -> list[int]:
    """The nearest token before ``low`` and after ``high`` that is no joining word."""
    found = []
    before = low - 1
    while before >= 0 and tokens[before][0] in _JOINING:
        before -= 1
    if before >= 0:
        found.append(before)
    after = high + 1
    while after < len(tokens) and tokens[after][0] in _JOINING:
        after += 1
    if after < len(tokens):
        found.append(after)
    return found


def _said_apart(
    tokens: Sequence[tuple[str, int, int]],
    hit: _Hit,
    hits: Sequence[_Hit],
    candidates: Mapping[str, Sequence[str]],
) -> _Hit | None:
    """``hit``, found again outside the matches of the rows whose words hold its own, if it
    lies within one of them (``revenue`` in ``cost of revenue as a percentage of revenue`` is
    said by the second ``revenue``); None when the question says it only within them, or
    when a word next to it belongs to a row holding its words (``income`` in ``income before
    income taxes and income taxes`` is the row ``Income taxes``, even where that row is not
    taken)."""
    wider = [other for other in hits if hit.words < other.words]
    if not any(hit.places <= other.places for other in wider):
        return hit
    covered = frozenset().union(*(other.places for other in wider))
    masked = [
        ("" if i in covered else stem, start, end) for i, (stem, start, end) in enumerate(tokens)
    ]
    window = _window(masked, hit.words)
    if window is None:
        return None
    low, high = window
    if low and tokens[low - 1][0] in _QUALIFYING:
        return None
    widening = {
        stem
        for spellings in candidates.values()
        for spelling in spellings
        if hit.words < (words := spelling_words(spelling))
        for stem in words - hit.words
    }
    if any(tokens[i][0] in widening for i in _neighbours(tokens, low, high)):
        return None
    places = frozenset(i for i in range(low, high + 1) if masked[i][0] in hit.words)
    return _Hit(hit.code, hit.words, places, tokens[low][1], tokens[high][2], low, high)


_COORDINATING = frozenset({"and", "or"})
_LISTING = re.compile(r"[,&/]")


def _with_elided(
    tokens: Sequence[tuple[str, int, int]],
    key: str,
    candidates: Mapping[str, Sequence[str]],
    hits: list[_Hit],
) -> list[_Hit]:
    """``hits``, with each candidate that a coordination names by ellipsis taking the words it
    says alone: in ``current and non-current operating lease liabilities`` the row ``Current
    operating lease liabilities`` is said by ``current`` plus the words it shares at the end of
    another row's match (``Non-current operating lease liabilities``); so is ``Basic earnings per
    share`` in ``basic and diluted earnings per share``. Only words before ``and`` / ``or`` /
    ``,`` that no other row's match took are read so, the other row must be matched right after
    them, and a row matched on its own elsewhere keeps that match (``revenue growth and total
    cost of revenue``); the elided row then stands beside the other as a joined second metric.
    Linear in the question's length for each pair of a matched row and a candidate."""
    taken = {place: hit.code for hit in hits for place in hit.places}
    own = {hit.code: hit for hit in hits}
    replaced: dict[str, _Hit] = {}
    for partner in hits:
        low = partner.first
        if low < 1:
            continue
        if tokens[low - 1][0] in _COORDINATING:
            end = low - 2
        elif _LISTING.search(key[tokens[low - 1][2] : tokens[low][1]]):
            end = low - 1
        else:
            continue
        splits = _tails(tokens, partner)
        for code, spellings in candidates.items():
            if code == partner.code or code in replaced:
                continue
            mine = own.get(code)
            if mine is not None and (mine.last < partner.first or mine.first > partner.last):
                continue  # matched on its own, apart from the other row
            for spelling in spellings:
                words = spelling_words(spelling)
                found = _elided_places(tokens, words, splits, end)
                if not found or any(taken.get(i, code) != code for i in found):
                    continue
                first, last = min(found), max(found)
                if first and _GLUED_OR_LISTED.search(
                    key[_before_run(tokens, first) : tokens[first][1]]
                ):
                    continue  # half of "non-current", or a list of three ("A, B and C X")
                replaced[code] = _Hit(
                    code, words, found, tokens[first][1], tokens[last][2], first, last
                )
                taken.update(dict.fromkeys(found, code))
                break
    kept = [h for h in hits if h.code not in replaced]
    return [*kept, *replaced.values()]


_GLUED_OR_LISTED = re.compile(r"^\S|[,;&/]|(?<!\w)(?:and|or)(?!\w)")
"""Before an elided run: a word it is glued to (``non-`` before ``current``), or a listing."""


def _before_run(tokens: Sequence[tuple[str, int, int]], first: int) -> int:
    """Where the text before token ``first`` starts to count: the end of the nearest token
    before it that is no ``and`` / ``or`` (so a listing word between them is seen)."""
    index = first - 1
    while index > 0 and tokens[index][0] in _COORDINATING:
        index -= 1
    return tokens[index][2] if tokens[index][0] not in _COORDINATING else tokens[index][1]


def _tails(
    tokens: Sequence[tuple[str, int, int]], partner: _Hit
) -> list[tuple[frozenset[str], frozenset[str]]]:
    """Each way to split ``partner``'s window into words of its own and a shared tail, as
    (tail, own) stems; split only before a word (never a joining one), so their number is
    bounded by the row's words, not the window's length."""
    said = [
        tokens[i][0] for i in range(partner.first, partner.last + 1) if tokens[i][0] not in _JOINING
    ]
    return [(frozenset(said[k:]), frozenset(said[:k])) for k in range(1, len(said))]


def _elided_places(
    tokens: Sequence[tuple[str, int, int]],
    words: frozenset[str],
    splits: Sequence[tuple[frozenset[str], frozenset[str]]],
    end: int,
) -> frozenset[int] | None:
    """The places of the run of tokens ending at ``end`` that, with a tail of the other row's
    window after some words of its own (``splits``), say exactly ``words``; None if none."""
    if not words:
        return None
    for tail, own in splits:
        before = words - tail
        if not tail <= words or not before or own == before:
            continue
        start = end - len(before) + 1
        run = tokens[start : end + 1] if start >= 0 else []
        if len(run) == len(before) and {s for s, _, _ in run} == before:
            return frozenset(range(start, end + 1))
    return None


_PARENTHESISED = re.compile(r"\([^()]*\)")


_FOOTNOTE_DIGIT = re.compile(
    r"(?<=[^\W\d_]{3})(?<!tier)(?<!evel)(?<!cope)(?<!hase)(?<!lass)(?<!ries)(?<!rade)"
    r"(?<!tage)(?<!step)(?<!type)(?<!note)(?<!tion)(?<!item)(?<!part)(?<!fund)(?<!plan)"
    r"(?<!year)(?<!ears)(?<!rter)[1-9](?=\s*(?:$|:|\(|\s))",
    re.IGNORECASE,
)
"""A footnote mark glued to the word before it (``Incentive schemes1``, ``average price paid
per share2``, ``total1: ...``); not a number a word names (``Tier1``, ``Level3``, ``Scope1``,
``Note2``, ``Years3-5``)."""


@lru_cache(maxsize=65536)
def with_optional_parts(given: tuple[str, ...]) -> tuple[str, ...]:
    """The ``given`` spellings and, for each with a part in parentheses, the one without it: a
    row called ``Net income (loss)`` or ``Other income (expense), net`` is named without its
    alternative (``net income``); the full spelling stays, so saying the part still counts.
    A leading day without its year (:data:`~ragspine.structured.headers.YEARLESS_DAY`) and a
    footnote mark glued to a word (:data:`_FOOTNOTE_DIGIT`) are optional too."""
    spellings = list(given)
    undated = [
        " ".join(YEARLESS_DAY.sub("", s).split()) for s in spellings if YEARLESS_DAY.match(s)
    ]
    spellings = [*spellings, *(spelling for spelling in undated if spelling_words(spelling))]
    unmarked = [_FOOTNOTE_DIGIT.sub("", s) for s in spellings if _FOOTNOTE_DIGIT.search(s)]
    spellings = [*spellings, *(spelling for spelling in unmarked if spelling_words(spelling))]
    shorter = [_PARENTHESISED.sub(_optional, spelling) for spelling in spellings if "(" in spelling]
    shorter = [" ".join(s.split()) for s in shorter]
    spellings = [*spellings, *(s for s in shorter if spelling_words(s))]
    unnetted = [_TRAILING_NET.sub("", s) for s in spellings if _TRAILING_NET.search(s)]
    spellings = [*spellings, *(s for s in unnetted if spelling_words(s) - _PLAIN_STEMS)]
    unsigned = [_LEADING_SIGN.sub("", s) for s in spellings]  # instead: "X less Y" stays two
    return tuple(dict.fromkeys(s for s in unsigned if spelling_words(s)))


def without_gross_twins(
    candidates: Mapping[str, Sequence[str]], question: str
) -> dict[str, tuple[str, ...]]:
    """``candidates`` where one row's name is another's but for ``gross`` and the other's
    ``net`` (``Accounts receivable, gross`` / ``Accounts receivable, net``, ``Gross accounts
    receivable`` / ``Net accounts receivable``) and ``question`` says neither word: the bare
    name (``accounts receivable``) is then a spelling of both, so that it names neither alone
    and is asked back (``the net cost of land, property and equipment`` still names the net
    row)."""
    kept = {code: tuple(spellings) for code, spellings in candidates.items()}
    if not any("gross" in s.casefold() for spellings in kept.values() for s in spellings):
        return kept  # no gross row: nothing to pair (the common case, read cheaply)
    if {"net", "gross"} & word_stems(question):
        return kept
    marked: dict[str, dict[str, set[str]]] = {}  # bare name -> "gross" / "net" -> codes
    bare: dict[str, str] = {}
    for code, spellings in candidates.items():
        for spelling in spellings:
            for pattern, mark in _GROSS_OR_NET:
                if pattern.search(spelling):
                    name = " ".join(pattern.sub(" ", spelling).split())
                    key = match_key(name)
                    marked.setdefault(key, {}).setdefault(mark, set()).add(code)
                    bare.setdefault(key, name)
    for key, marks in marked.items():
        if len(marks) == 2 and spelling_words(bare[key]):
            for code in marks["gross"] | marks["net"]:
                kept[code] = tuple(dict.fromkeys([*kept[code], bare[key]]))
    return kept


_GROSS_OR_NET = tuple(
    (re.compile(rf"(?:\s*,)?\s+{mark}\s*\.?\s*$|^\W*{mark}\s+", re.IGNORECASE), mark)
    for mark in ("gross", "net")
)
"""A closing (``, net``, as :data:`_TRAILING_NET` reads it) or leading (``Net ...``) mark."""
_LEADING_SIGN = re.compile(r"^\W*(?:less|add|plus|deduct|minus)\s*:\s*", re.IGNORECASE)
"""A reconciliation's sign before a row's name (``Less: Net income attributable to
noncontrolling interests``, ``Add: Depreciation``): how the row enters the sum, not its name;
left out of every spelling, so that ``net income less net income attributable to ...`` still
names two rows."""


_TRAILING_NET = re.compile(r"(?:\s*,)?\s+net\s*\.?\s*$", re.IGNORECASE)
"""A closing ``, net`` (``Inventories, net``; ``inventories net`` where a cleaned source lost
its comma): the figure itself, net of what its notes deduct, so ``the inventories`` names it."""


def unglued(spellings: Sequence[str], question: str) -> tuple[str, ...]:
    """``spellings`` with each word that a PDF's text ran together (``othercurrent``,
    ``numberof``, ``sharespurchased``) spelled apart where the question writes its two or
    three words in a row (``other current``), each two letters at least; the glued
    spellings stay. A word the question says itself is never split, nor one whose first part
    is a word English also uses as a prefix (:data:`_NOT_GLUED_AFTER`: ``Intangible assets``
    is no ``in tangible assets``, ``Overtime`` no ``over time``, ``asset`` no ``as set``)."""
    whole, runs = _glued_runs(question)
    if not runs:
        return tuple(spellings)

    def apart(found: re.Match[str]) -> str:
        word = found.group(0).casefold()
        return found.group(0) if word in whole else runs.get(word, found.group(0))

    split = [  # only a spelling holding a run can change: most hold none
        _WORD.sub(apart, spelling) if any(run in spelling.casefold() for run in runs) else spelling
        for spelling in spellings
    ]
    return tuple(dict.fromkeys([*spellings, *split]))


@lru_cache(maxsize=256)
def _glued_runs(question: str) -> tuple[frozenset[str], Mapping[str, str]]:
    """The question's words, and each run of two or three of them written together -> the run
    spelled apart (:func:`unglued`): read once per question, not once per stored row."""
    said = [word.casefold() for word in _WORD.findall(question)]
    usable = [len(word) >= 2 and word.isalpha() for word in said]
    runs: dict[str, str] = {}
    for size in (2, 3):
        for at in range(len(said) - size + 1):
            if said[at] in _NOT_GLUED_AFTER or not all(usable[at : at + size]):
                continue
            parts = said[at : at + size]
            runs.setdefault("".join(parts), " ".join(parts))
    return frozenset(said), MappingProxyType(runs)


_NOT_GLUED_AFTER = frozenset({
    "a", "an", "as", "at", "by", "de", "dis", "for", "in", "into", "inter", "mis", "non", "of",
    "off", "on", "or", "out", "over", "per", "post", "pre", "re", "sub", "the", "to", "un",
    "under", "up", "with",
})  # fmt: skip
"""First parts a real word may start with (``in-``, ``as-``, ``over-``, ``out-``, ``under-``):
a label word starting so is read as written, never as two words run together."""


def _optional(part: re.Match[str]) -> str:
    """A part in parentheses, dropped unless it changes the figure (``(excluding special
    items)``, ``(non-GAAP)``: kept, so the row is only named with it)."""
    turning = any(s in _TURNING or s in _QUALIFYING for s, _, _ in _words(part.group(0)))
    return part.group(0) if turning else " "


def _without_parts(spelling: str) -> str:
    return " ".join(_PARENTHESISED.sub(" ", spelling).split())


def operation_stems(words: str) -> frozenset[str]:
    """The stems of ``words`` (an operation's wording)."""
    return frozenset(stem for stem, _, _ in _words(words))


MAX_UNSAID = 2
"""How many words a row may add to what the question says (``received`` in ``capital gain
distributions received``): more, and the row names something narrower than the question
(``costs`` is not ``employee severance and related costs``). Measured on TAT-QA dev: 1 word
answers 10 fewer questions exactly, 3 or more adds 3 wrong answers for 3 exact ones."""
_TURNING = frozenset(
    {"non", "not", "no", "un", "less", "minus", "exclud", "except", "other", "special", "adjust"}
)
"""Stems that turn a row into another thing (``non-recoverable``, ``less: ...``, ``other
...``): a row holding one the question does not say is not what the question names."""
_YEAR_WORD = re.compile(r"^(?:19|20)\d{2}$")


TOTAL_STEMS = _WHOLE = frozenset(_stem(w) for w in ("total", "totals"))
"""Words a label may add and still name the plain figure (``Sales: Total``); not ``amount``,
which beside ``Shares`` is the dollars, not the number asked."""


def _added(spelling: str, every: set[str]) -> frozenset[str]:
    """The words ``spelling`` adds to the question's (``every``), ``total`` aside."""
    return spelling_words(_without_parts(spelling)) - every - _WHOLE


def _qualifies(spelling: str, every: set[str]) -> bool:
    """Whether a colon-joined ``spelling`` adds a word the question does not say, other than
    ``total`` (``Expected loss rate: Current`` for ``the expected loss rate``)."""
    return ":" in spelling and bool(_added(spelling, every))


def _widens(
    spelling: str,
    wanted: frozenset[str],
    every: set[str],
    *,
    months: bool = False,
    figures: bool = True,
) -> bool:
    """Whether ``spelling`` names what the question says (``wanted``) with at most
    :data:`MAX_UNSAID` words of its own, all after the first word the question says: a row
    that adds words in front of them is a narrower figure (``Cost of sales`` is not ``sales``,
    ``Deferred revenue`` not ``revenue``), one that adds words after them says more of the
    same (``Capital gain distributions received``), but never a number or a month of its own.
    A question that says one word only takes no row adding any (``sales`` is not ``Sales
    returns``)."""
    words = spelling_words(_without_parts(spelling))  # "(loss)" is no word to match on:
    if not words or not wanted <= words:  # "net loss" is not "Net income (loss)"
        return False
    unsaid = words - every
    if unsaid and len(words & every) < 2:
        return False
    if len(unsaid) > MAX_UNSAID or unsaid & _TURNING or any(s.isdigit() for s in unsaid):
        return False  # a number tells rows apart: "tier 1" is not "tier 2"
    if unsaid & _MONTHS and not months:
        return False  # so does a month: "notes due September 2025" is not "... March 2025"
    plain = _without_parts(spelling)
    tokens = _words(plain)
    if figures and unsaid and _another_figure(plain, tokens, unsaid):
        return False
    first = next(stem for stem, _, _ in tokens if stem not in _JOINING)
    return first in every


_OTHER_MEASURE = (
    frozenset(
        _stem(w)
        for w in (
            *("margin", "margins", "growth", "rate", "rates", "ratio", "ratios", "yield"),
            *("percent", "percentage", "return", "returns", "multiple", "change", "changes"),
            *("increase", "decrease", "days"),
        )
    )
    | _MEASURES_OF
    | _CHARGED_ON
)
"""Words a wider row may add that make it another measure of what the question names, as the
row's head (``Gross profit margin`` is no gross profit, ``Net sales growth`` no net sales);
not inside a phrase qualifying it (``Net profit after tax`` is net profit)."""
_ADDING = frozenset(
    _stem(w)
    for w in (
        *("and", "or", "per", "before", "as", "plus", "less", "net", "including"),
        *("excluding", "without", "other", "than"),
    )
)
"""Words after which a wider row's own words name something more or other than the question's
figure: a second item (``Accounts payable and accrued liabilities``, ``... and restricted
cash``), a unit (``Net income per share``), a qualification (``Income before income taxes``,
``Operating income before depreciation``) or a base (``... as a % of revenue``)."""
_DESCRIBING = frozenset(
    _stem(w) for w in ("of", "to", "for", "from", "on", "in", "by", "with", "after", "at")
)
"""Words starting a phrase that describes a row's figure without making it another
(``Dividends paid to shareholders``, ``Capital expenditures for property and equipment``,
``Net profit after tax``, ``Repurchases of common stock``): an item listed in it is its own."""


def _another_figure(
    spelling: str, tokens: Sequence[tuple[str, int, int]], unsaid: frozenset[str]
) -> bool:
    """Whether a row's words the question does not say (``unsaid``) make the row another
    figure than the one the question names: a word in front of the said ones, one of
    :data:`_ADDING` itself (``Income before income taxes``), a word after one of them or after a
    comma, ``&``, ``/`` or ``%`` (``Selling, general and administrative expenses`` is not
    ``selling expenses``), or another measure right after the said words
    (:data:`_OTHER_MEASURE`); never a word in a phrase describing the figure
    (:data:`_DESCRIBING`: ``Capital expenditures for property and equipment``)."""
    said = [index for index, (stem, _, _) in enumerate(tokens) if stem not in unsaid]
    for index, (stem, start, _) in enumerate(tokens):
        if stem not in unsaid:
            continue
        if stem in _ADDING:
            return True
        before = [k for k in said if k < index and tokens[k][0] not in _JOINING]
        if not before:
            return True  # "Cost of sales" is not "sales"
        last = before[-1]
        gap = [stem for stem, _, _ in tokens[last + 1 : index]]
        between = spelling[tokens[last][2] : start]
        describing = next((k for k, word in enumerate(gap) if word in _DESCRIBING), len(gap))
        adding = next((k for k, word in enumerate(gap) if word in _ADDING), len(gap))
        if describing < adding:  # "... paid to shareholders", "... of common stock"
            lead = spelling[tokens[last][2] : tokens[last + 1 + describing][1]]
            if not any(mark in lead for mark in ",&/%"):
                continue
        if adding < len(gap) or any(mark in between for mark in ",&/%"):
            return True
        if stem in _OTHER_MEASURE:
            return True  # "Gross profit margin", "Net sales growth"
    return False


def match_by_question_words(
    question: str,
    candidates: Mapping[str, Sequence[str]],
    extra_plain: frozenset[str] = frozenset(),
) -> MetricMatch:
    """The fallback when no candidate's words all appear in ``question``: the candidates whose
    spelling holds every word the question says about a figure (its words less joining
    words, plain question words, years and months, and ``extra_plain``): ``capital gain
    distributions`` names ``capital gain distributions received``. One such candidate is the
    match; several are ambiguous (the answer names them); none, or a question saying nothing
    of its own, is no match. A label joined by a colon (``Expected loss rate: Current``: a
    section, column group or measure qualifying the row) that adds a word of its own other
    than ``total`` is never the answer, since its other part may be a narrower figure (a rate,
    a growth, a bucket): it is asked back, unless one row adding nothing but ``total`` fits
    beside such rows only (``Gross carrying amount: Total``)."""
    plain = _PLAIN_STEMS | _JOINING | extra_plain
    tokens = _words(question)
    # words said count as said, plain ones too, but not the operation's ("changes in ..."
    # is not said by "the change in ...")
    every = {stem for stem, _, _ in tokens} - extra_plain
    said = [
        (stem, start, end)
        for index, (stem, start, end) in enumerate(tokens)
        if stem not in plain
        and stem not in _MONTHS
        and not _YEAR_WORD.match(stem)
        and not _net_of_operation(tokens, index)
    ]
    wanted = frozenset(stem for stem, _, _ in said)
    if not wanted or all(stem.isdigit() for stem in wanted):
        return MetricMatch()
    fitting = [
        code
        for code, spellings in candidates.items()
        if any(_widens(spelling, wanted, every) for spelling in spellings)
    ]
    qualified = [
        code
        for code in fitting
        if all(_qualifies(spelling, every) for spelling in candidates[code])
    ]
    whole = [  # adding nothing but "total": "Gross carrying amount: Total", not a bucket
        code
        for code in fitting
        if code not in qualified
        and any(not _added(spelling, every) for spelling in candidates[code])
    ]
    if len(whole) == 1 and len(fitting) > 1 and set(fitting) == set(whole) | set(qualified):
        fitting, qualified = whole, []  # (beside unqualified rows it stays a tie)
    if len(fitting) > 1 or qualified:  # "the expected loss rate": which bucket is asked
        return MetricMatch(ambiguous=tuple(sorted(fitting)))
    if not fitting:
        # "the notes due in 2025" beside "Notes due March 2025" and "... September 2025",
        # "gross profit" beside "Gross profit margin": rows that fit but for a month of their
        # own or words making them another figure are asked about, never answered
        near = [
            code
            for code, spellings in candidates.items()
            if any(
                _widens(spelling, wanted, every, months=True, figures=False)
                for spelling in spellings
            )
        ]
        return MetricMatch(ambiguous=tuple(sorted(near))) if near else MetricMatch()
    return MetricMatch((fitting[0],), spans=tuple((start, end) for _, start, end in said))
