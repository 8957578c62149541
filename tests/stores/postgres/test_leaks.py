"""No restricted-text leak and no oracle on a PostgreSQL workspace (contracts 4, 10 and 11): the
leak detector of the narrative tests, run over two PostgreSQL workspaces (the secret present and
absent) through every reading surface, the CLI's included. Its reverse proofs live beside the
SQLite run (tests/narrative/test_leaks.py); here one proves the detector is live on this backend.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from leak_detector import Runs, assert_no_leak, build_runs

from postgres_server import PostgresServer, with_search_path
from ragspine import Principal

PRINCIPALS = [Principal.of("public"), Principal.of("internal", groups=["finance"])]


@pytest.fixture(scope="module")
def runs(
    tmp_path_factory: pytest.TempPathFactory, postgres_server: PostgresServer
) -> Iterator[Runs]:
    schemas = [postgres_server.new_schema() for _ in range(2)]
    urls = tuple(with_search_path(postgres_server.url, schema) for schema in schemas)
    try:
        yield build_runs(tmp_path_factory.mktemp("pg-leaks"), urls)  # type: ignore[arg-type]
    finally:
        for schema in schemas:
            postgres_server.drop_schema(schema)


@pytest.mark.parametrize("principal", PRINCIPALS, ids=lambda p: p.clearance.label)
def test_no_reading_surface_leaks_on_postgresql(runs: Runs, principal: Principal) -> None:
    assert assert_no_leak(runs, principal) >= 140


def test_the_detector_sees_the_secret_when_it_is_visible(runs: Runs) -> None:
    with pytest.raises(AssertionError, match="the secret leaks"):
        assert_no_leak(
            runs,
            Principal.of("confidential"),
            only=lambda label: label.startswith("search 'Zebra7731' bm25 None"),
        )


def test_the_workspace_is_not_a_folder(runs: Runs) -> None:
    assert runs.present_ws.startswith("postgresql://") and not Path(runs.present_ws).exists()
