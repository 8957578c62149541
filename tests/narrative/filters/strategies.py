"""Hypothesis strategies for metadata and filters, shared by the filter tests and the
chunk-store contract (whose pushed-down filters must agree with ``Filter.matches``)."""

from __future__ import annotations

from hypothesis import strategies as st

from ragspine.narrative.filters.expr import Condition, Filter, Group, GroupMode, Op, date_key

FIELDS = ["a", "b", "c"]
texts = st.sampled_from(["x", "y", "EMEA", "", "2020", "draft", "2020-01-01x"])
dates = st.dates().map(lambda d: d.isoformat()) | st.sampled_from(
    [
        "2020-01-01",
        "2020-01-01T00:00",
        "2021-06-30 23:59:59.5+02:00",
        "2024-02-29",
        "2023-02-29",
        "0000-02-29",
        "2020-01-32",
        "2020-00-10",
        "2020-01-01T1",
        "2020-01-01\n10:00",
    ]
)
numbers = (
    st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False, width=64)
    | st.sampled_from([0, 1, -1, 2020, 2020.0, 2.5])
)
scalars = st.one_of(numbers, st.booleans(), texts, dates)
field_values = st.one_of(scalars, st.none(), st.just([1, 2]), st.just({"k": 1}))
metadata = st.dictionaries(st.sampled_from(FIELDS), field_values, max_size=3)
comparable = st.one_of(
    numbers,
    st.dates().map(lambda d: d.isoformat()),
    st.sampled_from(["2020-06-15", "2020-06-15T08:00"]),
)


@st.composite
def conditions(draw: st.DrawFn) -> Filter:
    field = draw(st.sampled_from(FIELDS))
    op = draw(st.sampled_from(list(Op)))
    if op in (Op.EQ, Op.NE):
        return Condition(field, op, draw(scalars))
    if op in (Op.IN, Op.NIN):
        return Condition(field, op, tuple(draw(st.lists(scalars, min_size=1, max_size=3))))
    if op is Op.BETWEEN:
        kind = draw(st.sampled_from(["n", "d"]))
        pool = numbers if kind == "n" else st.dates().map(lambda d: d.isoformat())
        low, high = sorted(
            [draw(pool), draw(pool)], key=lambda v: v if kind == "n" else date_key(v)
        )
        return Condition(field, op, (low, high))
    return Condition(field, op, draw(comparable))


filters = st.recursive(
    conditions(),
    lambda children: st.builds(
        Group,
        st.sampled_from(list(GroupMode)),
        st.lists(children, min_size=1, max_size=3).map(tuple),
    ),
    max_leaves=6,
)
