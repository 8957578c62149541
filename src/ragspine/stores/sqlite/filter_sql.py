"""The SQLite compiler of metadata filters: a :class:`~ragspine.narrative.filters.expr.Filter`
becomes a WHERE fragment (JSON1 and GLOB) over a JSON column.

:func:`filter_to_sql` walks the filter's public fields. A kind is one of the filter value kinds
(:class:`~ragspine.narrative.filters.expr.ValueKind`): ``number``, ``bool``, ``text`` or
``date``. Every expression is NULL or false where a Python match is false, so a pushed-down filter
selects exactly the rows ``Filter.matches`` accepts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from ragspine.errors import QueryError, quote_input
from ragspine.narrative.filters.expr import Condition, Filter, Group, GroupMode, Op
from ragspine.narrative.filters.limits import shape_of

_SQL_DATE_GLOBS = (
    "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]",
    "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9][T ][0-9][0-9]:[0-9][0-9]*",
)
_COLUMN_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?", re.ASCII)


def check_column(json_column: str) -> str:
    """``json_column`` when it is a plain (optionally table-qualified) column name."""
    if not _COLUMN_RE.fullmatch(json_column):
        raise QueryError(
            f"invalid JSON column name {quote_input(json_column)}: use an identifier such as "
            "'metadata' or 'c.metadata'"
        )
    return json_column


def sql_key(typ: str, val: str, path: str, kind: str) -> tuple[str, list[object]]:
    """SQL for the comparable key of a field for operands of ``kind`` (NULL when not comparable)."""
    if kind == "number":
        return f"CASE WHEN {typ} IN ('integer', 'real') THEN {val} END", [path, path]
    if kind == "bool":
        return f"CASE WHEN {typ} IN ('true', 'false') THEN {val} END", [path, path]
    if kind == "text":
        return f"CASE WHEN {typ} = 'text' THEN {val} END", [path, path]
    globs = " OR ".join(f"{val} GLOB '{g}'" for g in _SQL_DATE_GLOBS)
    day = f"substr({val}, 1, 10)"
    sql = (
        f"CASE WHEN {typ} = 'text' AND ({globs}) AND date({day}, '+0 days') = {day} THEN {day} END"
    )
    return sql, [path, *([path] * len(_SQL_DATE_GLOBS)), path, path, path]


def sql_equal(
    typ: str, val: str, path: str, kind: str, keys: Sequence[object]
) -> tuple[str, list[object]]:
    """SQL true when the field's key for ``kind`` is one of ``keys`` (never NULL).

    Several keys travel as one JSON array parameter read by ``json_each``, so a list of any
    length costs one SQL variable and no expression depth.
    """
    key_sql, params = sql_key(typ, val, path, kind)
    values = [1 if k else 0 for k in keys] if kind == "bool" else list(keys)
    if len(values) == 1:
        return f"COALESCE(({key_sql}) = ?, 0)", [*params, values[0]]
    array = json.dumps(values, ensure_ascii=False)
    return f"COALESCE(({key_sql}) IN (SELECT value FROM json_each(?)), 0)", [*params, array]


_ORDER_SYMBOLS = {Op.GT: ">", Op.GTE: ">=", Op.LT: "<", Op.LTE: "<="}


def filter_to_sql(flt: Filter, json_column: str) -> tuple[str, list[object]]:
    """A SQLite WHERE fragment over ``json_column`` selecting exactly the rows ``flt`` matches,
    and its parameters."""
    column = check_column(json_column)
    return _compile(flt, column)


def _compile(flt: Filter, column: str) -> tuple[str, list[object]]:
    if isinstance(flt, Condition):
        return _condition(flt, column)
    if isinstance(flt, Group):
        return _group(flt, column)
    raise TypeError(f"cannot compile a {type(flt).__name__} filter for SQLite")


def _condition(cond: Condition, column: str) -> tuple[str, list[object]]:
    path = f'$."{cond.field}"'
    typ = f"json_type({column}, ?)"
    val = f"json_extract({column}, ?)"
    if cond.key_sets:
        parts: list[str] = []
        params: list[object] = []
        for key_set in cond.key_sets:
            sql, p = sql_equal(typ, val, path, key_set.kind, key_set.keys)
            parts.append(sql)
            params.extend(p)
        any_equal = parts[0] if len(parts) == 1 else "(" + " OR ".join(parts) + ")"
        if cond.op in (Op.EQ, Op.IN):
            return any_equal, params
        present = f"COALESCE({typ} NOT IN ('null'), 0)"
        return f"({present} AND NOT {any_equal})", [path, *params]
    if cond.op is Op.BETWEEN:
        low, high = cond.operands
        key_sql, key_params = sql_key(typ, val, path, low.kind)
        return f"COALESCE(({key_sql}) BETWEEN ? AND ?, 0)", [*key_params, low.key, high.key]
    operand = cond.operands[0]
    key_sql, key_params = sql_key(typ, val, path, operand.kind)
    symbol = _ORDER_SYMBOLS[cond.op]
    return f"COALESCE(({key_sql}) {symbol} ?, 0)", [*key_params, operand.key]


def _group(group: Group, column: str) -> tuple[str, list[object]]:
    # Largest members first: SQLite's parser then holds little while reading the others, which
    # keeps every filter within the limits inside its parser stack and expression depth.
    # AND and OR are commutative in SQL, so the order changes nothing else.
    ordered = sorted(group.members, key=lambda m: -shape_of(m).conditions)
    parts: list[str] = []
    params: list[object] = []
    for member in ordered:
        sql, p = _compile(member, column)
        parts.append(sql)
        params.extend(p)
    joiner = " AND " if group.mode is GroupMode.AND else " OR "
    return "(" + joiner.join(parts) + ")", params
