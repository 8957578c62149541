"""``derive``: a metric computed from its glossary derivation, as a tree down to stored facts.

Every metric the derivation names is read as a stored fact visible to the asker; one with no
such fact that has a derivation of its own is derived in turn, and one with neither is missing:
the result is then ``not_found`` and names every missing fact, never an estimate. A division by
zero is ``not_computable``. The value is exact (a fraction); a stored value of the derived metric
is shown beside it with the difference.

Units: ``+`` and ``-`` need operands of one unit and currency (scales convert to the finer);
a constant takes the unit and scale of what it meets; ``*`` and ``/`` of two measured operands
work at scale one and give a compound quantity (each currency or unit with its power: USD per
employee), reported in the glossary unit of the metric when that says it: a quantity without
units (a margin), one of no currency, or one of a single currency that is the glossary's. Two
currencies in one product or quotient, a sum of different compounds (USD per employee plus
employees per USD), or a currency other than the glossary's are refused, never relabelled.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from fractions import Fraction
from typing import Any

from ragspine.errors import QueryError, quote_input
from ragspine.glossary import Glossary, MetricKind
from ragspine.graph.expr import BinaryOp, Constant, MetricRef, Negate, Node, Op, node_text
from ragspine.graph.render import Picture, PictureEdge, PictureNode
from ragspine.graph.values import (
    ROUNDING_NOTE,
    TEXT_PLACES,
    ExactNumber,
    FactRef,
    Measure,
    check_scales,
    convert_fraction,
    finest,
    scales_combine,
)
from ragspine.stores.facts import FactStore
from ragspine.structured.facts import FactKey, Scale
from ragspine.structured.query import UNSTATED_SCALE, currency_name

MAX_TREE_NODES = 10_000
"""A derivation tree larger than this is refused (derivations that reuse derived metrics many
times over grow exponentially)."""

MAX_DEPTH = 300
"""A derivation tree deeper than this (metrics and operations nested in one another) is
refused: it bounds the walk's stack, and each expression nests 64 operations at most."""


class DeriveStatus(StrEnum):
    FOUND = "found"
    NOT_FOUND = "not_found"
    NOT_COMPUTABLE = "not_computable"


class NodeKind(StrEnum):
    DERIVED = "derived"  # a metric computed from its derivation
    FACT = "fact"  # a metric read as a stored fact
    MISSING = "missing"  # a metric with no visible fact and no derivation
    OPERATOR = "operator"
    CONSTANT = "constant"


@dataclass(frozen=True, slots=True)
class _Compound:
    """The dimension of a product or quotient of measured quantities: each base (``cur:USD``
    for a currency, ``unit:employees`` for another unit) with its non-zero power."""

    powers: tuple[tuple[str, int], ...]

    def currencies(self) -> dict[str, int]:
        return {base[4:]: power for base, power in self.powers if base.startswith("cur:")}

    def __str__(self) -> str:
        """``EUR per employees``, ``USD^2``, ``no unit``."""
        if not self.powers:
            return "no unit"

        def named(base: str, power: int) -> str:
            return base.split(":", 1)[1] + ("" if power == 1 else f"^{power}")

        above = " ".join(named(b, p) for b, p in self.powers if p > 0) or "1"
        below = [named(b, -p) for b, p in self.powers if p < 0]
        return " per ".join([above, *below])


_Dim = Measure | _Compound | None  # a measure, a compound, or None for a bare constant


def _powers(dim: _Dim) -> dict[str, int]:
    """The bases of ``dim`` with their powers (a measure's unit, a constant's none)."""
    if isinstance(dim, _Compound):
        return dict(dim.powers)
    if isinstance(dim, Measure):
        if dim.currency:
            return {f"cur:{dim.currency}": 1}
        return {f"unit:{dim.unit}": 1} if dim.unit else {}
    return {}


def _compound(powers: Mapping[str, int]) -> _Compound:
    return _Compound(tuple(sorted((b, p) for b, p in powers.items() if p != 0)))


@dataclass(frozen=True, slots=True)
class DeriveNode:
    """One node of a derivation tree; ``value`` is at ``scale`` (``None`` where not computed)."""

    kind: NodeKind
    label: str
    value: ExactNumber | None
    scale: Scale | None
    fact: FactRef | None
    children: tuple[DeriveNode, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "label": self.label,
            "value": None if self.value is None else self.value.to_dict(),
            "scale": None if self.scale is None else self.scale.value,
            "fact": None if self.fact is None else self.fact.to_dict(),
            "children": [child.to_dict() for child in self.children],
        }


@dataclass(frozen=True, slots=True)
class DeriveResult:
    """A derived value with its tree, the stored value beside it, and lineage."""

    status: DeriveStatus
    metric: str
    entity: str
    period: str
    channel: str
    derivation: str
    value: ExactNumber | None
    unit: str | None
    currency: str | None
    scale: Scale | None
    stored: FactRef | None
    difference: ExactNumber | None
    missing: tuple[FactKey, ...]
    reason: str
    lineage: tuple[FactRef, ...]
    tree: DeriveNode
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "derive",
            "status": self.status.value,
            "metric": self.metric,
            "entity": self.entity,
            "period": self.period,
            "channel": self.channel,
            "derivation": self.derivation,
            "value": None if self.value is None else self.value.to_dict(),
            "unit": self.unit,
            "currency": self.currency,
            "scale": None if self.scale is None else self.scale.value,
            "stored": None if self.stored is None else self.stored.to_dict(),
            "difference": None if self.difference is None else self.difference.to_dict(),
            "missing": [
                {"metric": k.metric, "entity": k.entity, "period": k.period, "channel": k.channel}
                for k in self.missing
            ],
            "reason": self.reason,
            "lineage": [fact.to_dict() for fact in self.lineage],
            "tree": self.tree.to_dict(),
            "rounding": ROUNDING_NOTE,
            "text": self.text,
        }

    def picture(self) -> Picture:
        """The tree as nodes and edges for :mod:`ragspine.graph.render`."""
        return derivation_picture(self)


@dataclass(frozen=True, slots=True)
class _Quantity:
    value: Fraction
    dim: _Dim
    scale: Scale


class _Evaluator:
    """Builds the tree and its values in one walk; remembers what is missing and the first
    division by zero."""

    def __init__(
        self,
        glossary: Glossary,
        facts: Mapping[str, FactRef | None],
        key_of: Mapping[str, FactKey],
        root: str,
    ) -> None:
        self.glossary = glossary
        self.facts = facts
        self.key_of = key_of
        self.root = root
        self.missing: dict[FactKey, None] = {}
        self.lineage: dict[FactKey, FactRef] = {}
        self.zero_division: str = ""
        self.nodes = 0

    def _count(self) -> None:
        self.nodes += 1
        if self.nodes > MAX_TREE_NODES:
            raise QueryError(
                f"the derivation of {quote_input(self.root)} expands to more than "
                f"{MAX_TREE_NODES:,} nodes: store some of its intermediate metrics as facts"
            )

    def metric(self, code: str, depth: int, expand: bool) -> tuple[DeriveNode, _Quantity | None]:
        self._count()
        if depth > MAX_DEPTH:
            raise QueryError(
                f"the derivation of {quote_input(self.root)} nests deeper than {MAX_DEPTH} "
                "metrics and operations: store some of its intermediate metrics as facts"
            )
        fact = None if expand else self.facts.get(code)
        if fact is not None:
            self.lineage.setdefault(fact.key, fact)
            leaf = _Quantity(Fraction(fact.value), fact.measure, fact.scale)
            node = DeriveNode(NodeKind.FACT, code, ExactNumber(leaf.value), fact.scale, fact, ())
            return node, leaf
        derivation = self.glossary.metrics.terms[code].derivation
        if derivation is None:
            self.missing.setdefault(self.key_of[code], None)
            return DeriveNode(NodeKind.MISSING, code, None, None, None, ()), None
        child, quantity = self.expression(derivation.root, depth)
        value = None if quantity is None else ExactNumber(quantity.value)
        scale = None if quantity is None else quantity.scale
        return DeriveNode(NodeKind.DERIVED, code, value, scale, None, (child,)), quantity

    def expression(self, node: Node, depth: int) -> tuple[DeriveNode, _Quantity | None]:
        if isinstance(node, MetricRef):
            return self.metric(node.code, depth + 1, expand=False)
        self._count()
        if isinstance(node, Constant):
            value = Fraction(node.value)
            constant = DeriveNode(
                NodeKind.CONSTANT, node_text(node), ExactNumber(value), None, None, ()
            )
            return constant, _Quantity(value, None, Scale.ONE)
        if depth > MAX_DEPTH:
            raise QueryError(
                f"the derivation of {quote_input(self.root)} nests deeper than {MAX_DEPTH} "
                "metrics and operations: store some of its intermediate metrics as facts"
            )
        if isinstance(node, Negate):
            child, inner = self.expression(node.operand, depth + 1)
            negated = None if inner is None else replace(inner, value=-inner.value)
            return self._operator("-", (child,), negated), negated
        assert isinstance(node, BinaryOp)
        left, a = self.expression(node.left, depth + 1)
        right, b = self.expression(node.right, depth + 1)
        combined = None if a is None or b is None else self._combine(node, a, b)
        return self._operator(node.op.value, (left, right), combined), combined

    @staticmethod
    def _operator(
        symbol: str, children: tuple[DeriveNode, ...], quantity: _Quantity | None
    ) -> DeriveNode:
        value = None if quantity is None else ExactNumber(quantity.value)
        scale = None if quantity is None or quantity.dim is None else quantity.scale
        return DeriveNode(NodeKind.OPERATOR, symbol, value, scale, None, children)

    def _combine(self, node: BinaryOp, a: _Quantity, b: _Quantity) -> _Quantity | None:
        if node.op in (Op.ADD, Op.SUB):
            if a.dim is None or b.dim is None:
                dim, scale = (b.dim, b.scale) if a.dim is None else (a.dim, a.scale)
                x, y = a.value, b.value
            else:
                same = (
                    a.dim == b.dim
                    if isinstance(a.dim, Measure) and isinstance(b.dim, Measure)
                    else _powers(a.dim) == _powers(b.dim)
                )
                if not same:
                    raise QueryError(
                        f"cannot derive {self.root}: {quote_input(node_text(node.left))} is in "
                        f"{a.dim} and {quote_input(node_text(node.right))} in {b.dim}; "
                        "+ and - need one unit: restate the facts or fix the derivation"
                    )
                dim, scale = a.dim, finest((a.scale, b.scale))
                x = convert_fraction(a.value, a.scale, scale)
                y = convert_fraction(b.value, b.scale, scale)
            return _Quantity(x + y if node.op is Op.ADD else x - y, dim, scale)
        if b.dim is None:  # times or divided by a constant: unit and scale stay
            dim, scale, x, y = a.dim, a.scale, a.value, b.value
        elif a.dim is None and node.op is Op.MUL:
            dim, scale, x, y = b.dim, b.scale, a.value, b.value
        else:
            left, right = _powers(a.dim), _powers(b.dim)
            money = {c for c in (*left, *right) if c.startswith("cur:")}
            if len(money) > 1:  # EUR / USD is an exchange rate nobody stored
                raise QueryError(
                    f"cannot derive {self.root}: {quote_input(node_text(node.left))} is in "
                    f"{a.dim} and {quote_input(node_text(node.right))} in {b.dim}; a product or "
                    "quotient of two currencies needs an exchange rate: restate the facts in "
                    "one currency"
                )
            sign = 1 if node.op is Op.MUL else -1
            for base, power in right.items():
                left[base] = left.get(base, 0) + sign * power
            dim = _compound(left)
            if node.op is Op.DIV and a.scale is Scale.UNKNOWN and b.scale is Scale.UNKNOWN:
                scale, x, y = Scale.ONE, a.value, b.value  # one unstated scale cancels
            else:
                scale = Scale.ONE
                x = convert_fraction(a.value, a.scale, Scale.ONE) if a.dim is not None else a.value
                y = convert_fraction(b.value, b.scale, Scale.ONE)
        if node.op is Op.MUL:
            return _Quantity(x * y, dim, scale)
        if y == 0:
            if not self.zero_division:
                self.zero_division = (
                    f"division by zero: the divisor {quote_input(node_text(node.right))} "
                    f"(position {node.right.position + 1} of its derivation) is zero"
                )
            return None
        return _Quantity(x / y, dim, scale)


def _read_facts(
    glossary: Glossary,
    store: FactStore,
    metric: str,
    key_of: Callable[[str], FactKey],
    max_level: int,
) -> dict[str, FactRef | None]:
    """The visible stored fact (or ``None``) of ``metric`` and of every metric its tree may
    reach, one batched lookup per level of the tree."""
    facts: dict[str, FactRef | None] = {}
    wanted = [metric]
    while wanted:
        keys = {code: key_of(code) for code in wanted if code not in facts}
        stored = store.lookup_many(keys.values(), max_level=max_level)
        following: list[str] = []
        for code, key in keys.items():
            facts[code] = FactRef.of(key, stored[key]) if key in stored else None
            derivation = glossary.metrics.terms[code].derivation
            if derivation is not None and (facts[code] is None or code == metric):
                following.extend(c for c in derivation.metrics() if c not in facts)
        wanted = list(dict.fromkeys(following))
    return facts


def derive(
    glossary: Glossary,
    store: FactStore,
    *,
    metric: str,
    entity: str,
    period: str,
    channel: str,
    max_level: int,
) -> DeriveResult:
    """Evaluate the glossary derivation of ``metric`` for one entity, period and channel (codes
    already resolved); a metric without a derivation is a :class:`~ragspine.errors.QueryError`."""
    term = glossary.metrics.terms[metric]
    if term.derivation is None:
        raise QueryError(
            f"metric {quote_input(metric)} has no derivation: add one to its glossary entry, "
            'e.g. derivation = "gross_profit / revenue * 100"'
        )

    def key_of(code: str) -> FactKey:
        return FactKey(code, entity, period, channel)

    facts = _read_facts(glossary, store, metric, key_of, max_level)
    inputs = [fact for code, fact in facts.items() if fact is not None and code != metric]
    check_scales(inputs, f"derive {metric}")  # one table's unstated scale at most
    evaluator = _Evaluator(glossary, facts, {code: key_of(code) for code in facts}, metric)
    tree, quantity = evaluator.metric(metric, 0, expand=True)
    stored = facts[metric]
    missing = tuple(evaluator.missing)
    if missing:
        status, reason, quantity = DeriveStatus.NOT_FOUND, "", None
    elif quantity is None:
        status, reason = DeriveStatus.NOT_COMPUTABLE, evaluator.zero_division
    else:
        status, reason = DeriveStatus.FOUND, ""
    unit, currency, scale = _presented(quantity, term.unit, metric)
    difference = None
    if quantity is not None and stored is not None and scales_combine([stored, *inputs]):
        difference = _difference(stored, quantity)  # (one source's unstated scale at most)
    result = DeriveResult(
        status,
        metric,
        entity,
        period,
        channel,
        term.derivation.text,
        None if quantity is None else ExactNumber(quantity.value),
        unit,
        currency,
        scale,
        stored,
        difference,
        missing,
        reason,
        tuple(evaluator.lineage.values()) if quantity is not None else (),
        tree,
        "",
    )
    return replace(result, text=_text(result, glossary))


def _presented(
    quantity: _Quantity | None, glossary_unit: str, metric: str
) -> tuple[str | None, str | None, Scale | None]:
    """The unit, currency and scale a result is reported in: a measure's own; a compound's is
    the glossary unit of ``metric`` when it has no currency, or one currency (to the first
    power) that the glossary unit names; another is refused, never relabelled."""
    if quantity is None:
        return None, None, None
    if isinstance(quantity.dim, Measure):
        return quantity.dim.unit, quantity.dim.currency, quantity.scale
    money = quantity.dim.currencies() if isinstance(quantity.dim, _Compound) else {}
    if not money:
        return glossary_unit, "", Scale.ONE
    if money == {glossary_unit: 1}:
        return glossary_unit, glossary_unit, Scale.ONE
    raise QueryError(
        f"cannot derive {metric}: its inputs give {quantity.dim}, and the glossary states "
        f"{quote_input(glossary_unit or 'no unit')}: restate the facts in that currency or fix "
        "the glossary unit"
    )


def _difference(stored: FactRef, quantity: _Quantity) -> ExactNumber | None:
    """Stored minus computed, at the computed scale; ``None`` when their units differ."""
    if isinstance(quantity.dim, Measure) and stored.measure != quantity.dim:
        return None
    if isinstance(quantity.dim, _Compound):  # in the glossary unit: one currency at most
        money = quantity.dim.currencies()
        if set(money) != ({stored.currency} if stored.currency else set()):
            return None  # a stored 100,000 EUR beside a computed USD figure
    if Scale.UNKNOWN in (stored.scale, quantity.scale) and stored.scale is not quantity.scale:
        return None  # a scale nobody stated beside a stated one: no common scale
    value = convert_fraction(Fraction(stored.value), stored.scale, quantity.scale)
    return ExactNumber(value - quantity.value)


def _text(result: DeriveResult, glossary: Glossary) -> str:
    term = glossary.metrics.terms[result.metric]
    entity = glossary.entities.terms[result.entity].label
    head = f"{entity}'s {term.label} in {result.period} = {result.derivation}"
    if result.status is DeriveStatus.NOT_FOUND:
        names = ", ".join(
            f"{k.metric} ({k.entity}, {k.period}, {k.channel})" for k in result.missing
        )
        return f"{head}: not computed, since these inputs have no visible fact: {names}."
    if result.status is DeriveStatus.NOT_COMPUTABLE or result.value is None:
        return f"{head}: not computable ({result.reason})."
    words = [] if result.scale in (None, Scale.ONE, Scale.UNKNOWN) else [str(result.scale)]
    if result.unit in ("%", "percent") or term.kind is MetricKind.PERCENT:
        words.append("percent")
    elif result.currency:
        words.append(currency_name(result.currency))
    elif result.unit:
        words.append(result.unit)
    if result.scale is Scale.UNKNOWN:
        words.append(UNSTATED_SCALE)
    unit = " ".join(words)
    text = f"{head}: {result.value.text(unit)}."
    if result.stored is not None:
        text += f" Stored: {result.stored.amount(term.kind)}"
        if result.difference is not None:
            text += f" (stored minus computed: {result.difference.text(unit)})"
        text += "."
    return text


def derivation_picture(result: DeriveResult) -> Picture:
    """Nodes and edges of a derivation tree, ids ``n0``, ``n1``, ... in depth-first order."""
    nodes: list[PictureNode] = []
    edges: list[PictureEdge] = []
    stack: list[tuple[DeriveNode, str | None]] = [(result.tree, None)]
    while stack:
        node, parent = stack.pop()
        node_id = f"n{len(nodes)}"
        label = node.label
        if node.value is not None and node.kind is not NodeKind.CONSTANT:
            exact = node.value.decimal
            shown = (
                node.value.text()
                if exact is not None
                else format(node.value.rounded(TEXT_PLACES), ",f")
            )
            scale = f" {node.scale}" if node.scale not in (None, Scale.ONE) else ""
            if node.scale is Scale.UNKNOWN:
                scale = f" {UNSTATED_SCALE}"
            label += f" {'=' if exact is not None else '≈'} {shown}{scale}"
        if node.kind is NodeKind.MISSING:
            label = f"{node.label}: no visible fact"
        detail = ""
        if node.fact is not None:
            detail = node.fact.locator
        nodes.append(PictureNode(node_id, label, node.kind.value, detail))
        if parent is not None:
            edges.append(PictureEdge(parent, node_id))
        stack.extend((child, node_id) for child in reversed(node.children))
    title = f"{result.metric} ({result.entity}, {result.period}): {result.status.value}"
    return Picture(tuple(nodes), tuple(edges), title)
