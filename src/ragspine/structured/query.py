"""``query_metric``: one fact by its four keys, normalized through the glossary, never guessed."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from enum import StrEnum
from functools import lru_cache
from typing import Any

from ragspine.errors import PeriodError, quote_input
from ragspine.glossary import DEFAULT_CHANNEL, Glossary, MetricKind
from ragspine.periods import PERIOD_EXAMPLES, UNDATED, parse_period, suggest_periods
from ragspine.security import Principal, max_visible_level
from ragspine.stores.facts import FactStore
from ragspine.structured.facts import FactKey, Scale

_level_of = lru_cache(maxsize=256)(max_visible_level)
"""``max_visible_level`` remembered per principal: it costs about 3 us, a fifth of a lookup."""

MAX_RAW_CHARS = 1000
"""``MetricResult.raw`` keeps an unrecognized input up to this many characters (then ``…``)."""


class MetricStatus(StrEnum):
    FOUND = "found"
    NOT_FOUND = "not_found"
    UNRECOGNIZED_PARAM = "unrecognized_param"


@dataclass(frozen=True, slots=True)
class MetricResult:
    """The outcome of one lookup; numbers are present only when ``status`` is ``found``."""

    status: MetricStatus
    text: str
    metric: str | None = None
    entity: str | None = None
    period: str | None = None
    channel: str | None = None
    value: Decimal | None = None
    unit: str | None = None
    currency: str | None = None
    scale: Scale | None = None
    source_doc_id: str | None = None
    locator: str | None = None
    valid_as_of: str | None = None
    param: str | None = None
    raw: str | None = None
    suggestions: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping; the value is a decimal string, never a float."""
        data: dict[str, Any] = {
            "status": self.status.value,
            "value": None if self.value is None else format(self.value, "f"),
            "unit": self.unit,
            "currency": self.currency,
            "scale": None if self.scale is None else self.scale.value,
            "metric": self.metric,
            "entity": self.entity,
            "period": self.period,
            "channel": self.channel,
            "source_doc_id": self.source_doc_id,
            "locator": self.locator,
            "valid_as_of": self.valid_as_of,
            "text": self.text,
        }
        if self.status is MetricStatus.UNRECOGNIZED_PARAM:
            data.update(param=self.param, raw=self.raw, suggestions=list(self.suggestions))
        return data


_CURRENCY_NAMES = {
    "USD": "US dollars",
    "EUR": "euros",
    "GBP": "pounds sterling",
    "JPY": "yen",
    "CNY": "yuan",
    "CHF": "Swiss francs",
    "CAD": "Canadian dollars",
    "AUD": "Australian dollars",
    "INR": "rupees",
    "SEK": "Swedish kronor",
}


def format_value(value: Decimal) -> str:
    """Thousands separators, no scientific notation, digits exactly as stored."""
    return format(value, ",f")


def currency_name(currency: str) -> str:
    """The spelled-out name of a currency code (``USD`` -> ``US dollars``), else the code."""
    return _CURRENCY_NAMES.get(currency.upper(), currency)


def render_amount(value: Decimal, unit: str, currency: str, scale: Scale, kind: MetricKind) -> str:
    """The value with its scale, currency and unit spelled out."""
    return " ".join([format_value(value), *amount_words(unit, currency, scale, kind)])


def amount_words(unit: str, currency: str, scale: Scale, kind: MetricKind) -> list[str]:
    """What follows a value in :func:`render_amount` (``thousand``, ``US dollars``, ...)."""
    parts: list[str] = []
    if scale not in (Scale.ONE, Scale.UNKNOWN):
        parts.append(scale.value)
    if kind is MetricKind.PERCENT or unit in {"%", "percent"}:
        parts.append("percent")
    elif currency:
        parts.append(currency_name(currency))
        if unit and unit.upper() != currency.upper():
            parts.append(unit)
    elif unit:
        parts.append(unit)
    if scale is Scale.UNKNOWN:
        parts.append(UNSTATED_SCALE)
    return parts


UNSTATED_SCALE = "(scale not stated in the source)"
"""What follows a value whose source states no scale (:attr:`Scale.UNKNOWN`)."""


UNDATED_PHRASE = "an undated table"
"""How an English sentence names the undated period (``... Goodwill in an undated table was``)."""


def period_phrase(period_label: str) -> str:
    """A normalized period as a sentence names it (``FY2024``; :data:`UNDATED_PHRASE`)."""
    return UNDATED_PHRASE if period_label == UNDATED else period_label


def not_found_text(period_label: str) -> str:
    """The fixed refusal: no digit except those of the normalized period label."""
    return (
        f"No stored fact matches this metric, entity and channel for "
        f"{period_phrase(period_label)}, so no figure is given."
    )


def query_metric(
    glossary: Glossary,
    store: FactStore,
    metric: str,
    entity: str,
    period: str,
    channel: str | None = None,
    *,
    principal: Principal,
    reference_date: date | None = None,
) -> MetricResult:
    """Look up one fact; see :class:`MetricStatus` for the three outcomes.

    Metric, entity and channel match glossary spellings in their matching form
    (:func:`ragspine.analysis.match_key`); suggestions for an unrecognized one come from the
    glossary or the period grammar only, never from stored facts.
    """
    metric_code = glossary.metrics.resolve(metric)
    if metric_code is None:
        return _unrecognized("metric", metric, glossary.metrics.suggest(metric))
    entity_code = glossary.entities.resolve(entity)
    if entity_code is None:
        return _unrecognized("entity", entity, glossary.entities.suggest(entity))
    channel_code = DEFAULT_CHANNEL if channel is None else glossary.channels.resolve(channel)
    if channel_code is None:
        return _unrecognized("channel", channel or "", glossary.channels.suggest(channel or ""))
    reference = reference_date or date.today()
    try:
        period_label = parse_period(period, reference, glossary.fiscal_year_start_month).label
    except PeriodError:
        return _unrecognized("period", period, suggest_periods(period, reference))

    stored = store.lookup(
        FactKey(metric_code, entity_code, period_label, channel_code),
        max_level=_level_of(principal),
    )
    if stored is None:  # missing, or above the asker's level: one refusal (no oracle)
        return MetricResult(
            MetricStatus.NOT_FOUND,
            not_found_text(period_label),
            metric_code,
            entity_code,
            period_label,
            channel_code,
        )
    metric_term = glossary.metrics.terms[metric_code]
    amount = render_amount(
        stored.value, stored.unit, stored.currency, stored.scale, metric_term.kind
    )
    channel_phrase = (
        ""
        if channel_code == DEFAULT_CHANNEL
        else f" ({glossary.channels.terms[channel_code].label})"
    )
    text = (
        f"{glossary.entities.terms[entity_code].label}'s {metric_term.label}{channel_phrase} "
        f"in {period_phrase(period_label)} was {amount}. "
        f"Source: {_source_phrase(stored.source_doc_id, stored.locator)}."
    )
    return MetricResult(
        MetricStatus.FOUND,
        text,
        metric_code,
        entity_code,
        period_label,
        channel_code,
        stored.value,
        stored.unit,
        stored.currency,
        stored.scale,
        stored.source_doc_id,
        stored.locator,
        stored.valid_as_of,
    )


def _source_phrase(source_doc_id: str, locator: str) -> str:
    return locator if locator.startswith(source_doc_id) else f"{source_doc_id}, {locator}"


def _unrecognized(param: str, raw: str, suggestions: list[str]) -> MetricResult:
    """The refusal for an input the glossary or the period grammar does not know.

    ``text`` quotes at most 80 characters of the input; ``raw`` keeps it up to
    :data:`MAX_RAW_CHARS`.
    """
    if suggestions:
        hint = f" Known values close to it: {', '.join(suggestions[:3])}."
    elif param == "period":
        hint = f" Periods look like {', '.join(PERIOD_EXAMPLES)}."
    else:
        hint = ""
    bounded = raw if len(raw) <= MAX_RAW_CHARS else raw[:MAX_RAW_CHARS] + "…"
    return MetricResult(
        MetricStatus.UNRECOGNIZED_PARAM,
        f"RAGSpine does not recognize the {param} {quote_input(raw)}.{hint}",
        param=param,
        raw=bounded,
        suggestions=tuple(suggestions[:3]),
    )
