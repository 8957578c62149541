"""Shared fixtures: the evaluation data folder, temporary workspaces (``tatqa_workspace`` of
small report tables, ``ask_table``), no network, and a fake OpenAI-compatible endpoint on
127.0.0.1 (``fake_endpoint``, from ``fake_openai.py``)."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from fake_openai import fake_endpoint  # noqa: F401  (a fixture shared by the generation tests)
from postgres_server import postgres_server, postgres_url  # noqa: F401  (server-backend tests)
from ragspine import Principal, Workspace
from ragspine.answer.options import AskOptions
from ragspine.answer.types import Answer
from ragspine.structured.tatqa import entity_code

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def shared_data(*parts: str) -> Path:
    """Path under ``../shared/data``; skip (or fail in CI) where the data is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        if os.environ.get("RAGSPINE_REQUIRE_DATA"):
            pytest.fail(f"required evaluation data missing: {path}")
        pytest.skip(f"evaluation data not present at {path} (clone ../shared beside the repo)")
    return path


def tatqa_workspace(root: Path, tables: dict[str, list[list[str]]]) -> Workspace:
    """A new workspace under ``root`` holding ``tables`` (uid -> rows, the first the header)
    imported as TAT-QA documents without paragraphs. Pick uids that no question says as a
    word: an entity's name in a question names it."""
    documents = [
        {"table": {"uid": uid, "table": table}, "paragraphs": [], "questions": []}
        for uid, table in tables.items()
    ]
    source = root / "tables.json"
    source.write_text(json.dumps(documents), "utf-8")
    workspace = Workspace.open(root / "ws", create=True)
    workspace.ingest_tatqa(source)
    return workspace


def ask_table(workspace: Workspace, uid: str, question: str) -> Answer:
    """``question`` asked as the public about the TAT-QA document ``uid``."""
    options = AskOptions(entity=entity_code(uid))
    return workspace.ask(question, options, principal=Principal.of("public"))


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Block outbound connections except to loopback."""
    real_connect = socket.socket.connect

    def guarded(self: socket.socket, address: object) -> object:
        host = address[0] if isinstance(address, tuple) else str(address)
        if isinstance(host, str) and not (
            host.startswith("127.") or host in {"localhost", "::1"} or self.family == socket.AF_UNIX
        ):
            raise RuntimeError(f"network access blocked in tests: {address!r}")
        return real_connect(self, address)  # type: ignore[arg-type]

    monkeypatch.setattr(socket.socket, "connect", guarded)


@pytest.fixture()
def workspace_dir(tmp_path: Path) -> Path:
    return tmp_path / "ws"


@pytest.fixture(scope="module")
def private_xdg_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """onnxruntime writes under $XDG_CACHE_HOME (read at import): keep it out of ~/.cache.

    Modules that load the ONNX embedder use it for all their tests:
    ``pytestmark = pytest.mark.usefixtures("private_xdg_cache")``.
    """
    mp = pytest.MonkeyPatch()
    mp.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
    yield
    mp.undo()
