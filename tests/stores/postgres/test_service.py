"""The HTTP service over a PostgreSQL workspace: the same routes and answers, keys checked in the
database, and an upload job whose record every server process sees."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient
from service_fixtures import FACTS_CSV, Served, served

from ragspine import Workspace
from ragspine.service.app import create_app
from ragspine.service.guard import Limits
from ragspine.service.keys import keys_of


@pytest.fixture()
def svc(postgres_url: str, tmp_path: Path) -> Iterator[Served]:
    with served(tmp_path / "ws", location=postgres_url) as made:
        yield made


def test_routes_answer_from_the_database(svc: Served) -> None:
    assert svc.client.post("/v1/search", json={"question": "travel"}).status_code == 401
    found = svc.post("/v1/search", {"question": "travel costs", "top_k": 1}).json()
    assert [s["doc_id"] for s in found["snippets"]] == ["travel.md"]
    asked = svc.post("/v1/ask", {"question": "Why did travel costs fall?", "mode": "bm25"})
    assert asked.status_code == 200 and "[1]" in asked.json()["text"]
    upload = svc.client.post(
        "/v1/facts",
        files={"file": ("acme.csv", FACTS_CSV.encode())},
        data={"mapping": json.dumps({"defaults": {"sensitivity": "public"}})},
        headers=svc.admin,
    )
    assert upload.json() == {"added": 1, "replaced": 0, "unchanged": 0}
    metric = svc.post(
        "/v1/metrics/query", {"metric": "revenue", "entity": "ACME", "period": "FY2024"}
    )
    assert metric.json()["status"] == "found"
    libraries = svc.client.get("/v1/libraries", headers=svc.reader).json()
    assert [lib["library_id"] for lib in libraries] == ["reports"]


def test_an_upload_job_is_seen_by_every_server_process(svc: Served, postgres_url: str) -> None:
    files = [
        ("files", (f"memo{i}.md", f"# Memo {i}\n\nThe travel memo {i} lists costs.\n".encode()))
        for i in range(20)
    ]
    made = svc.client.post(
        "/v1/documents", files=files, data={"library": "reports"}, headers=svc.admin
    )
    job_id = made.json()["job_id"]
    with Workspace.open(postgres_url, create=False) as other:  # a second server process
        other_app = create_app(other, limits=Limits(rate=0), run_jobs=False)
        with TestClient(other_app) as second:
            while True:
                state = second.get(f"/v1/jobs/{job_id}", headers=svc.admin).json()["state"]
                found = second.post(
                    "/v1/search",
                    json={"question": "travel memo costs", "top_k": 50},
                    headers=svc.reader,
                )
                assert found.status_code == 200, found.text
                if state in ("done", "failed"):
                    break
            assert state == "done"
            assert len(found.json()["snippets"]) == 21
        assert keys_of(other).authenticate("rsk_nothing") is None


def test_readiness_names_no_url_and_fails_when_the_database_is_gone(
    svc: Served, postgres_url: str
) -> None:
    ready = svc.client.get("/readyz")
    assert ready.json() == {"status": "ready", "backend": "postgresql"}
    svc.workspace.backend.close()  # as if the server went away
    gone = svc.client.get("/readyz")
    assert gone.status_code == 503 and "PostgreSQL workspace" in gone.json()["detail"]
    assert "Traceback" not in gone.text and "search_path" not in gone.text
    asked = svc.post(
        "/v1/metrics/query", {"metric": "revenue", "entity": "ACME", "period": "FY2024"}
    )
    assert asked.status_code == 503, asked.text
