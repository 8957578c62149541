"""Which rows a report table lists under a heading or above its total: ``What were the
components making up current assets?``, ``How many items are there under deferred tax
assets?``, ``How many categories are there under total stock-based compensation expense?``.

Answered from the stored facts' locators only: the row number, the row's label as the table
shows it and the section heading (with its own row) that an importer of report tables records
(``..., table, row 5 'Debtors' under 'Current assets' (row 4), ...``: the TAT-QA importer; fact
files of one fact per line have no table rows to list). Two readings, and nothing else is
answered here:

- **a heading** the question names in the same words (outside parentheses, as a heading is read
  for the matcher): its rows, in table order from the row right after the heading's own, up to
  the row that proves itself their total: equal to their sum in two periods at least, under
  the heading or right after its rows, and labelled in the table with every word of the heading
  (not ``Total assets`` or a bare ``Total`` after ``Current assets``: a larger total, nor a row
  the table leaves unlabelled, whose name is the importer's). Without
  such a total nothing is listed: an importer reads rows under a heading until the next one,
  so the rows' end is not known;
- **a row** the question names in exactly its words: the fewest rows right above it (two at
  least, under one heading, in one unit, each stored in every period the total is) whose sum
  equals it in two periods at least, checked in exact decimals, with the rows right above them
  that are nil in every such period: its parts by arithmetic, not by guess.

What cannot be proven is not answered here: a row among them unread or not visible to the asker
(a hidden row is never listed, counted or made a total's part), a row within 1 % of the sum of
those above it (a total rounded apart from its parts), an exact sum in one period only (it may
fit by chance), a row in another scale of the same unit, a ``Subtotal`` row or a ``Total ...``
row saying words the heading does not (``Total subscription`` after the rows under ``Revenue``:
a subtotal of some), a part missing a period another has, a row above a total's parts that is
nil only in the total's periods, an unlabelled row among the parts. A question with a filter word
(``How many negative items``, ``the largest components``) is not read here.

A list answers with one sentence per row, its label as the table shows it, citing one of the
row's facts; a count answers with the number of rows as a ``rows`` figure whose inputs are those
facts. A question naming neither a heading nor such a row is left to the other readings.
"""

from __future__ import annotations

import itertools
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from ragspine.analysis import match_key
from ragspine.answer.locale import Locale, text
from ragspine.answer.metric_match import heading_words, spelling_words
from ragspine.answer.structured import FiguresPart
from ragspine.answer.types import AnswerStatus, CitedSentence, Figure, FigureKind, Source
from ragspine.glossary import Glossary
from ragspine.graph.values import ExactNumber, FactRef
from ragspine.security import Principal, max_visible_level
from ragspine.stores.facts import FactStore, StoredFact
from ragspine.structured.facts import Fact, FactKey, locator_heading, locator_heading_row
from ragspine.structured.headers import footnote_free

_ITEM = (
    r"(?:components?|items?|line\s+items?|elements?|constituents?|categories|category|types?"
    r"|kinds?|parts?)"
)
_LISTED = (
    re.compile(
        rf"^(?:what|which)\s+(?:are|were)\s+(?:the\s+)?(?:financial\s+)?{_ITEM}\s+"
        r"(?:of|under|in|within|making\s+up|that\s+make\s+up|included\s+in|listed\s+under)\s+"
        r"(?P<target>.+?)\s*\??$"
    ),
    re.compile(
        rf"^(?:what|which)\s+(?:financial\s+)?{_ITEM}\s+(?:does|do|did)\s+(?P<target>.+?)\s+"
        r"(?:consist\s+of|comprise|include)\s*\??$"
    ),
    re.compile(
        r"^(?:what|which)\s+(?:types|kinds|categories)\s+of\s+(?P<target>.+?)\s+"
        r"(?:are|were)\s+there\s*\??$"
    ),
)
_COUNTED = (
    re.compile(
        rf"^how\s+many\s+(?:financial\s+)?{_ITEM}\s+(?:are|were)\s+there\s+"
        r"(?:under|in|of|within|making\s+up)\s+(?P<target>.+?)\s*\??$"
    ),
    re.compile(
        r"^how\s+many\s+(?:types|kinds|categories)\s+of\s+(?P<target>.+?)\s+(?:are|were)\s+"
        r"there\s*\??$"
    ),
)
_TABLE_ROW = re.compile(r", table, row (\d+) (?:(?P<quote>['\"])(?P<label>.*?)(?P=quote))?")
_TOTAL_LABEL = re.compile(r"^\s*totals?(?!\w)", re.IGNORECASE)
_SUBTOTAL_LABEL = re.compile(r"^\s*sub-?totals?(?!\w)", re.IGNORECASE)
_THE = re.compile(r"^(?:the|a)\s+")
MAX_PARTS = 40
"""How many rows above a total are tried as its parts (a report section is shorter)."""


@dataclass(frozen=True, slots=True)
class ComponentsAsk:
    """A question asking which rows make up a heading or a total (``count``: how many)."""

    target: str
    count: bool


def components_asked(question: str) -> ComponentsAsk | None:
    """The heading or total a question asks the rows of, if it asks that."""
    key = match_key(question)
    for patterns, count in ((_LISTED, False), (_COUNTED, True)):
        for pattern in patterns:
            found = pattern.match(key)
            if found is not None:
                return ComponentsAsk(_THE.sub("", found["target"]), count)
    return None


@dataclass(frozen=True, slots=True)
class _Row:
    metric: str
    index: int
    label: str
    """The row's label as its locator quotes it (the table's words, not a glossary alias);
    empty for a row the table leaves unlabelled (its stored name is the importer's)."""
    heading: str | None
    heading_row: int | None
    facts: dict[str, Fact]
    """The row's visible facts by period."""


def _rows(facts: Sequence[Fact]) -> dict[str, list[_Row]]:
    """The table rows of ``facts`` by source document, in table order; facts whose locator
    names no table row are left out."""
    by_row: dict[tuple[str, int, str], dict[str, Fact]] = defaultdict(dict)
    labels: dict[tuple[str, int, str], str] = {}
    for fact in facts:
        found = _TABLE_ROW.search(fact.locator)
        if found is not None:
            place = (fact.source_doc_id, int(found[1]), fact.metric)
            by_row[place][fact.period] = fact
            labels.setdefault(place, found["label"] or "")
    rows: dict[str, list[_Row]] = defaultdict(list)
    for place in sorted(by_row):
        doc, index, metric = place
        stored = by_row[place]
        locator = next(iter(stored.values())).locator
        heading, heading_row = locator_heading(locator), locator_heading_row(locator)
        rows[doc].append(_Row(metric, index, labels[place], heading, heading_row, stored))
    return rows


def _measures(rows: Sequence[_Row]) -> set[tuple[str, str]]:
    return {(f.unit, f.currency) for row in rows for f in row.facts.values()}


def _scales(rows: Sequence[_Row]) -> set[object]:
    return {f.scale for row in rows for f in row.facts.values()}


def _full_periods(row: _Row, parts: Sequence[_Row]) -> list[str]:
    """The periods ``row`` and every one of ``parts`` (two at least) are stored for."""
    if len(parts) < 2:
        return []
    return sorted(p for p in row.facts if all(p in part.facts for part in parts))


def _gap(row: _Row, parts: Sequence[_Row], period: str) -> Decimal:
    return row.facts[period].value - sum((p.facts[period].value for p in parts), Decimal(0))


def _total_of(row: _Row, parts: Sequence[_Row]) -> bool:
    """Whether ``row`` equals the sum of ``parts`` exactly in every period all are stored for,
    two at least (in one period a sum may fit by chance)."""
    periods = _full_periods(row, parts)
    return len(periods) >= 2 and all(_gap(row, parts, p) == 0 for p in periods)


def _maybe_total(row: _Row, parts: Sequence[_Row]) -> bool:
    """Whether ``row`` might total ``parts`` without proof: within 1 % of their sum in a period
    all are stored for (a total rounded apart from its parts, or a sum that fits in one)."""
    return any(
        abs(_gap(row, parts, p)) * 100 <= abs(row.facts[p].value) for p in _full_periods(row, parts)
    )


def _under_heading(rows: Sequence[_Row], heading: str) -> list[_Row]:
    """The rows read under ``heading``, in order from the row right after the heading's own,
    up to the row that proves itself their total: the first row (under the heading or right
    after its rows) that equals their sum in two periods at least, and whose label in the table
    says every word of the heading (``Gross deferred tax assets`` under ``Deferred tax assets``;
    not ``Total assets`` or a bare ``Total`` after ``Current assets``, a larger total that rows
    of other sections may be read into, nor an unlabelled row). None without such a
    proof (an importer reads rows under a heading until the next one, so ``Operating income``
    after the expenses may be read under ``Operating expenses:``), nor when a row among them is
    unread or not visible, the heading's row is not known, a row is in another scale of the same
    unit, within 1 % of their sum, a subtotal (``Subtotal``, ``Total subscription`` under
    ``Revenue``), or a part misses a period the row checked has."""
    parts: list[_Row] = []
    following = [row for row in rows if row.heading == heading]
    if following:  # the row right after the heading's rows: a total that closes the section
        after = following[-1].index + 1
        following += [row for row in rows if row.index == after and row.heading != heading]
    for row in following:
        previous = parts[-1].index if parts else row.heading_row
        if previous is None or row.index != previous + 1:
            return []  # a row before it unread or hidden: where the parts end is not known
        if parts:
            label = _own_label(row.label, row.heading)
            if _SUBTOTAL_LABEL.match(label) or (
                _TOTAL_LABEL.match(label) and not _totals_heading(label, heading)
            ):
                return []  # a subtotal of some of them: where the rest end is not known
            if _measures([row]) <= _measures(parts) and len(_scales([row, *parts])) > 1:
                return []  # the same unit in another scale: no sum can tell a total
            if any(set(row.facts) - set(part.facts) for part in parts):
                return []  # a part missing a period this row has: no sum can be checked
            if _total_of(row, parts):
                # the sum is proven; the heading's total only if the row names the heading
                # ("Total assets" or a bare "Total" after "Current assets": a larger total)
                return parts if heading_words(heading) <= spelling_words(label) else []
            if _maybe_total(row, parts) or row.heading != heading:
                return []
        elif row.heading != heading:
            return []
        if not row.label:
            return []  # an unlabelled row among them: no name to list it by
        parts.append(row)
    return []


def _totals_heading(label: str, heading: str) -> bool:
    """Whether a label ``Total ...`` says no word its section heading does not."""
    return spelling_words(_TOTAL_LABEL.sub("", label)) <= heading_words(heading)


def _own_label(label: str, heading: str | None) -> str:
    """The row's label as its table shows it: without the ``Heading: `` that tells apart rows
    of the same name under several headings (``Deferred tax assets: Other`` is ``Other``)."""
    if heading:
        prefix = footnote_free(heading).rstrip(":").strip() + ":"
        if label.casefold().startswith(prefix.casefold()) and label[len(prefix) :].strip():
            return label[len(prefix) :].strip()
    return label


def _above_total(rows: Sequence[_Row], total: _Row) -> list[_Row]:
    """The fewest rows right above ``total`` (two at least, under one heading: the total's, or
    any when the total closes its section under none; in its unit and scale; each stored in
    every period it is) that sum to it, with no row of the table between them unread or hidden,
    and with the rows right above them that are nil wherever stored (they are in the sum too).
    None when the row right above them is nil in the total's periods only (``0 / 0 / 5`` over a
    total of two periods: a part or not cannot be told)."""
    at = rows.index(total)
    for size in range(2, min(at, MAX_PARTS) + 1):
        parts = rows[at - size : at]
        headings = {part.heading for part in parts}
        if any(not part.label for part in parts):
            return []  # an unlabelled row among them: no name to list it by
        if len(headings) > 1 or total.heading not in (None, parts[0].heading):
            return []
        if not _contiguous([*parts, total]):
            return []
        if len(_measures([total, *parts])) > 1 or len(_scales([total, *parts])) > 1:
            return []
        if any(set(total.facts) - set(part.facts) for part in parts):
            return []  # a part missing a period the total has: no sum can be checked
        if _total_of(total, parts):
            start = at - size
            while start > 0 and _contiguous(rows[start - 1 : start + 1]):
                above = rows[start - 1]
                if above.heading != parts[0].heading or not _nil_where(above, total):
                    break
                if not _zero(above):
                    return []  # nil where the total is stored, not elsewhere
                start -= 1
            return list(rows[start:at])
    return []


def summed_into(facts: Sequence[Fact], metric: str) -> list[tuple[str, str, str]]:
    """The totals ``metric``'s rows are proven parts of (:func:`_above_total`: ``UK`` among
    the rows summing to ``Total revenue from external customers by country``), as (the total's
    metric, the words that name what it totals: ``revenue``, its label), in every document that
    stores
    ``metric``; empty when a document stores it in no such sum. ``facts`` are one entity's, as
    the asker sees them.

    A total counts only where its parts are like things: all of one sign in every period (not
    ``Deferred tax liabilities`` netted into ``Net deferred tax assets``, nor ``Cost of sales``
    into ``Gross profit``) and none a percentage (a table of shares summing to 100 %). What it
    totals is its label less ``Total`` and up to ``of``, ``from``, ``and``, ``excluding`` or the
    like (``Total cost of revenue`` totals costs, never revenue; ``Total operating expenses and
    capital expenditures`` totals operating expenses). A total whose words hold all of the
    row's own is left out: a question saying them may name the total itself (``Land`` in
    ``Land, property and equipment, gross``)."""
    found: list[tuple[str, str, str]] = []
    for rows in _rows(facts).values():
        mine = [row for row in rows if row.metric == metric]
        if not mine:
            continue
        after = max(rows.index(row) for row in mine) + 1
        own = frozenset().union(
            *(spelling_words(_own_label(row.label, row.heading)) for row in mine)
        )
        here = []
        for total in rows[after : after + MAX_PARTS]:  # a total sums MAX_PARTS rows at most
            if not total.label or own <= heading_words(total.label):
                continue
            parts = _above_total(rows, total)
            if not parts or not all(row in parts for row in mine) or not _alike(parts):
                continue
            head = _OF_SOMETHING_ELSE.split(total.label, maxsplit=1)[0]
            head = " ".join(_TOTAL_WORD.sub("", head).split()).strip(" ,:")
            if heading_words(head):
                here.append((total.metric, head, total.label))
        if not here:
            return []
        found.extend(here)
    return found


_OF_SOMETHING_ELSE = re.compile(
    r"(?<!\w)(?:of|from|by|and|for|per|in|excluding|excl\.?|less|net\s+of|other\s+than"
    r"|except|before|after|attributable\s+to|di|da|per|e|al\s+netto\s+di)(?!\w)|[(&/]",
    re.IGNORECASE,
)
"""Where a total's label stops naming what its parts are (``Total cost | of revenue``,
``Total revenue | from external customers``, ``Income | before taxes``, ``Total operating
expenses | and capital expenditures``)."""


_TOTAL_WORD = re.compile(r"^\s*(?:totals?|totale|totali)(?!\w)", re.IGNORECASE)


def sole_rows(facts: Sequence[Fact], said: frozenset[str] | set[str]) -> dict[str, str]:
    """Metric -> the section heading a question saying the stems ``said`` names it by, as the
    only row of that section (``Product and equipment sales to affiliates``, alone under
    ``Sales:``, for ``the sales``).

    The row must be right after its heading's row, with the table's next row a heading of other
    stored rows (so no row of the section can be unseen); its own label must say a word of the
    heading (``Product`` under ``Net revenues:`` may be one line of them, with more under a
    sub-heading); the question must say every word of the heading and of no other heading that
    says more (``the cost of revenue`` names ``Cost of revenue:``, not ``Revenue:``); and no
    other row's label may say every word of the heading (``Net sales`` beside ``Sales:``). A
    metric read under other headings, or alone in one document only, is left out. ``facts`` are
    one entity's, as the asker sees them."""
    found: dict[str, set[str]] = defaultdict(set)
    for rows in _rows(facts).values():
        headed: dict[int, set[int]] = defaultdict(set)  # heading's row -> its rows
        for row in rows:
            if row.heading_row is not None:
                headed[row.heading_row].add(row.index)
        headings = {heading_words(row.heading) for row in rows if row.heading}
        for row in rows:
            heading, at = row.heading, row.heading_row
            words = heading_words(heading) if heading else frozenset()
            alone = (
                heading is not None
                and at is not None
                and row.index == at + 1
                and len(headed[at]) == 1
                and bool(headed.get(row.index + 1))
                and bool(words)
                and words <= said
                and bool(words & spelling_words(_own_label(row.label, heading)))
                and not any(words < other <= said for other in headings)
                and not any(
                    other is not row and words <= spelling_words(other.label) for other in rows
                )
            )
            named = footnote_free(heading).rstrip(":").strip() if alone and heading else ""
            found[row.metric].add(named)
    return {
        metric: next(iter(headings))
        for metric, headings in found.items()
        if len(headings) == 1 and next(iter(headings))
    }


def table_says(facts: Sequence[Fact], metric: str) -> tuple[frozenset[str], frozenset[str]]:
    """(the stems every other line of ``metric``'s table says in its label or heading, the
    metrics of those lines) when ``metric`` is stored by one row of one table only and that row
    is the table's last, and no row of the table from its first read row or heading on is
    unread or hidden; subtotals (``Total segments``) aside. Empty sets otherwise. Under
    ``Assets allocated to segments:`` and ``Assets not allocated:``, a last ``Total`` is the
    total of assets. ``facts`` are one entity's, as the asker sees them."""
    tables = [rows for rows in _rows(facts).values() if any(r.metric == metric for r in rows)]
    if len(tables) != 1:
        return frozenset(), frozenset()
    rows = tables[0]
    totals = [row for row in rows if row.metric == metric]
    if len(totals) != 1 or totals[0].index != max(row.index for row in rows):
        return frozenset(), frozenset()
    lines = [
        row
        for row in rows
        if row is not totals[0] and not _TOTAL_LABEL.match(_own_label(row.label, row.heading))
    ]
    seen = {row.index for row in rows} | {r.heading_row for r in rows if r.heading_row}
    if len(lines) < 2 or seen != set(range(min(seen), totals[0].index + 1)):
        return frozenset(), frozenset()  # a row unread or hidden: what it says is not known
    said = frozenset.intersection(
        *(
            spelling_words(_own_label(row.label, row.heading))
            | (heading_words(row.heading) if row.heading else frozenset())
            for row in lines
        )
    )
    return said, frozenset(row.metric for row in rows)


def parts_of_total(facts: Sequence[Fact], metric: str) -> frozenset[str] | None:
    """The metrics of the rows ``metric``'s row is the proven total of (:func:`_above_total`:
    the fewest rows right above it that sum to it in every period, like things); None when it
    is no such total, or when several rows or documents store ``metric`` (which one a question
    asks for is then not known: two tables' ``Total`` rows total different things). ``facts``
    are one entity's, as the asker sees them."""
    totals = [(rows, row) for rows in _rows(facts).values() for row in rows if row.metric == metric]
    if len(totals) != 1:
        return None
    rows, total = totals[0]
    parts = _above_total(rows, total)
    if not parts or not _alike(parts):
        return None
    return frozenset(part.metric for part in parts)


def _alike(parts: Sequence[_Row]) -> bool:
    """Whether ``parts`` are like things: none a percentage, and all of one sign wherever
    stored (nil counts with either)."""
    facts = [fact for part in parts for fact in part.facts.values()]
    if any(fact.unit == "%" for fact in facts):
        return False
    return all(f.value >= 0 for f in facts) or all(f.value <= 0 for f in facts)


def _nil_where(row: _Row, total: _Row) -> bool:
    """Whether ``row`` is stored as nil in every period ``total`` is stored for."""
    return all(p in row.facts and row.facts[p].value == 0 for p in total.facts)


def _zero(row: _Row) -> bool:
    """Whether ``row`` is nil in every period it is stored for."""
    return all(f.value == 0 for f in row.facts.values())


def _contiguous(rows: Sequence[_Row]) -> bool:
    """Whether ``rows`` are next to each other in their table: a row between them that is not
    read (or that the asker may not see) would make a sum of them no proof of a total."""
    return all(b.index == a.index + 1 for a, b in itertools.pairwise(rows))


def _resolve(rows: Sequence[_Row], target: str) -> tuple[list[_Row], str, _Row | None] | None:
    """The rows ``target`` asks for in one document's ``rows``: (parts, the heading named or
    empty, the total row named or None)."""
    wanted = heading_words(target)
    if not wanted:
        return None
    headings = {row.heading for row in rows if row.heading}
    named = [h for h in headings if heading_words(h) == wanted]
    if len(named) == 1:
        parts = _under_heading(rows, named[0])
        return (parts, named[0], None) if parts else None
    if named:
        return None
    exact = spelling_words(target)
    totals = [row for row in rows if spelling_words(_own_label(row.label, row.heading)) == exact]
    if len(totals) != 1:
        return None
    parts = _above_total(rows, totals[0])
    return (parts, "", totals[0]) if parts else None


def answer_components(
    asked: ComponentsAsk,
    entity: str,
    glossary: Glossary,
    store: FactStore,
    *,
    principal: Principal,
    locale: Locale,
) -> FiguresPart | None:
    """The rows ``asked`` names for ``entity``; None when the question names no heading or
    total of one of its tables (in one document: a name found in several is not answered)."""
    level = max_visible_level(principal)
    facts = list(store.scan(max_level=level, entity=entity))
    found = [
        resolved
        for rows in _rows(facts).values()
        if (resolved := _resolve(rows, asked.target)) is not None
    ]
    if len(found) != 1:
        return None
    parts, heading, total = found[0]
    sources: list[Source] = []
    refs: list[FactRef] = []
    sentences: list[CitedSentence] = []
    labels: list[str] = []
    for marker, row in enumerate(parts, start=1):
        fact = row.facts[max(row.facts)]
        key = FactKey(fact.metric, fact.entity, fact.period, fact.channel)
        source = Source.of_fact(marker, doc_id=fact.source_doc_id, locator=fact.locator, fact=key)
        sources.append(source)
        refs.append(FactRef.of(key, StoredFact.of(fact)))
        label = _own_label(row.label, row.heading)
        labels.append(label)
        sentences.append(CitedSentence(label, (marker,)))
    term = glossary.entities.terms.get(entity)
    named = term.label if term is not None else entity
    if total is not None:
        total_label = _own_label(total.label, total.heading)  # matched by it: never unlabelled
        how = text(locale, "components_of_total", total=total_label, entity=named, count=len(parts))
    else:
        how = text(locale, "components_under", heading=heading, entity=named, count=len(parts))
    markers = tuple(range(1, len(parts) + 1))
    figures: tuple[Figure, ...] = ()
    assumptions: tuple[str, ...]
    if asked.count:
        sentence = f"{how}: {'; '.join(labels)}."
        figure = Figure(
            FigureKind.ROWS,
            sentence,
            markers,
            value=ExactNumber.of(len(parts)),
            inputs=tuple(refs),
        )
        sentences = [CitedSentence(sentence, markers)]
        figures = (figure,)
        assumptions = (text(locale, "components_rule"),)
    else:
        assumptions = (f"{how}.", text(locale, "components_rule"))
    return FiguresPart(
        AnswerStatus.ANSWERED,
        tuple(sentences),
        figures,
        tuple(sources),
        assumptions,
        lookups=1,  # one scan of the entity's facts
    )
