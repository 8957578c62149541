"""Metadata filters: semantics, parsing, errors, narrowing and the SQLite compiler.

That a store's pushed-down filter selects exactly what :meth:`Filter.matches` selects is part of
the chunk-store contract (``tests/stores/contracts/chunk_store.py``).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from narrative.filters.strategies import FIELDS, filters, metadata, scalars
from ragspine.errors import QueryError
from ragspine.narrative.filters.expr import (
    Condition,
    Filter,
    Group,
    GroupMode,
    Op,
    Scalar,
    date_key,
    parse_filter,
)
from ragspine.narrative.filters.limits import MAX_CONDITIONS, MAX_DEPTH
from ragspine.stores.sqlite.filter_sql import filter_to_sql

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


@dataclass(frozen=True)
class Item:
    ident: int
    metadata: dict[str, object]


@given(st.lists(metadata, max_size=12), filters)
def test_filter_never_widens_and_keeps_order(rows: list[dict[str, object]], flt: Filter) -> None:
    items = [Item(i, row) for i, row in enumerate(rows)]
    kept = [item for item in items if flt.matches(item.metadata)]
    ids = [item.ident for item in kept]
    assert ids == sorted(ids)
    assert set(ids) <= set(range(len(items)))
    assert len(kept) <= len(items)
    # AND-ing another filter narrows further
    both = Group(GroupMode.AND, (flt, Condition("a", Op.GTE, 0)))
    narrower = [item for item in kept if both.matches(item.metadata)]
    assert {i.ident for i in narrower} <= set(ids)


@given(filters)
def test_dict_form_round_trips(flt: Filter) -> None:
    assert parse_filter(json.loads(json.dumps(flt.to_dict()))) == flt


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
    where, params = filter_to_sql(broken, "metadata")
    assert [r[0] for r in db.execute(f"SELECT id FROM chunk WHERE {where}", params)] == []
    assert broken.matches({}) is True  # the reference disagrees, so the differential test fails


def test_sql_compiler_rejects_unsafe_column_names() -> None:
    with pytest.raises(QueryError):
        filter_to_sql(parse_filter("a=1"), "metadata; DROP TABLE chunk")
    assert filter_to_sql(parse_filter("a=1"), "c.metadata")[0].count("c.metadata") == 2


def test_pushed_down_filter_matching_one_percent_still_fills_top_k() -> None:
    from ragspine.narrative.retrieve.multi_index import MultiIndexRetriever
    from ragspine.narrative.retrieve.snippets import LibraryHit

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
    where, params = filter_to_sql(flt, "metadata")

    def search_one(library_id: str, question: str, top_k: int) -> list[LibraryHit]:
        sql = (
            f"SELECT chunk_id, score FROM chunk WHERE library_id = ? AND {where} "
            "ORDER BY score DESC, chunk_id LIMIT ?"
        )
        return [
            LibraryHit(c, s, library_id) for c, s in db.execute(sql, [library_id, *params, top_k])
        ]

    hits = MultiIndexRetriever(search_one, ["reports"]).retrieve("q", top_k=10).hits
    assert len(hits) == 10
    metadata = {c: json.loads(m) for c, _, _, m in rows}
    assert all(flt.matches(metadata[h.chunk_id]) for h in hits)
    # post-filtering the unfiltered top 10 instead would under-fill
    top = db.execute("SELECT chunk_id FROM chunk ORDER BY score DESC, chunk_id LIMIT 10").fetchall()
    assert sum(flt.matches(metadata[c]) for (c,) in top) < 10


# ---- size: every filter that builds runs; beyond a limit, a QueryError names it ----------------

WIDE_ROWS: list[dict[str, object]] = [
    {
        "name": f"v{i}",
        "n": i,
        "day": f"2020-01-{i % 28 + 1:02d}",
        "flag": i % 2 == 0,
        "city": "Z\u00fcrich" if i % 3 else "Zu\u0308rich",
    }
    for i in range(300)
] + [{}, {"name": None}, {"n": "7"}, {"day": "2020-02-30"}]


def sql_rows(flt: Filter, rows: list[dict[str, object]] = WIDE_ROWS) -> list[int]:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE chunk (id INTEGER, metadata TEXT)")
    db.executemany(
        "INSERT INTO chunk VALUES (?, ?)",
        [(i, json.dumps(r, ensure_ascii=False)) for i, r in enumerate(rows)],
    )
    where, params = filter_to_sql(flt, "metadata")
    return [r[0] for r in db.execute(f"SELECT id FROM chunk WHERE {where} ORDER BY id", params)]


def python_rows(flt: Filter, rows: list[dict[str, object]] = WIDE_ROWS) -> list[int]:
    return [i for i, row in enumerate(rows) if flt.matches(row)]


@pytest.mark.parametrize("op", [Op.IN, Op.NIN])
@pytest.mark.parametrize("size", [1_000, 10_000])
def test_a_large_in_list_runs_and_agrees_with_matches(op: Op, size: int) -> None:
    values: list[Scalar] = [f"v{i}" for i in range(0, size, 2)]
    values += list(range(1, size // 2, 3))
    values += [f"2020-01-{d:02d}" for d in range(1, 10)] + [True]
    values = values[:size]
    for field in ("name", "n", "day", "flag"):
        flt = Condition(field, op, tuple(values))
        assert sql_rows(flt) == python_rows(flt), field
    text = parse_filter(f"name {op.value} [" + ",".join(f"v{i}" for i in range(size)) + "]")
    assert sql_rows(text) == python_rows(text)
    assert len(python_rows(text)) == (300 if op is Op.IN else 0)


def chain(depth: int, leaf: Callable[[int], Filter]) -> Filter:
    flt = leaf(0)
    for level in range(depth):
        mode = GroupMode.AND if level % 2 else GroupMode.OR
        flt = Group(mode, (flt, leaf(level + 1)))
    return flt


def balanced(leaves: list[Filter], level: int = 0) -> Filter:
    while len(leaves) > 1:
        mode = GroupMode.AND if level % 2 else GroupMode.OR
        leaves = [Group(mode, tuple(leaves[i : i + 2])) for i in range(0, len(leaves), 2)]
        level += 1
    return leaves[0]


def heavy(i: int) -> Filter:
    """The condition whose SQL is the largest: nin over all four kinds."""
    return Condition("day", Op.NIN, (f"2020-01-{i % 28 + 1:02d}", i, i % 2 == 0, f"v{i}"))


def light(i: int) -> Filter:
    return Condition("n", Op.GTE if i % 2 else Op.LT, i * 7 % 300)


def deep_with_subtrees() -> Filter:
    """MAX_DEPTH levels, each with a balanced sibling subtree, MAX_CONDITIONS conditions in all."""
    per_level = (MAX_CONDITIONS - 1) // (MAX_DEPTH - 3)
    flt: Filter = heavy(0)
    for level in range(MAX_DEPTH - 3):
        subtree = balanced([heavy(level * 10 + k) for k in range(per_level)], level)
        flt = Group(GroupMode.AND if level % 2 else GroupMode.OR, (subtree, flt))
    return flt


@pytest.mark.parametrize(
    "build",
    [
        lambda: chain(MAX_DEPTH, light),
        lambda: chain(MAX_DEPTH, heavy),
        lambda: Group(GroupMode.OR, tuple(heavy(i) for i in range(MAX_CONDITIONS))),
        lambda: Group(GroupMode.AND, tuple(light(i) for i in range(MAX_CONDITIONS))),
        lambda: balanced([heavy(i) for i in range(MAX_CONDITIONS)]),
        deep_with_subtrees,
    ],
    ids=["chain-light", "chain-heavy", "flat-or", "flat-and", "balanced", "deep-with-subtrees"],
)
def test_filters_at_the_limits_run_in_sqlite_and_agree(build: Callable[[], Filter]) -> None:
    flt = build()
    assert sql_rows(flt) == python_rows(flt)
    assert parse_filter(json.loads(json.dumps(flt.to_dict()))) == flt


def nested_dict(depth: int) -> dict[str, object]:
    spec: dict[str, object] = {"field": "n", "op": "gte", "value": 0}
    for _ in range(depth):
        spec = {"and": [spec, {"field": "n", "op": "lt", "value": 100}]}
    return spec


def test_nesting_up_to_the_limit_builds_and_one_more_level_fails() -> None:
    assert sql_rows(parse_filter(nested_dict(MAX_DEPTH))) == list(range(100))
    with pytest.raises(QueryError, match=f"at most {MAX_DEPTH} levels"):
        parse_filter(nested_dict(MAX_DEPTH + 1))


@pytest.mark.parametrize(
    ("build", "limit"),
    [
        (lambda: Condition("n", Op.IN, tuple(range(100_000))), "may hold at most 10,000 values"),
        (lambda: Condition("n", Op.NIN, tuple(range(100_000))), "may hold at most 10,000 values"),
        (
            lambda: parse_filter("n in [" + ",".join(map(str, range(100_000))) + "]"),
            "may hold at most 10,000 values",
        ),
        (
            lambda: parse_filter({"n": {"in": list(range(6_000)), "nin": list(range(6_000))}}),
            "at most 10,000 values in all",
        ),
        (lambda: chain(1_000, light), f"at most {MAX_DEPTH} levels"),
        (lambda: chain(10_000, light), f"at most {MAX_DEPTH} levels"),
        (lambda: parse_filter(nested_dict(1_000)), f"at most {MAX_DEPTH} levels"),
        (lambda: parse_filter(nested_dict(10_000)), f"at most {MAX_DEPTH} levels"),
        (
            lambda: Group(GroupMode.OR, tuple(light(i) for i in range(5_000))),
            f"at most {MAX_CONDITIONS} conditions",
        ),
        (
            lambda: parse_filter([f"n != {i}" for i in range(100_000)]),
            f"at most {MAX_CONDITIONS} conditions",
        ),
        (lambda: parse_filter("name = " + "x" * 2_000_000), "at most 1,000,000 characters"),
        (lambda: Condition("n", Op.EQ, 10**30), "64-bit integers"),
        (lambda: parse_filter("n = " + "9" * 5_000), "64-bit integers"),
        (lambda: parse_filter({"n": {"in": [1, 2**64]}}), "64-bit integers"),
        (lambda: Condition("name", Op.EQ, "bad \ud800"), "lone surrogate"),
    ],
)
def test_a_filter_beyond_a_limit_fails_at_construction_naming_it(
    build: Callable[[], Filter], limit: str
) -> None:
    started = time.perf_counter()
    with pytest.raises(QueryError) as err:
        build()
    assert time.perf_counter() - started < 5
    assert limit in str(err.value)
    assert len(str(err.value).splitlines()[0]) < 300


def test_long_expressions_parse_in_linear_time() -> None:
    started = time.perf_counter()
    flt = parse_filter("name = x" + " " * 60_000 + "y")
    assert flt == Condition("name", Op.EQ, "x" + " " * 60_000 + "y")
    flt = parse_filter("name in [" + ", ".join(f"v{i}" for i in range(10_000)) + "]")
    assert len(python_rows(flt)) == 300
    assert time.perf_counter() - started < 2


def test_echoed_values_are_cut_to_80_characters() -> None:
    with pytest.raises(QueryError) as err:
        parse_filter("x gt " + "a" * 10_000)
    first_line = str(err.value).splitlines()[0]
    assert "a" * 80 + "…' (10000 characters)" in first_line and "a" * 81 not in first_line


# ---- Unicode: NFKC for the syntax and field names, NFC (and NFD) for string values -------------


def fullwidth(text: str) -> str:
    """``text`` with ASCII letters, digits and operators typed as their full-width forms."""
    return "".join(chr(ord(ch) + 0xFEE0) if "!" <= ch <= "~" else ch for ch in text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (fullwidth("year>=2020"), Condition("year", Op.GTE, 2020)),
        ("year\u00a0>=\u00a02020", Condition("year", Op.GTE, 2020)),
        ("year\u3000in\u3000[2020,\u00a02021]", Condition("year", Op.IN, (2020, 2021))),
        (
            "region in [" + fullwidth("EMEA") + ", APAC]",
            Condition("region", Op.IN, ("EMEA", "APAC")),
        ),
        (f'code = "{fullwidth("007")}"', Condition("code", Op.EQ, fullwidth("007"))),
        (
            "day between [" + fullwidth("2020-01-01,2020-12-31") + "]",
            Condition("day", Op.BETWEEN, ("2020-01-01", "2020-12-31")),
        ),
    ],
)
def test_text_syntax_reads_full_width_and_no_break_spaces(text: str, expected: Filter) -> None:
    assert parse_filter(text) == expected


def test_field_names_are_read_in_nfkc_in_every_form() -> None:
    assert parse_filter({fullwidth("year"): {"gte": 2020}}) == Condition("year", Op.GTE, 2020)
    assert Condition(fullwidth("year"), Op.EQ, 1).field == "year"


@pytest.mark.parametrize("spelling", ["Z\u00fcrich", "Zu\u0308rich"])
@pytest.mark.parametrize("op", [Op.EQ, Op.NE, Op.IN, Op.NIN])
def test_composed_and_decomposed_values_match_each_other(spelling: str, op: Op) -> None:
    """Rows 0-299 hold "Zürich" composed or decomposed; a filter in either form finds them all."""
    listed = op in (Op.IN, Op.NIN)
    flt = Condition("city", op, (spelling, "Basel") if listed else spelling)
    expected = list(range(300)) if op in (Op.EQ, Op.IN) else []
    assert python_rows(flt) == expected
    assert sql_rows(flt) == expected
    text = parse_filter(
        f"city {op.value} [{spelling}]" if listed else f"city {op.value} {spelling}"
    )
    assert python_rows(text) == sql_rows(text) == expected
    composed = "Z\u00fcrich"
    assert flt.to_dict()["value"] == ([composed, "Basel"] if listed else composed)


unicode_texts = st.sampled_from(
    [
        "Z\u00fcrich",
        "Zu\u0308rich",
        "\u00e9",
        "e\u0301",
        "\uff25",
        "E",
        "ß",
        "ss",
        "\u00a0",
        "x\u200b",
    ]
)


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.dictionaries(st.sampled_from(FIELDS), unicode_texts | scalars, max_size=3), max_size=8
    ),
    st.sampled_from([Op.EQ, Op.NE, Op.IN, Op.NIN]),
    st.sampled_from(FIELDS),
    st.lists(unicode_texts | scalars, min_size=1, max_size=40),
)
def test_sql_and_python_agree_on_unicode_and_long_lists(
    rows: list[dict[str, object]], op: Op, field: str, values: list[Scalar]
) -> None:
    value: Scalar | tuple[Scalar, ...] = tuple(values) if op in (Op.IN, Op.NIN) else values[0]
    flt = Condition(field, op, value)
    assert sql_rows(flt, rows) == python_rows(flt, rows)
