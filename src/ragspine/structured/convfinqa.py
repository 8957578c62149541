"""Importer for ConvFinQA filings: each table cell under a year column becomes a fact.

entity = the ticker from the filing id (``Single_MRO/2007/page_134.pdf-1`` -> ``MRO``), or with
``entities="filing"`` the filing itself (:func:`filing_entity`: every page its own entity, so two
tables of one company and year never collide and an older filing's figure is not replaced by a
restatement; the evaluation asks each question about its own filing this way); period =
the fiscal year of a plain-year column (``2007`` -> ``FY2007``); metric = the row label turned into
a glossary code, with the label as an alias; locator = filing id, page, column and row.

What is skipped, and said: columns that are not plain years (``december 31 2017``, ``2008 high``),
cells holding ``2014.0`` (the source's em dash, U+2014, read as a number: a missing value), rates
of unknown sign (:func:`_unsigned_rates`), empty row labels, and a key given twice with different
values by the same filing year (ambiguous: neither value is kept). A later filing's value for a key
replaces an earlier filing's (restatement); the replaced one is reported. A table with one value
column that names no period (``amount ( in millions )``) is read by its rows when a row label names
the period itself (``2015 net revenue``, ``balance december 31 2005``); its other rows are
reported. With ``entities="filing"``, such a column that names nothing of its own (a unit, a
garbled first value) over rows that are years is read by the sentence before the table when that
sentence names what it lists (:func:`lead_in_subject`: ``the annual long-term debt maturities
... are as follows``): each year's row is that figure in its year.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from ragspine.errors import IngestError
from ragspine.glossary import (
    DEFAULT_CHANNEL,
    Glossary,
    MetricKind,
    Term,
    TermType,
    entity_taken,
)
from ragspine.periods import UNDATED
from ragspine.security import Sensitivity
from ragspine.structured.facts import Fact, FactKey, Scale, utc_now
from ragspine.structured.headers import (
    ANY_YEAR,
    INTERIM_REASON,
    MONTH_WORDS,
    captioned_period,
    dated_period,
    days_in,
    interim_days,
    label_stems,
    month_year_periods,
)
from ragspine.structured.ingest import RowProgress
from ragspine.structured.numbers import parse_value, shown
from ragspine.structured.tables import read_json_file
from ragspine.structured.texts import DocumentText

DASH_PLACEHOLDER = Decimal("2014.0")
DASH_PLACEHOLDERS = frozenset({DASH_PLACEHOLDER, Decimal("2013.0")})
"""What the cleaned source made of an em dash (U+2014: ``2014.0``) and of an en dash (U+2013:
``2013.0``, 24 dev cells, every one a missing value: ``legal settlement`` due in 1-3 years,
an ``inventory step-up`` the column's total leaves out)."""
_YEAR = re.compile(r"^(19|20)\d{2}$")
_FILING_ID = re.compile(
    r"^(?:[A-Za-z]+_)?(?P<ticker>[A-Za-z.\-]+)/(?P<year>\d{4})/page_(?P<page>\d+)"
)


@dataclass(frozen=True, slots=True)
class Skip:
    """One thing the importer left out, and why."""

    filing_id: str
    column: str
    row: str
    reason: str


@dataclass(frozen=True, slots=True)
class ConvFinQAImport:
    """Facts and glossary terms made from a ConvFinQA file, what was skipped, and each
    filing's text around its table (for a narrative library)."""

    facts: tuple[Fact, ...]
    new_terms: tuple[Term, ...]
    skipped: tuple[Skip, ...]
    filings: int
    texts: tuple[DocumentText, ...] = ()

    def skip_reasons(self) -> Counter[str]:
        return Counter(s.reason for s in self.skipped)


DEFAULT_LIBRARY = "convfinqa"
"""The narrative library the filings' text goes to unless another is named."""
ENTITY_MODES = ("ticker", "filing")
"""What a filing's facts are about: its company (the ticker) or the filing page itself."""
FILING_PREFIX = "filing-"


def detokenize(text: str) -> str:
    """ConvFinQA's lower-cased, space-separated tokens made readable enough for sentence
    splitting (``$ 106.4 million , $ 81.5`` -> ``$106.4 million, $81.5``; sentence starts
    capitalised, not after an abbreviation such as ``u.s.``). Every number stays as written;
    only the cleaned source's repeat of a percentage in parentheses goes (``25% ( 25 % )`` ->
    ``25%``)."""
    text = " ".join(text.split())
    text = re.sub(r"\s+([.,;:%)])", r"\1", text)
    text = re.sub(r"([($])\s+", r"\1", text)
    text = re.sub(r"(\w)- (\w)", r"\1\2", text)  # words hyphenated across PDF lines
    text = re.sub(r"\d+% \(\d+%\)", lambda m: m.group(0).split(" ")[0], text)
    return re.sub(
        r"(^|(?<!\.[a-z])[.!?]\s+)([a-z])", lambda m: m.group(1) + m.group(2).upper(), text
    )


def filing_paragraphs(filing: Mapping[str, Any]) -> tuple[str, ...]:
    """A filing's text before and after its table, each one paragraph (:func:`detokenize`);
    none where the source has none."""
    doc = filing.get("doc")
    if not isinstance(doc, Mapping):
        return ()
    found = []
    for part in ("pre_text", "post_text"):
        text = doc.get(part)
        if isinstance(text, list):  # the source's sentences, one string each
            text = " ".join(str(t) for t in text)
        if isinstance(text, str) and text.strip(" .\n"):
            found.append(detokenize(text))
    return tuple(found)


def filing_entity(filing_id: str) -> str:
    """The entity code of a filing under ``entities="filing"``
    (``Single_UNP/2008/page_77.pdf-2`` -> ``filing-single-unp-2008-page-77-pdf-2``)."""
    return FILING_PREFIX + re.sub(r"[^a-z0-9]+", "-", filing_id.casefold()).strip("-")


_UNSIGNED = (
    "a rate, or a row of a table of only negative values, with no positive value: the cleaned "
    "source turns '11.4% ( 11.4 % )' into -11.4, so its sign is unknown"
)
_RATE_LABEL = re.compile(
    r"\b(?:margins?|rate|ratio|yield|volatility|percentage)"
    r"(?:\s+as\s+\w+)?(?:\s*\([^()]*\))*\s*$",
    re.IGNORECASE,
)
"""A label ending in the name of a rate (``risk-free interest rate``, ``operating margin``,
``loss ratio as reported``, ``volatility ( bps )``); not one where a rate only qualifies an
amount (``interest rate swaps``, ``interest rates net``, ``effect of exchange rate changes``)."""
_REPLACED = "replaced by a later filing's value"
_AMBIGUOUS = "same row, entity and year twice with different values (ambiguous: neither kept)"


def metric_code(label: str) -> str:
    """A glossary code for a row label: lower-case words joined by underscores, accents
    dropped (``Café`` and ``Cafe\u0301`` are one code), a percent sign spelled out (``Gross
    margin (%)`` is no ``Gross margin`` in dollars)."""
    decomposed = unicodedata.normalize("NFKD", label.casefold().replace("%", " percent "))
    plain = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    code = re.sub(r"[^a-z0-9]+", "_", plain).strip("_")
    return code[:80] or "unnamed"


_SIGNS = frozenset("<>+=\u00b1%$\u20ac\u00a3\u00a5\u2264\u2265")
"""Characters that change what a label names (``Assets > 1 year`` is not ``Assets < 1
year``); other punctuation does not (``total .`` is ``total``)."""


def _sense(label: str) -> tuple[str, frozenset[str]]:
    """What a label says: its letters and digits in every script, and its signs."""
    folded = unicodedata.normalize("NFKC", label).casefold()
    return "".join(ch for ch in folded if ch.isalnum()), frozenset(_SIGNS.intersection(folded))


def _says(label: str, term: Term) -> bool:
    """Whether ``label`` says what one of ``term``'s texts says (punctuation aside)."""
    sense = _sense(label)
    return any(_sense(text) == sense for text in (term.label, *term.aliases))


def metric_for_label(label: str, glossary: Glossary, new_metrics: dict[str, Term]) -> str:
    """The metric code of a row label: the glossary's when it knows the label (or its code,
    for a label saying the same), else a new code added to ``new_metrics`` with the label as
    its label or an alias. Labels that differ in letters, digits or signs never share a code
    (``Assets > 1 year`` and ``Assets < 1 year``, two labels in other scripts): the second
    gets the code with a number (``assets_1_year_2``)."""
    metric = glossary.metrics.resolve(label)
    if metric is not None:
        return metric
    base = metric_code(label)
    metric, number = base, 1
    while True:
        known = glossary.metrics.terms.get(metric)
        term = new_metrics.get(metric)
        if known is not None and term is None and _says(label, known):
            return metric  # "total ." is the known "total"
        if known is None and term is None:
            new_metrics[metric] = Term(TermType.METRIC, metric, label, (), "", MetricKind.NUMBER)
            return metric
        if term is not None and _says(label, term):
            if label != term.label and label not in term.aliases:
                new_metrics[metric] = Term(
                    TermType.METRIC, metric, term.label, (*term.aliases, label), "",
                    MetricKind.NUMBER,
                )  # fmt: skip
            return metric
        number += 1
        metric = f"{base}_{number}"


def load_filings(path: Path) -> list[Mapping[str, Any]]:
    """The list of filings in a ConvFinQA JSON file (a list, or ``{split: [...]}``)."""
    document = read_json_file(path, "ConvFinQA", "dev.json")
    if isinstance(document, dict):
        lists = [v for v in document.values() if isinstance(v, list)]
        filings = [f for part in lists for f in part]
    else:
        filings = document
    if not isinstance(filings, list) or not all(
        isinstance(f, dict) and "id" in f and "doc" in f for f in filings
    ):
        raise IngestError(
            f"{path.name}: expected ConvFinQA filings (objects with 'id' and 'doc.table')"
        )
    if not filings:
        raise IngestError(
            f"{path.name}: no ConvFinQA filings in it (a list, or splits such as 'dev' mapping "
            "to lists); nothing was ingested"
        )
    ids = Counter(str(f["id"]) for f in filings)
    repeated = [filing for filing, count in ids.items() if count > 1]
    if repeated:
        raise IngestError(
            f"{path.name}: filing id {shown(repeated[0])} appears {ids[repeated[0]]} times (in "
            "one split or across splits); each filing needs its own id, nothing was ingested"
        )
    return filings


def _table(filing: Mapping[str, Any], source_name: str) -> Mapping[str, Mapping[str, Any]]:
    """The filing's ``doc.table`` (column -> row label -> cell), checked for shape."""
    doc = filing["doc"]
    table = doc.get("table") if isinstance(doc, Mapping) else None
    if table is None and isinstance(doc, Mapping):
        return {}
    if not isinstance(table, Mapping) or not all(isinstance(r, Mapping) for r in table.values()):
        raise IngestError(
            f"{source_name}: filing {shown(str(filing['id']))}: doc.table must map column "
            "headers to {row label: cell}; is this a ConvFinQA file?"
        )
    return table


_UNIT_MARK = re.compile(
    r"\(\s*(?:in\s+)?(?:thousands|millions|billions)(?:\s+of\s+dollars)?\s*\)", re.IGNORECASE
)


_SCALE_WORDS = {"thousands": Scale.THOUSAND, "millions": Scale.MILLION, "billions": Scale.BILLION}
_STATED = re.compile(r"\bin\s+(thousands|millions|billions)\b", re.IGNORECASE)
_AS_WRITTEN = re.compile(
    r"^(?!.*\bshares\b).*per\s+(?:common\s+)?share\b|^\W*(?:%|percent)"
    r"|\bpercent(?:age)?\s+of\b|(?<!in )(?<!of )(?<!on )(?<!interest )\brates\s*$|\bbps\b"
    r"|\bbasis\s+points\b|\bcorrelation\b"
    r"|\bspreads?\s*$|\bpoints\s*$",
    re.IGNORECASE,
)
"""A per-share (``amountper share``, glued by the source; never a number of shares used in
computing one), percentage or market-input row (``recovery rates``, ``credit spreads``,
``correlation``, ``upfront credit points``): as written at any scale. Not a rate in an
instrument's name (``senior notes due 2027 3.483% ( 3.483 % )``) nor an amount after a 10%
change (``fair market value ... decrease in interest rates``)."""


@dataclass(frozen=True, slots=True)
class StatedScale:
    """The scale a filing states for its table (:func:`table_scale`)."""

    table: Scale
    """For every column: the sentence before the table's, else :attr:`Scale.UNKNOWN`."""
    columns: Mapping[str, Scale]
    """Columns whose own header states one (``sales proceeds ( in millions )``): then only
    they are at a stated scale, the others (``date completed``, a garbled percentage
    column) are not."""
    except_shares: bool
    """The statement excepts shares (``amounts in thousands , except share and per share
    amounts``)."""

    def of(self, column: str, label: str) -> Scale:
        """The scale of the figure in ``column`` (the source's column header) and row
        ``label``: a rate, a percentage or a per-share row is as written (``operating
        margin``, ``earnings per share``, ``correlation``, ``credit spreads``), and so is a
        number of shares where the statement excepts shares."""
        if _RATE_LABEL.search(label) or _AS_WRITTEN.search(label):
            return Scale.ONE
        if self.except_shares and _SHARE_COUNT.search(label) and not _MONEY.search(label):
            return Scale.ONE
        return self.columns.get(column, Scale.UNKNOWN) if self.columns else self.table


def table_scale(filing: Mapping[str, Any], table: Mapping[str, Any]) -> StatedScale:
    """The scale a filing states for its table: in a column header (``2013 ( in millions
    )``: that column's only), else in the sentence right before the table (``... are as
    follows ( in thousands )``, ``consumer packaging in millions 2006 2005 2004``) when
    exactly one is stated there; :attr:`Scale.UNKNOWN` otherwise (never guessed from the
    prose further up)."""
    columns: dict[str, Scale] = {}
    for column in table:
        said = {_SCALE_WORDS[m[1].lower()] for m in _STATED.finditer(str(column))}
        if len(said) == 1:
            columns[str(column)] = said.pop()
    texts = [str(column) for column in table]
    last = _last_raw_sentence(filing["doc"].get("pre_text"))
    if last is not None:  # its asides too: "( in millions )"
        texts.append(last)
    found = {_SCALE_WORDS[m[1].lower()] for text in texts for m in _STATED.finditer(text)}
    scale = found.pop() if len(found) == 1 and not columns else Scale.UNKNOWN
    shares = any(
        _SHARES_EXCEPTED.search(clause[1]) for text in texts for clause in _EXCEPT.finditer(text)
    )
    return StatedScale(scale, columns, shares)


_EXCEPT = re.compile(r"\bexcept\b([^)]*)", re.IGNORECASE)
_SHARES_EXCEPTED = re.compile(
    r"\bshares\b|(?<!per )\bshare\s+(?:and|data|amounts?|counts?|numbers?)\b", re.IGNORECASE
)
"""An exception naming numbers of shares (``except per share amounts and shares``, ``except
share amounts``, ``except share and per share amounts``; not ``except per share amounts``)."""
_SHARE_COUNT = re.compile(r"\bshares\b|\bnumber\s+of\b", re.IGNORECASE)
_MONEY = re.compile(r"\b(?:costs?|proceeds|value|amount|price|paid|purchases?)\b", re.IGNORECASE)
_DATES = re.compile(r"\bdates?\b|\byear\s+(?:completed|acquired|of)\b", re.IGNORECASE)


def _period_of(header: str, glossary: Glossary) -> str | None:
    """The period of a column header (a year or a year-end date), a unit mark such as ``( in
    millions )`` aside: ``december 31 2013 ( in millions )`` is FY2013."""
    plain = " ".join(_UNIT_MARK.sub(" ", header).split())
    if _YEAR.match(plain):
        return f"FY{plain}"
    return dated_period(plain, glossary.fiscal_year_start_month)


_YEAR_FIRST = re.compile(r"^(?P<year>(?:19|20)\d{2})\s+(?P<rest>[^\W\d_].*)$")


def _row_period(label: str, glossary: Glossary) -> tuple[str, str] | None:
    """``(metric label, period)`` of a row label that names its period, under a table's one
    value column that names none: ``2015 net revenue`` (a year first), ``balance december 31
    2005`` or ``liability at december 31 2008`` (a caption over a date)."""
    found = _YEAR_FIRST.match(label)
    if found is not None:
        return found["rest"], f"FY{found['year']}"
    captioned = captioned_period(label, glossary.fiscal_year_start_month)
    if captioned is None:
        return None
    caption = re.sub(r"\s+(?:at|as of|on)$", "", captioned[0])
    return (caption, captioned[1]) if caption else None


def _walk(rows: Mapping[str, Any], glossary: Glossary) -> dict[str, tuple[str, str, str]]:
    """The parts of a one-year walk, by row label: ``(metric label, period, locator note)``.

    A walk (a bridge) runs from ``2009 net revenue`` through rows naming no period
    (``volume/weather``, ``other``) to ``2010 net revenue``: when the rows between add up exactly
    to the change from the first to the last, each is a part of that change during the later
    year (``net revenue: volume/weather`` in FY2010). Anything else is no walk (empty)."""
    labels = [" ".join(str(label).split()) for label in rows]
    if len(labels) < 3:
        return {}
    first, last = _row_period(labels[0], glossary), _row_period(labels[-1], glossary)
    if first is None or last is None or first[0].casefold() != last[0].casefold():
        return {}
    if int(last[1].removeprefix("FY")) != int(first[1].removeprefix("FY")) + 1:
        return {}
    try:
        values = [parse_value(cell) for cell in rows.values()]
    except IngestError:
        return {}
    middle = labels[1:-1]
    if DASH_PLACEHOLDERS & set(values) or any(_row_period(label, glossary) for label in middle):
        return {}
    if sum(values[1:-1], Decimal(0)) != values[-1] - values[0]:
        return {}
    caption = first[0]
    note = f" (part of the change in {caption} from {first[1]} to {last[1]})"
    return {label: (f"{caption}: {label}", last[1], note) for label in middle if label}


_PARENTHESES = re.compile(r"\([^()]*\)")
_LEAD_IN = re.compile(
    r"^(?:the\s+)?(?P<subject>[a-z][a-z\-]*(?:\s+(?!(?:for|under|at|as|on|during|in|by|are|is"
    r"|were|and)\b)[a-z][a-z\-]*)+)(?P<phrase>\s+(?:for|under|at|as\s+of|during)\s[^:.]*?)?"
    r"\s+(?:are|is|were|was)\s+(?:approximately\s+)?as\s+follows\b"
)
"""A lead-in sentence naming what the table after it lists: ``the annual long-term debt
maturities ( excluding lease obligations ) for debt outstanding as of december 31 , 2003 , for
the next five years are as follows:`` names ``annual long-term debt maturities``. The name is
the whole start of the sentence (``the`` aside) in two plain words or more, up to the verb or to
a phrase saying when or of what (``as of december 31 , 2007``, ``for the next five years``,
``for debt outstanding``, ``under these leases`` after ``future minimum lease commitments``)
whose words are times, dates, a few words that narrow nothing (``outstanding``, ``these``,
``all``) or words of the name itself. A phrase that
may narrow the figure (``minimum payments under purchase obligations``, ``expected benefit
payments for the postretirement plan``, ``long-term debt by maturity``, ``payments in 2019``)
or an ``and`` (two figures, or a figure and its valuation allowance) makes the sentence name
nothing, and so does a start that is no plain word (a heading ending in a year run into it).
A heading of plain words run into it without a stop cannot be told apart (``future maturities
of corporate debt scheduled principal payments ...``): such a name is long and matches only a
question that says all of it."""


def lead_in_subject(pre_text: object) -> str | None:
    """What the last sentence before a table says the table lists (:data:`_LEAD_IN`), its
    parenthesised asides left out; None when that sentence is no such lead-in."""
    last = _last_sentence(pre_text)
    found = _LEAD_IN.match(last) if last is not None else None
    if found is None or not _names_a_figure(found["subject"]):
        return None
    named = label_stems(found["subject"])
    said = label_stems(found["phrase"] or "") - named - _NARROWS_NOTHING
    if any(stem not in _MONTH_STEMS for stem in said):
        return None  # "minimum payments under purchase obligations": which payments
    return found["subject"]


_MONTH_STEMS = label_stems(" ".join(sorted(MONTH_WORDS)))
_NARROWS_NOTHING = label_stems(
    " ".join(
        (
            *("for", "under", "at", "as", "of", "on", "during", "in", "by", "with", "the", "a"),
            *("an", "our", "its", "their", "these", "those", "all", "each", "such", "any"),
            *("next", "following", "year", "years", "fiscal", "ending", "ended", "end", "date"),
            *("period", "periods", "thereafter", "aggregate", "outstanding", "existing"),
            *("remaining", "significant", "one", "two", "three", "four", "five", "six"),
            *("seven", "eight", "nine", "ten"),
        )
    )
)
"""Words of a lead-in's phrase that narrow no figure: times, dates and determiners."""


_SUBJECT = (
    r"(?P<subject>[a-z][a-z\-]*(?:\s+(?!(?:for|under|at|as|on|during|in|by|are|is|were|from|to"
    r"|and|the)\b)[a-z][a-z\-]*)+)"
    r"(?=\s*$|\s*:|\s+(?:are|is|were|follows|as follows|during"
    r"|for the (?:fiscal )?(?:years?|periods?)|for (?:fiscal )?(?:19|20)\d\d)\b)"
)
_ROLL_CUES = (
    re.compile(
        r"\breconciliation of (?:the )?(?:beginning and ending|opening and closing) "
        r"(?:amounts|balances) of (?:our |the )?" + _SUBJECT
    ),
    re.compile(
        r"(?:^|\b(?:the|our|of|aggregate|summarizes|shows|presents|reflects|details|following)\s)"
        r"(?:activity|changes|movements?) (?:in|of) (?:our |the )?" + _SUBJECT
    ),
    re.compile(r"\breconciliation presents (?:the )?(?:total )?(?:amounts? of )?" + _SUBJECT),
)
"""How the sentence before a roll-forward names what it rolls forward: ``a reconciliation of
the beginning and ending amounts of unrecognized tax benefits``, ``summarizes the activity in
our gross unrecognized tax benefits for the years ended``, ``our aggregate changes in our total
gross amount of unrecognized tax benefits are summarized as follows``. The name is two plain
words or more and must end where the sentence says no more of it (its end, a colon, the verb,
``for the years``): ``changes in our net deferred tax assets and the related valuation
allowance``, ``changes in the company 2019s unrecognized tax benefits`` (the source's garbled
apostrophe) or ``activity in our allowance for doubtful accounts`` name nothing. The activity
is the subject's only when no other word names what moves: ``stock option activity in our
equity compensation plans`` rolls the options forward, not the plans."""


def _last_raw_sentence(pre_text: object) -> str | None:
    """The last sentence of a filing's text before its table, as written."""
    if isinstance(pre_text, list) and all(isinstance(s, str) for s in pre_text):
        pre_text = " ".join(pre_text)  # the source's sentences, one string each
    if not isinstance(pre_text, str) or not pre_text.strip():
        return None
    return re.split(r"\s\.\s", " ".join(pre_text.split()).rstrip(" ."))[-1]


def _last_sentence(pre_text: object) -> str | None:
    """The last sentence of a filing's text before its table, parenthesised asides left out."""
    last = _last_raw_sentence(pre_text)
    return None if last is None else " ".join(_PARENTHESES.sub(" ", last).split())


def roll_subject(pre_text: object) -> str | None:
    """What the sentence before a roll-forward says it rolls forward (:data:`_ROLL_CUES`)."""
    last = _last_sentence(pre_text)
    for cue in _ROLL_CUES:
        found = cue.search(last or "")
        if found is not None and _names_a_figure(found["subject"]):
            return found["subject"]
    return None


def _closing_row(
    table: Mapping[str, Mapping[str, Any]], periods: Mapping[str, str | None]
) -> str | None:
    """The label of the last row of a table that rolls a balance forward year by year, None for
    any other table. Proven by the figures alone: in every year column the first row plus the
    rows between (a dash is nil; one of them a number) is the last row, the years are
    consecutive (two at least), and each year's first row is the year before's last (its
    opening balance is the closing one)."""
    years: dict[int, str] = {}
    for column, period in periods.items():
        if period is None or not re.fullmatch(r"FY\d{4}", period):
            return None
        years[int(period[2:])] = column
    order = sorted(years)
    if len(order) < 2 or order != list(range(order[0], order[0] + len(order))):
        return None
    labels = list(table[years[order[0]]])
    if len(labels) < 3 or any(list(table[c]) != labels for c in years.values()):
        return None
    values: dict[int, list[Decimal]] = {}
    for year, column in years.items():
        try:
            values[year] = [parse_value(table[column][label]) for label in labels]
        except IngestError:
            return None
        found = values[year]
        if found[0] in DASH_PLACEHOLDERS or found[-1] in DASH_PLACEHOLDERS:
            return None
        between = [v for v in found[1:-1] if v not in DASH_PLACEHOLDERS]
        if not between or found[0] + sum(between, Decimal(0)) != found[-1]:
            return None
    if any(values[year][0] != values[year - 1][-1] for year in order[1:]):
        return None
    return str(labels[-1])


def _names_a_figure(label: str) -> bool:
    """Whether a row label has a word that is not a month: ``$ 2014`` or ``30 september``
    (a garbled header or a date) is not the name of a figure."""
    return any(word not in MONTH_WORDS for word in re.findall(r"[^\W\d_]+", label.casefold()))


_FILED_YEAR = re.compile(r"/((?:19|20)\d{2})/")


def _column_periods(
    columns: Iterable[str], glossary: Glossary, latest_year: int | None = None
) -> dict[str, str | None]:
    """The period of each column header: a year or a date, or a caption over one
    (``pension plans 2018``) when every captioned column of the table shares that caption (one
    column group); two different captions (``gross goodwill at ...``, ``net goodwill at ...``)
    are columns of different things, and neither is read as a period."""
    start = glossary.fiscal_year_start_month
    columns = list(columns)
    month_years = month_year_periods(columns, start, latest_year)
    if month_years is not None:  # "12/09" ... "12/14": each year's December
        return dict(zip(columns, month_years, strict=True))
    periods = {column: _period_of(column, glossary) for column in columns}
    captioned = {
        column: found
        for column, period in periods.items()
        if period is None and (found := captioned_period(column, start)) is not None
    }
    if len({caption.casefold() for caption, _ in captioned.values()}) == 1:
        periods.update({column: period for column, (_, period) in captioned.items()})
    return periods


_UNIT_ONLY = re.compile(
    r"^[\s()$%]*(?:amount|amounts|in|thousands|millions|billions|dollars|\$|\(|\)|\s)*$",
    re.IGNORECASE,
)


def _oriented(
    table: Mapping[str, Mapping[str, Any]], glossary: Glossary
) -> tuple[Mapping[str, Mapping[str, Any]], bool]:
    """The table as column -> row -> cell with periods as columns, and whether it was turned:
    a table none of whose columns is a period but at least two of whose rows are (``31-dec-2013``
    rows under ``citi`` / ``s&p 500`` columns) is read with rows and columns swapped. A column
    header that only names a unit (``amount ( in millions )``) is no metric, and that table is
    left as it is (its columns are then reported)."""
    if any(_period_of(column, glossary) for column in table):
        return table, False
    rows = {label for cells in table.values() for label in cells}
    if sum(1 for label in rows if _period_of(str(label), glossary)) < 2:
        return table, False
    if any(_UNIT_ONLY.match(column) or not _names_a_figure(column) for column in table):
        return table, False  # "$ 1150786": a garbled first value, not a series name
    turned: dict[str, dict[str, Any]] = {}
    for column, cells in table.items():
        for label, cell in cells.items():
            turned.setdefault(str(label), {})[column] = cell
    return turned, True


def _undated(
    table: Mapping[str, Mapping[str, Any]], periods: Mapping[str, str | None], glossary: Glossary
) -> bool:
    """Whether the table states no period at all, so that its figures are stored as
    :data:`~ragspine.periods.UNDATED` (a purchase price allocation, a table of commitments by
    kind): no column is a period, no row label or header names a year (``2015 net revenue``,
    ``notes due 2017``: periods the table does not read as such), no header names a change, a
    share or a span (``increase ( decrease )``, ``% of total``, ``pro forma``), and with several
    value columns each header names a figure of its own (not ``$ 602011``, a garbled first
    value, nor a unit)."""
    if any(periods.values()):
        return False
    labels = [str(label) for cells in table.values() for label in cells]
    if any(ANY_YEAR.search(label) or _row_period(label, glossary) for label in labels):
        return False
    headers = [" ".join(column.split()) for column in table]
    if any(ANY_YEAR.search(h) or _NOT_A_LEVEL.search(h) for h in headers):
        return False  # "2016 vs 2015", "increase ( decrease )", "% of total", "pro forma"
    if len(table) == 1:
        return True
    if len({h.casefold() for h in headers}) < len(headers):
        return False
    return all(_names_a_figure(h) and not _UNIT_ONLY.match(h) for h in headers)


def _plain_header(header: str) -> bool:
    """Whether one value column's header names nothing of its own: a unit (``amount ( in
    millions )``), a garbled first value (``$ 28.1``) or a plain caption (``total``)."""
    plain = " ".join(header.split())
    return bool(_UNIT_ONLY.match(plain) or not _names_a_figure(plain) or _PLAIN.match(plain))


_NOT_A_LEVEL = re.compile(
    r"%|(?<![^\W\d_])(?:change|changes|increase|decrease|variance|vs|versus|growth|pro\s+forma"
    r"|ended|ending)(?![^\W\d_])",
    re.IGNORECASE,
)
"""A column header naming a change, a share or a span rather than a level: such a table is
not read as undated."""
_PLAIN = re.compile(r"^\W*(?:totals?|amounts?|values?|balances?)\W*$", re.IGNORECASE)


def _unsigned_rates(table: Mapping[str, Mapping[str, Any]], read: Iterable[str]) -> set[str]:
    """Rows of the ``read`` columns with no positive value and a negative one that end in the
    name of a rate (:data:`_RATE_LABEL`), or that sit in a table of such rows only (a table of
    discount rates by plan): the dataset's cleaning wrote a percentage cell ``11.4% ( 11.4 % )``
    as -11.4, so such a row's sign cannot be told from a loss; it is reported, never guessed.
    (A table of losses only is reported too: in this source its sign cannot be told apart.)"""
    values: dict[str, list[Decimal]] = {}
    for column in read:
        for label, cell in table[column].items():
            try:
                value = parse_value(cell)
            except IngestError:
                continue
            if value not in DASH_PLACEHOLDERS:
                values.setdefault(str(label), []).append(value)
    negative = {
        label
        for label, found in values.items()
        if all(v <= 0 for v in found) and any(v < 0 for v in found)
    }
    if negative == set(values):
        return negative
    return {label for label in negative if _RATE_LABEL.search(label)}


def import_convfinqa(
    filings: Iterable[Mapping[str, Any]],
    glossary: Glossary,
    *,
    source_name: str,
    progress: RowProgress | None = None,
    entities: str = "ticker",
) -> ConvFinQAImport:
    """Turn filings into facts; row labels the glossary does not know become new metric terms.

    ``entities``: ``ticker`` (one entity per company) or ``filing`` (one per filing page, see
    :func:`filing_entity`). ``progress(done, total)`` is called after each filing.
    """
    if entities not in ENTITY_MODES:
        raise IngestError(
            f"entities must be one of {', '.join(ENTITY_MODES)}, got {shown(str(entities))}"
        )
    now = utc_now()
    new_metrics: dict[str, Term] = {}
    new_entities: dict[str, Term] = {}
    chosen: dict[FactKey, tuple[int, Fact]] = {}
    ambiguous: dict[FactKey, int] = {}  # key -> the filing year that gave it twice
    skipped: list[Skip] = []
    texts: list[DocumentText] = []
    ordered = sorted(filings, key=lambda f: str(f["id"]))
    for done, filing in enumerate(ordered, start=1):
        if progress is not None:
            progress(done - 1, len(ordered))
        filing_id = str(filing["id"])
        match = _FILING_ID.match(filing_id)
        if match is None:
            skipped.append(Skip(filing_id, "", "", "filing id has no TICKER/YEAR/page_N form"))
            continue
        ticker, filing_year, page = match["ticker"], int(match["year"]), match["page"]
        if entities == "filing":
            entity = filing_entity(filing_id)
            other = entity_taken(entity, filing_id, glossary.entities.terms, new_entities)
            if other is not None:
                reason = f"its entity {entity!r} is filing {other!r}'s: rename one of the two"
                skipped.append(Skip(filing_id, "", "", reason))
                continue
            new_entities.setdefault(entity, Term(TermType.ENTITY, entity, filing_id))
        else:
            resolved = glossary.entities.resolve(ticker)
            if resolved is not None and resolved.startswith(("tatqa-", FILING_PREFIX)):
                # a TAT-QA document or a filing named like the ticker: no company to merge into
                reason = f"its ticker names the entity {resolved!r}, a document's: left out"
                skipped.append(Skip(filing_id, "", "", reason))
                continue
            entity = ticker.lower() if resolved is None else resolved
            if resolved is None:
                new_entities.setdefault(entity, Term(TermType.ENTITY, entity, ticker.upper()))
        texts.append(DocumentText(filing_id, entity, filing_paragraphs(filing)))
        raw_table = _table(filing, source_name)
        stated = table_scale(filing, raw_table)
        table, transposed = _oriented(raw_table, glossary)
        filed = _FILED_YEAR.search(filing_id)  # "Single_ETFC/2014/page_26.pdf": a 2014 report
        periods = _column_periods(table, glossary, int(filed[1]) if filed else None)
        days = {c: said[0] for c in table if periods[c] and (said := days_in(c))}
        interims = interim_days(days, glossary.fiscal_year_start_month)
        periods.update({column: None for column in interims})  # "june 30 2009 | december 31 2008"
        # by ticker, two undated tables of one company would read as restatements of one
        # another: undated figures are kept by filing only
        undated = entities == "filing" and not transposed and _undated(table, periods, glossary)
        read = [c for c in table if periods[c] is not None or len(table) == 1 or undated]
        unsigned = _unsigned_rates(table, read)
        # one value column naming nothing (a unit, a garbled first value) over rows that are
        # years: what the table lists may be said only by the sentence before it. By filing
        # only: a schedule's years are as of its filing (the maturities for 2016 as of 2013
        # and as of 2015 differ), so by ticker one would pass for a restatement of the other
        subject = (
            lead_in_subject(filing["doc"].get("pre_text"))
            if entities == "filing"
            and len(table) == 1
            and not undated
            and _plain_header(next(iter(table)))
            else None
        )
        # a roll-forward the sentence before it names ("a reconciliation of the beginning and
        # ending amounts of unrecognized tax benefits"): its closing balance is that figure
        rolled = None
        if entities == "filing" and (closing := _closing_row(table, periods)) is not None:
            rolls = roll_subject(filing["doc"].get("pre_text"))
            rolled = (closing, rolls) if rolls is not None else None
        for column, rows in table.items():
            dated = periods[column]
            if column in interims:
                skipped.append(Skip(filing_id, column, "", INTERIM_REASON))
                continue
            # one value column: rows may be dated
            by_row = dated is None and len(table) == 1 and not undated
            # a walk's parts belong to it: by ticker, two walks of one company would mix
            walk = _walk(rows, glossary) if by_row and entities == "filing" else {}
            if dated is None and not by_row and not undated:
                reason = "column header is not a year or a year-end date"
                skipped.append(Skip(filing_id, column, "", reason))
                continue
            entries: list[tuple[Any, Any, str | None]] = [(r, c, None) for r, c in rows.items()]
            if rolled is not None and dated is not None:  # the closing balance, by its name
                entries.append((rolled[0], rows[rolled[0]], rolled[1]))
            for row_label, cell, named_as in entries:
                label = " ".join(str(row_label).split())
                if not label:
                    skipped.append(Skip(filing_id, column, "", "empty row label"))
                    continue
                name, note = label, ""
                if named_as is not None:
                    name, note = named_as, f" (the closing balance of {named_as!r})"
                if dated is not None:
                    period = dated
                elif undated:  # "goodwill" of a purchase price allocation; "total: americas"
                    period = UNDATED
                    if len(table) > 1 or not _plain_header(column):
                        name = f"{label}: {' '.join(column.split())}"
                elif label in walk:
                    name, period, note = walk[label]
                else:
                    named = _row_period(label, glossary)
                    if named is None and subject is not None and _YEAR.match(label):
                        # a year's row of a table the sentence before it names
                        named, note = (subject, f"FY{label}"), f" (the table of {subject!r})"
                    if named is None:
                        reason = "neither the column header nor the row label names a period"
                        skipped.append(Skip(filing_id, column, label, reason))
                        continue
                    name, period = named
                try:
                    value = parse_value(cell)
                except IngestError:
                    skipped.append(Skip(filing_id, column, label, "cell is not a number"))
                    continue
                if value in DASH_PLACEHOLDERS:
                    reason = f"{value} stands for a dash (missing value)"
                    skipped.append(Skip(filing_id, column, label, reason))
                    continue
                if dated is None and _DATES.search(" ".join(column.split())):
                    # "date completed" beside "sales proceeds ( in millions )": a year, no
                    # amount (and no figure at the table's scale)
                    reason = "column holds dates, not amounts"
                    skipped.append(Skip(filing_id, column, label, reason))
                    continue
                if str(row_label) in unsigned:
                    skipped.append(Skip(filing_id, column, label, _UNSIGNED))
                    continue
                if not _names_a_figure(name):
                    reason = "row label names no figure (only numbers or dates)"
                    skipped.append(Skip(filing_id, column, label, reason))
                    continue
                metric = metric_for_label(name, glossary, new_metrics)
                fact = Fact(
                    metric,
                    entity,
                    period,
                    DEFAULT_CHANNEL,
                    value,
                    "",
                    "",
                    stated.of(str(row_label) if transposed else column, name),
                    filing_id,
                    (
                        f"{filing_id}, page {page}, row {column.strip()!r}, column {label!r}"
                        if transposed
                        else f"{filing_id}, page {page}, column {column.strip()!r}, row {label!r}"
                    )
                    + note,
                    Sensitivity.PUBLIC,
                    f"{filing_year}",
                    now,
                )
                unsettled = ambiguous.get(fact.key)
                if unsettled is not None and filing_year <= unsettled:
                    reason = _AMBIGUOUS if filing_year == unsettled else _REPLACED
                    skipped.append(Skip(filing_id, column, label, reason))
                    continue
                if unsettled is not None:  # a later filing settles an ambiguous year
                    del ambiguous[fact.key]
                previous = chosen.get(fact.key)
                if previous is None or previous[1].value == fact.value:
                    chosen.setdefault(fact.key, (filing_year, fact))
                elif filing_year < previous[0]:  # an older filing's figure, restated later
                    skipped.append(Skip(filing_id, column, label, _REPLACED))
                elif filing_year > previous[0]:
                    skipped.append(
                        Skip(
                            previous[1].source_doc_id,
                            column,
                            label,
                            _REPLACED,
                        )
                    )
                    chosen[fact.key] = (filing_year, fact)
                else:  # neither value is chosen: both are reported
                    ambiguous[fact.key] = filing_year
                    del chosen[fact.key]
                    first = previous[1]
                    skipped.append(Skip(first.source_doc_id, "", first.locator, _AMBIGUOUS))
                    skipped.append(Skip(filing_id, column, label, _AMBIGUOUS))
    if progress is not None:
        progress(len(ordered), len(ordered))
    return ConvFinQAImport(
        tuple(f for _, f in chosen.values()),
        (*new_metrics.values(), *new_entities.values()),
        tuple(skipped),
        len(ordered),
        tuple(texts),
    )
