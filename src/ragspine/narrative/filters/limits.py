"""The size limits of a metadata filter, checked while it is built.

Within them every filter runs both in Python and pushed down into SQLite: an ``in`` / ``nin``
list travels as one JSON parameter, and nesting and condition counts stay inside SQLite's parser
stack and expression depth (measured: a chain of about 60 nested groups is the most SQLite's
parser reads). Beyond them a :class:`~ragspine.errors.QueryError` names the limit at once.
"""

from __future__ import annotations

from dataclasses import dataclass

from ragspine.errors import QueryError

MAX_DEPTH = 32
"""Deepest nesting of ``and`` / ``or`` groups."""
MAX_CONDITIONS = 256
"""Most conditions in one filter."""
MAX_VALUES = 10_000
"""Most values in one filter, counting every item of ``in`` / ``nin`` / ``between`` lists."""
MAX_INTEGER = 2**63 - 1
"""Largest integer magnitude a filter value may have (SQLite's 64-bit integers)."""


@dataclass(frozen=True, slots=True)
class FilterShape:
    """How big a filter is: group nesting depth, conditions and values."""

    depth: int
    conditions: int
    values: int


LEAF = FilterShape(0, 1, 1)
"""The shape of one single-valued condition."""


def shape_of(member: object) -> FilterShape:
    """The shape a filter recorded when it was built (a bare condition's for other filters)."""
    shape = getattr(member, "_shape", LEAF)
    return shape if isinstance(shape, FilterShape) else LEAF


def check_limits(depth: int, conditions: int, values: int) -> None:
    """Raise the :class:`QueryError` naming the first limit a filter of this size exceeds."""
    if depth > MAX_DEPTH:
        raise QueryError(f"a filter may nest and/or groups at most {MAX_DEPTH} levels deep")
    if conditions > MAX_CONDITIONS:
        raise QueryError(
            f"a filter may hold at most {MAX_CONDITIONS} conditions (this one has {conditions}): "
            "use 'in' for many values of one field"
        )
    if values > MAX_VALUES:
        raise QueryError(
            f"a filter may hold at most {MAX_VALUES:,} values in all (this one has {values:,})"
        )
