"""Model-derived relations through a fake endpoint: only terms the chunk names, stored
model-derived and unverified with the run's lineage, and no restricted chunk ever sent."""

from __future__ import annotations

import json
import tomllib
import types
from pathlib import Path

import pytest

from fake_openai import FakeEndpoint, Reply
from ragspine import Principal, Workspace
from ragspine.errors import ConfigError
from ragspine.glossary import parse_glossary
from ragspine.graph import extract, model_extract
from ragspine.graph.extract import ChunkText
from ragspine.graph.model_extract import ModelExtractor
from ragspine.graph.relations import EdgeKind, Origin
from ragspine.llm.openai_compat import OpenAICompatibleProvider
from ragspine.llm.provider import ProviderName
from ragspine.llm.settings import LLMSettings
from ragspine.security import Sensitivity
from ragspine.workspace import example_glossary_text

CONFIDENTIAL = Principal.of("confidential")
DOCS = {
    "public.md": ("ACME Corp revenue grew while ACME China net income fell.\n", "public"),
    "inside.md": ("ACME China revenue is part of ACME Corp revenue.\n", "confidential"),
    "zeppelin.md": ("Project Zeppelin: ACME revenue and ACME China headcount.\n", "restricted"),
}
RELATIONS = {
    "relations": [
        {"source": "entity:acme", "target": "entity:acme_cn", "kind": "parent_of"},
        {"source": "metric:revenue", "target": "entity:acme", "kind": "co_occurs"},
        {"source": "entity:nowhere", "target": "metric:revenue", "kind": "co_occurs"},
        {"source": "document:x:y", "target": "metric:revenue", "kind": "mentions"},
        {"source": "entity:acme", "target": "entity:acme", "kind": "parent_of"},
    ]
}


def build(folder: Path, endpoint: FakeEndpoint) -> Workspace:
    folder.mkdir(parents=True)
    (folder / "glossary.toml").write_text(example_glossary_text(), encoding="utf-8")
    (folder / "llm.toml").write_text(
        f'provider = "openai"\nbase_url = "{endpoint.base_url}"\nmodel = "tiny"\nmax_retries = 0\n',
        encoding="utf-8",
    )
    ws = Workspace.open(folder)
    docs = folder.parent / "docs"
    docs.mkdir()
    for name, (text, level) in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
        ws.ingest_documents([docs / name], library="reports", sensitivity=level)
    return ws


@pytest.mark.parametrize("protected", [True, False])
def test_restricted_chunks_are_never_sent_and_edges_are_unverified(
    tmp_path: Path, fake_endpoint: FakeEndpoint, monkeypatch: pytest.MonkeyPatch, protected: bool
) -> None:
    ws = build(tmp_path / "ws", fake_endpoint)
    fake_endpoint.script = [Reply(json.dumps(RELATIONS)) for _ in range(5)]
    if not protected:  # a broken gate and a broken extractor check: everything is sent
        monkeypatch.setattr(extract, "visible_chunks", lambda chunks, principal: iter(chunks))
        monkeypatch.setattr(model_extract, "Sensitivity", types.SimpleNamespace(RESTRICTED=99))
    added = ws.extract_model_relations("reports", principal=CONFIDENTIAL, run_id="model-1")
    bodies = fake_endpoint.bodies()
    assert all("Zeppelin" not in body for body in bodies) is protected
    if not protected:
        return
    assert len(bodies) == 2  # the public and the confidential chunk
    assert any("ACME Corp revenue grew" in body for body in bodies)
    found = ws.relations.edges(principal=CONFIDENTIAL, origin="model-derived")
    assert added == len(found.edges) > 0
    for edge in found.edges:
        assert edge.origin is Origin.MODEL_DERIVED and not edge.verified
        assert edge.lineage.run_id == "model-1" and edge.lineage.chunk_id.startswith("reports:")
        assert {edge.source, edge.target} <= {"entity:acme", "entity:acme_cn", "metric:revenue"}
    kinds = {(e.source, e.target, e.kind) for e in found.edges}
    assert ("entity:acme", "metric:revenue", EdgeKind.CO_OCCURS) in kinds  # put in code order
    assert ("entity:acme", "entity:acme_cn", EdgeKind.PARENT_OF) in kinds
    public = ws.relations.edges(principal=Principal.of("public"), origin="model-derived")
    assert {e.lineage.doc_id for e in public.edges} == {"public.md"}


def test_the_extractor_checks_what_the_model_proposes(fake_endpoint: FakeEndpoint) -> None:
    glossary = parse_glossary(tomllib.loads(example_glossary_text()))
    settings = LLMSettings(ProviderName.OPENAI, fake_endpoint.base_url, "tiny")
    extractor = ModelExtractor(OpenAICompatibleProvider(settings), glossary)
    chunk = ChunkText("lib", "doc", "lib:doc#0", "ACME Corp revenue and ACME China.")
    fake_endpoint.script = [Reply("Sure! ```json\n" + json.dumps(RELATIONS) + "\n```"), Reply("{")]
    found = extractor.extract(chunk)
    assert [(r.source, r.target, r.kind.value) for r in found] == [
        ("entity:acme", "metric:revenue", "co_occurs"),
        ("entity:acme", "entity:acme_cn", "parent_of"),
    ]
    assert extractor.extract(chunk) == []  # malformed JSON: nothing
    lonely = ChunkText("lib", "doc", "lib:doc#1", "ACME alone.")
    secret = ChunkText("lib", "doc", "lib:doc#2", chunk.text, sensitivity=Sensitivity.RESTRICTED)
    assert extractor.extract(lonely) == [] and extractor.extract(secret) == []
    assert len(fake_endpoint.requests) == 2


def test_extraction_needs_a_generating_provider(
    tmp_path: Path, fake_endpoint: FakeEndpoint
) -> None:
    ws = build(tmp_path / "ws", fake_endpoint)
    with pytest.raises(ConfigError, match="needs a generating provider"):
        ws.extract_model_relations(
            "reports", principal=CONFIDENTIAL, run_id="r", provider="extractive"
        )


def test_the_cli_extracts(
    tmp_path: Path, fake_endpoint: FakeEndpoint, capsys: pytest.CaptureFixture[str]
) -> None:
    from ragspine.cli import main

    ws = build(tmp_path / "ws", fake_endpoint)
    fake_endpoint.script = [Reply(json.dumps(RELATIONS)) for _ in range(2)]
    args = ["--workspace", str(ws.path), "graph", "extract", "reports", "--run-id", "r1"]
    assert main([*args, "--clearance", "confidential"]) == 0
    assert "new model-derived edges (unverified)" in capsys.readouterr().out
