"""Metadata filters: build once, then match metadata in Python or compile for a store.

A filter is a tree of :class:`Condition` leaves (``field op value``) joined by :class:`Group`
nodes (``and`` / ``or``). Values are typed when the filter is built:

- numbers (``int`` / ``float``) compare numerically and only with numeric fields;
- ISO dates (``YYYY-MM-DD``, or a full ISO datetime) compare as calendar dates, at day
  granularity: a datetime is compared by the date it names, as written;
- ``true`` / ``false`` match boolean fields; any other string matches equal strings.

A missing field (or JSON ``null``) never matches, not even ``ne`` or ``nin``. Parse with
:func:`parse_filter` from the dict/JSON form, the short form or the compact text syntax; see
:data:`VALID_FORMS`.

Unicode: field names are read in NFKC (a full-width ``year`` is ``year``); string values are
kept in NFC and match metadata stored in NFC or in NFD, so a composed and a decomposed ``é`` are
the same letter on both sides.

A filter is backend-neutral: each store compiles it for its own query language by walking the
public fields (``Condition.field`` / ``op`` / ``operands`` / ``key_sets``, ``Group.mode`` /
``members``), e.g. :mod:`ragspine.stores.sqlite.filter_sql`; the result must select exactly the
rows :meth:`Filter.matches` accepts.

Size: every filter that builds also runs, in Python and pushed down into SQLite. The limits
(:mod:`ragspine.narrative.filters.limits`) are checked while the filter is built, and a
:class:`~ragspine.errors.QueryError` names the one exceeded.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sized
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from enum import StrEnum

from ragspine.errors import QueryError, quote_input
from ragspine.narrative.filters.limits import (
    LEAF,
    MAX_CONDITIONS,
    MAX_INTEGER,
    MAX_VALUES,
    FilterShape,
    check_limits,
    shape_of,
)

Scalar = str | int | float | bool


class Op(StrEnum):
    """Filter operators."""

    EQ = "eq"
    NE = "ne"
    IN = "in"
    NIN = "nin"
    GT = "gt"
    GTE = "gte"
    LT = "lt"
    LTE = "lte"
    BETWEEN = "between"


class GroupMode(StrEnum):
    """How a group combines its members."""

    AND = "and"
    OR = "or"


VALID_FORMS = """valid filter forms:
  dict:  {"field": "year", "op": "gte", "value": 2020}
         {"and": [FILTER, ...]}   {"or": [FILTER, ...]}   (groups nest)
  short: {"year": {"gte": 2020}, "region": {"in": ["EMEA", "APAC"]}, "status": "final"}
  text:  year>=2020 | status!=draft | region in [EMEA,APAC] | x nin [a,b]
         | date between [2020-01-01,2021-12-31] | year = 2021 | name eq "007"
operators: eq ne in nin gt gte lt lte between (text also = == != > >= < <= 'not in');
  in/nin take a non-empty list; between takes a list of two bounds [low, high] with low <= high;
  gt/gte/lt/lte/between take numbers or ISO dates (YYYY-MM-DD or a full ISO datetime);
  field names are letters, digits, '_' or '-', starting with a letter or '_'"""

_FIELD_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*", re.ASCII)
_DATE_SHAPE = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})(?:[T ][0-9]{2}:[0-9]{2}.*)?", re.ASCII | re.DOTALL
)


def _error(message: str) -> QueryError:
    return QueryError(f"{message}\n{VALID_FORMS}")


def date_key(value: object) -> str | None:
    """The ``YYYY-MM-DD`` date a string names, or ``None`` when it is not an ISO date/datetime."""
    if not isinstance(value, str):
        return None
    match = _DATE_SHAPE.fullmatch(value)
    if match is None:
        return None
    year, month, day = (int(part) for part in match.groups())
    if not 1 <= month <= 12 or day < 1:
        return None
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    days = (31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)[month - 1]
    return value[:10] if day <= days else None


class ValueKind(StrEnum):
    """What a filter value compares as (and which metadata values it can match)."""

    NUMBER = "number"
    DATE = "date"
    BOOL = "bool"
    TEXT = "text"


@dataclass(frozen=True, slots=True)
class Operand:
    """One typed filter value: its kind and the key it compares by."""

    kind: ValueKind
    key: Scalar
    raw: Scalar


def _clean_value(value: object, op: Op) -> object:
    """A filter value in its stored form (strings in NFC), or an error for one that cannot run."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise _error(
                f"filter value {quote_input(value)} for '{op}' is not valid Unicode text "
                "(it holds a lone surrogate)"
            ) from None
        return unicodedata.normalize("NFC", value)
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_INTEGER:
        raise _error(
            f"filter value {quote_input(value)} for '{op}' is beyond ±{MAX_INTEGER}, the range of "
            "64-bit integers: write it as a float, e.g. 1e30"
        )
    return value


def _operand(value: object, op: Op) -> Operand:
    if isinstance(value, bool):
        return Operand(ValueKind.BOOL, value, value)
    if isinstance(value, int | float):
        if not math.isfinite(value):
            raise _error(f"filter value {value!r} for '{op}' is not a finite number")
        return Operand(ValueKind.NUMBER, value, value)
    if isinstance(value, str):
        key = date_key(value)
        if key is not None:
            return Operand(ValueKind.DATE, key, value)
        return Operand(ValueKind.TEXT, value, value)
    raise _error(
        f"filter value {quote_input(value)} for '{op}' must be a string, number or boolean"
    )


@dataclass(frozen=True, slots=True)
class KeySet:
    """The keys one equality test accepts for operands of one kind (text: NFC and NFD forms)."""

    kind: ValueKind
    keys: tuple[Scalar, ...]
    lookup: frozenset[Scalar]


def _key_sets(operands: Iterable[Operand]) -> tuple[KeySet, ...]:
    """Operand keys grouped by kind, in order of first appearance, without repeats."""
    grouped: dict[ValueKind, dict[Scalar, None]] = {}
    for operand in operands:
        keys = grouped.setdefault(operand.kind, {})
        if operand.kind is ValueKind.TEXT:
            text = str(operand.key)
            keys[text] = None
            keys[unicodedata.normalize("NFD", text)] = None
        else:
            keys[operand.key] = None
    return tuple(KeySet(kind, tuple(keys), frozenset(keys)) for kind, keys in grouped.items())


def _field_key(value: object, kind: ValueKind) -> Scalar | None:
    """The comparable key of a metadata value for operands of ``kind``, or None."""
    if kind is ValueKind.NUMBER:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return value
        return None
    if kind is ValueKind.BOOL:
        return value if isinstance(value, bool) else None
    if kind is ValueKind.DATE:
        return date_key(value)
    return value if isinstance(value, str) else None


class Filter(ABC):
    """A parsed metadata filter."""

    __slots__ = ()

    @abstractmethod
    def matches(self, metadata: Mapping[str, object]) -> bool:
        """Whether ``metadata`` satisfies the filter."""

    @abstractmethod
    def to_dict(self) -> dict[str, object]:
        """The canonical dict/JSON form (``parse_filter`` round-trips it)."""

    @abstractmethod
    def describe(self) -> str:
        """A one-line text form for traces and messages."""


@dataclass(frozen=True, slots=True)
class Condition(Filter):
    """One ``field op value`` test."""

    field: str
    op: Op
    value: Scalar | tuple[Scalar, ...]
    _parsed: tuple[Operand, ...] = dataclass_field(
        default=(), init=False, repr=False, compare=False
    )
    _sets: tuple[KeySet, ...] = dataclass_field(default=(), init=False, repr=False, compare=False)
    _shape: FilterShape = dataclass_field(
        default=FilterShape(0, 1, 1), init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        field = unicodedata.normalize("NFKC", self.field) if isinstance(self.field, str) else None
        if field is None or not _FIELD_RE.fullmatch(field):
            raise _error(f"invalid filter field name {quote_input(self.field)}")
        object.__setattr__(self, "field", field)
        try:
            op = Op(self.op)
        except ValueError:
            valid = " ".join(o.value for o in Op)
            raise _error(
                f"unknown filter operator {quote_input(self.op)}: use one of {valid}"
            ) from None
        object.__setattr__(self, "op", op)
        if op in (Op.IN, Op.NIN, Op.BETWEEN):
            if not isinstance(self.value, list | tuple):
                raise _error(f"'{field} {op}' needs a list value, got {quote_input(self.value)}")
            if len(self.value) > MAX_VALUES:
                raise _error(
                    f"'{field} {op}' lists {len(self.value):,} values: an '{op}' list may hold "
                    f"at most {MAX_VALUES:,} values"
                )
            values: tuple[object, ...] = tuple(_clean_value(v, op) for v in self.value)
            object.__setattr__(self, "value", values)
            operands = tuple(_operand(v, op) for v in values)
            if op is Op.BETWEEN:
                self._check_between(operands)
            elif not operands:
                raise _error(f"'{field} {op}' needs a non-empty list")
        else:
            if isinstance(self.value, list | tuple):
                raise _error(f"'{field} {op}' takes a single value, got {quote_input(self.value)}")
            object.__setattr__(self, "value", _clean_value(self.value, op))
            operands = (_operand(self.value, op),)
            if op in (Op.GT, Op.GTE, Op.LT, Op.LTE) and operands[0].kind not in (
                ValueKind.NUMBER,
                ValueKind.DATE,
            ):
                raise _error(
                    f"'{field} {op} {quote_input(self.value)}' compares order: the value must be "
                    "a number or an ISO date"
                )
        object.__setattr__(self, "_parsed", operands)
        object.__setattr__(self, "_shape", FilterShape(0, 1, len(operands)))
        if op in (Op.EQ, Op.NE, Op.IN, Op.NIN):
            object.__setattr__(self, "_sets", _key_sets(operands))

    def _check_between(self, operands: tuple[Operand, ...]) -> None:
        shown = quote_input(list(self.value) if isinstance(self.value, tuple) else self.value)
        if len(operands) != 2:
            raise _error(f"'{self.field} between' needs exactly two bounds, got {shown}")
        low, high = operands
        if low.kind != high.kind or low.kind not in (ValueKind.NUMBER, ValueKind.DATE):
            raise _error(f"'{self.field} between {shown}' needs two numbers or two ISO dates")
        if low.key > high.key:  # type: ignore[operator]
            raise _error(f"'{self.field} between' bounds are reversed: {shown}")

    def matches(self, metadata: Mapping[str, object]) -> bool:
        value = metadata.get(self.field)
        if value is None:
            return False
        if self._sets:
            equal = any(_field_key(value, s.kind) in s.lookup for s in self._sets)
            return equal if self.op in (Op.EQ, Op.IN) else not equal
        if self.op is Op.BETWEEN:
            low, high = self._parsed
            key = _field_key(value, low.kind)
            return key is not None and low.key <= key <= high.key  # type: ignore[operator]
        operand = self._parsed[0]
        key = _field_key(value, operand.kind)
        if key is None:
            return False
        return _ORDER_TESTS[self.op](key, operand.key)

    @property
    def operands(self) -> tuple[Operand, ...]:
        """The typed values, in the order given (two bounds for ``between``)."""
        return self._parsed

    @property
    def key_sets(self) -> tuple[KeySet, ...]:
        """For ``eq`` / ``ne`` / ``in`` / ``nin``: the keys an equality accepts, per value kind
        (text in NFC and NFD); empty for the order operators."""
        return self._sets

    def to_dict(self) -> dict[str, object]:
        value = list(self.value) if isinstance(self.value, tuple) else self.value
        return {"field": self.field, "op": self.op.value, "value": value}

    def describe(self) -> str:
        if isinstance(self.value, tuple):
            shown = "[" + ",".join(_show(v) for v in self.value) + "]"
        else:
            shown = _show(self.value)
        return f"{self.field} {self.op.value} {shown}"


def _show(value: Scalar) -> str:
    return json.dumps(value)


_ORDER_TESTS: dict[Op, Callable[[object, object], bool]] = {
    Op.GT: lambda a, b: a > b,  # type: ignore[operator]
    Op.GTE: lambda a, b: a >= b,  # type: ignore[operator]
    Op.LT: lambda a, b: a < b,  # type: ignore[operator]
    Op.LTE: lambda a, b: a <= b,  # type: ignore[operator]
}


@dataclass(frozen=True, slots=True)
class Group(Filter):
    """Members combined with ``and`` or ``or``."""

    mode: GroupMode
    members: tuple[Filter, ...]
    _shape: FilterShape = dataclass_field(default=LEAF, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "mode", GroupMode(self.mode))
        except ValueError:
            raise _error(
                f"unknown filter group {quote_input(self.mode)}: use 'and' or 'or'"
            ) from None
        members = tuple(self.members)
        if not members:
            raise _error(f"an '{self.mode}' group needs at least one member")
        if not all(isinstance(m, Filter) for m in members):
            raise _error(f"'{self.mode}' group members must be filters, got {quote_input(members)}")
        object.__setattr__(self, "members", members)
        shapes = [shape_of(m) for m in members]
        shape = FilterShape(
            1 + max(s.depth for s in shapes),
            sum(s.conditions for s in shapes),
            sum(s.values for s in shapes),
        )
        check_limits(shape.depth, shape.conditions, shape.values)
        object.__setattr__(self, "_shape", shape)

    def matches(self, metadata: Mapping[str, object]) -> bool:
        combine = all if self.mode is GroupMode.AND else any
        return combine(m.matches(metadata) for m in self.members)

    def to_dict(self) -> dict[str, object]:
        return {self.mode.value: [m.to_dict() for m in self.members]}

    def describe(self) -> str:
        joiner = f" {self.mode.value} "
        return "(" + joiner.join(m.describe() for m in self.members) + ")"


def all_of(filters: Iterable[Filter]) -> Filter:
    """AND several filters (a single one is returned as is)."""
    members = tuple(filters)
    return members[0] if len(members) == 1 else Group(GroupMode.AND, members)


def parse_filter(spec: object) -> Filter:
    """Build a :class:`Filter` from a dict, a short-form dict, text, or a list of those (ANDed)."""
    try:
        nul = not isinstance(spec, Filter) and "\\u0000" in json.dumps(spec, default=str)
    except (RecursionError, ValueError):  # nested too deep: refused by the parse below
        nul = False
    if nul:  # no metadata holds one (ingest drops them), and PostgreSQL cannot compare one
        raise _error("a filter holds a NUL character (U+0000): remove it")
    return _parse(spec, 0)


def _parse(spec: object, depth: int) -> Filter:
    from ragspine.narrative.filters.text_form import parse_filter_text

    if isinstance(spec, Filter):
        return spec
    if isinstance(spec, str):
        return parse_filter_text(spec)
    if isinstance(spec, list | tuple):
        if not spec:
            raise _error("an empty filter list: pass at least one filter or none at all")
        _check_members(spec, depth)
        return all_of(_parse(s, depth + 1) for s in spec)
    if isinstance(spec, Mapping):
        return _parse_mapping(spec, depth)
    raise _error(f"cannot read a filter from {quote_input(spec)}")


def _check_members(members: Sized, depth: int) -> None:
    """Fail before reading the members of a group that would break a limit anyway."""
    check_limits(depth + 1, len(members), len(members))


def _parse_mapping(spec: Mapping[object, object], depth: int) -> Filter:
    keys = set(spec)
    if keys == {"and"} or keys == {"or"}:
        (mode,) = keys
        members = spec[mode]
        if not isinstance(members, list | tuple):
            raise _error(f"'{mode}' needs a list of filters, got {quote_input(members)}")
        _check_members(members, depth)
        return Group(GroupMode(str(mode)), tuple(_parse(m, depth + 1) for m in members))
    if "op" in keys or "field" in keys:
        if keys != {"field", "op", "value"}:
            raise _error(
                "a condition needs exactly 'field', 'op' and 'value', got "
                f"{quote_input(sorted(map(str, keys)))}"
            )
        return Condition(str(spec["field"]), spec["op"], _from_json(spec["value"]))  # type: ignore[arg-type]
    if not keys:
        raise _error("an empty filter dict")
    if len(keys) > MAX_CONDITIONS:
        check_limits(0, len(keys), 0)
    conditions: list[Filter] = []
    for field, test in spec.items():
        if not isinstance(field, str):
            raise _error(f"filter field names are strings, got {quote_input(field)}")
        if isinstance(test, Mapping):
            if not test:
                raise _error(f"no operator given for field {quote_input(field)}")
            for op, value in test.items():
                conditions.append(Condition(field, op, _from_json(value)))  # type: ignore[arg-type]
        else:
            conditions.append(Condition(field, Op.EQ, _from_json(test)))  # type: ignore[arg-type]
    return all_of(conditions)


def _from_json(value: object) -> object:
    return tuple(value) if isinstance(value, list) else value
