"""SQLite (JSON1) expressions for metadata filters: a field's typed key and an equality test.

A kind is one of the filter value kinds of :mod:`ragspine.narrative.filters.expr`: ``number``,
``bool``, ``text`` or ``date``. Every expression is NULL or false where a Python match is false,
so a pushed-down filter selects exactly the rows ``Filter.matches`` accepts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from ragspine.errors import QueryError, quote_input

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
