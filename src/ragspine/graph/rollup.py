"""``roll_up``: a metric summed over the leaves of the entity (or channel) tree under one node.

The sum is exact; facts at different scales are converted to the finest of them; different units
or currencies are an error naming who uses which. Leaves without a visible fact make the result
``partial`` (or ``not_found`` when none has one) and are listed: the tree comes from the public
glossary, and a fact the asker may not see is read exactly like a missing one (the store applies
the asker's level), so the result never tells the two apart. Every entity between the node and
its leaves shows its own reported fact, when stored and visible, beside the computed subtotal.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from decimal import Decimal
from enum import StrEnum
from typing import Any

from ragspine.errors import QueryError
from ragspine.glossary import Glossary
from ragspine.graph.hierarchy import Hierarchy
from ragspine.graph.values import (
    ROUNDING_NOTE,
    FactRef,
    check_one_measure,
    check_scales,
    convert,
    exact_difference,
    exact_sum,
    finest,
    is_rate,
    plain,
)
from ragspine.stores.facts import FactStore
from ragspine.structured.facts import FactKey, Scale
from ragspine.structured.query import render_amount


class RollUpStatus(StrEnum):
    COMPLETE = "complete"
    PARTIAL = "partial"
    NOT_FOUND = "not_found"


class RollUpAxis(StrEnum):
    """Which glossary tree a roll-up sums over."""

    ENTITY = "entity"
    CHANNEL = "channel"


NOT_VISIBLE_OR_MISSING = "some children are not visible or missing"
"""What a roll-up says about leaves it has no fact for: never which of the two."""


@dataclass(frozen=True, slots=True)
class RollUpNode:
    """One node of the tree: its computed subtotal and, beside it, its own reported fact.

    ``value`` is at the result's scale (a leaf: its fact converted). ``fact`` is a leaf's fact,
    or an inner node's own reported fact; ``difference`` is reported minus computed, given only
    when the subtotal is complete.
    """

    code: str
    status: RollUpStatus
    value: Decimal | None
    fact: FactRef | None
    difference: Decimal | None
    missing: tuple[str, ...]
    children: tuple[RollUpNode, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "status": self.status.value,
            "value": None if self.value is None else plain(self.value),
            "fact": None if self.fact is None else self.fact.to_dict(),
            "difference": None if self.difference is None else plain(self.difference),
            "missing": list(self.missing),
            "children": [child.to_dict() for child in self.children],
        }


@dataclass(frozen=True, slots=True)
class RollUpResult:
    """A roll-up: the exact sum, its status, the reported figure beside it, and lineage."""

    status: RollUpStatus
    axis: RollUpAxis
    metric: str
    entity: str
    period: str
    channel: str
    value: Decimal | None
    unit: str | None
    currency: str | None
    scale: Scale | None
    reported: FactRef | None
    difference: Decimal | None
    missing: tuple[str, ...]
    lineage: tuple[FactRef, ...]
    tree: RollUpNode
    text: str

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping; numbers are exact decimal strings."""
        return {
            "kind": "roll_up",
            "status": self.status.value,
            "axis": self.axis.value,
            "metric": self.metric,
            "entity": self.entity,
            "period": self.period,
            "channel": self.channel,
            "value": None if self.value is None else plain(self.value),
            "unit": self.unit,
            "currency": self.currency,
            "scale": None if self.scale is None else self.scale.value,
            "reported": None if self.reported is None else self.reported.to_dict(),
            "difference": None if self.difference is None else plain(self.difference),
            "missing": list(self.missing),
            "notice": NOT_VISIBLE_OR_MISSING if self.missing else None,
            "lineage": [fact.to_dict() for fact in self.lineage],
            "tree": self.tree.to_dict(),
            "rounding": ROUNDING_NOTE,
            "text": self.text,
        }


def roll_up(
    glossary: Glossary,
    tree: Hierarchy,
    store: FactStore,
    *,
    metric: str,
    entity: str,
    period: str,
    channel: str,
    max_level: int,
    axis: RollUpAxis = RollUpAxis.ENTITY,
) -> RollUpResult:
    """Sum ``metric`` over the leaves of ``tree`` under the node named by ``axis`` (``entity``
    or ``channel``), reading every fact in one batched lookup at the asker's ``max_level``.

    Codes are already resolved through the glossary.
    """
    term = glossary.metrics.terms[metric]
    if is_rate(term.kind, (term.unit,)):  # the glossary decides, not a fact
        over = "entities" if axis is RollUpAxis.ENTITY else "channels"
        raise QueryError(
            f"{term.label} is a rate (a percentage or a ratio): rates do not add up over "
            f"{over}; compare them instead ('ragspine graph compare'), or roll up the amounts "
            "they are computed from"
        )
    top = entity if axis is RollUpAxis.ENTITY else channel
    nodes = tree.subtree(top)
    if axis is RollUpAxis.ENTITY:
        keys = [FactKey(metric, code, period, channel) for code in nodes]
    else:
        keys = [FactKey(metric, entity, period, code) for code in nodes]
    stored = store.lookup_many(keys, max_level=max_level)
    # Keyed by the code that varies, without hashing a FactKey per node again.
    if axis is RollUpAxis.ENTITY:
        facts = {key.entity: FactRef(key, found) for key, found in stored.items()}
    else:
        facts = {key.channel: FactRef(key, found) for key, found in stored.items()}
    measure = check_one_measure(facts.values(), f"roll up {metric} under {top}")
    check_scales(facts.values(), f"roll up {metric} under {top}")
    scale = finest(fact.scale for fact in facts.values())
    built: dict[str, RollUpNode] = {}
    for code in reversed(nodes):  # children before their parents
        built[code] = _node(code, tree.children[code], facts.get(code), scale, built)
    root = built[top]
    lineage = tuple(facts[code] for code in nodes if code in facts and not tree.children[code])
    reported = root.fact if root.children else None
    result = RollUpResult(
        root.status,
        axis,
        metric,
        entity,
        period,
        channel,
        root.value,
        None if measure is None or root.value is None else measure.unit,
        None if measure is None or root.value is None else measure.currency,
        None if root.value is None else scale,
        reported,
        root.difference,
        root.missing,
        lineage,
        root,
        "",
    )
    return _with_text(result, glossary)


def _node(
    code: str,
    children: tuple[str, ...],
    fact: FactRef | None,
    scale: Scale,
    built: Mapping[str, RollUpNode],
) -> RollUpNode:
    if not children:
        if fact is None:
            return RollUpNode(code, RollUpStatus.NOT_FOUND, None, None, None, (code,), ())
        converted = convert(fact.value, fact.scale, scale)
        return RollUpNode(code, RollUpStatus.COMPLETE, converted, fact, None, (), ())
    kids = tuple(built[child] for child in children)
    missing = tuple(leaf for kid in kids for leaf in kid.missing)
    found = [kid.value for kid in kids if kid.value is not None]
    value = exact_sum(found) if found else None
    if value is None:
        status = RollUpStatus.NOT_FOUND
    else:
        status = RollUpStatus.PARTIAL if missing else RollUpStatus.COMPLETE
    difference = None
    if fact is not None and value is not None and status is RollUpStatus.COMPLETE:
        difference = exact_difference(convert(fact.value, fact.scale, scale), value)
    return RollUpNode(code, status, value, fact, difference, missing, kids)


def _with_text(result: RollUpResult, glossary: Glossary) -> RollUpResult:
    metric = glossary.metrics.terms[result.metric]
    names = glossary.entities if result.axis is RollUpAxis.ENTITY else glossary.channels
    top = result.entity if result.axis is RollUpAxis.ENTITY else result.channel
    label = names.terms[top].label
    leaves = len(result.lineage) + len(result.missing)
    over = "entities" if result.axis is RollUpAxis.ENTITY else "channels"
    head = f"{label}'s {metric.label} in {result.period}, summed over {leaves} {over}"
    if result.axis is RollUpAxis.ENTITY and result.channel != "total":
        head += f" ({glossary.channels.terms[result.channel].label})"
    if result.axis is RollUpAxis.CHANNEL:
        head += f" for {glossary.entities.terms[result.entity].label}"
    missing = ""
    if result.missing:
        shown = ", ".join(result.missing[:10])
        more = f" and {len(result.missing) - 10} more" if len(result.missing) > 10 else ""
        missing = (
            f" {NOT_VISIBLE_OR_MISSING[0].upper()}{NOT_VISIBLE_OR_MISSING[1:]}: {shown}{more}."
        )
    if result.value is None or result.scale is None:
        text = f"{head}: no figure, since no child has a visible fact.{missing}"
        return replace(result, text=text)
    amount = render_amount(
        result.value, result.unit or "", result.currency or "", result.scale, metric.kind
    )
    if result.status is RollUpStatus.PARTIAL:
        text = f"{head}: partial sum {amount}, not a total.{missing}"
    else:
        text = f"{head}: {amount}."
    if result.reported is not None:
        text += f" Reported: {result.reported.amount(metric.kind)}"
        if result.difference is not None:
            difference = render_amount(
                result.difference,
                result.unit or "",
                result.currency or "",
                result.scale,
                metric.kind,
            )
            text += f" (reported minus computed: {difference})"
        text += "."
    return replace(result, text=text)
