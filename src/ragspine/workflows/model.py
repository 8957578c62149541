"""The preview v1 value types: nodes, edges and the whole preview."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ragspine.workflows.dsl import AppMode
from ragspine.workflows.svg import render_svg

PREVIEW_VERSION = 1


def _number(value: float) -> float | int:
    """Round to hundredths; integral values become ints so the JSON stays tidy."""
    rounded = round(value, 2)
    return int(rounded) if rounded.is_integer() else rounded


@dataclass(frozen=True, slots=True)
class PreviewNode:
    """One node: its id, type, screened title and absolute box; ``parent_id`` for children."""

    id: str
    type: str
    title: str
    x: float
    y: float
    width: float
    height: float
    parent_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = {
            "id": self.id,
            "type": self.type,
            "title": self.title,
            "x": _number(self.x),
            "y": _number(self.y),
            "width": _number(self.width),
            "height": _number(self.height),
        }
        if self.parent_id is not None:
            result["parent_id"] = self.parent_id
        return result


@dataclass(frozen=True, slots=True)
class PreviewEdge:
    """One edge between two node ids, with a branch label where the source branches."""

    id: str
    source: str
    target: str
    label: str | None = None

    def to_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = {"id": self.id, "source": self.source, "target": self.target}
        if self.label is not None:
            result["label"] = self.label
        return result


@dataclass(frozen=True, slots=True)
class WorkflowPreview:
    """A redacted, read-only picture of a Dify workflow: nodes, edges, labels and geometry.

    ``dsl_version`` and ``warnings`` describe the source and are not part of the preview JSON.
    """

    app_name: str
    mode: AppMode
    nodes: tuple[PreviewNode, ...]
    edges: tuple[PreviewEdge, ...]
    dsl_version: str = ""
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The preview v1 object (see ``preview_v1.schema.json``)."""
        return {
            "preview_version": PREVIEW_VERSION,
            "app": {"name": self.app_name, "mode": self.mode.value},
            "nodes": [node.to_dict() for node in self.nodes],
            "edges": [edge.to_dict() for edge in self.edges],
        }

    def to_json(self, *, indent: int | None = 2) -> str:
        """The preview v1 object as deterministic JSON text."""
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=indent)

    def to_svg(self) -> str:
        """A self-contained SVG drawing of the preview."""
        return render_svg(self)

    def summary(self) -> str:
        """A few lines for a terminal: app, mode, DSL version and counts (warnings are reported
        separately, see ``warnings``)."""
        lines = [
            f"app: {self.app_name}",
            f"mode: {self.mode.value}",
            f"dsl version: {self.dsl_version}",
            f"nodes: {len(self.nodes)}",
            f"edges: {len(self.edges)}",
        ]
        return "\n".join(lines)
