"""``compare``: one metric over several entities and/or periods, a row per item.

Each row is ``found`` or ``not_found`` (a fact the asker may not see reads as missing). Between
consecutive found rows with the same unit: the exact difference, the percentage change
``(later - earlier) / earlier * 100`` and the ratio ``later / earlier`` (not computable when the
earlier value is zero). Over the found rows, when they share a unit: the exact sum, the average
and each row's share of the sum. Scales are converted to the finest among the found rows; nothing
is rounded except when shown, and the result says how.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from enum import StrEnum
from fractions import Fraction
from typing import Any

from ragspine.glossary import Glossary
from ragspine.graph.values import (
    ROUNDING_NOTE,
    ExactNumber,
    FactRef,
    Measure,
    convert,
    exact_difference,
    exact_sum,
    finest,
    is_rate,
    plain,
    scales_combine,
)
from ragspine.periods import UNDATED
from ragspine.stores.facts import FactStore
from ragspine.structured.facts import FactKey, Scale
from ragspine.structured.query import amount_words, render_amount


class RowStatus(StrEnum):
    FOUND = "found"
    NOT_FOUND = "not_found"


class SetStatus(StrEnum):
    """How far the set's sum and average go."""

    COMPLETE = "complete"
    PARTIAL = "partial"  # some rows were not found: the figures cover the found ones
    NOT_COMPUTABLE = "not_computable"  # no row found, or found rows in different units


@dataclass(frozen=True, slots=True)
class CompareRow:
    """One item: its fact when found; ``value`` is at the comparison's scale."""

    entity: str
    period: str
    status: RowStatus
    fact: FactRef | None
    value: Decimal | None
    share: ExactNumber | None  # percent of the set's sum, when the sum is complete

    def to_dict(self) -> dict[str, Any]:
        return {
            "entity": self.entity,
            "period": self.period,
            "status": self.status.value,
            "value": None if self.value is None else plain(self.value),
            "share_percent": None if self.share is None else self.share.to_dict(),
            "fact": None if self.fact is None else self.fact.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class CompareStep:
    """From one found row to the next found row (indexes into ``rows``)."""

    earlier: int
    later: int
    difference: Decimal | None
    percent_change: ExactNumber | None
    ratio: ExactNumber | None
    note: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "from": self.earlier,
            "to": self.later,
            "difference": None if self.difference is None else plain(self.difference),
            "percent_change": None
            if self.percent_change is None
            else self.percent_change.to_dict(),
            "ratio": None if self.ratio is None else self.ratio.to_dict(),
            "note": self.note,
        }


@dataclass(frozen=True, slots=True)
class CompareResult:
    """Rows, the steps between them, and the set's sum and average."""

    metric: str
    channel: str
    rows: tuple[CompareRow, ...]
    steps: tuple[CompareStep, ...]
    status: SetStatus
    unit: str | None
    currency: str | None
    scale: Scale | None
    total: Decimal | None
    average: ExactNumber | None
    found: int
    note: str
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "compare",
            "metric": self.metric,
            "channel": self.channel,
            "status": self.status.value,
            "unit": self.unit,
            "currency": self.currency,
            "scale": None if self.scale is None else self.scale.value,
            "rows": [row.to_dict() for row in self.rows],
            "steps": [step.to_dict() for step in self.steps],
            "sum": None if self.total is None else plain(self.total),
            "average": None if self.average is None else self.average.to_dict(),
            "found": self.found,
            "note": self.note,
            "rounding": ROUNDING_NOTE,
            "text": self.text,
        }


def compare(
    glossary: Glossary,
    store: FactStore,
    *,
    metric: str,
    items: Sequence[tuple[str, str]],
    channel: str,
    max_level: int,
) -> CompareResult:
    """Compare ``metric`` over ``items`` ((entity, period) pairs, already resolved codes)."""
    keys = [FactKey(metric, entity, period, channel) for entity, period in items]
    stored = store.lookup_many(keys, max_level=max_level)
    facts = [FactRef.of(key, stored[key]) if key in stored else None for key in keys]
    found = [fact for fact in facts if fact is not None]
    combinable = scales_combine(found)  # a scale no source states converts to no other
    scale: Scale | None = None  # no common scale: none is claimed
    values: list[Decimal | None] = [None if f is None else f.value for f in facts]
    if combinable:
        scale = finest(fact.scale for fact in found)
        values = [None if f is None else convert(f.value, f.scale, scale) for f in facts]
    measures = {fact.measure for fact in found}
    steps = _steps(facts, values, combinable)

    total: Decimal | None = None
    average: ExactNumber | None = None
    if not found:
        status, note = SetStatus.NOT_COMPUTABLE, "no item has a visible fact"
    elif len(measures) > 1:
        status = SetStatus.NOT_COMPUTABLE
        note = f"found items have different units ({', '.join(sorted(map(str, measures)))})"
    elif not combinable:
        status, note = SetStatus.NOT_COMPUTABLE, _UNSTATED_NOTE
    elif _mixes_undated(found):
        status = SetStatus.NOT_COMPUTABLE
        note = "an undated figure has no place in time: not added to dated ones"
    else:
        total = exact_sum(v for v in values if v is not None)
        average = ExactNumber(Fraction(total) / len(found))
        if len(found) < len(items):
            status = SetStatus.PARTIAL
            note = "sum and average cover the found items only"
        else:
            status, note = SetStatus.COMPLETE, ""
        if is_rate(glossary.metrics.terms[metric].kind, (m.unit for m in measures)):
            total = None
            note = "; ".join(filter(None, [note, "rates are not added up: no sum"]))
    rows = tuple(
        CompareRow(
            entity,
            period,
            RowStatus.NOT_FOUND if fact is None else RowStatus.FOUND,
            fact,
            value,
            _share(value, total) if status is SetStatus.COMPLETE and total else None,
        )
        for (entity, period), fact, value in zip(items, facts, values, strict=True)
    )
    measure = next(iter(measures)) if len(measures) == 1 else None
    result = CompareResult(
        metric,
        channel,
        rows,
        steps,
        status,
        None if measure is None else measure.unit,
        None if measure is None else measure.currency,
        scale if found else None,
        total,
        average,
        len(found),
        note,
        "",
    )
    return _with_text(result, glossary, measure)


def _share(value: Decimal | None, total: Decimal | None) -> ExactNumber | None:
    if value is None or total is None or not total:
        return None
    return ExactNumber(Fraction(value) / Fraction(total) * 100)


def _mixes_undated(found: Sequence[FactRef]) -> bool:
    """Whether ``found`` holds an undated figure beside a dated one."""
    periods = {fact.period for fact in found}
    return UNDATED in periods and len(periods) > 1


_UNSTATED_NOTE = (
    "the scale of some found items is not stated in their source: they are put on no common "
    "scale with figures of another source"
)


def _steps(
    facts: list[FactRef | None], values: list[Decimal | None], combinable: bool = True
) -> tuple[CompareStep, ...]:
    found = [i for i, fact in enumerate(facts) if fact is not None]
    steps = []
    for earlier, later in itertools.pairwise(found):
        a, b = facts[earlier], facts[later]
        va, vb = values[earlier], values[later]
        assert a is not None and b is not None and va is not None and vb is not None
        if a.entity != b.entity and a.period != b.period:
            continue  # ACME's 2019 to BETA's 2018: no change of anything
        if not combinable:
            steps.append(CompareStep(earlier, later, None, None, None, _UNSTATED_NOTE))
            continue
        if _mixes_undated((a, b)):
            note = "an undated figure has no place in time: no change to or from it"
            steps.append(CompareStep(earlier, later, None, None, None, note))
            continue
        if a.measure != b.measure:
            steps.append(
                CompareStep(
                    earlier,
                    later,
                    None,
                    None,
                    None,
                    f"different units ({a.measure} vs {b.measure})",
                )
            )
            continue
        difference = exact_difference(vb, va)
        if not va:
            steps.append(
                CompareStep(
                    earlier,
                    later,
                    difference,
                    None,
                    None,
                    "percentage change and ratio not computable: the earlier value is zero",
                )
            )
            continue
        ratio = Fraction(vb) / Fraction(va)
        steps.append(
            CompareStep(
                earlier,
                later,
                difference,
                ExactNumber((ratio - 1) * 100),
                ExactNumber(ratio),
                "",
            )
        )
    return tuple(steps)


def _with_text(result: CompareResult, glossary: Glossary, measure: Measure | None) -> CompareResult:
    metric = glossary.metrics.terms[result.metric]

    def amount(value: Decimal) -> str:
        assert result.scale is not None
        unit = measure.unit if measure else ""
        currency = measure.currency if measure else ""
        return render_amount(value, unit, currency, result.scale, metric.kind)

    lines = []
    for row in result.rows:
        name = f"{glossary.entities.terms[row.entity].label} {row.period}"
        if row.fact is None:
            lines.append(f"{name}: not found (no visible fact)")
        else:
            lines.append(f"{name}: {row.fact.amount(metric.kind)}")
    for step in result.steps:
        a, b = result.rows[step.earlier], result.rows[step.later]
        head = f"{a.entity} {a.period} -> {b.entity} {b.period}"
        if step.difference is None:
            lines.append(f"{head}: {step.note}")
            continue
        part = f"{head}: difference {amount(step.difference)}"
        if step.percent_change is not None:
            part += f", change {step.percent_change.text('%')}"
        if step.ratio is not None:
            part += f", ratio {step.ratio.text()}"
        lines.append(part + (f" ({step.note})" if step.note else ""))
    words = ""
    if measure is not None and result.scale is not None:
        words = " ".join(amount_words(measure.unit, measure.currency, result.scale, metric.kind))
    if result.average is not None:  # "average 810.25 thousand US dollars"
        tail = f" ({result.note})" if result.note else ""
        total = "" if result.total is None else f"sum {amount(result.total)}, "
        lines.append(
            f"{total}average {result.average.text(words)} over {result.found} found item(s){tail}"
        )
    elif result.note:
        lines.append(f"no sum or average: {result.note}")
    return replace(result, text="\n".join(lines))
