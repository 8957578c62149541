"""Builders for small Dify exports and the shared Dify fixture names."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from conftest import shared_data

SHARED_DIFY_FILES = (
    "artifact.yml",
    "deep_researcher.yml",
    "dify_conditional_branching.yml",
    "dify_knowledge_retrieval_v2_no_positions.yml",
    "document_chat_template.yml",
    "image_text_kb.yml",
    "intent_reply.yml",
    "payment_demo.yml",
    "thinking_assistant.yml",
)


def dify_file(name: str) -> Path:
    """A shared Dify export (skips locally when ../shared/data is absent)."""
    return shared_data("dify", name)


def node(
    node_id: str,
    node_type: str = "llm",
    title: str = "",
    *,
    x: float | None = None,
    y: float | None = None,
    parent: str | None = None,
    **data: Any,
) -> dict[str, Any]:
    """A Dify node; ``x``/``y`` become ``position`` (relative when ``parent`` is set)."""
    item: dict[str, Any] = {
        "id": node_id,
        "type": "custom",
        "data": {"type": node_type, "title": title or node_id, **data},
    }
    if x is not None and y is not None:
        item["position"] = {"x": x, "y": y}
    if parent is not None:
        item["parentId"] = parent
    return item


def edge(source: str, target: str, handle: str = "source", edge_id: str | None = None) -> dict:
    item: dict[str, Any] = {
        "source": source,
        "target": target,
        "sourceHandle": handle,
        "targetHandle": "target",
    }
    if edge_id is not None:
        item["id"] = edge_id
    return item


def export(
    nodes: list[dict[str, Any]],
    edges: list[dict[str, Any]],
    *,
    version: Any = "0.3.1",
    mode: str = "workflow",
    kind: str = "app",
    name: str = "test app",
) -> str:
    """YAML text of a minimal ``kind: app`` export."""
    doc = {
        "app": {"name": name, "mode": mode},
        "kind": kind,
        "version": version,
        "workflow": {"graph": {"nodes": nodes, "edges": edges}},
    }
    return yaml.safe_dump(doc, allow_unicode=True, sort_keys=False)
