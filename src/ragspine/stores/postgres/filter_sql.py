"""The PostgreSQL compiler of metadata filters: a :class:`~ragspine.narrative.filters.expr.Filter`
becomes a WHERE fragment over a jsonb column, with typed comparisons.

Each value kind compares the way :meth:`Filter.matches` does: ``number`` as numerics, ``bool``
as booleans, ``text`` as strings, ``date`` as the ``YYYY-MM-DD`` day that ``narrative_date_key``
(schema v0002) reads from an ISO date or datetime string. Every expression is false, never NULL,
where a Python match is false, so ``NOT`` keeps its meaning. Field names and values only ever
travel as parameters.

Python compares an int and a float exactly, so the filters read a form of the metadata of their
own (:func:`filter_json`) in which a float is written as its exact decimal value, not its
shortest one, and a float operand is bound the same way: ``2**60 + 1 > 2.0**60`` holds in SQL
too. That form also holds what jsonb refuses (NaN, infinities, NUL) as values that match every
filter as the originals do.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from ragspine.narrative.filters.expr import Condition, Filter, Group, GroupMode, Op, ValueKind
from ragspine.stores.sqlite.filter_sql import check_column

_ORDER_SYMBOLS = {Op.GT: ">", Op.GTE: ">=", Op.LT: "<", Op.LTE: "<="}
_ARRAY_TYPES = {
    ValueKind.NUMBER: "numeric[]",
    ValueKind.BOOL: "boolean[]",
    ValueKind.TEXT: "text[]",
    ValueKind.DATE: "text[]",
}
_VALUE_TYPES = {
    ValueKind.NUMBER: "numeric",
    ValueKind.BOOL: "boolean",
    ValueKind.TEXT: "text",
    ValueKind.DATE: "text",
}


_BEYOND_FLOATS = 10**400
"""Stands for an infinity (which jsonb has not): it orders against every finite number a
filter may hold as the infinity does."""
_JSON = json.JSONEncoder(ensure_ascii=False).encode
_SORTED_JSON = json.JSONEncoder(ensure_ascii=False, sort_keys=True).encode


def exact_number(value: int | float) -> str:
    """The exact decimal value of a number, as JSON (a float's binary value in full)."""
    return str(Decimal(value)) if isinstance(value, float) else str(value)


def _filterable(value: Any) -> Any:
    """``value`` as jsonb can hold it, matching every filter as ``value`` does: NaN becomes
    ``[]`` (present, equal to nothing, ordered against nothing), an infinity a number beyond
    every float, NUL (which PostgreSQL text cannot hold) U+FFFD."""
    if isinstance(value, float) and not math.isfinite(value):
        if math.isnan(value):
            return []
        return _BEYOND_FLOATS if value > 0 else -_BEYOND_FLOATS
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd")
    if isinstance(value, dict):
        return {_key(k): _filterable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_filterable(v) for v in value]
    return value


def _key(key: object) -> str:
    """An object key as ``json.dumps`` writes it, without NUL."""
    text = key if isinstance(key, str) else _JSON(key)
    return text.replace("\x00", "\ufffd")


def filter_json(metadata: Mapping[str, Any], metadata_json: str) -> str:
    """The jsonb text the filters read for ``metadata`` (whose sorted JSON is
    ``metadata_json``): the same text unless a field holds a float or something jsonb refuses;
    then each float field is written as its exact value (see the module docstring)."""
    floats = any(isinstance(value, float) for value in metadata.values())
    if not floats and not any(mark in metadata_json for mark in ("NaN", "Infinity", "\\u0000")):
        return metadata_json
    fields = {_key(key): value for key, value in metadata.items()}
    parts = []
    for key in sorted(fields):
        value = fields[key]
        exact = isinstance(value, float) and math.isfinite(value)
        text = exact_number(value) if exact else _SORTED_JSON(_filterable(value))
        parts.append(f"{_JSON(key)}:{text}")
    return "{" + ",".join(parts) + "}"


def sql_value(kind: ValueKind, key: object) -> object:
    """A filter key as bound for ``kind``: a number as its exact decimal text (the form
    :func:`filter_json` writes metadata numbers in)."""
    if kind is ValueKind.NUMBER:
        return exact_number(key)  # type: ignore[arg-type]
    return key


def field_key(column: str, field: str, kind: ValueKind) -> tuple[str, list[object]]:
    """SQL for the comparable key of ``field`` for operands of ``kind`` (NULL when the field is
    missing or of another type)."""
    value = f"({column} -> %s)"
    if kind is ValueKind.NUMBER:
        sql = f"CASE WHEN jsonb_typeof({value}) = 'number' THEN {value}::numeric END"
        return sql, [field, field]
    if kind is ValueKind.BOOL:
        sql = f"CASE WHEN jsonb_typeof({value}) = 'boolean' THEN {value}::boolean END"
        return sql, [field, field]
    text = f"({column} ->> %s)"
    if kind is ValueKind.TEXT:
        return f"CASE WHEN jsonb_typeof({value}) = 'string' THEN {text} END", [field, field]
    day = f"narrative_date_key({text})"
    sql = f"CASE WHEN jsonb_typeof({value}) = 'string' THEN {day} END COLLATE \"C\""
    return sql, [field, field]


def filter_to_sql(flt: Filter, json_column: str) -> tuple[str, list[object]]:
    """A PostgreSQL WHERE fragment over the jsonb ``json_column`` selecting exactly the rows
    ``flt`` matches, and its parameters (``%s`` placeholders)."""
    return _compile(flt, check_column(json_column))


def _compile(flt: Filter, column: str) -> tuple[str, list[object]]:
    if isinstance(flt, Condition):
        return _condition(flt, column)
    if isinstance(flt, Group):
        return _group(flt, column)
    raise TypeError(f"cannot compile a {type(flt).__name__} filter for PostgreSQL")


def _any_equal(
    column: str, field: str, kind: ValueKind, keys: Sequence[object]
) -> tuple[str, list[object]]:
    key_sql, params = field_key(column, field, kind)
    values = [sql_value(kind, key) for key in keys]
    if len(values) == 1:
        return f"COALESCE(({key_sql}) = %s::{_VALUE_TYPES[kind]}, false)", [*params, values[0]]
    return f"COALESCE(({key_sql}) = ANY(%s::{_ARRAY_TYPES[kind]}), false)", [*params, values]


def _condition(cond: Condition, column: str) -> tuple[str, list[object]]:
    if cond.key_sets:
        parts: list[str] = []
        params: list[object] = []
        for key_set in cond.key_sets:
            sql, p = _any_equal(column, cond.field, key_set.kind, key_set.keys)
            parts.append(sql)
            params.extend(p)
        any_equal = parts[0] if len(parts) == 1 else "(" + " OR ".join(parts) + ")"
        if cond.op in (Op.EQ, Op.IN):
            return any_equal, params
        present = f"COALESCE(jsonb_typeof({column} -> %s) <> 'null', false)"
        return f"({present} AND NOT {any_equal})", [cond.field, *params]
    if cond.op is Op.BETWEEN:
        low, high = cond.operands
        key_sql, params = field_key(column, cond.field, low.kind)
        cast = _VALUE_TYPES[low.kind]
        return f"COALESCE(({key_sql}) BETWEEN %s::{cast} AND %s::{cast}, false)", [
            *params,
            sql_value(low.kind, low.key),
            sql_value(high.kind, high.key),
        ]
    operand = cond.operands[0]
    key_sql, params = field_key(column, cond.field, operand.kind)
    symbol = _ORDER_SYMBOLS[cond.op]
    cast = _VALUE_TYPES[operand.kind]
    return f"COALESCE(({key_sql}) {symbol} %s::{cast}, false)", [
        *params,
        sql_value(operand.kind, operand.key),
    ]


def _group(group: Group, column: str) -> tuple[str, list[object]]:
    parts: list[str] = []
    params: list[object] = []
    for member in group.members:
        sql, p = _compile(member, column)
        parts.append(sql)
        params.extend(p)
    joiner = " AND " if group.mode is GroupMode.AND else " OR "
    return "(" + joiner.join(parts) + ")", params
