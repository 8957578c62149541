"""Projection of raw Dify nodes and edges into preview nodes and edges.

Redaction by construction: only ids, ``data.type``, ``data.title``, geometry, ``parentId``, edge
endpoints and the branch ids needed for labels are read. Everything else in a node (prompts,
code, model settings, URLs, headers, credentials, dataset ids, variables) is never touched.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ragspine.errors import WorkflowError, quote_input
from ragspine.text import display_text, has_hidden_characters
from ragspine.workflows.layout import NodeSpec, Point, resolve_geometry
from ragspine.workflows.limits import PreviewLimits
from ragspine.workflows.model import PreviewEdge, PreviewNode
from ragspine.workflows.redact import looks_sensitive, screen_text

_TYPE_RE = re.compile(r"^[a-z][a-z0-9_\-]{0,63}$")
_NOTE_NODE = "custom-note"


@dataclass(frozen=True, slots=True)
class _Branches:
    """Branch ids of a node, in order, used only to name outgoing edges."""

    type: str
    cases: tuple[str, ...]
    classes: tuple[str, ...]


def screen_title(raw: Any, limits: PreviewLimits, where: str) -> str:
    """Plain text for a title or app name: cleaned, screened for credentials, then shortened.

    Cleaning (:func:`~ragspine.text.display_text`: NFC; control, bidirectional and other
    invisible characters removed) runs first, so the screen sees the text a reader would see and
    a credential split by invisible characters is still masked; screening only inserts
    ``[masked]``, so the result stays clean.
    """
    if raw is None:
        return ""
    if isinstance(raw, dict | list):
        raise WorkflowError(f"{where} must be text")
    text = screen_text(display_text(str(raw)))
    if len(text) > limits.max_title_chars:
        text = text[: limits.max_title_chars - 1] + "…"
    return text


class _IdScreen:
    """Maps source ids to output ids; credential-looking ids get stable stand-ins."""

    def __init__(self, limits: PreviewLimits, taken: set[str]) -> None:
        self.limits = limits
        self.taken = taken
        self.mapping: dict[str, str] = {}
        self.counter = 0

    def raw(self, value: Any, what: str) -> str | None:
        """The source id as text, or None when absent; rejects non-text ids."""
        if value is None or value == "":
            return None
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise WorkflowError(f"{what} has an id that is not text")
        text = str(value)
        if len(text) > self.limits.max_id_chars:
            raise WorkflowError(
                f"{what} has an id longer than {self.limits.max_id_chars} characters"
            )
        return text

    def __call__(self, raw: str) -> str:
        shown = self.mapping.get(raw)
        if shown is None:
            shown = raw
            if looks_sensitive(raw) or has_hidden_characters(raw):
                self.counter += 1
                shown = f"masked-id-{self.counter}"
                while shown in self.taken:
                    self.counter += 1
                    shown = f"masked-id-{self.counter}"
                self.taken.add(shown)
            self.mapping[raw] = shown
        return shown


def project_graph(
    raw_nodes: Sequence[Any], raw_edges: Sequence[Any], limits: PreviewLimits
) -> tuple[tuple[PreviewNode, ...], tuple[PreviewEdge, ...]]:
    """Preview nodes and edges from the raw graph lists; errors name the offending id."""
    if len(raw_nodes) > limits.max_nodes:
        raise WorkflowError(
            f"workflow has {len(raw_nodes)} nodes, over the limit {limits.max_nodes}"
        )
    if len(raw_edges) > limits.max_edges:
        raise WorkflowError(
            f"workflow has {len(raw_edges)} edges, over the limit {limits.max_edges}"
        )
    for position, item in enumerate(raw_nodes):
        if not isinstance(item, dict):
            raise WorkflowError(f"node #{position + 1} is not a mapping")
    for position, item in enumerate(raw_edges):
        if not isinstance(item, dict):
            raise WorkflowError(f"edge #{position + 1} is not a mapping")
    taken = {str(item.get("id")) for item in [*raw_nodes, *raw_edges]}
    screen = _IdScreen(limits, taken)

    specs: list[NodeSpec] = []
    kinds: dict[str, tuple[str, str]] = {}
    branches: dict[str, _Branches] = {}
    for position, item in enumerate(raw_nodes):
        raw_id = screen.raw(item.get("id"), f"node #{position + 1}")
        if raw_id is None:
            raise WorkflowError(f"node #{position + 1} has no id")
        node_id = screen(raw_id)
        if raw_id in branches:
            raise WorkflowError(
                f"duplicate node id {quote_input(node_id)}: node ids must be unique"
            )
        data = item.get("data")
        data = data if isinstance(data, dict) else {}
        node_type = _node_type(data.get("type"), item.get("type"))
        title = screen_title(data.get("title"), limits, f"the title of node {quote_input(node_id)}")
        branches[raw_id] = _branches(node_type, data)
        kinds[raw_id] = (node_type, title)
        parent_raw = screen.raw(item.get("parentId"), f"the parent of node {quote_input(node_id)}")
        specs.append(
            NodeSpec(
                id=node_id,
                parent_id=None if parent_raw is None else screen(parent_raw),
                absolute=_point(item.get("positionAbsolute"), node_id, limits),
                relative=_point(item.get("position"), node_id, limits),
                width=_size(item.get("width"), node_id, "width", limits),
                height=_size(item.get("height"), node_id, "height", limits),
            )
        )

    edges = _project_edges(raw_edges, branches, screen)
    boxes = resolve_geometry(specs, [(edge.source, edge.target) for edge in edges])
    nodes = tuple(
        PreviewNode(
            id=spec.id,
            type=kinds[raw][0],
            title=kinds[raw][1],
            x=boxes[spec.id].x,
            y=boxes[spec.id].y,
            width=boxes[spec.id].width,
            height=boxes[spec.id].height,
            parent_id=spec.parent_id,
        )
        for raw, spec in zip(kinds, specs, strict=True)
    )
    return nodes, edges


def _project_edges(
    raw_edges: Sequence[dict[str, Any]], branches: dict[str, _Branches], screen: _IdScreen
) -> tuple[PreviewEdge, ...]:
    explicit: list[str | None] = [
        screen.raw(item.get("id"), f"edge #{position + 1}")
        for position, item in enumerate(raw_edges)
    ]
    used: set[str] = set()
    edges: list[PreviewEdge] = []
    for position, item in enumerate(raw_edges):
        raw_id = explicit[position]
        name = f"edge #{position + 1}" if raw_id is None else f"edge {quote_input(screen(raw_id))}"
        ends: list[str] = []
        for end in ("source", "target"):
            raw_end = screen.raw(item.get(end), f"the {end} of {name}")
            if raw_end is None:
                raise WorkflowError(f"{name} has no {end}")
            if raw_end not in branches:
                raise WorkflowError(
                    f"{name} is dangling: its {end} node {quote_input(screen(raw_end))} "
                    "does not exist"
                )
            ends.append(raw_end)
        source, target = screen(ends[0]), screen(ends[1])
        if raw_id is None:
            edge_id = f"edge-{source}-{target}"
            suffix = 1
            while edge_id in used or edge_id in screen.taken:
                suffix += 1
                edge_id = f"edge-{source}-{target}-{suffix}"
        else:
            edge_id = screen(raw_id)
            if edge_id in used:
                raise WorkflowError(
                    f"duplicate edge id {quote_input(edge_id)}: edge ids must be unique"
                )
        used.add(edge_id)
        label = edge_label(branches[ends[0]], item.get("sourceHandle"))
        edges.append(PreviewEdge(id=edge_id, source=source, target=target, label=label))
    return tuple(edges)


def edge_label(branches: _Branches, handle: Any) -> str | None:
    """``IF`` / ``ELSE`` / ``CASE n`` for if-else, ``CLASS n`` for classifiers, else none."""
    if isinstance(handle, bool) or not isinstance(handle, str | int):
        return None
    handle = str(handle)
    if handle == "fail-branch":
        return "FAIL"
    if branches.type == "if-else":
        if handle == "false":
            return "ELSE"
        if handle == "true":
            return "IF"
        if handle in branches.cases:
            index = branches.cases.index(handle)
            return "IF" if index == 0 else f"CASE {index + 1}"
    if branches.type == "question-classifier" and handle in branches.classes:
        return f"CLASS {branches.classes.index(handle) + 1}"
    return None


def _branches(node_type: str, data: dict[str, Any]) -> _Branches:
    def ids(items: Any, *keys: str) -> tuple[str, ...]:
        found: list[str] = []
        for entry in items if isinstance(items, list) else []:
            if isinstance(entry, dict):
                value = next((entry[key] for key in keys if entry.get(key) is not None), None)
                if isinstance(value, str | int) and not isinstance(value, bool):
                    found.append(str(value))
        return tuple(found)

    if node_type == "if-else":
        return _Branches(node_type, ids(data.get("cases"), "case_id", "id"), ())
    if node_type == "question-classifier":
        return _Branches(node_type, (), ids(data.get("classes"), "id"))
    return _Branches(node_type, (), ())


def _node_type(data_type: Any, node_kind: Any) -> str:
    if isinstance(data_type, str) and data_type:
        candidate = data_type
    elif node_kind == _NOTE_NODE:
        candidate = "note"
    else:
        return "unknown"
    if _TYPE_RE.match(candidate) and not looks_sensitive(candidate):
        return candidate
    return "unknown"


def _coordinate(value: Any, node_id: str, what: str, limits: PreviewLimits) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise WorkflowError(f"node {quote_input(node_id)} has a {what} that is not a number")
    try:
        number = float(value)
    except OverflowError:  # an integer past a float's range
        number = math.inf
    if not math.isfinite(number) or abs(number) > limits.max_coordinate:
        raise WorkflowError(
            f"node {quote_input(node_id)} has a {what} that is not finite or beyond "
            f"±{limits.max_coordinate:g}"
        )
    return number


def _point(value: Any, node_id: str, limits: PreviewLimits) -> Point | None:
    if value is None:
        return None
    if not isinstance(value, dict) or "x" not in value or "y" not in value:
        raise WorkflowError(f"node {quote_input(node_id)} has a position without numeric x and y")
    return (
        _coordinate(value["x"], node_id, "position x", limits),
        _coordinate(value["y"], node_id, "position y", limits),
    )


def _size(value: Any, node_id: str, what: str, limits: PreviewLimits) -> float | None:
    if value is None:
        return None
    number = _coordinate(value, node_id, what, limits)
    if number <= 0:
        raise WorkflowError(f"node {quote_input(node_id)} has a {what} that is not positive")
    return number
