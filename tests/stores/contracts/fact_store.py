"""The fact-store contract, written once: what every :class:`FactStore` backend must do.

A backend runs the whole suite by subclassing :class:`FactStoreContract` and supplying one
fixture, ``store``, that yields an empty store and closes it afterwards. The future PostgreSQL
backend needs nothing more than::

    class TestPostgresFactStore(FactStoreContract):
        @pytest.fixture()
        def store(self, postgres_url: str) -> Iterator[FactStore]:
            instance = PostgresFactStore(postgres_url)  # an empty schema per test
            yield instance
            instance.close()

Expected results are computed in plain Python from the facts a test writes (:class:`FactModel`,
:func:`visible_to`), never hard-coded per backend. Each behaviour is its own class so that a
deliberately broken store can run the one class it breaks under ``xfail(strict=True)`` and prove
the suite would catch it (see ``tests/stores/sqlite/test_facts.py``).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragspine.security import Principal, Sensitivity, max_visible_level
from ragspine.stores.facts import FactStore, HistoryEntry, StoredFact, WriteSummary
from ragspine.structured.facts import Fact, FactKey, Scale
from structured.number_strategies import bounded_decimals

EVERYTHING = int(Sensitivity.RESTRICTED)
"""A ``max_level`` that screens nothing out (the store compares; policy lives in security.py)."""

LEVELS = (-1, *sorted({max_visible_level(Principal(level)) for level in Sensitivity}), EVERYTHING)
"""Every ``max_level`` a store must honour: what principals produce, plus none and everything."""

_HYPOTHESIS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.differing_executors],
)


def a_fact(value: str = "1", **changes: object) -> Fact:
    """One internal revenue fact; ``changes`` replace any field."""
    base = Fact(
        "revenue",
        "acme",
        "FY2024",
        "total",
        Decimal(value),
        "USD",
        "USD",
        Scale.MILLION,
        "report-2024",
        "report.csv row 2",
        Sensitivity.INTERNAL,
        "2024-12-31",
        "t0",
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def sample_facts() -> list[Fact]:
    """Facts over two metrics, three entities, two periods and two channels, each sensitivity
    and some awkward decimals; written in an order that is not the key order."""
    values = ["1234567.891", "0.30000000000000004", "-27.1", "1E+3", "0", "41.5", "999"]
    keys = itertools.product(
        ("revenue", "headcount"),
        ("zeta", "acme", "acme_cn"),
        ("FY2024-Q3", "FY2023"),
        ("total", "online"),
    )
    return [
        a_fact(
            values[n % len(values)],
            metric=metric,
            entity=entity,
            period=period,
            channel=channel,
            unit="people" if metric == "headcount" else "USD",
            currency="" if metric == "headcount" else "USD",
            scale=list(Scale)[n % len(Scale)],
            source_doc_id=f"doc-{n % 3}",
            locator=f"table.csv row {n + 2}",
            sensitivity=Sensitivity(n % len(Sensitivity)),
            valid_as_of="" if n % 5 == 0 else "2024-12-31",
        )
        for n, (metric, entity, period, channel) in enumerate(keys)
    ]


def key_order(fact: Fact) -> tuple[str, str, str, str]:
    return (fact.metric, fact.entity, fact.period, fact.channel)


def visible_to(facts: Iterable[Fact], max_level: int) -> list[Fact]:
    """The facts a store may hand to an asker of ``max_level``, in scan order."""
    return sorted((f for f in facts if f.sensitivity <= max_level), key=key_order)


def answer_of(fact: Fact) -> StoredFact:
    """What a lookup of ``fact``'s key returns when the asker may see it."""
    return StoredFact.of(fact)


def same_content(old: Fact, new: Fact) -> bool:
    """Whether writing ``new`` over ``old`` changes nothing (the rule :meth:`FactStore.write`
    states: exact decimal text, unit, currency, scale, source, locator, sensitivity)."""
    return (str(old.value), old.unit, old.currency, old.scale, old.source_doc_id) == (
        str(new.value),
        new.unit,
        new.currency,
        new.scale,
        new.source_doc_id,
    ) and (old.locator, old.sensitivity) == (new.locator, new.sensitivity)


@dataclass
class FactModel:
    """The fact store in plain Python: what a store must hold after the same writes."""

    current: dict[FactKey, Fact] = field(default_factory=dict)
    history: dict[FactKey, list[tuple[Fact, str, str]]] = field(default_factory=dict)

    @classmethod
    def of(cls, store: FactStore, keys: Iterable[FactKey]) -> FactModel:
        """A model starting from what ``store`` holds now (history only for ``keys``)."""
        model = cls({f.key: f for f in store.scan(max_level=EVERYTHING)})
        for key in keys:
            model.history[key] = [lineage(h) for h in store.history(key)]
        return model

    def write(self, facts: Iterable[Fact]) -> WriteSummary:
        added = replaced = unchanged = 0
        for fact in facts:
            old = self.current.get(fact.key)
            if old is None:
                added += 1
            elif same_content(old, fact):
                unchanged += 1
                continue
            else:
                replaced += 1
                entry = (old, fact.source_doc_id, fact.locator)
                self.history.setdefault(fact.key, []).append(entry)
            self.current[fact.key] = fact
        return WriteSummary(added, replaced, unchanged)


def lineage(entry: HistoryEntry) -> tuple[Fact, str, str]:
    """A history entry without its timestamp (which only the store knows)."""
    return (entry.fact, entry.replaced_by_source_doc_id, entry.replaced_by_locator)


def assert_same_facts(got: Iterable[Fact | None], expected: Iterable[Fact | None]) -> None:
    """Equal fields, and values with the same decimal text (``1.0`` is not ``1.00``)."""
    got, expected = list(got), list(expected)
    assert got == expected
    assert [f and str(f.value) for f in got] == [f and str(f.value) for f in expected]


# A small key space so that random writes collide, replace and repeat.
_POOL_KEYS = [
    FactKey(m, e, "FY2024", c)
    for m, e, c in itertools.product(("revenue", "ebit"), ("acme", "zeta"), ("total", "online"))
]


@st.composite
def pooled_facts(draw: st.DrawFn) -> Fact:
    key = draw(st.sampled_from(_POOL_KEYS))
    return a_fact(
        draw(st.sampled_from(["1", "1.0", "2", "-3.5", "1E+3"])),
        metric=key.metric,
        entity=key.entity,
        channel=key.channel,
        unit=draw(st.sampled_from(["USD", "%"])),
        source_doc_id=draw(st.sampled_from(["a", "b"])),
        sensitivity=draw(st.sampled_from(list(Sensitivity))),
        valid_as_of=draw(st.sampled_from(["", "2024-12-31"])),
        ingested_at=draw(st.sampled_from(["t0", "t1"])),
    )


class FactWriteContract:
    """``write``: added / replaced / unchanged, exact values, history of replaced facts."""

    @pytest.mark.parametrize(
        "value", ["1234567.891", "0.30000000000000004", "-27.1", "1E+3", "0.1"]
    )
    def test_values_round_trip_exactly(self, store: FactStore, value: str) -> None:
        store.write([a_fact(value)])
        assert_same_facts([store.get(a_fact().key)], [a_fact(value)])

    @_HYPOTHESIS
    @given(value=bounded_decimals())
    def test_any_bounded_decimal_round_trips(self, store: FactStore, value: Decimal) -> None:
        store.write([a_fact(str(value))])
        got = store.get(a_fact().key)
        assert got is not None and str(got.value) == str(value)

    def test_writing_the_samples_adds_each_once(self, store: FactStore) -> None:
        facts = sample_facts()
        assert store.write(facts) == WriteSummary(len(facts), 0, 0)
        assert store.write(reversed(facts)) == WriteSummary(0, 0, len(facts))

    def test_changed_value_replaces_and_keeps_history(self, store: FactStore) -> None:
        assert store.write([a_fact("10")]) == WriteSummary(1, 0, 0)
        assert store.write([a_fact("10")]) == WriteSummary(0, 0, 1)
        restated = a_fact("12", source_doc_id="restated-2025", locator="r.csv row 9")
        assert store.write([restated]) == WriteSummary(0, 1, 0)
        assert_same_facts([store.get(restated.key)], [restated])
        history = store.history(restated.key)
        assert [lineage(h) for h in history] == [(a_fact("10"), "restated-2025", "r.csv row 9")]
        assert history[0].replaced_at

    def test_history_of_a_key_never_replaced_is_empty(self, store: FactStore) -> None:
        store.write(sample_facts())
        assert [list(store.history(f.key)) for f in sample_facts()] == [[]] * len(sample_facts())

    @_HYPOTHESIS
    @given(batches=st.lists(st.lists(pooled_facts(), max_size=6), min_size=1, max_size=3))
    def test_any_sequence_of_writes_matches_the_model(
        self, store: FactStore, batches: list[list[Fact]]
    ) -> None:
        model = FactModel.of(store, _POOL_KEYS)
        for batch in batches:
            assert store.write(batch) == model.write(batch)
        assert store.count() == len(model.current)
        assert_same_facts(
            [store.get(k) for k in _POOL_KEYS], [model.current.get(k) for k in _POOL_KEYS]
        )
        for key in _POOL_KEYS:
            got = [lineage(h) for h in store.history(key)]
            expected = model.history.get(key, [])
            assert got == expected
            assert_same_facts([g[0] for g in got], [e[0] for e in expected])


class FactAtomicityContract:
    """A write that fails midway leaves facts, history and count as they were."""

    @staticmethod
    def _failing(facts: Iterable[Fact]) -> Iterator[Fact]:
        yield from facts
        raise RuntimeError("source broke midway")

    def test_a_failed_write_adds_and_replaces_nothing(self, store: FactStore) -> None:
        store.write([a_fact("1")])
        with pytest.raises(RuntimeError, match="midway"):
            store.write(self._failing([a_fact("2"), a_fact("3", entity="other")]))
        assert store.count() == 1
        assert_same_facts(store.scan(max_level=EVERYTHING), [a_fact("1")])

    def test_a_failed_write_records_no_history(self, store: FactStore) -> None:
        facts = sample_facts()
        store.write(facts)
        changed = [replace(f, value=f.value + 1, locator="restated") for f in facts[:3]]
        with pytest.raises(RuntimeError, match="midway"):
            store.write(self._failing(changed))
        assert [list(store.history(f.key)) for f in changed] == [[], [], []]
        assert_same_facts(store.scan(max_level=EVERYTHING), visible_to(facts, EVERYTHING))


class FactGetContract:
    """``get``: the current fact whatever its sensitivity (ingestion and upkeep, not answers)."""

    def test_get_returns_every_written_fact(self, store: FactStore) -> None:
        facts = sample_facts()
        store.write(facts)
        assert_same_facts([store.get(f.key) for f in facts], facts)

    def test_get_of_a_missing_key_is_none(self, store: FactStore) -> None:
        store.write(sample_facts())
        assert store.get(FactKey("revenue", "acme", "FY1999", "total")) is None
        assert store.get(replace(a_fact(), channel="wholesale").key) is None


class FactLookupContract:
    """``lookup``: the answer columns of one key, as typed values."""

    def test_lookup_returns_what_was_written(self, store: FactStore) -> None:
        facts = sample_facts()
        store.write(facts)
        got = [store.lookup(f.key, max_level=EVERYTHING) for f in facts]
        assert got == [answer_of(f) for f in facts]
        assert [g and str(g.value) for g in got] == [str(f.value) for f in facts]
        assert all(g and type(g.scale) is Scale and type(g.sensitivity) is Sensitivity for g in got)

    def test_lookup_follows_a_replacement(self, store: FactStore) -> None:
        store.write([a_fact("10")])
        store.write([a_fact("12", locator="restated")])
        assert store.lookup(a_fact().key, max_level=EVERYTHING) == answer_of(
            a_fact("12", locator="restated")
        )

    def test_lookup_of_a_missing_key_is_none(self, store: FactStore) -> None:
        store.write(sample_facts())
        assert (
            store.lookup(FactKey("revenue", "acme", "FY1999", "total"), max_level=EVERYTHING)
            is None
        )


class FactLookupManyContract:
    """``lookup_many``: the same answers as ``lookup`` for many keys at once."""

    def test_lookup_many_agrees_with_lookup_at_every_level(self, store: FactStore) -> None:
        facts = sample_facts()
        store.write(facts)
        keys = [f.key for f in facts] + [FactKey("revenue", "acme", "FY1999", "total")]
        for level in LEVELS:
            expected = {k: a for k in keys if (a := store.lookup(k, max_level=level)) is not None}
            got = store.lookup_many(keys, max_level=level)
            assert dict(got) == expected, f"max_level={level}"
            assert all(str(got[k].value) == str(expected[k].value) for k in expected)

    def test_lookup_many_of_nothing_and_of_repeated_keys(self, store: FactStore) -> None:
        store.write([a_fact("0.1")])
        assert dict(store.lookup_many([], max_level=EVERYTHING)) == {}
        key = a_fact().key
        got = store.lookup_many([key, key, key], max_level=EVERYTHING)
        assert dict(got) == {key: answer_of(a_fact("0.1"))}

    def test_lookup_many_reads_thousands_of_keys(self, store: FactStore) -> None:
        facts = [
            a_fact(f"{n}.5", entity=f"e{n:05d}", channel="online" if n % 2 else "total")
            for n in range(2500)
        ]
        store.write(facts)
        keys = [f.key for f in facts] + [replace(f, period="FY2020").key for f in facts[:700]]
        got = store.lookup_many(reversed(keys), max_level=EVERYTHING)
        assert dict(got) == {f.key: answer_of(f) for f in facts}


class FactVisibilityContract:
    """``max_level`` is applied by the store: a fact above it is read as missing."""

    def test_lookup_many_hides_facts_above_max_level(self, store: FactStore) -> None:
        facts = sample_facts()
        store.write(facts)
        for level in LEVELS:
            got = store.lookup_many([f.key for f in facts], max_level=level)
            expected = {f.key: answer_of(f) for f in facts if f.sensitivity <= level}
            assert dict(got) == expected, f"max_level={level}"

    def test_lookup_hides_facts_above_max_level(self, store: FactStore) -> None:
        facts = sample_facts()
        store.write(facts)
        for level in LEVELS:
            got = [store.lookup(f.key, max_level=level) for f in facts]
            expected = [answer_of(f) if f.sensitivity <= level else None for f in facts]
            assert got == expected, f"max_level={level}"

    def test_scan_hides_facts_above_max_level(self, store: FactStore) -> None:
        facts = sample_facts()
        store.write(facts)
        for level in LEVELS:
            assert_same_facts(store.scan(max_level=level), visible_to(facts, level))

    def test_metrics_of_names_only_metrics_with_a_visible_fact(self, store: FactStore) -> None:
        facts = sample_facts()
        store.write(facts)
        for level in LEVELS:
            for entity in {f.entity for f in facts}:
                expected = {f.metric for f in visible_to(facts, level) if f.entity == entity}
                got = store.metrics_of(entity, max_level=level)
                assert got == expected, f"{entity} at max_level={level}"

    def test_a_hidden_fact_reads_exactly_like_a_missing_one(self, store: FactStore) -> None:
        secret = a_fact("999", entity="acme_cn", sensitivity=Sensitivity.CONFIDENTIAL)
        store.write([secret])
        level = max_visible_level(Principal.of("internal"))
        hidden = store.lookup(secret.key, max_level=level)
        missing = store.lookup(replace(secret, period="FY2022").key, max_level=level)
        assert hidden is missing is None
        assert list(store.scan(max_level=level, entity="acme_cn")) == []


class FactScanContract:
    """``scan``: current facts in key order, narrowed by metric and entity."""

    def test_scan_of_an_empty_store_yields_nothing(self, store: FactStore) -> None:
        assert list(store.scan(max_level=EVERYTHING)) == []

    def test_scan_yields_current_facts_in_key_order(self, store: FactStore) -> None:
        facts = sample_facts()
        store.write(facts)
        restated = replace(facts[4], value=Decimal("-1"), locator="restated")
        store.write([restated])
        current = [restated if f.key == restated.key else f for f in facts]
        assert_same_facts(store.scan(max_level=EVERYTHING), visible_to(current, EVERYTHING))

    @pytest.mark.parametrize(
        ("metric", "entity"),
        [
            ("revenue", None),
            (None, "acme"),
            ("headcount", "acme_cn"),
            ("revenue", "nobody"),
            ("ebit", None),
        ],
    )
    def test_scan_narrows_to_metric_and_entity(
        self, store: FactStore, metric: str | None, entity: str | None
    ) -> None:
        facts = sample_facts()
        store.write(facts)
        level = int(Sensitivity.INTERNAL)
        wanted = [
            f
            for f in facts
            if (metric is None or f.metric == metric) and (entity is None or f.entity == entity)
        ]
        got = store.scan(max_level=level, metric=metric, entity=entity)
        assert_same_facts(got, visible_to(wanted, level))

    def test_scan_narrows_to_a_period(self, store: FactStore) -> None:
        facts = sample_facts()
        store.write(facts)
        period = facts[0].period
        wanted = [f for f in facts if f.metric == facts[0].metric and f.period == period]
        got = store.scan(max_level=EVERYTHING, metric=facts[0].metric, period=period)
        assert_same_facts(got, visible_to(wanted, EVERYTHING))
        assert list(store.scan(max_level=EVERYTHING, period="FY1900")) == []


class FactCountContract:
    """``count``: the number of current facts (history is not counted)."""

    def test_an_empty_store_counts_zero(self, store: FactStore) -> None:
        assert store.count() == 0

    def test_count_is_the_number_of_distinct_keys(self, store: FactStore) -> None:
        facts = sample_facts()
        store.write(facts)
        store.write([replace(f, value=f.value + 1) for f in facts[:5]])
        assert store.count() == len({f.key for f in facts})


class FactStoreContract(
    FactWriteContract,
    FactAtomicityContract,
    FactGetContract,
    FactLookupContract,
    FactLookupManyContract,
    FactVisibilityContract,
    FactScanContract,
    FactCountContract,
):
    """The whole contract: subclass it and supply a ``store`` fixture yielding an empty store."""
