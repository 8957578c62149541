"""A small workspace served by the app, and keys of each kind."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from fastapi.testclient import TestClient

from ragspine import Workspace
from ragspine.service.app import create_app
from ragspine.service.guard import Limits
from ragspine.service.keys import keys_of

FACTS_CSV = (
    "metric,entity,period,value,unit,currency,scale\n"
    "revenue,ACME,FY2024,1250.5,currency,EUR,million\n"
)
MAPPING = {"defaults": {"sensitivity": "public"}}


@dataclass(frozen=True, slots=True)
class Served:
    """A client of the app and the headers of each key."""

    client: TestClient
    workspace: Workspace
    admin: dict[str, str]
    reader: dict[str, str]

    def post(self, path: str, body: object, headers: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
        return self.client.post(
            path, json=body, headers=self.reader if headers is None else headers
        )


def bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


@contextmanager
def served(
    folder: Path, *, limits: Limits | None = None, location: str | None = None
) -> Iterator[Served]:
    """A workspace at ``folder`` (or ``location``, e.g. a PostgreSQL URL; its documents are
    written beside ``folder``) with the example glossary and a library with one document, an
    admin key and a public reader key, and the app over it."""
    workspace = Workspace.init(location or folder)
    keys = keys_of(workspace)
    run = len(keys.all())
    _, admin = keys.create(f"ops{run}", clearance="internal", admin=True)
    _, reader = keys.create(f"reader{run}")
    docs = folder.parent / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    (docs / "travel.md").write_text(
        "# Travel\n\nTravel costs fell as meetings moved online.\n", encoding="utf-8"
    )
    workspace.ingest_documents([docs / "travel.md"], library="reports")
    app = create_app(workspace, limits=limits or Limits(rate=0))
    with TestClient(app) as client:
        yield Served(client, workspace, bearer(admin), bearer(reader))
    workspace.close()
