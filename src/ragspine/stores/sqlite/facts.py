"""SQLite implementation of the fact store (the embedded default)."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from decimal import Decimal
from pathlib import Path

from ragspine.errors import StoreError
from ragspine.security import Sensitivity
from ragspine.stores.facts import HistoryEntry, StoredFact, WriteSummary
from ragspine.stores.sqlite.connect import (
    ThreadConnections,
    connect,
    has_tables,
    write_transaction,
)
from ragspine.structured.facts import Fact, FactKey, Scale, utc_now

SCHEMA_VERSION = 1

_COLUMNS = (
    "metric, entity, period, channel, value, unit, currency, scale, source_doc_id, locator, "
    "sensitivity, valid_as_of, ingested_at"
)
_ENTITY_INDEX = "CREATE INDEX IF NOT EXISTS facts_by_entity ON facts (entity, sensitivity, metric)"
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS facts (
    metric TEXT NOT NULL, entity TEXT NOT NULL, period TEXT NOT NULL, channel TEXT NOT NULL,
    value TEXT NOT NULL, unit TEXT NOT NULL, currency TEXT NOT NULL, scale TEXT NOT NULL,
    source_doc_id TEXT NOT NULL, locator TEXT NOT NULL, sensitivity INTEGER NOT NULL,
    valid_as_of TEXT NOT NULL, ingested_at TEXT NOT NULL,
    PRIMARY KEY (metric, entity, period, channel)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS facts_by_entity ON facts (entity, sensitivity, metric);
CREATE TABLE IF NOT EXISTS fact_history (
    {_COLUMNS.replace(", ", " TEXT, ")} TEXT,
    replaced_at TEXT NOT NULL, replaced_by_source_doc_id TEXT NOT NULL,
    replaced_by_locator TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS fact_history_key ON fact_history (metric, entity, period, channel);
CREATE TABLE IF NOT EXISTS fact_store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
_TABLES = ("facts", "fact_history", "fact_store_meta")
_SELECT_VISIBLE = (
    "SELECT value, unit, currency, scale, source_doc_id, locator, sensitivity, valid_as_of "
    "FROM facts WHERE metric=? AND entity=? AND period=? AND channel=? AND sensitivity<=?"
)
_SELECT = f"SELECT {_COLUMNS} FROM facts WHERE metric=? AND entity=? AND period=? AND channel=?"
_SCAN_BATCH = 1000
_MANY_BATCH = 500
"""Entities per query of ``lookup_many`` (SQLite allows 32,766 parameters; 500 keeps each
statement small)."""
_SCALES = {scale.value: scale for scale in Scale}
_LEVELS = {int(level): level for level in Sensitivity}


def _fact_from_row(row: Sequence[object]) -> Fact:
    return Fact(
        str(row[0]),
        str(row[1]),
        str(row[2]),
        str(row[3]),
        Decimal(str(row[4])),
        str(row[5]),
        str(row[6]),
        Scale(str(row[7])),
        str(row[8]),
        str(row[9]),
        Sensitivity(int(str(row[10]))),
        str(row[11]),
        str(row[12]),
    )


def _row_from_fact(fact: Fact) -> tuple[object, ...]:
    return (
        fact.metric,
        fact.entity,
        fact.period,
        fact.channel,
        str(fact.value),
        fact.unit,
        fact.currency,
        fact.scale.value,
        fact.source_doc_id,
        fact.locator,
        int(fact.sensitivity),
        fact.valid_as_of,
        fact.ingested_at,
    )


def _open(path: Path) -> sqlite3.Connection:
    db = connect(path)
    # Point lookups dominate: map the file and keep hot pages cached.
    db.execute("PRAGMA mmap_size=1073741824")
    db.execute("PRAGMA cache_size=-65536")
    return db


class SQLiteFactStore:
    """Facts in the workspace's SQLite file; values stored as exact decimal text.

    Safe to share between threads: each thread reads and writes through its own connection.
    Given another store's ``connections`` (the chunk store's), it reads and writes through
    those, so a write joins the transaction that store has open on the calling thread; it then
    leaves closing them to that store.
    """

    def __init__(self, path: Path, connections: ThreadConnections | None = None) -> None:
        self._owns_connections = connections is None
        self._connections = (
            ThreadConnections(lambda: _open(path)) if connections is None else connections
        )
        self._cursors = threading.local()
        try:
            conn = self._connections.get()
            if not has_tables(conn, _TABLES):  # a reader of a ready store writes nothing
                # The tables and their version row in one transaction: another connection
                # opening the new store at the same moment sees both or neither.
                conn.executescript(
                    f"BEGIN IMMEDIATE;\n{_SCHEMA}\nINSERT OR IGNORE INTO fact_store_meta "
                    f"VALUES ('schema_version', '{SCHEMA_VERSION}');\nCOMMIT;"
                )
            self._check_version()
        except sqlite3.DatabaseError as exc:
            self.close()
            raise StoreError(f"cannot open fact store at {path}: {exc}") from exc
        self.path = path
        self._indexed = False

    @property
    def _conn(self) -> sqlite3.Connection:
        """The calling thread's connection."""
        return self._connections.get()

    def _check_version(self) -> None:
        row = self._conn.execute(
            "SELECT value FROM fact_store_meta WHERE key='schema_version'"
        ).fetchone()
        if row is None:
            self._conn.execute(
                "INSERT OR IGNORE INTO fact_store_meta VALUES ('schema_version', ?)",
                (str(SCHEMA_VERSION),),
            )
        elif int(row[0]) != SCHEMA_VERSION:
            raise StoreError(
                f"fact store schema version {row[0]} is not the supported {SCHEMA_VERSION}: "
                "re-ingest into a new workspace"
            )

    def get(self, key: FactKey) -> Fact | None:
        row = self._conn.execute(
            _SELECT, (key.metric, key.entity, key.period, key.channel)
        ).fetchone()
        return None if row is None else _fact_from_row(row)

    def lookup(self, key: FactKey, *, max_level: int) -> StoredFact | None:
        """The columns an answer needs, screened in the query (the hot path of query_metric)."""
        try:
            cursor: sqlite3.Cursor = self._cursors.lookup
        except AttributeError:  # this thread's first lookup: one cursor, reused
            cursor = self._cursors.lookup = self._conn.cursor()
        row = cursor.execute(
            _SELECT_VISIBLE, (key.metric, key.entity, key.period, key.channel, max_level)
        ).fetchone()
        if row is None:
            return None
        value, unit, currency, scale, source_doc_id, locator, sensitivity, valid_as_of = row
        return StoredFact(
            Decimal(value),
            unit,
            currency,
            _SCALES[scale],
            source_doc_id,
            locator,
            _LEVELS[sensitivity],
            valid_as_of,
        )

    def lookup_many(self, keys: Iterable[FactKey], *, max_level: int) -> dict[FactKey, StoredFact]:
        """One query per (metric, period, channel) and up to :data:`_MANY_BATCH` entities, each
        an index seek on the primary key; the level is applied in the query."""
        groups: dict[tuple[str, str, str], set[str]] = {}
        for key in keys:
            groups.setdefault((key.metric, key.period, key.channel), set()).add(key.entity)
        found: dict[FactKey, StoredFact] = {}
        conn = self._conn
        for (metric, period, channel), entity_set in groups.items():
            entities = sorted(entity_set)
            for start in range(0, len(entities), _MANY_BATCH):
                batch = entities[start : start + _MANY_BATCH]
                rows = conn.execute(
                    "SELECT entity, value, unit, currency, scale, source_doc_id, locator, "
                    "sensitivity, valid_as_of FROM facts WHERE metric=? AND period=? AND "
                    f"channel=? AND entity IN ({','.join('?' * len(batch))}) AND sensitivity<=?",
                    (metric, period, channel, *batch, max_level),
                )
                for entity, value, unit, currency, scale, doc, locator, level, valid in rows:
                    found[FactKey(metric, entity, period, channel)] = StoredFact(
                        Decimal(value),
                        unit,
                        currency,
                        _SCALES[scale],
                        doc,
                        locator,
                        _LEVELS[level],
                        valid,
                    )
        return found

    def scan(
        self,
        *,
        max_level: int,
        metric: str | None = None,
        entity: str | None = None,
        period: str | None = None,
    ) -> Iterator[Fact]:
        where = ["sensitivity<=?"]
        params: list[object] = [max_level]
        for column, wanted in (("metric", metric), ("entity", entity), ("period", period)):
            if wanted is not None:
                where.append(f"{column}=?")
                params.append(wanted)
        cursor = self._conn.execute(
            f"SELECT {_COLUMNS} FROM facts WHERE {' AND '.join(where)} "
            "ORDER BY metric, entity, period, channel",
            params,
        )
        while rows := cursor.fetchmany(_SCAN_BATCH):
            for row in rows:
                yield _fact_from_row(row)

    def metrics_of(self, entity: str, *, max_level: int) -> frozenset[str]:
        rows = self._conn.execute(
            "SELECT DISTINCT metric FROM facts WHERE entity=? AND sensitivity<=?",
            (entity, max_level),
        ).fetchall()
        return frozenset(row[0] for row in rows)

    def write(self, facts: Iterable[Fact]) -> WriteSummary:
        if not self._indexed:  # a store made before the entity index gets it at its first write
            self._conn.execute(_ENTITY_INDEX)
            self._indexed = True
        added = replaced = unchanged = 0
        now = utc_now()
        cur = self._conn.cursor()
        with write_transaction(self._conn):  # or the one open on this connection
            for fact in facts:
                row = _row_from_fact(fact)
                old = cur.execute(_SELECT, row[:4]).fetchone()
                if old is None:
                    added += 1
                elif old[4:10] == row[4:10] and old[10] == row[10]:
                    unchanged += 1
                    continue
                else:
                    replaced += 1
                    cur.execute(
                        "INSERT INTO fact_history VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                        (*old, now, fact.source_doc_id, fact.locator),
                    )
                cur.execute(
                    f"INSERT OR REPLACE INTO facts ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    row,
                )
        return WriteSummary(added, replaced, unchanged)

    def history(self, key: FactKey) -> list[HistoryEntry]:
        rows = self._conn.execute(
            f"SELECT {_COLUMNS}, replaced_at, replaced_by_source_doc_id, replaced_by_locator "
            "FROM fact_history WHERE metric=? AND entity=? AND period=? AND channel=? "
            "ORDER BY rowid",
            (key.metric, key.entity, key.period, key.channel),
        ).fetchall()
        return [HistoryEntry(_fact_from_row(r[:13]), r[13], r[14], r[15]) for r in rows]

    def count(self) -> int:
        return int(self._conn.execute("SELECT count(*) FROM facts").fetchone()[0])

    def close(self) -> None:
        """Close every thread's connection (unless another store's were given)."""
        if self._owns_connections:
            self._connections.close()
