"""The PostgreSQL compiler of metadata filters: a :class:`~ragspine.narrative.filters.expr.Filter`
becomes a WHERE fragment over a jsonb column, with typed comparisons.

Each value kind compares the way :meth:`Filter.matches` does: ``number`` as exact numerics
(jsonb numbers are numerics; a float operand travels as its shortest decimal, the form a float
has in stored JSON), ``bool`` as booleans, ``text`` as strings, ``date`` as the ``YYYY-MM-DD`` day
that ``narrative_date_key`` (schema v0002) reads from an ISO date or datetime string. Every
expression is false, never NULL, where a Python match is false, so ``NOT`` keeps its meaning.
Field names and values only ever travel as parameters.
"""

from __future__ import annotations

from collections.abc import Sequence

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


def sql_value(kind: ValueKind, key: object) -> object:
    """A filter key as bound for ``kind``: numbers as decimal text (a float in its shortest
    form, exactly as ``json.dumps`` writes it into stored metadata)."""
    if kind is ValueKind.NUMBER:
        return repr(key) if isinstance(key, float) else str(key)
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
