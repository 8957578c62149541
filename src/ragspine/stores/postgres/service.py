"""The HTTP service's records in a PostgreSQL workspace: API keys (hashed) and ingest jobs, so
every server process on every host sees the same keys and jobs."""

from __future__ import annotations

import hmac
import json
import socket
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from ragspine.service.keys import (
    ApiKey,
    could_be_key,
    digest_of,
    name_taken,
    new_key,
    no_live_key,
    now_text,
)
from ragspine.stores.postgres.database import Database

_KEY_COLUMNS = "key_id, name, digest, clearance, groups, admin, created_at, revoked_at"


def _key(row: Sequence[Any]) -> ApiKey:
    return ApiKey(
        key_id=row[0],
        name=row[1],
        digest=row[2],
        clearance=row[3],
        groups=tuple(row[4]),
        admin=bool(row[5]),
        created_at=row[6],
        revoked_at=row[7],
    )


class PostgresKeyStore:
    """API keys in the ``api_keys`` table: the digest is looked up by an index, a name is unique
    among live keys (a unique partial index, so two ``keys create`` at once cannot both win)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def create(
        self,
        name: str,
        *,
        clearance: str = "public",
        groups: Sequence[str] = (),
        admin: bool = False,
    ) -> tuple[ApiKey, str]:
        key, secret = new_key(name, clearance=clearance, groups=groups, admin=admin)
        with self._db.connection() as conn:
            inserted = conn.execute(
                f"INSERT INTO api_keys ({_KEY_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (name) WHERE revoked_at IS NULL DO NOTHING RETURNING key_id",
                (key.key_id, key.name, key.digest, key.clearance, list(key.groups), key.admin,
                 key.created_at, None),
            ).fetchone()  # fmt: skip
        if inserted is None:
            raise name_taken(name)
        return key, secret

    def revoke(self, name_or_id: str) -> ApiKey:
        with self._db.connection() as conn:
            row = conn.execute(
                f"UPDATE api_keys SET revoked_at = %s WHERE key_id = (SELECT key_id FROM api_keys "
                "WHERE revoked_at IS NULL AND (name = %s OR key_id = %s) ORDER BY position "
                f"LIMIT 1) RETURNING {_KEY_COLUMNS}",
                (now_text(), name_or_id, name_or_id),
            ).fetchone()
        if row is None:
            raise no_live_key(name_or_id)
        return _key(row)

    def all(self) -> list[ApiKey]:
        with self._db.connection() as conn:
            rows = conn.execute(f"SELECT {_KEY_COLUMNS} FROM api_keys ORDER BY position").fetchall()
        return [_key(row) for row in rows]

    def authenticate(self, secret: str) -> ApiKey | None:
        if not could_be_key(secret):
            return None
        digest = digest_of(secret)
        with self._db.connection() as conn:
            row = conn.execute(
                f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE digest = %s AND revoked_at IS NULL",
                (digest,),
            ).fetchone()
        if row is None:
            return None
        key = _key(row)
        return key if hmac.compare_digest(key.digest, digest) else None


class PostgresJobRecords:
    """Ingest jobs in the ``ingest_jobs`` table. Each row names the host that took the upload:
    the uploaded files wait in that host's local folder, so only that host runs or resumes it."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self.host = socket.gethostname()

    def save(self, job_id: str, data: dict[str, Any]) -> None:
        with self._db.connection() as conn:
            conn.execute(
                "INSERT INTO ingest_jobs (job_id, body, host) VALUES (%s, %s::jsonb, %s) "
                "ON CONFLICT (job_id) DO UPDATE SET body = excluded.body",
                (job_id, json.dumps(data, ensure_ascii=False), self.host),
            )

    def load(self, job_id: str) -> dict[str, Any] | None:
        with self._db.connection() as conn:
            row = conn.execute(
                "SELECT body FROM ingest_jobs WHERE job_id = %s", (job_id,)
            ).fetchone()
        return None if row is None else dict(row[0])

    def ids(self) -> list[str]:
        """This host's jobs, oldest first."""
        with self._db.connection() as conn:
            rows = conn.execute(
                "SELECT job_id FROM ingest_jobs WHERE host = %s ORDER BY position", (self.host,)
            ).fetchall()
        return [row[0] for row in rows]

    def lock(self, job_id: str) -> AbstractContextManager[None]:
        return self._db.advisory_lock(f"job-{job_id}", description="job", wait="0")
