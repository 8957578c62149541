"""``ask``: one question through the route its words choose, as one :class:`Answer`.

The route comes from the question alone (:func:`ragspine.answer.question.choose_route`) unless
the options name one. ``structured`` builds the figures part from the fact store and the graph
computations (:mod:`ragspine.answer.structured`); ``narrative`` searches the documents and
builds the cited extractive answer; ``composite`` runs both separately and merges them
(:mod:`ragspine.answer.composite`). History is handed to the narrative generator only.

With a generating ``provider`` the narrative part is written by the model and checked by the
guard (:mod:`ragspine.answer.generate`); with ``agent`` the model's tool calls choose the route
(:mod:`ragspine.answer.agent`) and the answer is built from what the tools returned. Without a
provider (the default) the narrative part is the offline extractive answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import date
from typing import Protocol

from ragspine.analysis import match_key
from ragspine.answer.agent import found_values, run_agent
from ragspine.answer.components import (
    answer_components,
    components_asked,
    parts_of_total,
    sole_rows,
    summed_into,
    table_says,
)
from ragspine.answer.composite import explanation
from ragspine.answer.extractive import answer_from_snippets
from ragspine.answer.generate import answer_from_reply, generate_answer
from ragspine.answer.history import Turn, check_history
from ragspine.answer.locale import Locale, parse_locale, text
from ragspine.answer.metric_match import (
    TOTAL_STEMS,
    MetricMatch,
    heading_words,
    match_by_question_words,
    match_metrics,
    names_a_figure,
    operation_stems,
    spelling_words,
    unexplained_words,
    unglued,
    with_optional_parts,
    without_gross_twins,
    word_stems,
    words_amid,
)
from ragspine.answer.options import AskChannel, AskOptions
from ragspine.answer.question import (
    Operation,
    QuestionReading,
    Route,
    asks_count,
    choose_route,
    names_operation,
    pick_words,
    read_question,
)
from ragspine.answer.structured import FiguresPart, answer_figures
from ragspine.answer.types import Answer, AnswerStatus, CitedSentence
from ragspine.errors import ConfigError
from ragspine.glossary import Glossary, TermHit, TermType
from ragspine.llm.provider import Provider, ProviderName
from ragspine.narrative.retrieve.options import MAX_POSTPROCESSED_TOP_K, MAX_TOP_K
from ragspine.narrative.retrieve.retriever import SearchResult
from ragspine.narrative.retrieve.trace import Trace, TraceBuilder
from ragspine.periods import UNDATED
from ragspine.security import Principal, max_visible_level
from ragspine.stores.facts import FactStore
from ragspine.structured.facts import locator_heading


class Search(Protocol):
    """Searches the documents for a question as the asker (the workspace binds options and
    asker); ``top_k`` passages, by default the options'."""

    def __call__(self, text: str, top_k: int | None = None) -> SearchResult: ...


def slot_text(question: str, history: tuple[Turn, ...]) -> str:
    """The only text read for terms, periods and cues, and searched: the question itself.
    History is generation context and never part of it."""
    del history
    return question


def _cited(sentence: CitedSentence) -> str:
    markers = "".join(f" [{m}]" for m in sentence.markers)
    return sentence.text + markers


def _block(heading: str, lines: Iterable[str]) -> str:
    return "\n".join([heading, *(f"- {line}" for line in lines)])


def _structured_answer(
    part: FiguresPart, route: str, reason: str, locale: Locale, trace: Trace
) -> Answer:
    blocks = ["\n".join(_cited(s) for s in part.sentences)]
    if part.assumptions:
        blocks.append(_block(text(locale, "heading_assumptions"), part.assumptions))
    return Answer(
        route,
        status=part.status,
        text="\n\n".join(blocks),
        sources=part.sources,
        trace=trace,
        route_reason=reason,
        sentences=part.sentences,
        figures=part.figures,
        assumptions=part.assumptions,
        locale=locale,
        param=part.param,
        suggestions=part.suggestions,
    )


def _one_entity(
    reading: QuestionReading, glossary: Glossary, options: AskOptions, *, default: bool = False
) -> str | None:
    """The one entity the question is about (named in it, else given with the call; with
    ``default``, else the glossary's default entity, whose stored rows are then read as the
    figures' entity's are, so that a word the question adds before them, such as another
    company's name, is asked about). Passages are never kept to the default entity."""
    if len(reading.entities) == 1:
        return reading.entities[0]
    if not reading.entities and options.entity is not None:
        return glossary.entities.resolve(options.entity)
    fallback = glossary.answers.default_entity if default else None
    if not reading.entities and fallback is not None:
        return glossary.entities.resolve(fallback)
    return None


def _stored_reading(
    asked: str,
    reading: QuestionReading,
    entity: str,
    glossary: Glossary,
    facts: Callable[[], FactStore],
    principal: Principal,
    reference_date: date | None,
) -> QuestionReading:
    """``reading`` with its metrics read among ``entity``'s stored ones
    (:mod:`ragspine.answer.metric_match`) when the question names any of them; the glossary
    reading otherwise, and also when every metric the glossary read (exact spellings, longest
    first) is one the entity has stored. Only facts the asker may see make a metric a
    candidate."""
    level = max_visible_level(principal)
    codes = facts().metrics_of(entity, max_level=level)
    if not codes:
        return reading
    terms = glossary.metrics.terms
    candidates = {
        code: unglued(with_optional_parts((terms[code].label, *terms[code].aliases)), asked)
        if code in terms
        else (code,)
        for code in codes
    }  # "othercurrent liabilities" as the PDF ran it together: "other current liabilities"
    candidates = without_gross_twins(candidates, asked)  # "accounts receivable": gross, or net?
    pairs = reading.operation in _PAIRS
    term = glossary.entities.terms.get(entity)
    names = (term.label, *term.aliases) if term is not None else (entity,)
    names = (*names, *pick_words(asked, reading.selection))  # "a higher EBITDA": how to pick
    channels = glossary.channels.terms
    names = (  # "online revenue": the channel's name, read by the glossary, narrows no row
        *names,
        *(spelling for code in reading.channels if code in channels
          for spelling in (channels[code].label, *channels[code].aliases)),
    )  # fmt: skip

    if reading.metrics and codes.issuperset(reading.metrics):
        # The glossary's exact spellings are all stored metrics: kept, unless the question
        # also says words of other stored metrics that they lack; then a stored row that the
        # loose reading finds and that explains every such word is the one meant ("the
        # total of residential mortgages": "total residential mortgages", not "total").
        # The loose reading is also taken when it finds every glossary metric and more ("the
        # total capital less tier 1 capital": the row "total capital (tier 1 and tier 2)" too).
        match = match_metrics(asked, candidates, pairs=pairs)
        same = set(match.metrics) == set(reading.metrics)  # then with the words' places
        spelled = match if same else _placed(asked, reading.metrics, candidates, pairs)
        unexplained = unexplained_words(asked, spelled, candidates, names)
        better = bool(unexplained) or set(reading.metrics) < set(match.metrics)
        loose = better and match.metrics and not same
        if loose and not unexplained_words(asked, match, candidates, names):
            return read_question(asked, glossary, reference_date, match)
        unexplained = _unheaded(unexplained, asked, facts(), entity, spelled.metrics, level)
        unexplained = _untotalled(
            unexplained, asked, candidates, names, spelled,
            store=facts(), entity=entity, level=level, pairs=pairs,
        )  # fmt: skip
        unexplained = _summed_words(
            unexplained, candidates, spelled, store=facts(), entity=entity, level=level
        )
        return replace(reading, unexplained=tuple(unexplained)) if unexplained else reading
    match = match_metrics(asked, candidates, pairs=pairs)
    metric_hits = [hit for hit in glossary.find_terms(asked) if hit.type is TermType.METRIC]
    if match.spans and _inside_unstored(
        asked, metric_hits, match, glossary, facts(), level, candidates, reading, codes
    ):
        # "cash and cash equivalents", a glossary metric the asker sees no figure of: never
        # the stored row "Cash" its name holds (the answer says it is not found, the same
        # whether its figures are hidden or absent)
        return reading
    if not match.found:
        # a row alone under its section heading is named by the heading too ("the sales" for
        # the one row under "Sales:"), when the question says the heading whole ("maintenance
        # revenue" says no "Cost of revenue:" of a row "Maintenance"; see sole_rows). Read
        # only when no row's own name is found: it scans the entity's facts
        stored = list(facts().scan(max_level=level, entity=entity))
        headed = {c: h for c, h in sole_rows(stored, word_stems(asked)).items() if c in candidates}
        if headed:
            candidates.update({c: (*candidates[c], h) for c, h in headed.items()})
            match = match_metrics(asked, candidates, pairs=pairs)
    if not match.found and not pairs:  # the glossary's metrics, if any, are not stored here
        said = operation_stems(reading.operation_word)  # what to compute, not which figure
        match = match_by_question_words(asked, candidates, said)
    if not match.found:
        return reading
    found = read_question(asked, glossary, reference_date, match)
    if not pairs and found.operation in _PAIRS and len(found.metrics) == 1:
        match = match_metrics(asked, candidates, pairs=True)
        found = read_question(asked, glossary, reference_date, match)
    if match.metrics:
        unexplained = unexplained_words(asked, match, candidates, names)
        unexplained = _unheaded(unexplained, asked, facts(), entity, match.metrics, level)
        unexplained = _untotalled(
            unexplained, asked, candidates, names, match,
            store=facts(), entity=entity, level=level, pairs=pairs,
        )  # fmt: skip
        unexplained = _summed_words(
            unexplained, candidates, match, store=facts(), entity=entity, level=level
        )
        if unexplained:
            return replace(found, unexplained=tuple(unexplained))
    listed = (
        _listed_unstored(asked, metric_hits, match, codes)
        if found.operation is Operation.LOOKUP and not found.cues
        else ()
    )  # a calculation over a metric not stored is asked back or refused already
    if listed:  # "revenue and layoff costs": the second has no figure here, and says so
        return replace(found, metrics=(*found.metrics, *listed))
    return found


_LISTED_RE = re.compile(r"\s*(?:,|and|&|as\s+well\s+as|plus)\s*(?:,\s*)?(?:the\s+)?")
"""What joins two metrics of a list (``revenue and layoff costs``, ``revenue, EBITDA``)."""


def _listed_unstored(
    asked: str, said: Sequence[TermHit], match: MetricMatch, stored: frozenset[str]
) -> tuple[str, ...]:
    """Glossary metrics the question lists right beside a stored row it names (``revenue and
    layoff costs``) that have no figure the asker may see for this entity: kept in the
    reading, so that the answer says each is not stored instead of leaving it out (the same
    words whether its figures are hidden or absent)."""
    key = match_key(asked)
    listed: list[str] = []
    for hit in said:
        if hit.code in stored or hit.code in listed:
            continue
        for first, last in match.spans:
            between = key[last : hit.start] if last <= hit.start else key[hit.end : first]
            if (last <= hit.start or hit.end <= first) and _LISTED_RE.fullmatch(between):
                listed.append(hit.code)
                break
    return tuple(listed)


def _inside_unstored(
    asked: str,
    said: Sequence[TermHit],
    match: MetricMatch,
    glossary: Glossary,
    store: FactStore,
    level: int,
    candidates: Mapping[str, Sequence[str]],
    reading: QuestionReading,
    stored: frozenset[str],
) -> bool:
    """Whether each place ``match`` found a stored row lies strictly inside the exact spelling
    of a glossary metric that has no figure the asker may see: a metric of the glossary's own
    that the question names, not a longer name of the row. One the hand-edited glossary
    defines counts when this entity has no such figure (``cash and cash equivalents`` stored
    for another company is still not this one's ``Cash``); an importer's (:attr:`Term.generated`)
    only when no entity has one (an imported table's row names a row of its own there, and a
    shorter row of another table may be the same figure). Not such a metric: an importer's row
    term whose figures are stored per column (``Basic earnings per share`` for
    ``Basic earnings per share: First quarter``, of this document or another), and one whose
    words beyond the row only name a calculation (``Revenue growth``: the row's change). One
    such place is enough when the glossary read each other metric exactly as a stored one."""
    key = match_key(asked)
    named = [match_key(s) for spellings in candidates.values() for s in spellings]
    terms = glossary.metrics.terms
    unstored = []
    for hit in said:  # the glossary's metric spellings the question says
        label = match_key(terms[hit.code].label)
        if any(n.startswith(label) for n in named) or _has_columns(glossary, label):
            continue
        if not terms[hit.code].generated:
            if hit.code not in stored:  # no figure of this entity's
                unstored.append((hit.start, hit.end))
        elif next(iter(store.scan(max_level=level, metric=hit.code)), None) is None:
            unstored.append((hit.start, hit.end))
    holders = []
    for start, end in unstored:  # each glossary name holding found rows, less their words
        inside = [(first, last) for first, last in match.spans if start <= first and last <= end]
        left = list(key[start:end])
        for first, last in inside:
            left[first - start : last - start] = " " * (last - first)
        rest = "".join(left).split()
        if inside and rest and not _asks_of_row(" ".join(rest)):
            holders.append((start, end))
    held = [
        any(start <= first and last <= end for start, end in holders) for first, last in match.spans
    ]
    if held and all(held):
        return True
    # one stand-in is enough when the glossary read the other figures exactly as stored ones
    # ("EBITDA as a percentage of total revenue": EBITDA, and Total revenue not stored)
    exact = [metric for metric in reading.metrics if metric in stored]
    return (
        any(held)
        and bool(exact)
        and set(exact) <= set(match.metrics)
        and len(reading.metrics) == len(match.metrics)
    )


_OF_ROW_RE = re.compile(
    r"(?:(?:year[\s-]+over[\s-]+year|yoy|annual|yearly|quarterly|monthly|cumulative)\s*)+"
)
"""Words a glossary name may add to a row that only say how it is calculated or over what
(``Revenue year-over-year change``, ``Cumulative revenue``, ``Quarterly revenue``); not
``total`` nor ``organic``, which name other figures (``Total revenue`` beside ``Revenue``)."""


def _asks_of_row(words: str) -> bool:
    """Whether ``words``, what a glossary name adds to a row's, only name a calculation of
    the row (``growth``, ``year-over-year change``, ``cumulative``): the row's own figures."""
    rest = _OF_ROW_RE.sub(" ", f"{words} ").strip()
    return not rest or names_operation(rest)


def _has_columns(glossary: Glossary, label: str) -> bool:
    """Whether the glossary holds metrics named ``label: ...`` (an imported row per column)."""
    prefix = f"{label}:"
    return any(match_key(t.label).startswith(prefix) for t in glossary.metrics.terms.values())


def _placed(
    asked: str, metrics: Sequence[str], candidates: Mapping[str, Sequence[str]], pairs: bool
) -> MetricMatch:
    """``metrics`` with where ``asked`` says them, so that a word right before or after them
    is read (``internal use software related to ...``: not the row ``Internal use
    software``); without places when they are not all found among their own spellings."""
    own = match_metrics(asked, {code: candidates[code] for code in metrics}, pairs=pairs)
    return own if set(own.metrics) == set(metrics) else MetricMatch(tuple(metrics))


def _undated_only(
    reading: QuestionReading,
    entity: str | None,
    facts: Callable[[], FactStore],
    principal: Principal,
) -> bool:
    """Whether every metric of ``reading`` is stored for ``entity`` (as the asker sees it) only
    from a table that states no period: then ``the amount of X`` has one figure to give."""
    if entity is None or not reading.metrics or reading.periods:
        return False
    level = max_visible_level(principal)
    store = facts()
    for metric in reading.metrics:
        periods = {f.period for f in store.scan(max_level=level, metric=metric, entity=entity)}
        if periods != {UNDATED}:
            return False
    return True


def _unheaded(
    words: list[str],
    question: str,
    store: FactStore,
    entity: str,
    metrics: Sequence[str],
    level: int,
) -> list[str]:
    """The ``words`` that the heading of the matched figures' rows does not account for.

    A row read under a section heading (its locator's
    :func:`~ragspine.structured.facts.locator_heading`: ``Financing activities`` under ``Cash
    (used in) provided by:``) is named by a question that says the heading's words and the
    row's (``the cash provided by financing activities``): a word of the heading then does not
    make the match doubtful. Only when the question says every word of the heading (outside
    parentheses: ``Cost of revenue:`` is not named by ``services revenue``), the heading is the
    same for every fact of every matched metric, and the word only names a figure (never a
    word naming another measure such as ``adjusted``, nor ``per share``). Not a column
    header's words: ``Carrying Amount`` over the column does not make ``the fair value of
    total debt`` its figure."""
    if not words:
        return words
    asked = word_stems(question)
    shared: list[frozenset[str]] = []
    for metric in metrics:
        headings = {
            locator_heading(fact.locator)
            for fact in store.scan(max_level=level, metric=metric, entity=entity)
        }
        heading = headings.pop() if len(headings) == 1 else None
        stems = heading_words(heading) if heading is not None else frozenset()
        shared.append(stems if stems <= asked else frozenset())
    if not shared:
        return words
    return [
        word
        for word in words
        if not (names_a_figure(word) and all(word_stems(word) <= stems for stems in shared))
    ]


def _untotalled(
    words: list[str],
    question: str,
    candidates: Mapping[str, Sequence[str]],
    names: Sequence[str],
    found: MetricMatch,
    *,
    store: FactStore,
    entity: str,
    level: int,
    pairs: bool,
) -> list[str]:
    """The ``words`` left doubtful once each matched row is read with what the total it is a
    proven part of totals (:func:`ragspine.answer.components.summed_into`).

    A row summed with like rows into a total (``UK`` with ``USA``, ``Germany`` and ``Other
    countries`` into ``Total revenue from external customers by country``) is a part of what
    that total counts, so a question saying the row and all of what the total counts (``the
    revenue from UK``) names the row. The question is then read again as if the row were
    spelled with those words (``revenue UK``) and the total were not a candidate, by the same
    rules as any row: a word the two lack that other rows use, a word right before them (``UK
    deferred revenue``) or ``per ...`` after them (``UK revenue per share``) still asks back.
    Never for a question asking for a count (``how many customers in the UK``: an amount is
    no number of them), and only when every matched row is such a part."""
    if not words or asks_count(question):
        return words
    facts = list(store.scan(max_level=level, entity=entity))
    asked = word_stems(question)
    read: dict[str, Sequence[str]] = dict(candidates)
    matched = frozenset().union(  # "the revenue from the UK and the USA": both rows named
        *(spelling_words(s) for metric in found.metrics for s in candidates[metric])
    )
    for metric in found.metrics:
        totals = summed_into(facts, metric)
        said = [(head, label) for _, head, label in totals if heading_words(head) <= asked]
        if not said:
            return words
        own = candidates[metric]
        named = frozenset().union(
            *(spelling_words(s) for s in own), *(heading_words(h) for h, _ in said)
        )
        allowed = matched.union(*(spelling_words(label) for _, label in said))
        if words_amid(question, named & asked, allowed):
            return words  # "UK deferred revenue": a word amid the row's and the total's
        for total, _, _ in totals:
            read.pop(total, None)
        read[metric] = (*own, *(f"{head} {spelling}" for head, _ in said for spelling in own))
    match = match_metrics(question, read, pairs=pairs)
    if set(match.metrics) != set(found.metrics):
        return words
    return unexplained_words(question, match, read, names)


def _summed_words(
    words: list[str],
    candidates: Mapping[str, Sequence[str]],
    found: MetricMatch,
    *,
    store: FactStore,
    entity: str,
    level: int,
) -> list[str]:
    """The ``words`` left doubtful once a bare ``Total`` row is read as the total of the rows
    it is the proven sum of (:func:`ragspine.answer.components.parts_of_total`), or of the
    table it closes (:func:`ragspine.answer.components.table_says`: a word every other line of
    the table says in its label or heading, as ``assets`` under ``Assets allocated to
    segments:`` and ``Assets not allocated:``, names what the last ``Total`` counts).

    ``the total personnel expenses`` matched to ``Total`` beside ``Pension expenses``,
    ``Restructuring expenses`` and ``Wages and salaries``: ``expenses`` is a word of most rows
    that ``Total`` adds up, so it says what the total counts, not another figure. Only for one
    matched row whose every spelling says nothing but ``total``, and only for a word that
    more than half of the parts (two at least) say and no row outside the sum uses
    (``liabilities`` beside a ``Current liabilities`` outside the sum still asks back, and
    so does ``the total pension``: one part's word names that part)."""
    if not words or len(found.metrics) != 1:
        return words
    (metric,) = found.metrics
    if any(spelling_words(s) - TOTAL_STEMS for s in candidates[metric]):
        return words
    facts = list(store.scan(max_level=level, entity=entity))
    parts = parts_of_total(facts, metric) or frozenset()
    every, lines = table_says(facts, metric)
    if not parts and not every:
        return words
    users = {
        stem: {code for code, spellings in candidates.items() for sp in spellings
               if stem in spelling_words(sp)} - {metric}
        for word in words for stem in word_stems(word)
    }  # fmt: skip

    def says_the_sum(stem: str) -> bool:
        found = users[stem]
        if stem in every and found <= lines:  # every line of the table says it
            return True
        if not found or not found <= parts or len(found) < 2 or 2 * len(found) <= len(parts):
            return False
        # a part not saying it must not name another kind of line ("Interest income" beside
        # "Domestic revenue" and "Foreign revenue": their Total is no total revenue)
        other_kinds = _LINE_ITEMS - {stem}
        return not any(
            spelling_words(spelling) & other_kinds
            for code in parts - found
            for spelling in candidates.get(code, ())
        )

    return [word for word in words if not all(says_the_sum(s) for s in word_stems(word))]


_LINE_ITEMS = frozenset(
    word_stems("income revenue sales cost expense gain loss profit asset liability fee tax")
)
"""Words naming a kind of line (an income, a cost, an asset): a part saying another kind than
the one asked makes its Total no total of the kind asked."""
_PAIRS = (Operation.SHARE, Operation.RATIO)


def ask(
    question: str,
    *,
    glossary: Glossary,
    facts: Callable[[], FactStore],
    search: Search,
    options: AskOptions,
    principal: Principal,
    history: Iterable[object] | None = None,
    reference_date: date | None = None,
    provider: Provider | None = None,
) -> Answer:
    """Answer ``question`` as ``principal`` (see the module docstring); ``provider`` writes
    the narrative part (``None`` or the extractive provider: the offline answer)."""
    turns = check_history(history)
    locale = parse_locale(options.locale, parse_locale(glossary.answers.locale))
    asked = slot_text(question, turns)
    if provider is not None and provider.name is ProviderName.EXTRACTIVE:
        provider = None
    if options.agent:
        if provider is None:
            raise ConfigError(
                "agent mode needs a generating provider: add --provider openai (or "
                'provider = "openai" in the workspace\'s llm.toml)'
            )
        topic = _one_entity(read_question(asked, glossary, reference_date), glossary, options)

        def about(query: str) -> SearchResult:  # the model's searches, kept to that entity
            return _about_entity(search, query, topic, glossary)

        return _agent(
            asked, provider, glossary, facts, about, principal, locale, turns, reference_date
        )
    builder = TraceBuilder()
    with builder.timed() as timer:
        reading = read_question(asked, glossary, reference_date)
        entity = _one_entity(reading, glossary, options, default=True)
        if entity is not None:
            reading = _stored_reading(asked, reading, entity, glossary, facts, principal,
                                      reference_date)  # fmt: skip
        if reading.amount_asked and not _undated_only(reading, entity, facts, principal):
            reading = replace(reading, amount_asked=False)  # which period is not known
        given = options.entity is not None
        chosen = AskChannel(options.channel)
        if chosen is AskChannel.AUTO:
            route, reason = choose_route(reading, entity_given=given)
        else:
            route = Route(chosen.value)
            reason = f"{route.value}: asked for ({choose_route(reading, entity_given=given)[1]})"
    builder.add_stage("answer:route", 1, 1, seconds=timer.seconds)
    tables = chosen in (AskChannel.AUTO, AskChannel.STRUCTURED)  # a table's rows may answer
    listing = components_asked(asked) if entity is not None and tables else None
    if listing is not None and entity is not None:  # "the components of current assets"
        with builder.timed() as timer:
            rows = answer_components(
                listing, entity, glossary, facts(), principal=principal, locale=locale
            )
        if rows is not None:
            builder.add_stage(
                "answer:rows", rows.lookups, len(rows.sentences), seconds=timer.seconds
            )
            why = f"structured: the rows under or above {listing.target!r}; entity {entity}"
            return _structured_answer(rows, Route.STRUCTURED.value, why, locale, builder.build())

    part: FiguresPart | None = None
    if route is not Route.NARRATIVE:
        with builder.timed() as timer:
            part = answer_figures(
                reading,
                glossary,
                facts(),
                principal=principal,
                locale=locale,
                entity=options.entity,
                reference_date=reference_date,
            )
        builder.add_stage("answer:figures", part.lookups, len(part.figures), seconds=timer.seconds)
        if route is Route.STRUCTURED:
            return _structured_answer(part, route.value, reason, locale, builder.build())

    result = _about_entity(search, asked, _one_entity(reading, glossary, options), glossary)
    if provider is None:
        narrative = answer_from_snippets(
            asked,
            result.snippets,
            max_sentences=options.max_sentences,
            principal=principal,
            trace=builder.build().merged(result.trace),
            locale=locale,
            history=turns,
        )
    else:
        narrative = generate_answer(
            asked,
            result.snippets,
            provider,
            principal=principal,
            history=turns,
            fact_values=() if part is None else found_values(part, glossary),
            locale=locale,
            trace=builder.build().merged(result.trace),
        )
    if part is None:
        return replace(narrative, route_reason=reason, notices=result.notices)
    return _composite(part, narrative, result, glossary, locale, reason)


def _about(result: SearchResult, entity: str | None, glossary: Glossary) -> SearchResult:
    """``result`` without the passages whose document names another entity in its ``entity``
    metadata than the one the question is about (``Why did IP's operating profit change?`` is
    not explained by a HIG filing); passages naming no entity, one the glossary does not know,
    or a parent or a subsidiary of the entity (``ACME Group`` for ``ACME Corp``), stay. Only
    passages the asker already sees are looked at."""
    if entity is None:
        return result

    def line(code: str) -> set[str]:  # the entity and its parents ("ACME Corp", "ACME Group")
        seen: set[str] = set()
        while code and code not in seen:
            seen.add(code)
            term = glossary.entities.terms.get(code)
            code = term.parent if term is not None and term.parent else ""
        return seen

    own = line(entity)

    def other(metadata: Mapping[str, object]) -> bool:
        named = metadata.get("entity")
        resolved = glossary.entities.resolve(named) if isinstance(named, str) else None
        # a parent's or a subsidiary's passage may speak of this entity: it stays
        return resolved is not None and resolved not in own and entity not in line(resolved)

    kept = tuple(s for s in result.snippets if not other(s.metadata))
    return result if len(kept) == len(result.snippets) else replace(result, snippets=kept)


def _about_entity(
    search: Search, asked: str, entity: str | None, glossary: Glossary
) -> SearchResult:
    """The search for ``asked`` kept to ``entity`` (:func:`_about`); when passages about other
    entities took places among the best, a wider search fills them (so that the entity's own
    passage ranked below them is still found), cut to as many passages as asked. The trace
    records each look as a stage ``about:entity`` (passages in, kept, and left out as about
    another entity in ``dropped_by_filter``: counts of passages the asker sees anyway)."""
    result = search(asked)
    kept = _about(result, entity, glossary)
    if kept is result:
        return result
    stages = TraceBuilder()
    top_k = len(result.snippets)
    stages.add_stage("about:entity", top_k, len(kept.snippets),
                     dropped_by_filter=top_k - len(kept.snippets))  # fmt: skip
    # within the options' own limits: a search of over 1,000 passages has no near-duplicate
    # or diversity stage (refused), so its widening may reach MAX_TOP_K
    limit = MAX_POSTPROCESSED_TOP_K if top_k <= MAX_POSTPROCESSED_TOP_K else MAX_TOP_K
    deeper = min(top_k * _WIDER, limit)
    wide = search(asked, top_k=deeper)
    wider = _about(wide, entity, glossary)
    out = wider.snippets[:top_k]
    stages.add_stage("about:entity", len(wide.snippets), len(out),
                     dropped_by_filter=len(wide.snippets) - len(wider.snippets))  # fmt: skip
    stages.note(f"searched again for {deeper} passages: some were about another entity")
    return replace(wider, snippets=out, trace=wider.trace.merged(stages.build()))


_WIDER = 4
"""How many times more passages are searched when some were about another entity."""


def _agent(
    question: str,
    provider: Provider,
    glossary: Glossary,
    facts: Callable[[], FactStore],
    search: Callable[[str], SearchResult],
    principal: Principal,
    locale: Locale,
    turns: tuple[Turn, ...],
    reference_date: date | None,
) -> Answer:
    builder = TraceBuilder()
    with builder.timed() as timer:
        run = run_agent(
            question,
            provider,
            glossary=glossary,
            facts=facts,
            search=search,
            principal=principal,
            locale=locale,
            history=turns,
            reference_date=reference_date,
        )
    builder.add_stage("answer:agent", run.calls, run.calls - run.rejected, seconds=timer.seconds)
    if run.rejected:
        builder.note(f"agent: {run.rejected} tool call(s) rejected (bad arguments or tool)")
    trace = builder.build()
    if run.route is Route.STRUCTURED:
        assert run.part is not None  # the model's own text is never shown here
        return _structured_answer(run.part, run.route.value, run.reason, locale, trace)
    narrative = answer_from_reply(
        run.reply,
        run.search.snippets,
        fact_values=() if run.part is None else found_values(run.part, glossary),
        locale=locale,
        trace=trace,
    )
    if run.part is None:
        return replace(narrative, route_reason=run.reason, notices=run.search.notices)
    return _composite(run.part, narrative, run.search, glossary, locale, run.reason)


def _composite(
    part: FiguresPart,
    narrative: Answer,
    result: SearchResult,
    glossary: Glossary,
    locale: Locale,
    reason: str,
) -> Answer:
    builder = TraceBuilder()
    with builder.timed() as timer:
        merged = explanation(narrative, result.snippets, part, glossary, locale)
    builder.add_stage(
        "answer:composite",
        len(narrative.sentences),
        len(merged.sentences),
        seconds=timer.seconds,
    )
    notes = (text(locale, "numbers_left_out"),) if merged.left_out or narrative.notes else ()
    figures_text = "\n".join(_cited(s) for s in part.sentences)
    if merged.sentences:
        explained = " ".join(_cited(s) for s in merged.sentences)
    else:
        explained = text(locale, "no_material")
    blocks = [
        f"{text(locale, 'heading_figures')}\n{figures_text}",
        f"{text(locale, 'heading_explanation')}\n{explained}",
    ]
    if part.assumptions:
        blocks.append(_block(text(locale, "heading_assumptions"), part.assumptions))
    if merged.flags:
        blocks.append(_block(text(locale, "heading_flags"), merged.flags))
    blocks.extend(notes)
    answered = part.status is AnswerStatus.ANSWERED or bool(merged.sentences)
    return Answer(
        Route.COMPOSITE.value,
        status=AnswerStatus.ANSWERED if answered else part.status,
        text="\n\n".join(blocks),
        sources=part.sources + merged.sources,
        trace=narrative.trace.merged(builder.build()),
        notes=notes,
        notices=result.notices,
        route_reason=reason,
        sentences=part.sentences + merged.sentences,
        figures=part.figures,
        assumptions=part.assumptions,
        flags=merged.flags,
        locale=locale,
        param=part.param,
        suggestions=part.suggestions,
        guard=narrative.guard,
    )
