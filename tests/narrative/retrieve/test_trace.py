"""Trace building: counts, routing, timings, and a JSON form without text."""

from __future__ import annotations

import itertools
import json

from ragspine.analysis import light_stem, routing_terms
from ragspine.narrative.retrieve.trace import Trace, TraceBuilder


def test_builder_records_stages_routing_and_timings() -> None:
    ticks = itertools.count(start=10.0, step=0.5)
    builder = TraceBuilder(filter="year gte 2020", clock=lambda: next(ticks))
    with builder.timed() as timer:
        pass
    builder.add_stage("search:a", 10, 4, dropped_by_filter=3, seconds=timer.seconds)
    builder.set_routing(["a"], "routed", "router picked 1 of 2 libraries", fallback=False)
    builder.note("fixed note")
    trace = builder.build()
    assert trace.stage("search:a").seconds == 0.5
    assert trace.stage_names == ("search:a",)
    assert trace.without_timings().stage("search:a").seconds == 0.0
    data = json.loads(json.dumps(trace.to_dict()))
    assert data["stages"][0] == {
        "name": "search:a",
        "candidates_in": 10,
        "candidates_out": 4,
        "dropped_by_filter": 3,
        "seconds": 0.5,
    }
    assert data["routing"] == {
        "libraries": ["a"],
        "cause": "routed",
        "reason": "router picked 1 of 2 libraries",
        "fallback": False,
    }
    merged = trace.merged(Trace(notes=("second",)))
    assert merged.notes == ("fixed note", "second") and merged.routing == trace.routing


def test_terms_stem_and_drop_stop_words() -> None:
    assert routing_terms("The revenues of the Growing markets") == ["revenu", "grow", "market"]
    assert (
        light_stem("studies") == "study"
        and light_stem("classes") == "class"
        and light_stem("status") == "status"
    )
    assert routing_terms("Umsätze im Jahr 2024") == ["umsätz", "im", "jahr", "2024"]
