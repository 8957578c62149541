"""The composite answer: a figures part from the facts and an explanation part from the documents.

The two parts are built separately and merged here: fact sources first, then chunk sources, one
marker per fact or chunk (de-duplicated), each tagged with its channel. Narrative prose never
becomes a figure. The numeric guard runs again on every explanation sentence against the child
chunk it cites (a sentence whose numbers are not there is left out, and the answer says so), and
a sentence that speaks of a found fact's metric, entity and period with other numbers than the
stored value is flagged: the figures come from the stored fact only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from decimal import Decimal, InvalidOperation

from ragspine.answer.guard import (
    StatedValue,
    fact_magnitude,
    is_percent,
    numbers_in,
    unsupported_numbers,
)
from ragspine.answer.locale import Locale, format_amount, text
from ragspine.answer.question import read_question
from ragspine.answer.structured import FiguresPart
from ragspine.answer.types import Answer, CitedSentence, FigureKind, Source
from ragspine.glossary import Glossary
from ragspine.narrative.retrieve.snippets import Snippet
from ragspine.structured.query import MetricResult

_PERCENT_RE = re.compile(r"([0-9]+(?:[.,][0-9]+)*)\s*(?:%|percent|per\s+cento)", re.IGNORECASE)
_YEAR = re.compile(r"^(?:19|20)[0-9]{2}$")
_SCALES = tuple(Decimal(10) ** k for k in (-9, -6, -3, 0, 3, 6, 9))


@dataclass(frozen=True, slots=True)
class Explanation:
    """The explanation part after the guard, its markers moved after the fact sources."""

    sentences: tuple[CitedSentence, ...]
    sources: tuple[Source, ...]
    flags: tuple[str, ...]
    left_out: int


def _same_number(written: str, value: Decimal) -> bool:
    try:
        number = Decimal(written)
    except InvalidOperation:
        return False
    return any(number * scale == value for scale in _SCALES)


def contradictions(
    sentence: str, facts: Sequence[MetricResult], glossary: Glossary
) -> list[tuple[MetricResult, tuple[str, ...]]]:
    """The found facts ``sentence`` speaks of (their metric and period, and their entity or
    none) with numbers none of which is the stored value (at any scale), and those numbers.
    Years and, for a metric that is not a percentage, percentages are not compared."""
    reading = read_question(sentence, glossary)
    percents = {m.group(1).replace(",", "") for m in _PERCENT_RE.finditer(sentence)}
    found = []
    for fact in facts:
        if fact.metric not in reading.metrics or fact.period not in reading.periods:
            continue
        if reading.entities and fact.entity not in reading.entities:
            continue
        assert fact.value is not None and fact.metric is not None
        percent_metric = is_percent(glossary, fact.metric)
        numbers = tuple(
            n
            for n in numbers_in(sentence)
            if not _YEAR.match(n) and (percent_metric or n not in percents)
        )
        if numbers and not any(_same_number(n, fact.value) for n in numbers):
            found.append((fact, numbers))
    return found


def explanation(
    narrative: Answer,
    snippets: Sequence[Snippet],
    figures: FiguresPart,
    glossary: Glossary,
    locale: Locale,
) -> Explanation:
    """The narrative answer's sentences that pass the numeric guard against their cited child
    chunk (or a found fact's stored value), renumbered after ``figures``' sources, with a flag
    per contradicted fact."""
    children: dict[tuple[str | None, str | None], str] = {
        (s.library_id, s.chunk_id): s.text for s in snippets
    }
    by_marker = {source.marker: source for source in narrative.sources}
    facts = [
        f.result
        for f in figures.figures
        if f.kind is FigureKind.FACT and f.result is not None and f.result.value is not None
    ]
    values = frozenset(
        StatedValue(
            f.value, fact_magnitude(f.scale, f.unit, percent=is_percent(glossary, f.metric))
        )
        for f in facts
        if f.value is not None
    )
    start = len(figures.sources)
    renumbered: dict[tuple[str | None, str | None], int] = {}
    sources: list[Source] = []
    sentences: list[CitedSentence] = []
    flags: list[str] = []
    left_out = 0
    for sentence in narrative.sentences:
        cited = [by_marker[m] for m in sentence.markers if m in by_marker]
        evidence = [children.get((s.library_id, s.chunk_id)) for s in cited]
        if not cited or any(e is None for e in evidence):
            left_out += 1  # a sentence citing nothing it came with is never shown
            continue
        if unsupported_numbers(sentence.text, [e for e in evidence if e is not None], values):
            left_out += 1
            continue
        markers = []
        for source in cited:
            key = (source.library_id, source.chunk_id)
            if key not in renumbered:
                renumbered[key] = start + len(renumbered) + 1
                sources.append(replace(source, marker=renumbered[key]))
            markers.append(renumbered[key])
        sentences.append(CitedSentence(sentence.text, tuple(markers)))
        for fact, numbers in contradictions(sentence.text, facts, glossary):
            flags.append(_flag(fact, numbers, markers[0], glossary, locale))
    return Explanation(tuple(sentences), tuple(sources), tuple(dict.fromkeys(flags)), left_out)


def _flag(
    fact: MetricResult,
    numbers: tuple[str, ...],
    marker: int,
    glossary: Glossary,
    locale: Locale,
) -> str:
    assert fact.metric and fact.entity and fact.value is not None and fact.scale is not None
    metric = glossary.metrics.terms[fact.metric]
    amount = format_amount(
        fact.value, fact.unit or "", fact.currency or "", fact.scale, metric.kind, locale
    )
    return text(
        locale,
        "contradiction",
        marker=marker,
        numbers=", ".join(numbers),
        metric=metric.label,
        entity=glossary.entities.terms[fact.entity].label,
        period=fact.period,
        amount=amount,
    )
