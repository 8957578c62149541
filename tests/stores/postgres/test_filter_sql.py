"""The PostgreSQL filter compiler without a server: what it binds and the metadata form it reads
(the chunk-store tests run the SQL itself)."""

from __future__ import annotations

import json
import sys
from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from narrative.filters.strategies import filters
from ragspine.narrative.filters.expr import Condition, Filter, Group, GroupMode, Op
from ragspine.stores.postgres.filter_sql import filter_json, filter_to_sql


@given(flt=filters)
def test_every_field_and_value_is_a_parameter(flt: Filter) -> None:
    sql, params = filter_to_sql(flt, "d.metadata")
    assert sql.count("%s") == len(params)
    assert "%" not in sql.replace("%s", "")


def test_hostile_fields_and_values_never_reach_the_sql_text() -> None:
    hostile = "zq'); DROP TABLE narrative_chunks; --"
    conditions = []
    for op, value in ((Op.EQ, hostile), (Op.NIN, (hostile, 1)), (Op.GT, 2.5)):
        condition = Condition("year", op, value)
        object.__setattr__(condition, "field", hostile)
        conditions.append(condition)
    sql, params = filter_to_sql(Group(GroupMode.OR, tuple(conditions)), "d.metadata")
    assert "zq" not in sql and "DROP" not in sql
    flat = [v for p in params for v in (p if isinstance(p, list) else [p])]
    assert set(flat) == {hostile, "1", "2.5"}  # the field, the text values, the numbers


def test_the_filters_metadata_form_keeps_what_it_can_and_writes_floats_exactly() -> None:
    plain = {"b": [1, {"k": "v"}], "a": 2020, "s": "x"}
    text = json.dumps(plain, sort_keys=True, ensure_ascii=False)
    assert filter_json(plain, text) is text  # nothing to rewrite: the stored text itself
    odd = {"f": 0.1, "big": 2.0**60, "nan": float("nan"), "inf": float("-inf"), "nul": "a\x00"}
    form = json.loads(
        filter_json(odd, json.dumps(odd, sort_keys=True)), parse_float=Decimal, parse_int=Decimal
    )
    assert form["f"] == Decimal.from_float(0.1) != Decimal("0.1")
    assert form["big"] == Decimal(2**60)
    assert form["nan"] == [] and form["inf"] < Decimal.from_float(-sys.float_info.max)
    assert form["nul"] == "a\ufffd"


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_a_float_field_is_written_at_its_exact_value(value: float) -> None:
    text = filter_json({"x": value}, json.dumps({"x": value}))
    assert Decimal(json.loads(text, parse_float=Decimal, parse_int=Decimal)["x"]) == Decimal(value)
