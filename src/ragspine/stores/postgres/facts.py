"""PostgreSQL implementation of the fact store."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from decimal import Decimal
from typing import Any

from ragspine.security import Sensitivity
from ragspine.stores.facts import HistoryEntry, StoredFact, WriteSummary
from ragspine.stores.postgres.database import Database
from ragspine.structured.facts import Fact, FactKey, Scale, utc_now

_COLUMNS = (
    "metric, entity, period, channel, value, unit, currency, scale, source_doc_id, locator, "
    "sensitivity, valid_as_of, ingested_at"
)
_LOOKUP = (
    "SELECT value, unit, currency, scale, source_doc_id, locator, sensitivity, valid_as_of "
    "FROM facts WHERE metric = %s AND entity = %s AND period = %s AND channel = %s "
    "AND sensitivity <= %s"
)
_GET = (
    f"SELECT {_COLUMNS} FROM facts "
    "WHERE metric = %s AND entity = %s AND period = %s AND channel = %s"
)
_WRITE_LOCK = "SELECT pg_advisory_xact_lock(hashtextextended(current_schema() || ':facts', 0))"
_BATCH = 5000
"""Keys per statement when reading many at once (arrays, one round trip each)."""
_SCALES = {scale.value: scale for scale in Scale}
_LEVELS = {int(level): level for level in Sensitivity}


def _fact(row: Sequence[Any]) -> Fact:
    return Fact(
        row[0], row[1], row[2], row[3], Decimal(row[4]), row[5], row[6], _SCALES[row[7]],
        row[8], row[9], _LEVELS[row[10]], row[11], row[12],
    )  # fmt: skip


def _row(fact: Fact) -> tuple[Any, ...]:
    return (
        fact.metric, fact.entity, fact.period, fact.channel, str(fact.value), fact.unit,
        fact.currency, fact.scale.value, fact.source_doc_id, fact.locator,
        int(fact.sensitivity), fact.valid_as_of, fact.ingested_at,
    )  # fmt: skip


def _stored(row: Sequence[Any]) -> StoredFact:
    value, unit, currency, scale, doc, locator, level, valid = row
    return StoredFact(Decimal(value), unit, currency, _SCALES[scale], doc, locator,
                      _LEVELS[level], valid)  # fmt: skip


class PostgresFactStore:
    """Facts in the workspace database; values kept as exact decimal text (as in SQLite).

    Writers serialize on a transaction-level advisory lock, so two imports at once each see the
    other's result whole and count added / replaced / unchanged against it.
    """

    def __init__(self, db: Database) -> None:
        self._db = db

    def get(self, key: FactKey) -> Fact | None:
        with self._db.connection() as conn:
            row = conn.execute(_GET, (key.metric, key.entity, key.period, key.channel)).fetchone()
        return None if row is None else _fact(row)

    def lookup(self, key: FactKey, *, max_level: int) -> StoredFact | None:
        with self._db.connection() as conn:
            row = conn.execute(
                _LOOKUP, (key.metric, key.entity, key.period, key.channel, max_level)
            ).fetchone()
        return None if row is None else _stored(row)

    def lookup_many(self, keys: Iterable[FactKey], *, max_level: int) -> dict[FactKey, StoredFact]:
        wanted = list(dict.fromkeys(keys))
        found: dict[FactKey, StoredFact] = {}
        with self._db.connection() as conn:
            for start in range(0, len(wanted), _BATCH):
                batch = wanted[start : start + _BATCH]
                rows = conn.execute(
                    "SELECT f.metric, f.entity, f.period, f.channel, value, unit, currency, scale, "
                    "source_doc_id, locator, sensitivity, valid_as_of FROM facts f JOIN "
                    "unnest(%s::text[], %s::text[], %s::text[], %s::text[]) "
                    "AS k(metric, entity, period, channel) USING (metric, entity, period, channel) "
                    "WHERE sensitivity <= %s",
                    (*_columns(batch), max_level),
                ).fetchall()
                for row in rows:
                    found[FactKey(row[0], row[1], row[2], row[3])] = _stored(row[4:])
        return found

    def scan(
        self,
        *,
        max_level: int,
        metric: str | None = None,
        entity: str | None = None,
        period: str | None = None,
    ) -> Iterator[Fact]:
        where = ["sensitivity <= %s"]
        params: list[Any] = [max_level]
        for column, value in (("metric", metric), ("entity", entity), ("period", period)):
            if value is not None:
                where.append(f"{column} = %s")
                params.append(value)
        sql = (
            f"SELECT {_COLUMNS} FROM facts WHERE {' AND '.join(where)} "
            "ORDER BY metric, entity, period, channel"
        )
        with self._db.connection() as conn:
            rows = conn.execute(sql, params).fetchall()
        for row in rows:
            yield _fact(row)

    def metrics_of(self, entity: str, *, max_level: int) -> frozenset[str]:
        with self._db.connection() as conn:
            rows = conn.execute(
                "SELECT DISTINCT metric FROM facts WHERE entity = %s AND sensitivity <= %s",
                (entity, max_level),
            ).fetchall()
        return frozenset(row[0] for row in rows)

    def write(self, facts: Iterable[Fact]) -> WriteSummary:
        rows = [_row(fact) for fact in facts]  # an input that fails here has written nothing
        added = replaced = unchanged = 0
        now = utc_now()
        with self._db.transaction() as conn:
            conn.execute(_WRITE_LOCK)
            current = self._current(conn, rows)
            history: list[tuple[Any, ...]] = []
            final: dict[tuple[Any, ...], tuple[Any, ...]] = {}
            for row in rows:
                key = row[:4]
                old = current.get(key)
                if old is None:
                    added += 1
                elif old[4:11] == row[4:11]:
                    unchanged += 1
                    continue
                else:
                    replaced += 1
                    history.append((*old, now, row[8], row[9]))
                current[key] = final[key] = row
            with conn.cursor() as cur:
                if history:
                    with cur.copy(
                        f"COPY fact_history ({_COLUMNS}, replaced_at, replaced_by_source_doc_id, "
                        "replaced_by_locator) FROM STDIN"
                    ) as copy:
                        for entry in history:
                            copy.write_row(entry)
                if final:
                    cur.execute("CREATE TEMP TABLE incoming_facts (LIKE facts) ON COMMIT DROP")
                    with cur.copy(f"COPY incoming_facts ({_COLUMNS}) FROM STDIN") as copy:
                        for row in final.values():
                            copy.write_row(row)
                    updates = ", ".join(f"{c} = excluded.{c}" for c in _COLUMNS.split(", ")[4:])
                    cur.execute(
                        f"INSERT INTO facts ({_COLUMNS}) SELECT {_COLUMNS} FROM incoming_facts "
                        f"ON CONFLICT (metric, entity, period, channel) DO UPDATE SET {updates}"
                    )
        return WriteSummary(added, replaced, unchanged)

    @staticmethod
    def _current(
        conn: Any, rows: Sequence[tuple[Any, ...]]
    ) -> dict[tuple[Any, ...], tuple[Any, ...]]:
        """The stored rows of the keys in ``rows``."""
        keys = list(dict.fromkeys(row[:4] for row in rows))
        current: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        for start in range(0, len(keys), _BATCH):
            batch = keys[start : start + _BATCH]
            found = conn.execute(
                f"SELECT {', '.join('f.' + c for c in _COLUMNS.split(', '))} FROM facts f JOIN "
                "unnest(%s::text[], %s::text[], %s::text[], %s::text[]) "
                "AS k(metric, entity, period, channel) USING (metric, entity, period, channel)",
                tuple(list(column) for column in zip(*batch, strict=True)),
            ).fetchall()
            for row in found:
                current[tuple(row[:4])] = tuple(row)
        return current

    def history(self, key: FactKey) -> list[HistoryEntry]:
        with self._db.connection() as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS}, replaced_at, replaced_by_source_doc_id, replaced_by_locator "
                "FROM fact_history WHERE metric = %s AND entity = %s AND period = %s "
                "AND channel = %s ORDER BY id",
                (key.metric, key.entity, key.period, key.channel),
            ).fetchall()
        return [HistoryEntry(_fact(r[:13]), r[13], r[14], r[15]) for r in rows]

    def count(self) -> int:
        with self._db.connection() as conn:
            row = conn.execute("SELECT count(*) FROM facts").fetchone()
        return int(row[0]) if row else 0

    def close(self) -> None:
        """The database (and its pool) belongs to the backend, which closes it."""


def _columns(keys: Sequence[FactKey]) -> tuple[list[str], ...]:
    return (
        [k.metric for k in keys],
        [k.entity for k in keys],
        [k.period for k in keys],
        [k.channel for k in keys],
    )
