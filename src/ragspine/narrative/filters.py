"""Metadata filters: build once, then match metadata in Python or push down into SQLite.

A filter is a tree of :class:`Condition` leaves (``field op value``) joined by :class:`Group`
nodes (``and`` / ``or``). Values are typed when the filter is built:

- numbers (``int`` / ``float``) compare numerically and only with numeric fields;
- ISO dates (``YYYY-MM-DD``, or a full ISO datetime) compare as calendar dates, at day
  granularity: a datetime is compared by the date it names, as written;
- ``true`` / ``false`` match boolean fields; any other string matches equal strings.

A missing field (or JSON ``null``) never matches, not even ``ne`` or ``nin``. Parse with
:func:`parse_filter` from the dict/JSON form, the short form or the compact text syntax; see
:data:`VALID_FORMS`.
"""

from __future__ import annotations

import json
import math
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from enum import StrEnum
from typing import TypeVar

from ragspine.errors import QueryError

T = TypeVar("T")

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
_SQL_DATE_GLOBS = (
    "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]",
    "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9][T ][0-9][0-9]:[0-9][0-9]*",
)
_COLUMN_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?", re.ASCII)


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


class _Kind(StrEnum):
    NUMBER = "number"
    DATE = "date"
    BOOL = "bool"
    TEXT = "text"


@dataclass(frozen=True, slots=True)
class _Operand:
    """One typed filter value: its kind and the key it compares by."""

    kind: _Kind
    key: Scalar
    raw: Scalar


def _operand(value: object, op: Op) -> _Operand:
    if isinstance(value, bool):
        return _Operand(_Kind.BOOL, value, value)
    if isinstance(value, int | float):
        if not math.isfinite(value):
            raise _error(f"filter value {value!r} for '{op}' is not a finite number")
        return _Operand(_Kind.NUMBER, value, value)
    if isinstance(value, str):
        key = date_key(value)
        if key is not None:
            return _Operand(_Kind.DATE, key, value)
        return _Operand(_Kind.TEXT, value, value)
    raise _error(f"filter value {value!r} for '{op}' must be a string, number or boolean")


def _field_key(value: object, kind: _Kind) -> Scalar | None:
    """The comparable key of a metadata value for operands of ``kind``, or None."""
    if kind is _Kind.NUMBER:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return value
        return None
    if kind is _Kind.BOOL:
        return value if isinstance(value, bool) else None
    if kind is _Kind.DATE:
        return date_key(value)
    return value if isinstance(value, str) else None


class Filter(ABC):
    """A parsed metadata filter."""

    __slots__ = ()

    @abstractmethod
    def matches(self, metadata: Mapping[str, object]) -> bool:
        """Whether ``metadata`` satisfies the filter."""

    @abstractmethod
    def to_sql(self, json_column: str) -> tuple[str, list[object]]:
        """A SQLite WHERE fragment over a JSON column selecting exactly the rows :meth:`matches`."""

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
    _parsed: tuple[_Operand, ...] = dataclass_field(
        default=(), init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        if not isinstance(self.field, str) or not _FIELD_RE.fullmatch(self.field):
            raise _error(f"invalid filter field name {self.field!r}")
        try:
            op = Op(self.op)
        except ValueError:
            valid = " ".join(o.value for o in Op)
            raise _error(f"unknown filter operator {self.op!r}: use one of {valid}") from None
        object.__setattr__(self, "op", op)
        if op in (Op.IN, Op.NIN, Op.BETWEEN):
            if not isinstance(self.value, list | tuple):
                raise _error(f"'{self.field} {op}' needs a list value, got {self.value!r}")
            values = tuple(self.value)
            object.__setattr__(self, "value", values)
            operands = [_operand(v, op) for v in values]
            if op is Op.BETWEEN:
                self._check_between(operands)
            elif not operands:
                raise _error(f"'{self.field} {op}' needs a non-empty list")
        else:
            if isinstance(self.value, list | tuple):
                raise _error(f"'{self.field} {op}' takes a single value, got {self.value!r}")
            operand = _operand(self.value, op)
            if op in (Op.GT, Op.GTE, Op.LT, Op.LTE) and operand.kind not in (
                _Kind.NUMBER,
                _Kind.DATE,
            ):
                raise _error(
                    f"'{self.field} {op} {self.value!r}' compares order: the value must be a "
                    "number or an ISO date"
                )
        values = self.value if isinstance(self.value, tuple) else (self.value,)
        object.__setattr__(self, "_parsed", tuple(_operand(v, op) for v in values))

    def _check_between(self, operands: list[_Operand]) -> None:
        shown = list(self.value) if isinstance(self.value, tuple) else self.value
        if len(operands) != 2:
            raise _error(f"'{self.field} between' needs exactly two bounds, got {self.value!r}")
        low, high = operands
        if low.kind != high.kind or low.kind not in (_Kind.NUMBER, _Kind.DATE):
            raise _error(f"'{self.field} between {shown!r}' needs two numbers or two ISO dates")
        if low.key > high.key:  # type: ignore[operator]
            raise _error(f"'{self.field} between' bounds are reversed: {shown!r}")

    def _operands(self) -> tuple[_Operand, ...]:
        return self._parsed

    def matches(self, metadata: Mapping[str, object]) -> bool:
        value = metadata.get(self.field)
        if value is None:
            return False
        operands = self._operands()
        if self.op is Op.NE:
            return not _equal(value, operands[0])
        if self.op is Op.IN:
            return any(_equal(value, o) for o in operands)
        if self.op is Op.NIN:
            return not any(_equal(value, o) for o in operands)
        if self.op is Op.EQ:
            return _equal(value, operands[0])
        if self.op is Op.BETWEEN:
            low, high = operands
            key = _field_key(value, low.kind)
            return key is not None and low.key <= key <= high.key  # type: ignore[operator]
        operand = operands[0]
        key = _field_key(value, operand.kind)
        if key is None:
            return False
        return _ORDER_TESTS[self.op](key, operand.key)

    def to_sql(self, json_column: str) -> tuple[str, list[object]]:
        column = _check_column(json_column)
        path = f'$."{self.field}"'
        typ = f"json_type({column}, ?)"
        val = f"json_extract({column}, ?)"
        operands = self._operands()
        if self.op in (Op.EQ, Op.IN, Op.NE, Op.NIN):
            parts: list[str] = []
            params: list[object] = []
            for operand in operands:
                sql, p = _sql_equal(typ, val, path, operand)
                parts.append(sql)
                params.extend(p)
            any_equal = "(" + " OR ".join(parts) + ")"
            if self.op in (Op.EQ, Op.IN):
                return any_equal, params
            present = f"COALESCE({typ} NOT IN ('null'), 0)"
            return f"({present} AND NOT {any_equal})", [path, *params]
        if self.op is Op.BETWEEN:
            low, high = operands
            key_sql, key_params = _sql_key(typ, val, path, low.kind)
            return (
                f"COALESCE(({key_sql}) BETWEEN ? AND ?, 0)",
                [*key_params, low.key, high.key],
            )
        operand = operands[0]
        key_sql, key_params = _sql_key(typ, val, path, operand.kind)
        symbol = {Op.GT: ">", Op.GTE: ">=", Op.LT: "<", Op.LTE: "<="}[self.op]
        return f"COALESCE(({key_sql}) {symbol} ?, 0)", [*key_params, operand.key]

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


def _equal(value: object, operand: _Operand) -> bool:
    key = _field_key(value, operand.kind)
    return key is not None and key == operand.key


_ORDER_TESTS: dict[Op, Callable[[object, object], bool]] = {
    Op.GT: lambda a, b: a > b,  # type: ignore[operator]
    Op.GTE: lambda a, b: a >= b,  # type: ignore[operator]
    Op.LT: lambda a, b: a < b,  # type: ignore[operator]
    Op.LTE: lambda a, b: a <= b,  # type: ignore[operator]
}


def _check_column(json_column: str) -> str:
    if not _COLUMN_RE.fullmatch(json_column):
        raise QueryError(
            f"invalid JSON column name {json_column!r}: use an identifier such as 'metadata' "
            "or 'c.metadata'"
        )
    return json_column


def _sql_key(typ: str, val: str, path: str, kind: _Kind) -> tuple[str, list[object]]:
    """SQL for the comparable key of a field for operands of ``kind`` (NULL when not comparable)."""
    if kind is _Kind.NUMBER:
        return f"CASE WHEN {typ} IN ('integer', 'real') THEN {val} END", [path, path]
    if kind is _Kind.BOOL:
        return f"CASE WHEN {typ} IN ('true', 'false') THEN {val} END", [path, path]
    if kind is _Kind.TEXT:
        return f"CASE WHEN {typ} = 'text' THEN {val} END", [path, path]
    globs = " OR ".join(f"{val} GLOB '{g}'" for g in _SQL_DATE_GLOBS)
    day = f"substr({val}, 1, 10)"
    sql = (
        f"CASE WHEN {typ} = 'text' AND ({globs}) AND date({day}, '+0 days') = {day} THEN {day} END"
    )
    return sql, [path, *([path] * len(_SQL_DATE_GLOBS)), path, path, path]


def _sql_equal(typ: str, val: str, path: str, operand: _Operand) -> tuple[str, list[object]]:
    key_sql, params = _sql_key(typ, val, path, operand.kind)
    key = int(operand.key) if operand.kind is _Kind.BOOL else operand.key
    return f"COALESCE(({key_sql}) = ?, 0)", [*params, key]


@dataclass(frozen=True, slots=True)
class Group(Filter):
    """Members combined with ``and`` or ``or``."""

    mode: GroupMode
    members: tuple[Filter, ...]

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "mode", GroupMode(self.mode))
        except ValueError:
            raise _error(f"unknown filter group {self.mode!r}: use 'and' or 'or'") from None
        members = tuple(self.members)
        if not members:
            raise _error(f"an '{self.mode}' group needs at least one member")
        if not all(isinstance(m, Filter) for m in members):
            raise _error(f"'{self.mode}' group members must be filters, got {members!r}")
        object.__setattr__(self, "members", members)

    def matches(self, metadata: Mapping[str, object]) -> bool:
        combine = all if self.mode is GroupMode.AND else any
        return combine(m.matches(metadata) for m in self.members)

    def to_sql(self, json_column: str) -> tuple[str, list[object]]:
        parts: list[str] = []
        params: list[object] = []
        for member in self.members:
            sql, p = member.to_sql(json_column)
            parts.append(sql)
            params.extend(p)
        joiner = " AND " if self.mode is GroupMode.AND else " OR "
        return "(" + joiner.join(parts) + ")", params

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
    from ragspine.narrative.filter_text import parse_filter_text

    if isinstance(spec, Filter):
        return spec
    if isinstance(spec, str):
        return parse_filter_text(spec)
    if isinstance(spec, list | tuple):
        if not spec:
            raise _error("an empty filter list: pass at least one filter or none at all")
        return all_of(parse_filter(s) for s in spec)
    if isinstance(spec, Mapping):
        return _parse_mapping(spec)
    raise _error(f"cannot read a filter from {spec!r}")


def _parse_mapping(spec: Mapping[object, object]) -> Filter:
    keys = set(spec)
    if keys == {"and"} or keys == {"or"}:
        (mode,) = keys
        members = spec[mode]
        if not isinstance(members, list | tuple):
            raise _error(f"'{mode}' needs a list of filters, got {members!r}")
        return Group(GroupMode(str(mode)), tuple(parse_filter(m) for m in members))
    if "op" in keys or "field" in keys:
        if keys != {"field", "op", "value"}:
            raise _error(
                f"a condition needs exactly 'field', 'op' and 'value', got {sorted(map(str, keys))}"
            )
        return Condition(str(spec["field"]), spec["op"], _from_json(spec["value"]))  # type: ignore[arg-type]
    if not keys:
        raise _error("an empty filter dict")
    conditions: list[Filter] = []
    for field, test in spec.items():
        if not isinstance(field, str):
            raise _error(f"filter field names are strings, got {field!r}")
        if isinstance(test, Mapping):
            if not test:
                raise _error(f"no operator given for field {field!r}")
            for op, value in test.items():
                conditions.append(Condition(field, op, _from_json(value)))  # type: ignore[arg-type]
        else:
            conditions.append(Condition(field, Op.EQ, _from_json(test)))  # type: ignore[arg-type]
    return all_of(conditions)


def _from_json(value: object) -> object:
    return tuple(value) if isinstance(value, list) else value


def apply_filter(
    items: Iterable[T],
    flt: Filter | None,
    *,
    key: Callable[[T], Mapping[str, object]] = lambda item: item.metadata,  # type: ignore[attr-defined]
) -> list[T]:
    """The items whose metadata matches, in their input order (all of them when no filter)."""
    if flt is None:
        return list(items)
    return [item for item in items if flt.matches(key(item))]
