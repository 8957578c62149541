"""Redaction by construction: secrets planted everywhere never reach the JSON or the SVG."""

from __future__ import annotations

import itertools
import json

import pytest
import yaml

from ragspine.workflows import PreviewLimits, graph, preview

# Secrets in fields the preview never reads: any marker will do.
UNREAD = {
    "app description": "AppDescSecret-41c9",
    "app icon": "AppIconSecret-77aa",
    "dependency": "DependencySecret-8e1f",
    "prompt": "PromptSecret-f3a9c1",
    "system prompt": "SystemPromptSecret-2b7d",
    "memory template": "MemorySecret-90aa",
    "code": "CodeSecret-71b2e4",
    "code output": "CodeOutputSecret-11ab",
    "model name": "ModelNameSecret-5d0a",
    "model param": "ModelParamSecret-c0de",
    "http url": "HttpUrlSecret-1234",
    "http header": "HttpHeaderSecret-9911",
    "http auth": "HttpAuthSecret-2277",
    "http body": "HttpBodySecret-3388",
    "tool param": "ToolParamSecret-4455",
    "tool config": "ToolConfigSecret-6677",
    "tool credential": "ToolCredentialSecret-8899",
    "tool provider": "ToolProviderSecret-aabb",
    "dataset id": "DatasetIdSecret-0a1b",
    "condition value": "ConditionSecret-cc01",
    "class name": "ClassNameSecret-dd02",
    "classifier instruction": "InstructionSecret-ee03",
    "env var value": "EnvValueSecret-3c4d",
    "env var name": "EnvNameSecret-5e6f",
    "conversation var": "ConvValueSecret-7a8b",
    "opening statement": "FeatureOpeningSecret-9c0d",
    "suggested question": "FeatureQuestionSecret-1e2f",
    "note text": "NoteTextSecret-3a4b",
    "node desc": "NodeDescSecret-5c6d",
    "edge data": "EdgeDataSecret-7e8f",
    "template": "TemplateSecret-9a0b",
    "variable selector": "SelectorSecret-1c2d",
    "viewport": "ViewportSecret-3e4f",
    "source handle": "HandleSecret-5a6b",
    "case id": "CaseIdSecret-7c8d",
}
# Secrets in the copied free-text fields (titles, app name, ids): these must look like credentials.
SCREENED = {
    "app name": "sk-ant-api03-Zx9KqL2mN8pR4tV7wY1bC5dF",
    "url userinfo title": "admin:Pa55w0rdXyz@internal.example.com",
    "bearer title": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZG1pbiJ9.c2lnbmF0dXJlX3NlY3JldA",
    "dify key title": "app-Qw3Er5Ty7Ui9Op1As2Df4Gh",
    "query secret title": "tok_9f8e7d6c5b4a3928",
    "github token title": "ghp_1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTuVwXyZ",
    "random token title": "7hT9kQ2mX4pL8vN1bR6cW3zY5sD0fG",
    "password title": "hunter2-Correct-Horse",
    "secret node id": "sk-live-51HsEcReTiDAbCdEfGhIjKlMn0p",
    "secret edge id": "ghs_EdgeIdToken1234567890abcdefXYZ",
}
S = {**UNREAD, **SCREENED}


def crafted_export() -> str:
    """A Dify export with a secret planted in every sensitive place."""
    nodes = [
        {
            "id": "start",
            "type": "custom",
            "position": {"x": 0, "y": 0},
            "data": {
                "type": "start",
                "title": "Start",
                "desc": S["node desc"],
                "variables": [{"variable": "q", "default": S["prompt"]}],
            },
        },
        {
            "id": "llm",
            "type": "custom",
            "position": {"x": 300, "y": 0},
            "data": {
                "type": "llm",
                "title": f"LLM Bearer {S['bearer title']}",
                "model": {
                    "provider": "openai",
                    "name": S["model name"],
                    "mode": "chat",
                    "completion_params": {"temperature": 0.1, "api_key": S["model param"]},
                },
                "prompt_template": [
                    {"role": "system", "text": S["system prompt"]},
                    {"role": "user", "text": S["prompt"]},
                ],
                "memory": {"query_prompt_template": S["memory template"]},
            },
        },
        {
            "id": "code",
            "type": "custom",
            "position": {"x": 600, "y": 0},
            "data": {
                "type": "code",
                "title": f"Tool {S['dify key title']}",
                "code": f"API_KEY = '{S['code']}'",
                "code_language": "python3",
                "outputs": {S["code output"]: {"type": "string"}},
            },
        },
        {
            "id": "http",
            "type": "custom",
            "position": {"x": 900, "y": 0},
            "data": {
                "type": "http-request",
                "title": f"Fetch https://{S['url userinfo title']}/api",
                "method": "post",
                "url": f"https://user:{S['http url']}@api.example.com/x?key={S['http url']}",
                "headers": f"Authorization: Bearer {S['http header']}",
                "authorization": {
                    "type": "api-key",
                    "config": {"type": "bearer", "api_key": S["http auth"]},
                },
                "body": {"type": "json", "data": S["http body"]},
            },
        },
        {
            "id": "tool",
            "type": "custom",
            "position": {"x": 1200, "y": 0},
            "data": {
                "type": "tool",
                "title": f"Search https://x.example.com/s?access_token={S['query secret title']}",
                "provider_id": S["tool provider"],
                "credential_id": S["tool credential"],
                "tool_parameters": {"query": {"type": "mixed", "value": S["tool param"]}},
                "tool_configurations": {"api_key": S["tool config"]},
            },
        },
        {
            "id": "kb",
            "type": "custom",
            "position": {"x": 1500, "y": 0},
            "data": {
                "type": "knowledge-retrieval",
                "title": f"KB {S['github token title']}",
                "dataset_ids": [S["dataset id"]],
                "query_variable_selector": ["start", S["variable selector"]],
            },
        },
        {
            "id": "branch",
            "type": "custom",
            "position": {"x": 1800, "y": 0},
            "data": {
                "type": "if-else",
                "title": f"Check {S['random token title']}",
                "cases": [
                    {"case_id": "true", "conditions": [{"value": S["condition value"]}]},
                    {"case_id": S["case id"], "conditions": []},
                ],
            },
        },
        {
            "id": "classify",
            "type": "custom",
            "position": {"x": 2100, "y": 0},
            "data": {
                "type": "question-classifier",
                "title": f"password: {S['password title']}",
                "instruction": S["classifier instruction"],
                "classes": [{"id": "1", "name": S["class name"]}],
            },
        },
        {
            "id": S["secret node id"],
            "type": "custom",
            "position": {"x": 2400, "y": 0},
            "data": {"type": "template-transform", "title": "Format", "template": S["template"]},
        },
        {
            "id": "note",
            "type": "custom-note",
            "position": {"x": 0, "y": 300},
            "data": {"type": "", "title": "", "text": S["note text"], "author": S["note text"]},
        },
    ]
    chain = ["start", "llm", "code", "http", "tool", "kb", "branch"]
    edges = [
        {
            "id": f"{a}-{b}",
            "source": a,
            "target": b,
            "sourceHandle": "source",
            "data": {"secret": S["edge data"]},
        }
        for a, b in itertools.pairwise(chain)
    ]
    edges += [
        {"id": "b-true", "source": "branch", "target": "classify", "sourceHandle": "true"},
        {
            "id": S["secret edge id"],
            "source": "branch",
            "target": S["secret node id"],
            "sourceHandle": S["case id"],
        },
        {"source": "classify", "target": S["secret node id"], "sourceHandle": S["source handle"]},
    ]
    doc = {
        "app": {
            "name": f"Support bot {S['app name']}",
            "mode": "advanced-chat",
            "description": S["app description"],
            "icon": S["app icon"],
        },
        "dependencies": [{"type": "marketplace", "value": {"plugin": S["dependency"]}}],
        "kind": "app",
        "version": "0.3.1",
        "workflow": {
            "environment_variables": [
                {"name": S["env var name"], "value": S["env var value"], "value_type": "secret"}
            ],
            "conversation_variables": [{"name": "memo", "value": S["conversation var"]}],
            "features": {
                "opening_statement": S["opening statement"],
                "suggested_questions": [S["suggested question"]],
            },
            "graph": {"nodes": nodes, "edges": edges, "viewport": {"note": S["viewport"]}},
        },
    }
    return yaml.safe_dump(doc, allow_unicode=True, sort_keys=False)


def leaks(text: str) -> list[str]:
    return [place for place, secret in S.items() if secret in text]


def test_crafted_export_plants_every_secret() -> None:
    assert leaks(crafted_export()) == list(S)


@pytest.mark.parametrize("output", ["json", "svg"])
def test_no_planted_secret_reaches_the_preview(output: str) -> None:
    result = preview(crafted_export())
    text = result.to_json() if output == "json" else result.to_svg()
    assert leaks(text) == []
    assert len(result.nodes) == 10 and len(result.edges) == 9


def test_screened_fields_keep_their_harmless_words() -> None:
    result = json.loads(preview(crafted_export()).to_json())
    assert result["app"]["name"] == "Support bot [masked]"
    titles = {n["title"] for n in result["nodes"]}
    assert {"LLM [masked]", "Tool [masked]", "Fetch [masked]", "Search [masked]"} <= titles
    assert "masked-id-1" in {n["id"] for n in result["nodes"]}
    edges = {e["id"]: e for e in result["edges"]}
    assert all(e["source"] in {n["id"] for n in result["nodes"]} for e in edges.values())


def test_a_broken_screen_would_be_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    # Deliberately broken implementation: titles copied without screening must fail the test above.
    monkeypatch.setattr(graph, "screen_text", lambda text: text)
    assert "app name" in leaks(preview(crafted_export()).to_json())


def test_every_shared_export_keeps_its_secrets() -> None:
    from wf_builders import SHARED_DIFY_FILES, dify_file

    for name in SHARED_DIFY_FILES:
        source = yaml.safe_load(dify_file(name).read_text("utf-8"))
        env = [str(v.get("value")) for v in source["workflow"].get("environment_variables", [])]
        prompts = [
            str(item.get("text"))
            for n in source["workflow"]["graph"]["nodes"]
            for item in (n.get("data", {}).get("prompt_template") or [])
            if isinstance(item, dict) and len(str(item.get("text", ""))) > 20
        ]
        result = preview(dify_file(name))
        for output in (result.to_json(), result.to_svg()):
            assert not [v for v in env + prompts if v and v in output]


class Tripwire(dict):
    """A mapping that records every key read; bulk reads are recorded as ``*``."""

    def __init__(self, source: dict, log: set[str]) -> None:
        super().__init__({key: wrap(value, log) for key, value in source.items()})
        self.log = log

    def __getitem__(self, key: str) -> object:
        self.log.add(key)
        return super().__getitem__(key)

    def get(self, key: str, default: object = None) -> object:
        self.log.add(key)
        return super().get(key, default)

    def __contains__(self, key: object) -> bool:
        self.log.add(str(key))
        return super().__contains__(key)

    def items(self):  # type: ignore[override]
        self.log.add("*")
        return super().items()

    def values(self):  # type: ignore[override]
        self.log.add("*")
        return super().values()

    def __iter__(self):  # type: ignore[override]
        self.log.add("*")
        return super().__iter__()


def wrap(value: object, log: set[str]) -> object:
    if isinstance(value, dict):
        return Tripwire(value, log)
    if isinstance(value, list):
        return [wrap(item, log) for item in value]
    return value


def test_projection_reads_only_the_preview_fields() -> None:
    graph_doc = yaml.safe_load(crafted_export())["workflow"]["graph"]
    node_log: set[str] = set()
    data_log: set[str] = set()
    edge_log: set[str] = set()
    nodes = []
    for item in graph_doc["nodes"]:
        data = item.pop("data")
        wrapped = Tripwire(item, node_log)
        dict.__setitem__(wrapped, "data", Tripwire(data, data_log))
        nodes.append(wrapped)
    edges = [Tripwire(item, edge_log) for item in graph_doc["edges"]]
    graph.project_graph(nodes, edges, PreviewLimits())
    allowed_node = {"id", "type", "data", "parentId", "position", "positionAbsolute", "x", "y"}
    assert node_log <= allowed_node | {"width", "height"}
    # Node data: type and title, plus the ids of if-else cases and classifier classes for labels.
    assert data_log <= {"type", "title", "cases", "classes", "case_id", "id"}
    assert edge_log <= {"id", "source", "target", "sourceHandle"}
    assert {"title", "case_id"} <= data_log and {"source", "sourceHandle"} <= edge_log


def test_a_projection_reading_more_would_be_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    # Deliberately broken: a title built from the node description trips the wire above.
    log: set[str] = set()
    data = Tripwire({"type": "llm", "title": "t", "desc": "d"}, log)
    monkeypatch.setattr(graph, "screen_title", lambda raw, *_: str(data.get("desc")))
    graph.project_graph([{"id": "a", "data": data}], [], PreviewLimits())
    assert "desc" in log
