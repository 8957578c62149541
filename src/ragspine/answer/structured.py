"""The figures of a structured question: lookups and computations over stored facts only.

From a :class:`~ragspine.answer.question.QuestionReading`: one ``query_metric`` per metric x
entity x period (channel: the first named, else ``total``), or, for a change, a percentage
change or an average, :func:`ragspine.graph.compare.compare`, and for a share or a ratio,
:func:`ragspine.graph.ratio.ratio`. Every sentence is rebuilt from what those return (stored
values and exact results); nothing of the question enters it except the normalized terms and
period labels. A missing entity is taken from the call or the workspace default, a missing period
is the latest period with a fact the asker may see; each default is stated as an assumption.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

from ragspine.analysis import match_key
from ragspine.answer.locale import (
    Locale,
    format_amount,
    format_day,
    format_exact,
    format_number,
    text,
    unit_words,
)
from ragspine.answer.locale import not_found as not_found_text
from ragspine.answer.question import (
    CHANGES,
    Operation,
    Pick,
    QuestionReading,
    Selection,
    first_day_re,
    opening_kind,
)
from ragspine.answer.types import AnswerStatus, CitedSentence, Figure, FigureKind, Source
from ragspine.errors import PeriodError, QueryError, quote_input
from ragspine.glossary import DEFAULT_CHANNEL, Glossary, MetricKind
from ragspine.graph.api import MAX_ITEMS
from ragspine.graph.compare import CompareResult, compare
from ragspine.graph.ratio import RatioResult, RatioStatus, ratio
from ragspine.graph.values import ExactNumber, FactRef, convert, finest, scales_combine
from ragspine.periods import (
    PERIOD_EXAMPLES,
    UNDATED,
    PeriodKind,
    parse_period,
    period_of_date,
    suggest_periods,
)
from ragspine.security import Principal, max_visible_level
from ragspine.stores.facts import FactStore
from ragspine.structured.facts import (
    SCALE_WORDS,
    Fact,
    FactKey,
    Scale,
    locator_column,
    locator_heading,
)
from ragspine.structured.headers import date_of, days_in, month_end_of, yearless_day
from ragspine.structured.query import MetricResult, MetricStatus, query_metric

MINUS = "\N{MINUS SIGN}"
"""The minus sign of expressions shown to people (U+2212)."""

EXAMPLES = 5
"""How many known metrics or entities a clarification names."""

_KIND_ORDER = {PeriodKind.YEAR: 0, PeriodKind.HALF: 1, PeriodKind.QUARTER: 2, PeriodKind.MONTH: 3}


@dataclass(frozen=True, slots=True)
class FiguresPart:
    """The structured part of an answer; ``sources`` are fact citations numbered from 1."""

    status: AnswerStatus
    sentences: tuple[CitedSentence, ...] = ()
    figures: tuple[Figure, ...] = ()
    sources: tuple[Source, ...] = ()
    assumptions: tuple[str, ...] = ()
    param: str | None = None
    suggestions: tuple[str, ...] = ()
    lookups: int = 0


@dataclass(slots=True)
class _Builder:
    """Collects sentences, figures and fact citations (one marker per fact) of one answer."""

    glossary: Glossary
    locale: Locale
    channel: str
    sentences: list[CitedSentence] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    sources: list[Source] = field(default_factory=list)
    markers: dict[FactKey, int] = field(default_factory=dict)
    lookups: int = 0

    def cite(self, key: FactKey, doc_id: str, locator: str) -> int:
        marker = self.markers.get(key)
        if marker is None:
            marker = self.markers[key] = len(self.markers) + 1
            self.sources.append(Source.of_fact(marker, doc_id=doc_id, locator=locator, fact=key))
        return marker

    def labels(self, metric: str, entity: str, channel: str | None = None) -> dict[str, str]:
        """The names a sentence says: of ``channel`` where given, else the answer's own."""
        code = self.channel if channel is None else channel
        shown = "" if code == DEFAULT_CHANNEL else f" ({self.glossary.channels.terms[code].label})"
        return {
            "metric": self.glossary.metrics.terms[metric].label,
            "entity": self.glossary.entities.terms[entity].label,
            "channel": shown,
        }

    def kind(self, metric: str) -> MetricKind:
        return self.glossary.metrics.terms[metric].kind

    def add(self, sentence: str, markers: tuple[int, ...], figure: Figure | None = None) -> None:
        self.sentences.append(CitedSentence(sentence, markers))
        if figure is not None:
            self.figures.append(figure)

    def found(self, result: MetricResult) -> None:
        """A found lookup: its sentence and figure, rebuilt from the stored value."""
        assert result.metric and result.entity and result.period and result.channel
        assert result.value is not None and result.scale is not None
        key = FactKey(result.metric, result.entity, result.period, result.channel)
        marker = self.cite(key, result.source_doc_id or "", result.locator or "")
        amount = format_amount(
            result.value,
            result.unit or "",
            result.currency or "",
            result.scale,
            self.kind(result.metric),
            self.locale,
        )
        sentence = text(
            self.locale,
            "fact",
            period=self.period(result.period),
            amount=amount,
            **self.labels(result.metric, result.entity, result.channel),
        )
        self.add(sentence, (marker,), Figure(FigureKind.FACT, sentence, (marker,), result=result))

    def fact_ref(self, fact: FactRef) -> None:
        """A fact a computation read, shown like a found lookup."""
        self.found(
            MetricResult(
                MetricStatus.FOUND,
                "",
                fact.metric,
                fact.entity,
                fact.period,
                fact.channel,
                fact.value,
                fact.unit,
                fact.currency,
                fact.scale,
                fact.source_doc_id,
                fact.locator,
                fact.valid_as_of,
            )
        )

    def missing(self, metric: str, entity: str, period: str, channel: str | None = None) -> None:
        sentence = text(
            self.locale,
            "missing_row",
            period=self.period(period),
            **self.labels(metric, entity, channel),
        )
        self.add(sentence, ())

    def period(self, label: str) -> str:
        """A period as shown in a sentence (``FY2024``; ``an undated table``)."""
        return text(self.locale, "undated_period") if label == UNDATED else label

    def number(self, value: Decimal) -> str:
        return format_number(value, self.locale)

    def computed(
        self,
        kind: FigureKind,
        what: str,
        expression: str,
        value: ExactNumber,
        unit: str,
        inputs: Sequence[FactRef],
        *,
        measure: tuple[str | None, str | None, object] = (None, None, None),
        exact: Decimal | None = None,
    ) -> None:
        markers = tuple(self.markers[fact.key] for fact in inputs)
        if exact is not None:  # a difference of stored values: its digits as computed
            shown = format_number(exact, self.locale) + (f" {unit}" if unit else "")
        else:
            shown = format_exact(value, self.locale, unit)
        sentence = f"{what}: {expression} = {shown}."
        unit_code, currency, scale = measure
        self.add(
            sentence,
            markers,
            Figure(
                kind,
                sentence,
                markers,
                value=value,
                unit=unit_code,
                currency=currency,
                scale=scale,  # type: ignore[arg-type]
                expression=expression,
                inputs=tuple(inputs),
            ),
        )

    def part(self, status: AnswerStatus, assumptions: Sequence[str]) -> FiguresPart:
        return FiguresPart(
            status,
            tuple(self.sentences),
            tuple(self.figures),
            tuple(self.sources),
            tuple(assumptions),
            lookups=self.lookups,
        )


def _unrecognized(
    locale: Locale, param: str, raw: str, suggestions: Sequence[str], assumptions: Sequence[str]
) -> FiguresPart:
    sentence = text(
        locale, "unrecognized", param=text(locale, f"param_{param}"), raw=quote_input(raw)
    )
    if suggestions:
        sentence += text(locale, "hint_close", values=", ".join(suggestions[:3]))
    elif param == "period":
        sentence += text(locale, "hint_periods", values=", ".join(PERIOD_EXAMPLES))
    return FiguresPart(
        AnswerStatus.UNRECOGNIZED_PARAM,
        (CitedSentence(sentence, ()),),
        assumptions=tuple(assumptions),
        param=param,
        suggestions=tuple(suggestions[:3]),
    )


def _clarify(sentence: str, assumptions: Sequence[str] = ()) -> FiguresPart:
    return FiguresPart(
        AnswerStatus.NEEDS_CLARIFICATION,
        (CitedSentence(sentence, ()),),
        assumptions=tuple(assumptions),
    )


def _visible(
    labels: Sequence[tuple[str, str]], facts_of: Callable[[str], Iterator[object]]
) -> list[tuple[str, str]]:
    """The first :data:`EXAMPLES` terms (by code) with a fact the asker may see
    (``facts_of(code)``): a term whose every fact is restricted, or that has none, is never
    named (generated glossaries hold the labels of restricted rows too)."""
    shown: list[tuple[str, str]] = []
    for code, label in sorted(labels):
        if len(shown) == EXAMPLES:
            break
        if next(iter(facts_of(code)), None) is not None:
            shown.append((code, label))
    return shown


def _examples(labels: Sequence[tuple[str, str]]) -> str:
    """A few known terms (``label``), by code: the glossary only, never the facts."""
    return ", ".join(label for _, label in sorted(labels)[:EXAMPLES]) or "-"


_SELECTIONS = (Operation.WHICH_PERIODS, Operation.COUNT_PERIODS)
_SPANS = (Operation.AVERAGE, Operation.SUM, Operation.LOOKUP, *_SELECTIONS)


def _latest_kind(
    facts: Iterable[Fact], start: int, kind: PeriodKind | None = None
) -> list[tuple[str, Fact]]:
    """Each period of ``facts`` of the kind of the latest one (by its last day; a year before
    a quarter ending the same day), or of ``kind`` when given (none when no period of that
    kind is stored), oldest first, with its first fact; facts whose period the grammar does
    not read are left out."""
    first: dict[str, Fact] = {}
    ends: dict[str, tuple[date, PeriodKind]] = {}
    for fact in facts:
        try:
            period = parse_period(fact.period, None, start)
        except PeriodError:
            continue
        if period.kind is PeriodKind.UNDATED:  # no place in time: never a latest period
            continue
        first.setdefault(period.label, fact)
        ends[period.label] = (period.date_range(start)[1], period.kind)
    if not ends:
        return []
    if kind is None:
        kind = max(ends.values(), key=lambda v: (v[0], -_KIND_ORDER[v[1]]))[1]
    chosen = sorted((end, label) for label, (end, k) in ends.items() if k is kind)
    return [(label, first[label]) for _, label in chosen]


def _covered_periods(
    glossary: Glossary, store: FactStore, entity: str, level: int, locale: Locale
) -> FiguresPart:
    """The periods (of the latest kind, oldest first) with a fact of ``entity`` the asker may
    see, each cited by its first stored fact."""
    covered = _latest_kind(
        store.scan(max_level=level, entity=entity), glossary.fiscal_year_start_month
    )
    builder = _Builder(glossary, locale, DEFAULT_CHANNEL)
    if not covered:
        builder.add(text(locale, "no_period"), ())
        return builder.part(AnswerStatus.REFUSED, ())
    labels = [label for label, _ in covered]
    markers = tuple(builder.cite(f.key, f.source_doc_id, f.locator) for _, f in covered)
    name = glossary.entities.terms[entity].label
    sentence = text(locale, "covered_periods", entity=name, periods=", ".join(labels)) + "."
    figure = Figure(FigureKind.PERIODS, sentence, markers, expression="covered",
                    periods=tuple(labels))  # fmt: skip
    builder.add(sentence, markers, figure)
    return builder.part(AnswerStatus.ANSWERED, ())


_KIND_WORDS = {
    "year": PeriodKind.YEAR,
    "fy": PeriodKind.YEAR,
    "quarter": PeriodKind.QUARTER,
    "half": PeriodKind.HALF,
    "halve": PeriodKind.HALF,
    "month": PeriodKind.MONTH,
    "anno": PeriodKind.YEAR,
}
"""The kind of period a ``which year`` / ``in which quarter`` question picks among."""


def stored_periods(
    glossary: Glossary,
    store: FactStore,
    key: FactKey,
    max_level: int,
    *,
    undated: bool = False,
    kind: PeriodKind | None = None,
    channels: Collection[str] = (),
) -> list[str]:
    """The periods of ``key``'s metric, entity and channel (or any of ``channels``) with a
    fact at ``max_level`` or below, of the kind of the latest one (years when the latest is a
    year), oldest first. ``undated``: when none is dated, ``[UNDATED]`` if a fact whose source
    states no period is stored."""
    facts = store.scan(max_level=max_level, metric=key.metric, entity=key.entity)
    wanted = set(channels) or {key.channel}
    mine = [fact for fact in facts if fact.channel in wanted]
    dated = [label for label, _ in _latest_kind(mine, glossary.fiscal_year_start_month, kind)]
    if dated or not undated:
        return dated
    return [UNDATED] if any(fact.period == UNDATED for fact in mine) else []


def _answered_channels(reading: QuestionReading) -> list[str]:
    """The channels a question names, each once in its order (``total`` when it names none):
    a lookup answers each of them."""
    return list(dict.fromkeys(reading.channels)) or [DEFAULT_CHANNEL]


def _spellings(glossary: Glossary, metrics: Sequence[str]) -> list[str]:
    """The label and aliases of each of ``metrics``."""
    terms = glossary.metrics.terms
    return [name for m in metrics if m in terms for name in (terms[m].label, *terms[m].aliases)]


def answer_figures(
    reading: QuestionReading,
    glossary: Glossary,
    store: FactStore,
    *,
    principal: Principal,
    locale: Locale,
    entity: str | None = None,
    reference_date: date | None = None,
) -> FiguresPart:
    """The figures part for ``reading`` (``entity``: the entity given with the call, used when
    the question names none)."""
    assumptions: list[str] = []
    if reading.bad_period is not None:
        reference = reference_date or date.today()
        suggestions = suggest_periods(reading.bad_period, reference)
        return _unrecognized(locale, "period", reading.bad_period, suggestions, assumptions)
    entity_code: str | None = None
    if entity is not None:
        entity_code = glossary.entities.resolve(entity)
        if entity_code is None:
            suggestions = glossary.entities.suggest(entity)
            return _unrecognized(locale, "entity", entity, suggestions, assumptions)
    if reading.unexplained and reading.metrics:
        names = ", ".join(glossary.metrics.terms[c].label for c in reading.metrics)
        words = ", ".join(repr(w) for w in reading.unexplained)
        return _clarify(text(locale, "unexplained_words", metrics=names, words=words))
    if reading.ambiguous:
        names = ", ".join(glossary.metrics.terms[c].label for c in reading.ambiguous)
        return _clarify(text(locale, "ambiguous_metric", candidates=names))
    if reading.second_operation and reading.metrics:
        spelled = " ".join(_spellings(glossary, reading.metrics)).casefold()
        if not re.search(rf"(?<!\w){re.escape(reading.second_operation)}(?!\w)", spelled):
            # ("the change in the average price per share" of the row "average price paid
            # per share": the row's own word, no second calculation)
            if not reading.operation_word:  # "the sum over the value of X": a sum of what?
                word = quote_input(reading.second_operation)
                return _clarify(text(locale, "one_figure_summed", word=word))
            words = f"{reading.operation_word!r}, {reading.second_operation!r}"
            return _clarify(text(locale, "two_operations", words=words))
    if reading.crossed and len(reading.metrics) >= 2:
        key = "crossed_periods" if reading.crossed == "period" else "crossed_entities"
        return _clarify(text(locale, key, word=quote_input(reading.operation_word)))
    if not reading.metrics:
        known = [(code, t.label) for code, t in glossary.metrics.terms.items()]
        scope = entity_code or (reading.entities[0] if len(reading.entities) == 1 else None)
        if scope is not None:
            level = max_visible_level(principal)
            stored = sorted(store.metrics_of(scope, max_level=level))
            entity_label = glossary.entities.terms[scope].label
            if not stored:  # never other entities' names: they may be restricted rows' labels
                return _clarify(text(locale, "no_stored_metric", entity=entity_label))
            if reading.operation is Operation.WHICH_PERIODS and (
                reading.selection is None or reading.selection.pick is Pick.ALL
            ):  # "which years does the table cover?": the periods stored for the entity
                return _covered_periods(glossary, store, scope, level, locale)
            labels = ", ".join(glossary.metrics.terms[c].label for c in stored[:EXAMPLES])
            return _clarify(
                text(locale, "needs_stored_metric", entity=entity_label, examples=labels)
            )
        level = max_visible_level(principal)
        shown = _visible(known, lambda code: store.scan(max_level=level, metric=code))
        return _clarify(text(locale, "needs_metric", examples=_examples(shown)))

    entities = list(reading.entities)
    if not entities:
        default = glossary.answers.default_entity
        if entity_code is not None:
            entities = [entity_code]
            key = "assume_entity_call"
        elif default is not None:
            resolved = glossary.entities.resolve(default)
            assert resolved is not None  # checked at glossary load
            entities = [resolved]
            key = "assume_entity_default"
        else:
            known = [(code, t.label) for code, t in glossary.entities.terms.items()]
            level = max_visible_level(principal)
            shown = _visible(known, lambda code: store.scan(max_level=level, entity=code))
            return _clarify(text(locale, "needs_entity", examples=_examples(shown)))
        label = glossary.entities.terms[entities[0]].label
        assumptions.append(text(locale, key, entity=label))

    channels = _answered_channels(reading)
    channel = channels[0]
    if len(channels) > 1 and reading.operation is not Operation.LOOKUP:
        # "the change in online and retail revenue": each channel's change, or their sum's?
        # (the first channel alone was computed, and the other left out without a word)
        names = ", ".join(glossary.channels.terms[code].label for code in channels)
        return _clarify(text(locale, "several_channels", channels=names), assumptions)
    builder = _Builder(glossary, locale, channel)
    level = max_visible_level(principal)
    periods = list(reading.periods)
    over_time = reading.operation in (*CHANGES, Operation.AVERAGE, Operation.SUM)
    # "X less Y": one metric minus another in one period; of one metric, two named periods
    subtracting = reading.operation_word in ("less", "minus") and len(set(periods)) < 2
    if not periods and reading.operation not in _SELECTIONS:
        metric, first = reading.metrics[0], entities[0]
        builder.lookups += 1
        asked = FactKey(metric, first, "", channel)
        # over every channel named: the order they are named in chooses nothing
        stored = stored_periods(glossary, store, asked, level, undated=True, channels=channels)
        if not stored:
            builder.add(text(locale, "no_period"), ())
            return builder.part(AnswerStatus.REFUSED, assumptions)
        named = builder.labels(metric, first)
        if stored == [UNDATED]:
            if over_time and len(reading.metrics) == 1 and len(entities) == 1:
                # "the change in goodwill" from a table that states no period: nothing to
                # change over
                builder.add(text(locale, "undated_over_time", **named), ())
                return builder.part(AnswerStatus.REFUSED, assumptions)
            periods = stored
            assumptions.append(text(locale, "assume_undated", **named))
        else:
            span = reading.span_years
            totals = reading.operation in (Operation.AVERAGE, Operation.SUM)
            # an average or a sum covers every stored period, a change the latest two: the
            # span named must be those periods
            covered = len(stored) if totals else min(len(stored), 2)
            if span is not None and span != covered:
                # "the five year period ended 2017", "across the 3 years": the years are not
                # named, and the stored ones are not that span (a change over the latest two
                # is no five-year change)
                years = text(locale, "span_not_stored", span=span, periods=", ".join(stored))
                return _clarify(years, assumptions)
            if totals and len(stored) > 1:
                periods = stored
                assumptions.append(
                    text(locale, "assume_periods_all", periods=", ".join(periods), **named)
                )
            elif reading.operation in CHANGES and len(stored) > 1 and not subtracting:
                periods = stored[-2:]
                assumptions.append(
                    text(locale, "assume_periods_latest_two", periods=", ".join(periods), **named)
                )
            else:
                periods = stored[-1:]
                assumptions.append(text(locale, "assume_period_latest", period=periods[0], **named))

    if UNDATED in periods and len(set(periods)) > 1 and over_time:
        # "the change from undated to FY2024" (an agent's tool call, a graph of periods)
        return _clarify(text(locale, "undated_mixed"), assumptions)
    one = len(periods) == 1 and len(entities) == 1 and len(reading.metrics) == 1
    if subtracting:  # never a year's change
        one = False
    if reading.operation in (Operation.LOOKUP, Operation.SUM) and one and not reading.cues:
        only = parse_period(periods[0], None, glossary.fiscal_year_start_month)
        if reading.span_years not in (None, 1) and only.kind is PeriodKind.YEAR:
            # "total revenue for the three years ended 2019": not 2019's figure alone
            years = text(locale, "span_not_stored", span=reading.span_years, periods=periods[0])
            return _clarify(years, assumptions)
        if reading.since and reading.base_period == periods[0]:
            # "the total revenue since 2017": from 2017 up to when, not 2017's figure
            return _clarify(text(locale, "since_only", period=periods[0]), assumptions)
    if reading.operation is Operation.AVERAGE and one and reading.since:
        # "the average revenue since 2017": from 2017 up to when, not 2016 and 2017
        return _clarify(text(locale, "since_only", period=periods[0]), assumptions)
    # a change asked with its why ("how much did revenue fall in 2019 and why") is still the
    # change; an average with one is no average balance
    if (
        reading.operation in (*CHANGES, Operation.AVERAGE)
        and one
        and (not reading.cues or reading.operation in CHANGES)
    ):
        only = parse_period(periods[0], None, glossary.fiscal_year_start_month)
        if reading.span_years not in (None, 1, 2) and only.kind is PeriodKind.YEAR:
            # "the five year period ended 2017": not the year before and the one named
            years = text(locale, "span_not_stored", span=reading.span_years, periods=periods[0])
            return _clarify(years, assumptions)
        if (
            reading.operation in CHANGES
            and reading.base_period == periods[0]
            and len(reading.days) < 2
        ):
            # "the change from 2018", "since 2019": from that year to which? (it ran back to
            # the year before, 2018 to 2017, as a first review found)
            return _clarify(text(locale, "change_from_only", period=periods[0]), assumptions)
        if only.kind is PeriodKind.YEAR:  # "the change in 2019": from 2018; "the 2019 average"
            periods = [f"FY{only.year - 1}", periods[0]]  # of a balance: opening and closing
            key = "assume_year_before" if reading.operation in CHANGES else "assume_average_year"
            assumptions.append(text(locale, key, earlier=periods[0], later=periods[1]))
        elif only.kind is not PeriodKind.UNDATED:
            # "the revenue growth in Q4 2019": from Q3, or from Q4 2018? Never Q4's level
            key = "change_one_part" if reading.operation in CHANGES else "average_one_part"
            return _clarify(text(locale, key, period=periods[0]), assumptions)
    if reading.total_over_periods and len(set(periods)) > 1 and len(reading.metrics) == 1:
        # "the total cost of revenue in both 2019 and 2018": the Total row of each year, or
        # its sum over the two
        label = builder.labels(reading.metrics[0], entities[0])["metric"]
        return _clarify(text(locale, "total_or_each", metric=label), assumptions)
    periods = _ordered_periods(reading, periods, glossary)
    summed = (*CHANGES, Operation.SUM, Operation.AVERAGE)
    inner = _nested(periods, glossary) if reading.operation in summed else None
    if inner is not None:  # "revenue in 2019 minus Q4 2019", "the total of 2019 and Q4 2019"
        return _clarify(text(locale, "change_nested", inner=inner[0], outer=inner[1]), assumptions)
    if reading.operation in CHANGES and reading.backward and len(periods) == 2:
        earlier, later = sorted(periods, key=lambda label: _when(label, glossary))
        if _last_word(reading.operation_word) in _DIRECTED:
            # "the decline from 2019 to 2018": a fall back in time, or the fall over time?
            return _clarify(text(locale, "change_backward", earlier=earlier, later=later))
        # "the change from 2018 to 2017": a change over time runs forward, and is said so
        periods = [earlier, later]
        assumptions.append(text(locale, "assume_forward", earlier=earlier, later=later))
    undated = bool(periods) and all(p == UNDATED for p in periods)
    start = None
    if reading.start_to_end and reading.operation in (*CHANGES, Operation.AVERAGE):
        # "the change in balance from January 1, 2019 to December 31, 2019": the opening and
        # the closing figure, not the row named "balance at january 1" in two years
        start = "start_to_end"
    elif reading.opening and not undated:
        # "the unrecognized tax benefits at the beginning of 2016": the figure stored for 2016
        # is its closing balance (the opening one is 2015's), unless its name says opening or
        # it was stored from a column of that first day ("1 January 2019", IFRS 16 adoption)
        first_day = reading.opening == "date" and _stored_at_first_day(
            store,
            reading.metrics,
            entities,
            periods,
            level,
            glossary.fiscal_year_start_month,
            channels,
        )
        start = None if first_day else "opening_asked"

    def metric_label(metric: str, entity: str) -> str:
        return builder.labels(metric, entity)["metric"]

    month = glossary.fiscal_year_start_month
    if start is None and not reading.opening and not undated:
        # "PP&E at December 31, 2019" where the only 2019 figure is an IFRS 16 adoption
        # table's "1 January 2019" column: that year's opening, not its figure
        fact = _read_at_first_day(
            store, reading.metrics, entities, periods, level, month, metric_label, channels
        )
        if fact is not None:
            said = text(
                locale,
                "first_day_stored",
                metrics=metric_label(fact.metric, fact.entity),
                periods=fact.period,
            )
            return _clarify(said, assumptions)
    if start is None and (apart := _two_days_of_a_year(reading.days, month)) is not None:
        # "the change in inventories from June 30, 2019 to December 31, 2019": one figure is
        # stored for the year, so no two of its days can be told apart
        first_named, last_named = (_said(reading, day, locale) for day in apart[:2])
        said = text(
            locale, "two_days_one_year", first=first_named, last=last_named, period=apart[2]
        )
        return _clarify(said, assumptions)
    if start is None and reading.days and not undated:
        other, dayless = _read_at_another_day(
            store, reading, entities, periods, level, month, metric_label, channels
        )
        for fact, on_day in dayless:
            # "the cash at June 30, 2019" where 2019's figure names no day, in a calendar
            # year: answered with the year's figure, and said (its source may be a company
            # whose year ends on that day, or the figure may be of December 31)
            assumptions.append(
                text(
                    locale,
                    "assume_day_of_year",
                    metrics=metric_label(fact.metric, fact.entity),
                    periods=fact.period,
                    asked=_said(reading, on_day, locale),
                )
            )
        if other is not None:
            # "the inventories at December 31, 2019" where 2019's figure was read from a
            # column "June 30, 2019": a figure of that year, but not of the day asked
            # (the day read is not said: its numbers are no figure of the question's or of a
            # stored value; the figure's source, asked for by its year, says it)
            fact, on_day = other
            said = text(
                locale,
                "other_day_stored",
                metrics=metric_label(fact.metric, fact.entity),
                periods=fact.period,
                asked=_said(reading, on_day, locale),
            )
            return _clarify(said, assumptions)
    if start is not None:
        names = ", ".join(builder.labels(m, entities[0])["metric"] for m in reading.metrics)
        return _clarify(text(locale, start, metrics=names), assumptions)
    operation = _OPERATIONS.get(reading.operation, _lookups)
    status = operation(builder, reading, entities, periods, store, principal, level)
    if isinstance(status, FiguresPart):
        return status
    if status is AnswerStatus.ANSWERED and reading.constant:
        builder.add(text(locale, "question_constant", words=quote_input(reading.constant)), ())
        status = (
            AnswerStatus.REFUSED
        )  # the figures are shown; the step with the given number is not
    elif status is AnswerStatus.ANSWERED and reading.uncomputed:
        words = quote_input(reading.uncomputed)
        builder.add(text(locale, "not_computed_here", words=words), ())
        status = AnswerStatus.REFUSED  # the figures are shown; the calculation is not
    if month == 1 and any(_ends_early(s.source_locator) for s in builder.sources):
        assumptions.append(text(locale, "assume_early_year_end"))
    return builder.part(status, assumptions)


def _ends_early(locator: object) -> bool:
    """Whether a fact was read from a column dated in January or February (``February 1,
    2020``: a retailer's year end), which calendar fiscal years read as that calendar year,
    while many such reports call it the fiscal year before."""
    if not isinstance(locator, str) or ", column" not in locator:
        return False  # no column quoted (this runs on every answer)
    day = date_of(locator_column(locator))
    return day is not None and day.month <= 2


def _stored_at_first_day(
    store: FactStore,
    metrics: Sequence[str],
    entities: Sequence[str],
    periods: Sequence[str],
    level: int,
    fiscal_start_month: int,
    channels: Collection[str],
) -> bool:
    """Whether every figure asked for (each metric, entity and period, of ``channels``) is
    stored, and each was read from a column of a year's first day
    (:func:`_column_at_first_day`)."""
    if not periods:
        return False
    for metric in metrics:
        for entity in entities:
            found = {
                f.period: f
                for f in store.scan(max_level=level, metric=metric, entity=entity)
                if f.period in periods and f.channel in channels
            }
            if set(found) != set(periods):
                return False
            if not all(_column_at_first_day(f.locator, fiscal_start_month) for f in found.values()):
                return False
    return True


_ENDED_RE = re.compile(r"(?<!\w)(?:ended|ending|end)(?!\w)", re.IGNORECASE)


def _column_at_first_day(locator: str, fiscal_start_month: int) -> bool:
    """Whether a fact was read from a column headed by a year's first day (``1 January
    2019``, ``1/1/19``): its ``locator``'s column (:func:`locator_column`), not a section
    heading or title that mentions one, nor a year that ends that day (``Fiscal year ended
    January 1, 2017``, a 52/53-week year)."""
    if ", column" not in locator:
        return False  # no column quoted
    column = locator_column(locator).casefold()
    return bool(first_day_re(fiscal_start_month).search(column)) and not _ENDED_RE.search(column)


def _read_at_first_day(
    store: FactStore,
    metrics: Sequence[str],
    entities: Sequence[str],
    periods: Sequence[str],
    level: int,
    fiscal_start_month: int,
    label: Callable[[str, str], str],
    channels: Sequence[str],
) -> FactKey | Fact | None:
    """A figure asked for (each metric, entity and period of each of ``channels``; every
    period where none is named, as a ``which year`` pick compares them all) read from a column of
    its year's first day (:func:`_column_at_first_day`) while its metric's own name says no
    start (a metric ``... at beginning of period (1/1/19)`` is asked for by that name)."""
    first_day = first_day_re(fiscal_start_month)
    read: Iterable[tuple[FactKey | Fact, str]]
    if periods:  # one seek per key, as the lookup makes (this runs on every answer)
        keys = [
            FactKey(metric, entity, period, channel)
            for metric in metrics
            for entity in entities
            for period in sorted(set(periods))
            for channel in channels
        ]
        found = (store.lookup(key, max_level=level) for key in keys)
        read = [(key, fact.locator) for key, fact in zip(keys, found, strict=True) if fact]
    else:
        read = (
            (f, f.locator)
            for f in _asked_facts(store, metrics, entities, level)
            if f.channel in channels
        )
    for fact, locator in read:
        if not _column_at_first_day(locator, fiscal_start_month):
            continue
        name = match_key(label(fact.metric, fact.entity))
        if not first_day.search(name) and not opening_kind(name, fiscal_start_month):
            return fact
    return None


def _asked_facts(
    store: FactStore,
    metrics: Sequence[str],
    entities: Sequence[str],
    level: int,
    periods: Sequence[str] = (),
) -> Iterator[Fact]:
    """Every visible fact of each metric and entity asked for (of ``periods`` only, when
    given), in that order and then in period order, as a scan gives them."""
    for metric in metrics:
        for entity in entities:
            if not periods:
                yield from store.scan(max_level=level, metric=metric, entity=entity)
            for period in sorted(set(periods)):  # one indexed read per period, in key order
                yield from store.scan(max_level=level, metric=metric, entity=entity, period=period)


DAY_TOLERANCE = 7
"""Days by which a day asked and a day a figure was read at may differ and still be one: a
52/53-week year ends within a week of the calendar date a question names (``December 31,
2019`` for a column ``December 28, 2019``)."""


def _read_at_another_day(
    store: FactStore,
    reading: QuestionReading,
    entities: Sequence[str],
    periods: Sequence[str],
    level: int,
    fiscal_start_month: int,
    label: Callable[[str, str], str],
    channels: Sequence[str],
) -> tuple[tuple[Fact, date] | None, list[tuple[Fact, date]]]:
    """A figure asked for at a day (``at December 31, 2019``) whose locator's column names
    days of the same fiscal year and none of them within :data:`DAY_TOLERANCE` of a day asked
    (a column ``June 30, 2019``): the figure and the day asked. A
    column that names no day of that year (``2019``), or only days its metric's own name says
    (a transposed table's row ``notes due june 30 2015``), is the year's figure, as before.
    A day without its year leading the label or column (``december 31 , average
    investments``) is a day of the figure's year it was read at, and so is the month's end a
    ``12/14`` column names. Returned first (None when there is none), and then each figure
    whose source names no day asked for at a day more than :data:`DAY_TOLERANCE` from its
    fiscal year's last day (``at June 30, 2019`` in a calendar year): the year's figure
    answers, with that said."""
    asked: dict[str, list[date]] = {}
    dayless: list[tuple[Fact, date]] = []
    told: set[tuple[str, str, str, date]] = set()  # one line per figure and day (channels)
    for day in reading.days:
        asked.setdefault(_year_of(day, fiscal_start_month), []).append(day)
    found = _asked_facts(store, reading.metrics, entities, level, periods) if periods else ()
    for fact in found:
        if fact.period not in asked or fact.channel not in channels:  # only figures answered
            continue
        named = set(days_in(label(fact.metric, fact.entity)))
        # a header's rows are joined with " / " ("Domestic / September 30, / 2019")
        column = locator_column(fact.locator).replace(" / ", " ")
        read = [
            day
            for day in days_in(column)
            if _year_of(day, fiscal_start_month) == fact.period and day not in named
        ]
        start, end = parse_period(fact.period, None, fiscal_start_month).date_range(
            fiscal_start_month
        )
        for said in (label(fact.metric, fact.entity), column):  # "december 31 , X", "12/14"
            at = yearless_day(said, start, end) or month_end_of(said)
            if at is not None and start <= at <= end:
                read.append(at)
        days = asked[fact.period]
        if len(days) > 1:  # a span over the whole year: its end is the day (its start is
            days = [day for day in days if day != start]  # the year before's)
        for day in days:  # every day asked must be one the figure was read at
            if read and all(abs((day - at).days) > DAY_TOLERANCE for at in read):
                return (fact, day), dayless
            once = (fact.metric, fact.entity, fact.period, day)
            if (
                not read
                and day not in named
                and abs((end - day).days) > DAY_TOLERANCE
                and once not in told
            ):
                told.add(once)
                dayless.append((fact, day))
    return None, dayless


def _said(reading: QuestionReading, day: date, locale: Locale) -> str:
    """``day`` as a reader writes it (``December 31, 2019``), or as the question wrote it where
    the reader's spelling would say a number the question did not: in figures (``12/31/19``,
    ``31.12.2019``) or with a two-digit year (``31-Dec-19``). A reply says no number of its
    own."""
    words = dict(zip(reading.days, reading.day_words, strict=True)).get(day, "")
    in_figures = not any(char.isalpha() for char in words)
    return (
        words if words and (in_figures or str(day.year) not in words) else format_day(day, locale)
    )


def _two_days_of_a_year(
    days: Sequence[date], fiscal_start_month: int
) -> tuple[date, date, str] | None:
    """Two days a question names that fall in one fiscal year, more than
    :data:`DAY_TOLERANCE` apart, and are not that year's first and last day (a span naming
    the whole year): (the first, the last, the year)."""
    by_year: dict[str, list[date]] = {}
    for day in days:
        by_year.setdefault(_year_of(day, fiscal_start_month), []).append(day)
    for year, named in by_year.items():
        first, last = min(named), max(named)
        if (last - first).days <= DAY_TOLERANCE:
            continue
        start, end = parse_period(year, None, fiscal_start_month).date_range(fiscal_start_month)
        if (first, last) != (start, end):
            return first, last, year
    return None


def _year_of(day: date, fiscal_start_month: int) -> str:
    return period_of_date(day, PeriodKind.YEAR, fiscal_start_month).label


def _ordered_periods(reading: QuestionReading, periods: list[str], glossary: Glossary) -> list[str]:
    """The periods in the order the operation needs: a change runs from its base period (the
    one the question measures from, else the earliest) to the others in time order; an average
    over a span of years (``from 2017 to 2019``) covers every fiscal year of it."""
    if reading.operation in _SPANS and reading.year_range is not None:
        first, last = reading.year_range
        return [f"FY{year}" for year in range(first, last + 1)]
    if reading.operation not in (Operation.CHANGE, Operation.PERCENT_CHANGE) or len(periods) < 2:
        return periods
    ordered = sorted(periods, key=lambda label: _when(label, glossary))
    base = reading.base_period
    if base in ordered:
        ordered.remove(base)
        ordered.insert(0, base)
    return ordered


def _nested(periods: Sequence[str], glossary: Glossary) -> tuple[str, str] | None:
    """A period of ``periods`` inside another of them (``FY2019-Q4`` in ``FY2019``), as
    (inner, outer): a change runs between periods one after the other, never into a part, and
    a sum or an average over both would count the part twice."""
    month = glossary.fiscal_year_start_month
    spans = {}
    for label in periods:
        period = parse_period(label, date.today(), month)
        if period.kind is not PeriodKind.UNDATED:
            spans[label] = period.date_range(month)
    for inner, (start, end) in spans.items():
        for outer, (first, last) in spans.items():
            if inner != outer and first <= start and end <= last and (start, end) != (first, last):
                return inner, outer
    return None


def _when(label: str, glossary: Glossary) -> tuple[int, int, int]:
    """A period label's place in time, for sorting (``FY2019`` before ``FY2019-Q4``)."""
    period = parse_period(label, date.today(), glossary.fiscal_year_start_month)
    return (period.year, list(PeriodKind).index(period.kind), period.number)


_Operation = Callable[
    [_Builder, QuestionReading, list[str], list[str], FactStore, Principal, int],
    AnswerStatus | FiguresPart,
]


def _check_items(count: int) -> None:
    if count > MAX_ITEMS:
        raise QueryError(
            f"the question names {count:,} metric x entity x period combinations: at most "
            f"{MAX_ITEMS:,}; ask about fewer"
        )


def _lookups(
    builder: _Builder,
    reading: QuestionReading,
    entities: list[str],
    periods: list[str],
    store: FactStore,
    principal: Principal,
    level: int,
) -> AnswerStatus:
    """One ``query_metric`` per metric x entity x period x channel named (``revenue in online
    and retail``: each channel's figure, or that none is stored)."""
    channels = _answered_channels(reading)
    _check_items(len(reading.metrics) * len(entities) * len(periods) * len(channels))
    found = 0
    for metric, entity, period, channel in itertools.product(
        reading.metrics, entities, periods, channels
    ):
        builder.lookups += 1
        result = query_metric(
            builder.glossary, store, metric, entity, period, channel, principal=principal
        )
        if result.status is MetricStatus.FOUND:
            found += 1
            builder.found(result)
        else:
            builder.missing(metric, entity, period, channel)
    amounts = [
        f.result
        for f in builder.figures
        if f.result is not None and not _percent_like(builder, f.result.unit, f.result.metric)
    ]
    if found and reading.percent_asked and reading.operation is Operation.LOOKUP and amounts:
        # "what is the percentage of X in Y" read as a lookup of X: the stored amount shown
        # is not the percentage asked for, and no share is computed from it
        label = builder.labels(amounts[0].metric or "", amounts[0].entity or "")["metric"]
        builder.add(text(builder.locale, "percent_not_stored", metric=label), ())
        return AnswerStatus.REFUSED
    money = [  # a currency, a percentage or a scale of thousands and up: no length of time
        f.result
        for f in builder.figures
        if reading.duration_asked
        and f.result is not None
        and (f.result.currency or f.result.unit == "%" or f.result.scale in SCALE_WORDS)
    ]
    if found and money:
        # "how many years is the minimum lifespan of land": the row's stored amount ($117.2
        # million) is not the length of time asked for
        label = builder.labels(money[0].metric or "", money[0].entity or "")["metric"]
        builder.add(text(builder.locale, "duration_not_stored", metric=label), ())
        return AnswerStatus.REFUSED
    counted = (
        reading.operation is Operation.LOOKUP
        and len(reading.metrics) == 1  # "the number of employees and the net loss": which?
        and (reading.items_counted or _named_as_count(builder.glossary, reading.metrics[0]))
    )
    negative = [
        f.result
        for f in builder.figures
        if counted and f.result is not None and f.result.value is not None and f.result.value < 0
    ]
    if found and negative:
        # "the number of non-vested shares forfeited" stored (12,632): a count of things is
        # never negative, and the table's sign is a direction; shown as stored
        label = builder.labels(negative[0].metric or "", negative[0].entity or "")["metric"]
        builder.add(text(builder.locale, "count_negative", metric=label), ())
        return AnswerStatus.NEEDS_CLARIFICATION
    if found:
        return AnswerStatus.ANSWERED
    if len(builder.sentences) == 1:  # one lookup: the fixed refusal of query_metric
        builder.sentences[0] = CitedSentence(not_found_text(periods[0], builder.locale), ())
    return AnswerStatus.REFUSED


_COUNT_NAME_RE = re.compile(r"^\s*(?:number|count|no\.)\s+of(?!\w)", re.IGNORECASE)
_SIGNED_NAME_RE = re.compile(
    r"(?<!\w)(?:net|change|changes|increase|decrease|variance|movement|growth|difference)(?!\w)",
    re.IGNORECASE,
)


def _named_as_count(glossary: Glossary, metric: str) -> bool:
    """Whether ``metric``'s own name says it counts things (``Number of stores closed``), not
    a signed change of a count (``Net increase (decrease) in number of shares``)."""
    term = glossary.metrics.terms.get(metric)
    label = term.label if term is not None else metric
    return bool(_COUNT_NAME_RE.match(label)) and not _SIGNED_NAME_RE.search(label)


def _compare_shown(
    builder: _Builder,
    store: FactStore,
    metric: str,
    items: list[tuple[str, str]],
    level: int,
) -> CompareResult:
    """:func:`compare` of ``metric`` over ``items``, each row shown as a found fact or a
    missing one."""
    builder.lookups += len(items)
    result = compare(
        builder.glossary, store, metric=metric, items=items, channel=builder.channel,
        max_level=level,
    )  # fmt: skip
    for row in result.rows:
        if row.fact is None:
            builder.missing(metric, row.entity, row.period)
        else:
            builder.fact_ref(row.fact)
    return result


def _compared(
    builder: _Builder,
    reading: QuestionReading,
    entities: list[str],
    periods: list[str],
    store: FactStore,
    principal: Principal,
    level: int,
) -> AnswerStatus | FiguresPart:
    """A change, a percentage change, an average or a sum of one metric over entity x period
    items, computed by :func:`ragspine.graph.compare.compare` (a question naming several
    metrics is asked back: these operations take one)."""
    items = [(entity, period) for entity in entities for period in periods]
    operation = reading.operation
    if operation is Operation.SUM and len(reading.metrics) > 1 and len(items) == 1:
        return _metrics_sum(builder, reading.metrics, entities[0], periods[0], store, level)
    subtracting = reading.operation_word in _SUBTRACTING
    two = len(items) == 1 and len(reading.metrics) == 2
    # "the difference between X and Y in 2019"; not when a percentage is asked ("what
    # percentage is the difference between ...": no plain difference answers it)
    differing = _differing(reading.operation_word) and operation is Operation.CHANGE
    if two and (subtracting or (differing and not reading.percent_asked)):
        # "X less Y in 2008", "the difference between X and Y in 2019"; "how much lower was
        # X than Y": Y less X
        lesser = _lesser(reading.operation_word)
        return _metrics_sum(
            builder,
            reading.metrics[::-1] if lesser else reading.metrics,
            entities[0],
            periods[0],
            store,
            level,
            subtract=True,
            undirected=not subtracting,
        )
    if subtracting and len(items) == 1:
        status = _lookups(builder, reading, entities, periods, store, principal, level)
        if status is AnswerStatus.ANSWERED:  # "revenue less discounts": one of two is stored
            builder.add(text(builder.locale, "subtrahend_missing"), ())
        return AnswerStatus.REFUSED
    if len(items) < 2:
        if operation is Operation.PERCENT_CHANGE:
            return _clarify(text(builder.locale, "needs_two_items"))
        return _lookups(builder, reading, entities, periods, store, principal, level)
    if len(reading.metrics) > 1:  # "the difference between X and Y": not one metric's change
        names = ", ".join(builder.glossary.metrics.terms[m].label for m in reading.metrics)
        return _clarify(text(builder.locale, "one_metric_only", metrics=names))
    _check_items(len(items))
    metric = reading.metrics[0]
    result = _compare_shown(builder, store, metric, items, level)
    if not result.found:
        return AnswerStatus.REFUSED
    percent = _percent_like(builder, result.unit, metric)
    amounts = any(abs(row.value) > 100 for row in result.rows if row.value is not None) or any(
        row.fact is not None and row.fact.scale in SCALE_WORDS for row in result.rows
    )  # above 100, or stored at a money scale ("(in millions)"): amounts, not percentages
    if reading.percent_of and amounts and not percent:
        # "the change in the percentage of sales from APAC" with APAC's sales stored
        # (533,340), "the average R&D as a % of revenue" with R&D stored in millions: an
        # amount's change, average or sum is not that of a percentage. (A table of
        # percentages of sales often marks only its first row with "%".)
        label = builder.labels(metric, entities[0])["metric"]
        builder.add(text(builder.locale, "percent_not_stored", metric=label), ())
        return AnswerStatus.REFUSED
    if operation in (Operation.AVERAGE, Operation.SUM):
        missing = any(row.fact is None for row in result.rows)
        # "the cumulative revenue growth", "the total operating margin in 2018 and 2019": a
        # rate of each period is no part of a whole, so a sum of them is no figure
        rates = operation is Operation.SUM and percent and (result.unit == "%" or not amounts)
        if missing or rates:
            what = text(
                builder.locale,
                operation.value,
                metric=builder.labels(metric, entities[0])["metric"],
                channel="",
                items=", ".join(periods),
            )
            reason = text(builder.locale, "reason_missing" if missing else "reason_percent_sum")
            builder.add(text(builder.locale, "not_computable", what=what, reason=reason), ())
            return AnswerStatus.REFUSED
        if len(entities) > 1 and len(periods) > 1:
            # "the average revenue of ACME and BETA in 2018 and 2019": each company's over
            # the years, each year's over the companies, or all four together?
            names = ", ".join(builder.labels(metric, e)["entity"] for e in entities)
            builder.add(text(builder.locale, "entities_and_periods", entities=names), ())
            return AnswerStatus.NEEDS_CLARIFICATION
        if not _average(builder, result, metric, total=operation is Operation.SUM):
            return AnswerStatus.REFUSED  # the figures are shown; they do not combine
    else:
        moved = _movement_heading(builder, result, metric)
        if moved is not None:
            # rows under "Changes in operating assets and liabilities:": each figure is
            # already its period's change, so a change between them is a change of changes
            label = builder.labels(metric, entities[0])["metric"]
            builder.add(text(builder.locale, "already_changes", metric=label, heading=moved), ())
            return AnswerStatus.NEEDS_CLARIFICATION
        points = reading.operation_word.startswith(_POINTS)
        if not percent and points:  # "the change in basis points" of an amount
            label = builder.labels(metric, entities[0])["metric"]
            builder.add(text(builder.locale, "percent_not_stored", metric=label), ())
            return AnswerStatus.REFUSED
        compared = _compared_falls(reading, glossary=builder.glossary)
        falling = (
            _last_word(reading.operation_word) in _FALLING if compared is None else compared
        ) and not any(
            row.value < 0 for row in result.rows if row.value is not None
        )  # an expense stored as (3,343): which way it "fell" is the asker's sign convention
        percent_only = operation is Operation.PERCENT_CHANGE
        _steps(builder, result, metric, percent_only=percent_only, falling=falling)
        if not any(f.kind is not FigureKind.FACT for f in builder.figures):
            return AnswerStatus.REFUSED  # the facts found are shown; the change asked is not
    values = [row.value for row in result.rows if row.value is not None]
    if operation is not Operation.PERCENT_CHANGE and _unsigned(values):
        # "the average interest expense" over (6,442) and (17,334): the average of the values
        # as stored, or of the expense's sizes? Askers count both ways; both are named.
        kind = "change" if operation is Operation.CHANGE else operation.value
        what = text(builder.locale, f"sign_what_{kind}")
        labels = builder.labels(metric, entities[0])
        builder.add(text(builder.locale, "sign_as_stored", **labels, what=what), ())
        return AnswerStatus.NEEDS_CLARIFICATION
    if operation is Operation.CHANGE and _undirected_fall(reading, result, builder.glossary):
        # "the difference in net deferred tax assets between 2018 and 2019" with 4,317 then
        # 3,851: the change over time (-466), or the gap between the two (466)? Askers count
        # both ways; a plain change ("the change in ...", "from 2018 to 2019") runs forward.
        first, last = result.rows[0], result.rows[-1]
        labels = builder.labels(metric, entities[0])
        builder.add(
            text(builder.locale, "difference_direction", **labels,
                 earlier=first.period, later=last.period),
            (),
        )  # fmt: skip
        return AnswerStatus.NEEDS_CLARIFICATION
    return AnswerStatus.ANSWERED


def _undirected_fall(reading: QuestionReading, result: CompareResult, glossary: Glossary) -> bool:
    """Whether a *difference* between two periods that the question names with no direction
    (``between 2018 and 2019``, not ``from 2018 to 2019`` nor ``2019 compared to 2018``) fell:
    the change over time is then negative, the gap between the two is not."""
    if not _differing(reading.operation_word) or reading.base_period or reading.backward:
        return False
    if _compared_falls(reading, glossary) is not None:
        return False  # "how much lower was X in 2019 than in 2018": the direction is said
    if len(result.steps) != 1 or len({row.entity for row in result.rows}) != 1:
        return False
    difference = result.steps[0].difference
    return difference is not None and difference < 0


_LESSER = frozenset(("lower", "smaller", "less", "fewer"))
_HIGHER = frozenset(("higher", "more", "greater", "larger", "bigger"))


def _lesser(words: str) -> bool:
    """Whether an operation's words ask how much lower one figure is than another (``how much
    lower was X than Y``): the second figure less the first."""
    return words.startswith("how much ") and _last_word(words) in _LESSER


def _compared_falls(reading: QuestionReading, glossary: Glossary) -> bool | None:
    """For ``how much higher / lower was X in A than in B``, whether the figure asked is the
    earlier period's less the later's (higher: A less B; lower: B less A); None for other
    words. The period compared with is the base (``compared to B``, from which the change
    runs) or the one named second (the change then runs forward in time)."""
    words = reading.operation_word
    last = _last_word(words)
    if not words.startswith("how much ") or last not in _LESSER | _HIGHER:
        return None
    if len(reading.entities) == 2 and len(reading.periods) <= 1:
        # "how much more revenue did BETA have than ACME": the change runs from the company
        # named first to the other, the question asks the first less the other
        return last in _HIGHER
    if len(reading.periods) != 2 or reading.base_period in reading.periods:
        # "X in 2019 compared to 2018": the change runs from the base to the other period
        return last in _LESSER
    first, second = reading.periods  # "X in A than in B": the change runs forward in time
    first_later = _when(first, glossary) > _when(second, glossary)
    return (last in _LESSER) == first_later


def _last_word(words: str) -> str:
    """The last word of an operation's words (``how much did X decrease`` -> ``decrease``);
    empty for none (a tool call names its operation, not its words)."""
    split = words.split()
    return split[-1] if split else ""


_SUBTRACTING = ("less", "minus")
_FALLING = frozenset(
    ("decrease", "decreased", "decline", "declined", "fall", "fell", "fallen", "calo", "calato",
     "calata", "diminuito", "diminuita", "drop", "dropped", "shrink", "shrank", "shrunk", "down",
     "reduction", "reduce", "reduced", "contraction", "contract", "contracted")
)  # fmt: skip
"""Words asking how much a figure fell (``how much did X decrease by``): the fall is given, the
earlier value less the later (a rise is then negative), as the asker counts it; not when a value
is negative (a plain change is given then)."""
_DIRECTED = _FALLING | frozenset(
    ("increase", "increased", "grow", "grew", "grown", "growth", "rise", "rose", "risen",
     "aumento", "aumentato", "aumentata", "crescita", "cresciuto", "cresciuta", "jump", "jumped",
     "climb", "climbed", "expand", "expanded", "up", "increment", "uplift")
)  # fmt: skip
"""Change words with a direction (a rise, a fall): over a span named back in time, which way
the asker counts is not known."""
_POINTS = ("absolute", "percentage point", "percent point", "change in percentage points")
_DIFFERENCE = ("difference", "differenza", "gap", "spread")
"""Words asking for the gap between two figures, with no direction: ``how much higher was X
than Y`` asks it too (:func:`_differing`)."""


def _differing(word: str) -> bool:
    """Whether an operation's words ask for an undirected difference (:data:`_DIFFERENCE`)."""
    return word in _DIFFERENCE or word.startswith("how much ")


_PERCENT_LIKE = re.compile(
    r"%|(?<!\w)(?:percent|percentage|rate|rates|ratio|margin|margins|yield)(?!\w)"
)


def _percent_like(builder: _Builder, unit: str | None, metric: str | None) -> bool:
    """Whether a fact of ``metric`` stored in ``unit`` may be a percentage: stored in percent,
    of a percent metric, or named like one (``Effective tax rate``, ``Operating margin (%)``:
    imported tables often store these without a unit)."""
    if unit == "%" or (metric and builder.kind(metric) is MetricKind.PERCENT):
        return True
    label = builder.glossary.metrics.terms[metric].label if metric else ""
    return bool(_PERCENT_LIKE.search(label.casefold()))


def _metrics_sum(
    builder: _Builder,
    metrics: Sequence[str],
    entity: str,
    period: str,
    store: FactStore,
    level: int,
    *,
    subtract: bool = False,
    undirected: bool = False,
) -> AnswerStatus:
    """``the sum of X and Y in 2012``: several metrics of one entity and period, added when
    every one is stored in the same unit, currency and scale; ``subtract``: ``X less Y`` (two
    metrics, in the order the question names them), the first minus the second;
    ``undirected``: named as ``the difference between X and Y``, which is asked back when
    negative (X less Y, or the gap by which Y exceeds X?)."""
    keys = [FactKey(metric, entity, period, builder.channel) for metric in metrics]
    builder.lookups += len(keys)
    stored = store.lookup_many(keys, max_level=level)
    refs = []
    for key in keys:
        fact = stored.get(key)
        if fact is None:
            builder.missing(key.metric, entity, period)
        else:
            ref = FactRef.of(key, fact)
            builder.fact_ref(ref)
            refs.append(ref)
    sign = f" {MINUS} " if subtract else " + "
    names = sign.join(builder.labels(m, entity)["metric"] for m in metrics)
    what = text(builder.locale, "difference" if subtract else "sum", metric=names, channel="",
                items=builder.period(period))  # fmt: skip
    if len(refs) < len(keys):
        reason = text(builder.locale, "reason_missing")
        builder.add(text(builder.locale, "not_computable", what=what, reason=reason), ())
        return AnswerStatus.REFUSED
    units = {(r.stored.unit, r.stored.currency) for r in refs}
    if len(units) > 1 or not scales_combine(refs):  # (two tables' unstated scales)
        reason = text(builder.locale, "reason_units" if len(units) > 1 else "reason_scale")
        builder.add(text(builder.locale, "not_computable", what=what, reason=reason), ())
        return AnswerStatus.REFUSED
    (unit, currency), scale = units.pop(), finest(r.stored.scale for r in refs)
    # "revenue (in millions) plus operating income (in thousands)": both at the finer scale
    values = [convert(r.stored.value, r.stored.scale, scale) for r in refs]
    if subtract and any(value < 0 for value in values):
        # "gross property less accumulated depreciation" with the depreciation stored as
        # -200: the table already subtracts it, and subtracting again would add it; "the
        # difference between cost of sales and revenue" with the cost stored as (300): -800
        # is no difference anyone means. Which sign is meant is asked.
        reason = text(builder.locale, "reason_negative_operand")
        builder.add(text(builder.locale, "not_computable", what=what, reason=reason), ())
        return AnswerStatus.REFUSED
    if len({_percent_like(builder, r.stored.unit, r.key.metric) for r in refs}) > 1:
        # revenue and a margin stored without a unit: an amount and a percentage
        reason = text(builder.locale, "reason_units")
        builder.add(text(builder.locale, "not_computable", what=what, reason=reason), ())
        return AnswerStatus.REFUSED
    total = values[0] - sum(values[1:], Decimal(0)) if subtract else sum(values, Decimal(0))
    shown_unit = unit_words(unit, currency, scale, builder.kind(metrics[0]), builder.locale)
    if subtract:  # 41.7 % less 20.0 %: 21.7 points
        shown_unit = _in_points(builder, shown_unit)
    builder.computed(
        FigureKind.CHANGE if subtract else FigureKind.SUM,
        what,
        sign.join(builder.number(value) for value in values),
        ExactNumber.of(total),
        shown_unit,
        refs,
        measure=(unit, currency, scale),
        exact=total,
    )
    if undirected and total < 0:
        # "the difference between deferred revenue and other liabilities" with 24,264 and
        # 38,476: -14,212 as written, or the gap of 14,212? Askers mean the gap as often.
        first, second = (builder.labels(m, entity)["metric"] for m in metrics)
        builder.add(text(builder.locale, "difference_of_metrics", first=first, second=second), ())
        return AnswerStatus.NEEDS_CLARIFICATION
    if not subtract and _unsigned(values):  # "the sum of interest expense and other losses"
        labels = {**builder.labels(metrics[0], entity), "metric": names}
        what_sum = text(builder.locale, "sign_what_sum")
        builder.add(text(builder.locale, "sign_as_stored", **labels, what=what_sum), ())
        return AnswerStatus.NEEDS_CLARIFICATION
    return AnswerStatus.ANSWERED


def _unit(builder: _Builder, result: CompareResult, metric: str) -> str:
    return unit_words(
        result.unit or "", result.currency or "", result.scale, builder.kind(metric), builder.locale
    )


def _measure(result: CompareResult) -> tuple[str | None, str | None, object]:
    return result.unit, result.currency, result.scale


def _item_label(builder: _Builder, entity: str, period: str, entities: int) -> str:
    shown = builder.period(period)
    return shown if entities == 1 else f"{builder.glossary.entities.terms[entity].label} {shown}"


def _in_points(builder: _Builder, unit: str) -> str:
    """``unit`` for a difference of two figures: a percentage's becomes percentage points
    (42.2 % less 40.0 % is 2.2 points, not a relative 2.2 %)."""
    percent = text(builder.locale, "percent")
    if unit == percent or unit.endswith(f" {percent}"):
        return unit.removesuffix(percent) + text(builder.locale, "percentage_points")
    return unit


def _steps(
    builder: _Builder,
    result: CompareResult,
    metric: str,
    *,
    percent_only: bool,
    falling: bool = False,
) -> None:
    """Each step's change and percentage change; ``falling``: as a decrease (earlier less
    later, over the earlier for the percentage)."""
    entities = len({row.entity for row in result.rows})
    unit = _in_points(builder, _unit(builder, result, metric))
    for step in result.steps:
        a, b = result.rows[step.earlier], result.rows[step.later]
        assert a.fact is not None and b.fact is not None
        labels = builder.labels(metric, a.entity if a.entity == b.entity else b.entity)
        labels.update(
            earlier=_item_label(builder, a.entity, a.period, entities),
            later=_item_label(builder, b.entity, b.period, entities),
        )
        across = "" if a.entity == b.entity else "_across"  # "from ACME FY2019 to BETA FY2019"
        what = text(builder.locale, ("decrease" if falling else "change") + across, **labels)
        if step.difference is None or a.value is None or b.value is None:
            reason = _apart_reason(builder, result)
            builder.add(text(builder.locale, "not_computable", what=what, reason=reason), ())
            continue
        x, y = builder.number(a.value), builder.number(b.value)
        difference = -step.difference if falling else step.difference
        if not percent_only:
            builder.computed(
                FigureKind.CHANGE,
                what,
                f"{x} {MINUS} {y}" if falling else f"{y} {MINUS} {x}",
                ExactNumber.of(difference),
                unit,
                (a.fact, b.fact),
                measure=_measure(result),
                exact=difference,
            )
        key = ("percent_decrease" if falling else "percent_change") + across
        what = text(builder.locale, key, **labels)
        if step.percent_change is None:
            reason = text(builder.locale, "reason_zero")
            builder.add(text(builder.locale, "not_computable", what=what, reason=reason), ())
            continue
        builder.computed(
            FigureKind.PERCENT_CHANGE,
            what,
            f"({x} {MINUS} {y}) / {x}" if falling else f"({y} {MINUS} {x}) / {x}",
            ExactNumber(-step.percent_change.value) if falling else step.percent_change,
            "%",
            (a.fact, b.fact),
            measure=("%", None, None),
        )


def _apart_reason(builder: _Builder, result: CompareResult) -> str:
    """Why a compared set's figures are not put together: a scale no source states and not
    one source (``reason_scale``), else different units."""
    facts = [row.fact for row in result.rows if row.fact is not None]
    return text(builder.locale, "reason_units" if scales_combine(facts) else "reason_scale")


def _average(builder: _Builder, result: CompareResult, metric: str, *, total: bool) -> bool:
    """The average (``total``: the sum) of a complete set of found rows; whether it could be
    computed (rows in different units or unstated scales cannot)."""
    found = [row for row in result.rows if row.fact is not None and row.value is not None]
    entities = len({row.entity for row in result.rows})
    items = ", ".join(_item_label(builder, r.entity, r.period, entities) for r in found)
    labels = builder.labels(metric, found[0].entity)
    what = text(builder.locale, "sum" if total else "average", items=items, **labels)
    if result.average is None or (total and result.total is None):  # a rate has no sum
        reason = _apart_reason(builder, result)
        builder.add(text(builder.locale, "not_computable", what=what, reason=reason), ())
        return False
    values = " + ".join(builder.number(row.value) for row in found if row.value is not None)
    inputs = [row.fact for row in found if row.fact is not None]
    unit = _unit(builder, result, metric)
    if total:
        assert result.total is not None  # checked above
        builder.computed(
            FigureKind.SUM,
            what,
            values,
            ExactNumber.of(result.total),
            unit,
            inputs,
            measure=_measure(result),
            exact=result.total,
        )
        return True
    builder.computed(
        FigureKind.AVERAGE,
        what,
        f"({values}) / {len(found)}",
        result.average,
        unit,
        inputs,
        measure=_measure(result),
    )
    return True


def _ratio(
    builder: _Builder,
    reading: QuestionReading,
    entities: list[str],
    periods: list[str],
    store: FactStore,
    principal: Principal,
    level: int,
) -> AnswerStatus | FiguresPart:
    """A share (``X as a percentage of Y``) or a ratio (``ratio of X to Y``) of two metrics, or
    of one metric for two entities, per period; or, for a ratio, of one metric and entity in two
    periods, in the order the question names them (``the ratio of the 2016 hedged gallons to
    2017``)."""
    percent = reading.operation is Operation.SHARE
    metrics = list(reading.metrics)
    # "the ratio of total debt to leases" and "total X as a percentage of Y" say their order;
    # "what proportion of X is the total" may name the part first
    ordered = reading.operation_word in _RATIO_WORDS or reading.operation_word.startswith("as a ")
    total_first = (
        not ordered and _is_total(builder, metrics[0]) and not _is_total(builder, metrics[-1])
    )
    if len(metrics) == 2 and (reading.whole_first or total_first):
        metrics.reverse()  # "what percentage of (total) X is Y": X is the whole
    channel = builder.channel
    pairs: list[tuple[FactKey, FactKey]]
    if len(metrics) >= 2:  # each entity's own share ("X as a percentage of Y for A and B")
        pairs = [
            (
                FactKey(metrics[0], entity, p, channel),
                FactKey(metrics[1], entity, p, channel),
            )
            for entity in entities
            for p in periods
        ]
    elif len(entities) >= 2:
        # "what percentage of BETA's revenue was ACME's": BETA's is the whole
        part, whole = entities[1::-1] if reading.whole_first else entities[:2]
        pairs = [
            (FactKey(metrics[0], part, p, channel), FactKey(metrics[0], whole, p, channel))
            for p in periods
        ]
    elif not percent and len(reading.periods) == 2 and len(set(reading.periods)) == 2:
        # a share names its whole ("as a percentage of revenue"): one metric over two years
        # is only read as a ratio ("the ratio of X in 2016 to 2017")
        first, second = (FactKey(metrics[0], entities[0], p, channel) for p in reading.periods)
        pairs = [(first, second)]
    else:  # the examples: the entity's metrics the asker may see, never another's names
        terms = builder.glossary.metrics.terms
        visible = store.metrics_of(entities[0], max_level=level)
        known = [(code, terms[code].label) for code in visible if code in terms]
        label = terms[metrics[0]].label
        return _clarify(
            text(builder.locale, "needs_two_metrics", metric=label, examples=_examples(known))
        )
    _check_items(len(pairs))
    part_in_whole = percent and not ordered and not reading.operation_word.startswith("as a ")
    answered = False
    mixed = False
    for numerator, denominator in pairs:
        builder.lookups += 2
        result = ratio(
            store, numerator=numerator, denominator=denominator, percent=percent, max_level=level
        )
        computed = _ratio_sentence(builder, result, part_in_whole=part_in_whole)
        answered |= computed
        top, bottom = result.numerator_fact, result.denominator_fact
        if computed and top is not None and bottom is not None:
            negative = top if top.value < 0 else bottom if bottom.value < 0 else None
            if negative is not None and (top.value < 0) != (bottom.value < 0) and top.value:
                name = builder.labels(negative.metric, negative.entity)["metric"]
                mixed |= (
                    _OUTFLOW_NAME.search(name) is not None
                    and _SIGNED_NAME.search(name) is None
                    and not any(  # negative in every period: the table's way to show it
                        f.value > 0
                        for f in store.scan(
                            max_level=level, metric=negative.metric, entity=negative.entity
                        )
                    )
                )
    if answered and mixed:
        # "what percentage of revenue was cost of sales" with the cost stored as (600): -60 %
        # as stored, or 60 % from the sizes? A table's sign is its presentation
        builder.add(text(builder.locale, "sign_mixed"), ())
        return AnswerStatus.NEEDS_CLARIFICATION
    return AnswerStatus.ANSWERED if answered else AnswerStatus.REFUSED


_MOVEMENT_HEADING_RE = re.compile(
    r"\bchanges?\s+in\s+(?:(?:operating|other)\s+)?(?:assets|liabilities|working\s+capital)\b"
    r"|\(\s*(?:increase|decrease)\s*\)\s*(?:increase|decrease)\b"
    r"|\b(?:increase|decrease)\s*\(\s*(?:increase|decrease)\s*\)",
    re.IGNORECASE,
)
_MOVEMENT_NAME_RE = re.compile(
    r"^\W*(?:\(\s*(?:increase|decrease)\s*\)\s*(?:increase|decrease)"
    r"|(?:increase|decrease)\s*\(\s*(?:increase|decrease)\s*\))\s+in\b",
    re.IGNORECASE,
)
"""A heading over balances that says its figures are their movements over each period
(``Changes in operating assets and liabilities:``, ``(Increase) decrease in:``), or a row so
named (``(Increase) decrease in receivables``); not a roll-forward's heading (``Change in
benefit obligation``), whose rows are each period's own flows (``Interest cost``), nor a flow
named a change (``Change in valuation allowance``, ``Net change in cash``), nor a subtotal
after the heading's rows (``Net cash provided by operating activities``: :data:`_SUBTOTAL_RE`)."""
_SUBTOTAL_RE = re.compile(
    r"^\W*(?:net\s+cash|total\b|cash\s+(?:generated|provided|used|flows?)\b)|\bactivities\b",
    re.IGNORECASE,
)


def _movement_heading(builder: _Builder, result: CompareResult, metric: str) -> str | None:
    """The heading or name under which ``result``'s facts are movements, if any."""
    term = builder.glossary.metrics.terms.get(metric)
    label = term.label if term is not None else metric
    if _MOVEMENT_NAME_RE.search(label):
        return label
    if _SUBTOTAL_RE.search(label):
        return None  # the subtotal after "Changes in ...:" rows is a figure of its own
    for row in result.rows:
        heading = locator_heading(row.fact.locator or "") if row.fact is not None else None
        if heading is not None and _MOVEMENT_HEADING_RE.search(heading):
            return heading
    return None


_RATIO_WORDS = ("ratio", "rapporto")
_OUTFLOW_NAME = re.compile(
    r"\b(?:costs?|expenses?|expenditures?|charges?|tax(?:es)?|depreciation|amortization"
    r"|payments?|purchases?|repurchases?|dividends|interest|capex)\b",
    re.IGNORECASE,
)
_SIGNED_NAME = re.compile(
    r"\b(?:income(?!\s+tax)|profits?|earnings|loss(?:es)?|gains?|margins?|benefits?|surplus|deficit"
    r"|change|net|deferred|credits?)\b",
    re.IGNORECASE,
)
"""A row whose figures are outflows (``Cost of sales``, ``Interest expense``): a table may
show them negative, a sign of presentation; a row that may be either sign by what it is
(``Net income (loss)``, ``Income tax benefit``) is negative in earnest."""


def _is_total(builder: _Builder, metric: str) -> bool:
    """Whether the metric's label says it is a total (``Total assets``)."""
    return "total" in builder.glossary.metrics.terms[metric].label.casefold().split()


def _ratio_sentence(builder: _Builder, result: RatioResult, *, part_in_whole: bool) -> bool:
    """One ratio or share and its facts; ``part_in_whole``: the question asks for a part's
    share of a whole (``the percentage of X in the total Y``), not for ``X as a percentage of
    Y``, which says the order itself and may exceed 100 %."""
    for key, fact in (
        (result.numerator, result.numerator_fact),
        (result.denominator, result.denominator_fact),
    ):
        if fact is None:
            builder.missing(key.metric, key.entity, key.period)
        else:
            builder.fact_ref(fact)

    def name(key: FactKey) -> str:
        labels = builder.labels(key.metric, key.entity)
        named = f"{labels['entity']} {labels['metric']}{labels['channel']}"
        return named if key.period == UNDATED else f"{named} {key.period}"

    kind = FigureKind.SHARE if result.percent else FigureKind.RATIO
    what = text(
        builder.locale,
        kind.value,
        numerator=name(result.numerator),
        denominator=name(result.denominator),
    )
    if result.status is not RatioStatus.FOUND or result.value is None:
        if result.status is RatioStatus.NOT_COMPUTABLE:
            reason = text(builder.locale, f"reason_{result.reason}")
            builder.add(text(builder.locale, "not_computable", what=what, reason=reason), ())
        return False
    top, bottom = result.numerator_fact, result.denominator_fact
    assert top is not None and bottom is not None
    part_of_whole = result.percent and part_in_whole and top.metric != bottom.metric
    if part_of_whole and abs(result.value.value) > 100:
        # "the percentage of X in the total Y" is at most the whole: a part above it in size
        # (a loss of 60 is no -1,667 % share of revenue) means the question's part and whole
        # were not told apart (which one is the total?)
        reason = text(builder.locale, "reason_part_exceeds_whole")
        builder.add(text(builder.locale, "not_computable", what=what, reason=reason), ())
        return False
    expression = f"{builder.number(top.value)} / {builder.number(bottom.value)}"
    if top.scale != bottom.scale:
        expression += f" ({top.scale.value} / {bottom.scale.value})"
    builder.computed(
        kind,
        what,
        expression,
        result.value,
        "%" if result.percent else "",
        (top, bottom),
        measure=("%", None, None) if result.percent else ("", None, None),
    )
    return True


_THRESHOLD_SCALES = {
    "thousand": Scale.THOUSAND, "thousands": Scale.THOUSAND, "k": Scale.THOUSAND,
    "million": Scale.MILLION, "millions": Scale.MILLION, "m": Scale.MILLION,
    "billion": Scale.BILLION, "billions": Scale.BILLION, "bn": Scale.BILLION, "b": Scale.BILLION,
}  # fmt: skip


def _select(
    builder: _Builder,
    reading: QuestionReading,
    entities: list[str],
    periods: list[str],
    store: FactStore,
    principal: Principal,
    level: int,
) -> AnswerStatus | FiguresPart:
    """``which year`` / ``how many years``: the periods of the metric (those named, else every
    stored one of its kind) that the criterion selects, from their stored values. Every period
    considered must have a fact, and the values one unit; otherwise nothing is chosen. Two
    metrics are asked back: which one's values decide is not said."""
    if len(reading.metrics) > 1:  # "the trade receivables with up to three months of age"
        names = ", ".join(builder.glossary.metrics.terms[m].label for m in reading.metrics)
        return _clarify(text(builder.locale, "one_metric_select", metrics=names))
    selection = reading.selection or Selection(Pick.ALL)
    metric, entity = reading.metrics[0], entities[0]
    key = FactKey(metric, entity, "", builder.channel)
    if len(periods) < 2:  # "in which year": among years, though months are stored later
        kind = _KIND_WORDS.get(_last_word(reading.operation_word).rstrip("s"))
        within = periods[0] if periods and kind not in (None, PeriodKind.YEAR) else None
        periods = stored_periods(builder.glossary, store, key, level, kind=kind)
        if within is not None:  # "which quarter of 2019": the quarters of 2019 only
            month = builder.glossary.fiscal_year_start_month
            first, last = parse_period(within, None, month).date_range(month)
            periods = [
                label
                for label in periods
                if first <= parse_period(label, None, month).date_range(month)[0] <= last
            ]
    if not periods:
        builder.add(text(builder.locale, "no_period"), ())
        return AnswerStatus.REFUSED
    _check_items(len(periods))
    result = _compare_shown(builder, store, metric, [(entity, p) for p in periods], level)
    labels = builder.labels(metric, entity)
    if selection.pick is Pick.UNREAD:  # "exceed 1 000": never read as 1
        what = text(builder.locale, "select_unread", **labels)
        unread = "reason_threshold_range" if selection.bounds else "reason_threshold_unread"
        reason = text(builder.locale, unread)
        builder.add(text(builder.locale, "not_computable", what=what, reason=reason), ())
        return AnswerStatus.REFUSED
    message = f"select_{selection.pick.value}" + ("_or_equal" if selection.inclusive else "")
    what = text(builder.locale, message, **labels)
    values = [row.value for row in result.rows]
    if len(values) == 1 and selection.pick is not Pick.ALL:
        # "in which year was X less than 500" with one year stored (a dash in the other)
        reason = text(builder.locale, "reason_one_period")
        builder.add(text(builder.locale, "not_computable", what=what, reason=reason), ())
        return AnswerStatus.REFUSED
    facts = [row.fact for row in result.rows if row.fact is not None]
    apart = not scales_combine(facts)  # two sources' unstated scales: no order between them
    if (
        any(v is None for v in values)
        or apart
        or (result.scale is None and selection.pick is not Pick.ALL)
    ):
        reason = (
            text(builder.locale, "reason_missing")
            if None in values
            else _apart_reason(builder, result)
        )
        builder.add(text(builder.locale, "not_computable", what=what, reason=reason), ())
        return AnswerStatus.REFUSED
    found = [(row.period, row.value) for row in result.rows if row.value is not None]
    by_size = _by_size(selection, found)
    if by_size is not None:
        # "the greater foreign exchange movement" over -1.5 and -4.2, or "the largest net
        # loss" over (100), (40) and 0: the highest value is not the largest in size; which
        # one is meant is asked, both are named
        pick, size = (text(builder.locale, f"{k}_{selection.pick.value}") for k in ("pick", "size"))
        by_value = ", ".join(_chosen(selection, found, result.scale) or ())
        words = {"pick": pick, "size": size, "by_value": by_value, "by_size": ", ".join(by_size)}
        builder.add(text(builder.locale, "select_negative", **labels, **words), ())
        return AnswerStatus.NEEDS_CLARIFICATION
    sized = _threshold_by_size(selection, found, result.scale)
    if sized is not None:
        # "how many years did cost of sales exceed 650" over (700), (600), (800): in value
        # none is above 650, in size two are; which one is meant is asked, both are named
        value_side, size_side = (
            ", ".join(chosen) or text(builder.locale, "no_period_selected") for chosen in sized
        )
        side = text(builder.locale, f"side_{selection.pick.value}")
        words = {"side": side, "by_value": value_side, "by_size": size_side}
        builder.add(text(builder.locale, "select_negative_threshold", **labels, **words), ())
        return AnswerStatus.NEEDS_CLARIFICATION
    if _in_whole_units(selection, result.scale):
        # "exceed $75,000,000" over figures in millions: 75 million, or 75,000,000 million?
        assert selection.threshold is not None and result.scale is not None
        words = {
            "threshold": format_number(selection.threshold, builder.locale),
            "scale": unit_words("", "", result.scale, MetricKind.NUMBER, builder.locale),
        }
        builder.add(text(builder.locale, "threshold_units", **labels, **words), ())
        return AnswerStatus.NEEDS_CLARIFICATION
    chosen = _chosen(selection, found, result.scale)
    if chosen is None:
        reason = text(builder.locale, "reason_scale_not_stated")
        builder.add(text(builder.locale, "not_computable", what=what, reason=reason), ())
        return AnswerStatus.REFUSED
    inputs = tuple(row.fact for row in result.rows if row.fact is not None)
    markers = tuple(builder.markers[fact.key] for fact in inputs)
    named = ", ".join(chosen) if chosen else text(builder.locale, "no_period_selected")
    if reading.operation is Operation.COUNT_PERIODS:
        sentence = text(
            builder.locale, "select_count", what=what, count=len(chosen), total=len(found),
            periods=named,
        )  # fmt: skip
        figure = Figure(
            FigureKind.COUNT, sentence, markers, value=ExactNumber.of(len(chosen)),
            expression=f"count of {len(found)}", inputs=inputs, periods=tuple(chosen),
        )  # fmt: skip
    else:
        sentence = f"{what}: {named}."
        figure = Figure(
            FigureKind.PERIODS, sentence, markers, expression=selection.pick.value,
            inputs=inputs, periods=tuple(chosen),
        )  # fmt: skip
    builder.add(sentence, markers, figure)
    return AnswerStatus.ANSWERED


def _unsigned(values: Sequence[Decimal]) -> bool:
    """Whether ``values`` are negative and zero only (an expense shown as ``(6,442)``): a
    figure computed from them depends on the sign the asker counts them in."""
    return any(v < 0 for v in values) and all(v <= 0 for v in values)


def _by_size(selection: Selection, found: Sequence[tuple[str, Decimal]]) -> list[str] | None:
    """The periods a highest / lowest pick gives by size (absolute value) when a value is
    negative and that differs from the pick by value; None otherwise (nothing to ask)."""
    if selection.pick not in (Pick.HIGHEST, Pick.LOWEST) or len(found) < 2:
        return None
    if not any(value < 0 for _, value in found):
        return None
    sizes = [abs(value) for _, value in found]
    best = (max if selection.pick is Pick.HIGHEST else min)(sizes)
    by_size = [period for (period, _), size in zip(found, sizes, strict=True) if size == best]
    by_value = _chosen(selection, found, None)
    return None if by_value is None or set(by_value) == set(by_size) else by_size


def _threshold_by_size(
    selection: Selection, found: Sequence[tuple[str, Decimal]], scale: Scale | None
) -> tuple[list[str], list[str]] | None:
    """For a positive threshold over values most of which are negative (an expense shown as
    ``(700)``, with perhaps one year's benefit), the periods picked by value and by size when
    the two differ; None otherwise (a figure mostly positive is compared by value)."""
    if selection.pick not in (Pick.ABOVE, Pick.BELOW) or selection.threshold is None:
        return None
    negative = sum(1 for _, value in found if value < 0)
    if selection.threshold <= 0 or negative * 2 <= len(found):
        return None  # a signed figure with a loss year ("net income above 10") is by value
    by_value = _chosen(selection, found, scale)
    by_size = _chosen(selection, [(period, abs(value)) for period, value in found], scale)
    if by_value is None or by_size is None or set(by_value) == set(by_size):
        return None
    return by_value, by_size


def _in_whole_units(selection: Selection, scale: Scale | None) -> bool:
    """Whether a threshold said with no scale word over figures stored in thousands, millions
    or billions reaches a million (``exceed $75,000,000``): written in whole units, it may be
    75 million; read in the stored scale, 75,000,000 million. Asked back rather than picked
    either way (``exceed 75`` is read in the stored scale, as the table writes it)."""
    return (
        selection.pick in (Pick.ABOVE, Pick.BELOW)
        and selection.threshold is not None
        and not selection.scale
        and scale in (Scale.THOUSAND, Scale.MILLION, Scale.BILLION)
        and abs(selection.threshold) >= _WHOLE_UNITS
    )


_WHOLE_UNITS = 1_000_000
"""A threshold from which a number said without a scale word over scaled figures may be in
whole units (``$5,000,000`` over thousands: 5,000 thousand, or 5,000,000 thousand?)."""


def _chosen(
    selection: Selection, found: Sequence[tuple[str, Decimal | None]], scale: Scale | None
) -> list[str] | None:
    """The periods ``selection`` picks among ``found`` (values at ``scale``); None when a
    threshold in a named scale meets values whose scale is not stated."""
    values = [(period, value) for period, value in found if value is not None]
    if selection.pick is Pick.ALL:
        return [period for period, _ in values]
    if selection.pick in (Pick.HIGHEST, Pick.LOWEST):
        best = (max if selection.pick is Pick.HIGHEST else min)(v for _, v in values)
        return [period for period, value in values if value == best] if len(values) > 1 else []
    assert selection.threshold is not None
    threshold = selection.threshold
    named = _THRESHOLD_SCALES.get((selection.scale or "").casefold())
    if named is not None:
        if scale in (None, Scale.ONE, Scale.UNKNOWN):
            return None
        threshold = threshold * named.multiplier / scale.multiplier
    above = selection.pick is Pick.ABOVE
    return [period for period, value in values if _beyond(value, threshold, above, selection)]


def _beyond(value: Decimal, threshold: Decimal, above: bool, selection: Selection) -> bool:
    """Whether ``value`` is on the asked side of ``threshold`` (equal counts when inclusive)."""
    if selection.inclusive and value == threshold:
        return True
    return value > threshold if above else value < threshold


_OPERATIONS: dict[Operation, _Operation] = {
    Operation.LOOKUP: _lookups,
    Operation.CHANGE: _compared,
    Operation.PERCENT_CHANGE: _compared,
    Operation.AVERAGE: _compared,
    Operation.SUM: _compared,
    Operation.WHICH_PERIODS: _select,
    Operation.COUNT_PERIODS: _select,
    Operation.SHARE: _ratio,
    Operation.RATIO: _ratio,
}
