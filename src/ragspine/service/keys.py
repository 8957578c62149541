"""API keys of the HTTP service, stored hashed in the workspace (``api_keys.json`` of a folder
workspace, the ``api_keys`` table of a PostgreSQL one: :func:`keys_of`).

A key is ``rsk_<id>_<secret>``: the id names it in lists and logs, the secret (32 random bytes)
is shown once by :meth:`KeyStore.create` and only its SHA-256 digest is kept. A key carries the
principal every request made with it asks as (clearance and groups) and whether it may write
(``admin``). The file is rewritten whole (temporary file and rename) under a workspace lock, so
``ragspine keys`` may run while a server reads it; readers reload it when it changes.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ragspine.errors import ConfigError, StoreError, quote_input
from ragspine.files import write_text_atomically
from ragspine.locks import lock_path, write_lock
from ragspine.security import Principal, Sensitivity

if TYPE_CHECKING:
    from ragspine.workspace import Workspace

KEYS_FILE = "api_keys.json"
KEY_PREFIX = "rsk_"
FORMAT_VERSION = 1


@dataclass(frozen=True, slots=True)
class ApiKey:
    """One stored key: never the secret, only its digest."""

    key_id: str
    name: str
    digest: str
    clearance: str
    groups: tuple[str, ...]
    admin: bool
    created_at: str
    revoked_at: str | None = None

    @property
    def principal(self) -> Principal:
        """Who a request made with this key asks as."""
        return Principal.of(self.clearance, self.groups, name=f"key:{self.name}")

    def public_dict(self) -> dict[str, Any]:
        """What ``keys list`` shows (no digest)."""
        data = asdict(self)
        del data["digest"]
        data["groups"] = list(self.groups)
        return data


def digest_of(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def now_text() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def new_key(name: str, *, clearance: str, groups: Sequence[str], admin: bool) -> tuple[ApiKey, str]:
    """A new key named ``name`` and its full text (checked: a printable name, a clearance below
    restricted)."""
    if not name.strip() or len(name) > 100 or not name.isprintable():
        raise ConfigError(f"key name {quote_input(name)} must be 1-100 printable characters")
    level = Sensitivity.parse(clearance)
    if level >= Sensitivity.RESTRICTED:
        raise ConfigError("a key's clearance is at most confidential: restricted is for no one")
    key_id = secrets.token_hex(4)
    secret = f"{KEY_PREFIX}{key_id}_{secrets.token_urlsafe(32)}"
    key = ApiKey(
        key_id=key_id,
        name=name,
        digest=digest_of(secret),
        clearance=level.label,
        groups=tuple(sorted(set(groups))),
        admin=admin,
        created_at=now_text(),
    )
    return key, secret


def name_taken(name: str) -> ConfigError:
    return ConfigError(f"a key named {quote_input(name)} exists: revoke it first")


def no_live_key(name_or_id: str) -> ConfigError:
    return ConfigError(f"no live key named {quote_input(name_or_id)}: see ragspine keys list")


def could_be_key(secret: str) -> bool:
    """Whether ``secret`` has the shape of a key (checked before any lookup)."""
    return secret.startswith(KEY_PREFIX) and len(secret) <= 200


class Keys(Protocol):
    """The API keys of a workspace: :class:`KeyStore` (a file of a folder workspace) or
    ``PostgresKeyStore`` (a table of a PostgreSQL workspace)."""

    def create(
        self, name: str, *, clearance: str = ..., groups: Sequence[str] = ..., admin: bool = ...
    ) -> tuple[ApiKey, str]: ...

    def revoke(self, name_or_id: str) -> ApiKey: ...

    def all(self) -> list[ApiKey]: ...

    def authenticate(self, secret: str) -> ApiKey | None: ...


def keys_of(workspace: Workspace) -> Keys:
    """The key store of ``workspace``'s backend."""
    from ragspine.stores.backend import SQLiteBackend

    if isinstance(workspace.backend, SQLiteBackend):
        return KeyStore(workspace.path)
    from ragspine.stores.postgres.backend import PostgresBackend
    from ragspine.stores.postgres.service import PostgresKeyStore

    assert isinstance(workspace.backend, PostgresBackend)
    return PostgresKeyStore(workspace.backend.db)


class KeyStore:
    """The API keys of the workspace at ``folder``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / KEYS_FILE
        self._lock = threading.Lock()
        self._stamp: tuple[int, int] | None = None
        self._by_digest: dict[str, ApiKey] = {}

    def create(
        self,
        name: str,
        *,
        clearance: str = "public",
        groups: Sequence[str] = (),
        admin: bool = False,
    ) -> tuple[ApiKey, str]:
        """Make a key; returns it and the full key text (shown once, never stored)."""
        key, secret = new_key(name, clearance=clearance, groups=groups, admin=admin)
        with self._writing() as keys:
            if any(k.name == name and k.revoked_at is None for k in keys):
                raise name_taken(name)
            keys.append(key)
        return key, secret

    def revoke(self, name_or_id: str) -> ApiKey:
        """Revoke the live key with this name or id (an unknown one is an error)."""
        with self._writing() as keys:
            for index, key in enumerate(keys):
                if key.revoked_at is None and name_or_id in (key.name, key.key_id):
                    keys[index] = revoked = ApiKey(**{**asdict(key), "revoked_at": now_text()})
                    return revoked
        raise no_live_key(name_or_id)

    def all(self) -> list[ApiKey]:
        """Every key, revoked ones included, oldest first."""
        return self._read()

    def authenticate(self, secret: str) -> ApiKey | None:
        """The live key whose text is ``secret``, else ``None``."""
        if not could_be_key(secret):
            return None
        digest = digest_of(secret)
        with self._lock:
            self._reload()
            key = self._by_digest.get(digest)
        if key is None or key.revoked_at is not None:
            return None
        return key if hmac.compare_digest(key.digest, digest) else None

    def _reload(self) -> None:
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            self._stamp, self._by_digest = None, {}
            return
        stamp = (stat.st_mtime_ns, stat.st_size)
        if stamp != self._stamp:
            self._by_digest = {key.digest: key for key in self._read()}
            self._stamp = stamp

    def _read(self) -> list[ApiKey]:
        try:
            data = json.loads(self.path.read_text("utf-8"))
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as exc:
            raise StoreError(f"cannot read the API keys in {self.path}: {exc}") from None
        if not isinstance(data, dict) or data.get("version") != FORMAT_VERSION:
            raise StoreError(f"{self.path} is not an API key file of this version")
        return [ApiKey(**{**row, "groups": tuple(row["groups"])}) for row in data["keys"]]

    @contextmanager
    def _writing(self) -> Iterator[list[ApiKey]]:
        """The key list, read under the workspace's key lock and written back on success."""
        with write_lock(lock_path(self.folder, "api-keys"), resource="API keys"):
            keys = self._read()
            yield keys
            rows = [{**asdict(k), "groups": list(k.groups)} for k in keys]
            text = json.dumps({"version": FORMAT_VERSION, "keys": rows}, indent=1)
            write_text_atomically(self.path, text + "\n")
