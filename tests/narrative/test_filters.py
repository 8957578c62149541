"""Metadata filters: semantics, parsing, errors, narrowing and the SQLite push-down."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragspine.errors import QueryError
from ragspine.narrative.filters import (
    Condition,
    Filter,
    Group,
    GroupMode,
    Op,
    apply_filter,
    date_key,
    parse_filter,
)

ROWS = [
    {"year": 2019, "region": "EMEA", "status": "final", "date": "2019-03-31"},
    {"year": 2020, "region": "APAC", "status": "draft", "date": "2020-06-30T12:00:00Z"},
    {"year": 2021.0, "region": "AMER", "status": "final", "date": "2021-12-31"},
    {"year": "2022", "region": "EMEA", "date": "not a date"},
    {"region": None, "status": "final"},
    {},
]


def matching(spec: object) -> list[int]:
    flt = parse_filter(spec)
    return [i for i, row in enumerate(ROWS) if flt.matches(row)]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("year>=2020", [1, 2]),
        ("year = 2021", [2]),
        ("year > 2019.5", [1, 2]),
        ("year<2020", [0]),
        ("year between [2019,2020]", [0, 1]),
        ("region in [EMEA,APAC]", [0, 1, 3]),
        ("region nin [EMEA]", [1, 2]),
        ("status!=draft", [0, 2, 4]),
        ("status ne final", [1]),
        ("date between [2020-01-01,2021-12-31]", [1, 2]),
        ("date > 2020-06-30", [2]),
        ("date = 2020-06-30", [1]),
        ("date lte 2020-06-30T23:59:59", [0, 1]),
        ('year = "2022"', [3]),
        ("nothing != x", []),
        ("nothing nin [a]", []),
        ({"year": {"gte": 2020}, "region": "APAC"}, [1]),
        ({"or": [{"field": "year", "op": "lt", "value": 2020}, {"status": "draft"}]}, [0, 1]),
        (["year>=2019", "region in [EMEA,AMER]"], [0, 2]),
        (
            {
                "and": [
                    {"field": "status", "op": "eq", "value": "final"},
                    {"or": ["year<2020", {"region": "AMER"}]},
                ]
            },
            [0, 2],
        ),
    ],
)
def test_filter_semantics(spec: object, expected: list[int]) -> None:
    assert matching(spec) == expected


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("year >> 3", "gt"),
        ({"field": "x", "op": "like", "value": 1}, "unknown filter operator 'like'"),
        ("x between [1]", "exactly two bounds"),
        ("x between [3,1]", "reversed"),
        ("x between [1,2020-01-01]", "two numbers or two ISO dates"),
        ({"field": "x", "op": "in", "value": 3}, "needs a list"),
        ("x in []", "non-empty"),
        ("x gt abc", "number or an ISO date"),
        ({"field": "x", "op": "gt", "value": True}, "number or an ISO date"),
        ({"field": "x", "op": "eq", "value": [1, 2]}, "single value"),
        ({"field": "x", "op": "eq", "value": None}, "string, number or boolean"),
        ({"field": "x", "op": "eq", "value": float("nan")}, "finite"),
        ({"field": "bad name", "op": "eq", "value": 1}, "field name"),
        ({"and": []}, "at least one member"),
        ({"field": "x", "op": "eq"}, "exactly 'field', 'op' and 'value'"),
        ([], "empty filter list"),
        (42, "cannot read a filter"),
        ('x in ["a, b]', "unclosed quote"),
    ],
)
def test_malformed_filters_fail_at_construction_listing_valid_forms(
    spec: object, fragment: str
) -> None:
    with pytest.raises(QueryError) as err:
        parse_filter(spec)
    assert fragment in str(err.value)
    assert "valid filter forms" in str(err.value)


def test_text_values_are_typed() -> None:
    assert parse_filter("x = 007") == Condition("x", Op.EQ, 7)
    assert parse_filter('x = "007"') == Condition("x", Op.EQ, "007")
    assert parse_filter("x = true") == Condition("x", Op.EQ, True)
    assert parse_filter("x = 1.5e3") == Condition("x", Op.EQ, 1500.0)
    assert parse_filter("x NOT IN [a, 'b,c']") == Condition("x", Op.NIN, ("a", "b,c"))
    assert parse_filter("x in [South Africa]") == Condition("x", Op.IN, ("South Africa",))


def test_date_key_accepts_iso_dates_and_datetimes_only() -> None:
    assert date_key("2024-02-29") == "2024-02-29"
    assert date_key("2024-02-29T23:10:00+02:00") == "2024-02-29"
    assert date_key("2023-02-29") is None
    assert date_key("2023-13-01") is None
    assert date_key("20230101") is None
    assert date_key(20230101) is None


# ---- property tests -------------------------------------------------------------------------

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


@dataclass(frozen=True)
class Item:
    ident: int
    metadata: dict[str, object]


@given(st.lists(metadata, max_size=12), filters)
def test_filter_never_widens_and_keeps_order(rows: list[dict[str, object]], flt: Filter) -> None:
    items = [Item(i, row) for i, row in enumerate(rows)]
    kept = apply_filter(items, flt)
    ids = [item.ident for item in kept]
    assert ids == sorted(ids)
    assert set(ids) <= set(range(len(items)))
    assert len(kept) <= len(items)
    # AND-ing another filter narrows further
    narrower = apply_filter(kept, Group(GroupMode.AND, (flt, Condition("a", Op.GTE, 0))))
    assert {i.ident for i in narrower} <= set(ids)


@given(filters)
def test_dict_form_round_trips(flt: Filter) -> None:
    assert parse_filter(json.loads(json.dumps(flt.to_dict()))) == flt


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(metadata, min_size=1, max_size=10), filters)
def test_sql_push_down_selects_exactly_the_rows_matches_selects(
    rows: list[dict[str, object]], flt: Filter
) -> None:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE chunk (id INTEGER, metadata TEXT)")
    db.executemany(
        "INSERT INTO chunk VALUES (?, ?)", [(i, json.dumps(r)) for i, r in enumerate(rows)]
    )
    where, params = flt.to_sql("metadata")
    got = [r[0] for r in db.execute(f"SELECT id FROM chunk WHERE {where} ORDER BY id", params)]
    assert got == [i for i, row in enumerate(rows) if flt.matches(row)]


class _WidenedCondition(Condition):
    """A broken variant: 'ne' also matches missing fields."""

    def matches(self, metadata):  # type: ignore[no-untyped-def]
        if self.op is Op.NE and self.field not in metadata:
            return True
        return Condition.matches(self, metadata)


def test_differential_check_catches_a_missing_field_bug() -> None:
    broken = _WidenedCondition("a", Op.NE, "x")
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE chunk (id INTEGER, metadata TEXT)")
    db.execute("INSERT INTO chunk VALUES (0, '{}')")
    where, params = broken.to_sql("metadata")
    assert [r[0] for r in db.execute(f"SELECT id FROM chunk WHERE {where}", params)] == []
    assert broken.matches({}) is True  # the reference disagrees, so the differential test fails


def test_to_sql_rejects_unsafe_column_names() -> None:
    with pytest.raises(QueryError):
        parse_filter("a=1").to_sql("metadata; DROP TABLE chunk")
    assert parse_filter("a=1").to_sql("c.metadata")[0].count("c.metadata") == 2


def test_pushed_down_filter_matching_one_percent_still_fills_top_k() -> None:
    from ragspine.narrative.multi_index import MultiIndexRetriever
    from ragspine.narrative.snippets import Hit

    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE chunk (chunk_id TEXT, library_id TEXT, score REAL, metadata TEXT)")
    rows = [
        (
            f"c{i:04d}",
            "reports",
            float(i % 97),
            json.dumps({"region": "APAC" if i % 100 == 7 else "EMEA"}),
        )
        for i in range(2000)
    ]
    db.executemany("INSERT INTO chunk VALUES (?, ?, ?, ?)", rows)
    flt = parse_filter("region = APAC")
    where, params = flt.to_sql("metadata")

    def search_one(library_id: str, question: str, top_k: int) -> list[Hit]:
        sql = (
            f"SELECT chunk_id, score FROM chunk WHERE library_id = ? AND {where} "
            "ORDER BY score DESC, chunk_id LIMIT ?"
        )
        return [Hit(c, s, library_id) for c, s in db.execute(sql, [library_id, *params, top_k])]

    hits = MultiIndexRetriever(search_one, ["reports"]).retrieve("q", top_k=10).hits
    assert len(hits) == 10
    metadata = {c: json.loads(m) for c, _, _, m in rows}
    assert all(flt.matches(metadata[h.chunk_id]) for h in hits)
    # post-filtering the unfiltered top 10 instead would under-fill
    top = db.execute("SELECT chunk_id FROM chunk ORDER BY score DESC, chunk_id LIMIT 10").fetchall()
    assert sum(flt.matches(metadata[c]) for (c,) in top) < 10
