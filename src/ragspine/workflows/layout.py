"""Node geometry: positions from the export, else a deterministic layered layout.

A node keeps its exported position when it and every ancestor have one (``positionAbsolute``,
else ``position`` added to the parent's absolute position). Other nodes are laid out per
container (the canvas or an iteration / loop parent): columns by longest-path depth from left to
right, stacked top to bottom inside a column, below the container's positioned members, so
laid-out boxes never overlap them or each other.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ragspine.errors import WorkflowError, quote_input

DEFAULT_WIDTH = 244.0
DEFAULT_HEIGHT = 90.0
COLUMN_GAP = 80.0
ROW_GAP = 40.0
CONTAINER_PAD_X = 24.0
CONTAINER_PAD_TOP = 68.0
CONTAINER_PAD_BOTTOM = 24.0

Point = tuple[float, float]


@dataclass(frozen=True, slots=True)
class NodeSpec:
    """What layout needs to know about one node (ids already screened)."""

    id: str
    parent_id: str | None
    absolute: Point | None
    relative: Point | None
    width: float | None
    height: float | None


@dataclass(frozen=True, slots=True)
class Box:
    """An absolute rectangle on the canvas."""

    x: float
    y: float
    width: float
    height: float


def layered_positions(
    ids: Sequence[str], sizes: dict[str, Point], edges: Iterable[tuple[str, str]]
) -> dict[str, Point]:
    """Place ``ids`` in columns by depth (left to right); return top-left corners from (0, 0)."""
    order = {node_id: index for index, node_id in enumerate(ids)}
    successors: dict[str, list[str]] = {node_id: [] for node_id in ids}
    for source, target in edges:
        if source in order and target in order and source != target:
            successors[source].append(target)
    for targets in successors.values():
        targets.sort(key=order.__getitem__)
    forward = _drop_back_edges(ids, successors)
    layer = _longest_path_layers(ids, forward, order)

    columns: dict[int, list[str]] = {}
    for node_id in ids:
        columns.setdefault(layer[node_id], []).append(node_id)
    predecessors: dict[str, list[str]] = {node_id: [] for node_id in ids}
    for source, targets in forward.items():
        for target in targets:
            predecessors[target].append(source)

    positions: dict[str, Point] = {}
    x = 0.0
    for depth in sorted(columns):
        column = columns[depth]

        def key(node_id: str) -> tuple[float, int]:
            centres = [
                positions[p][1] + sizes[p][1] / 2 for p in predecessors[node_id] if p in positions
            ]
            return (sum(centres) / len(centres) if centres else float("inf"), order[node_id])

        column.sort(key=key)
        y = 0.0
        for node_id in column:
            positions[node_id] = (x, y)
            y += sizes[node_id][1] + ROW_GAP
        x += max(sizes[node_id][0] for node_id in column) + COLUMN_GAP
    return positions


def _drop_back_edges(ids: Sequence[str], successors: dict[str, list[str]]) -> dict[str, list[str]]:
    """Depth-first search in file order; keep only edges that do not close a cycle."""
    state: dict[str, int] = {}
    forward: dict[str, list[str]] = {node_id: [] for node_id in ids}
    for root in ids:
        if root in state:
            continue
        state[root] = 1
        stack = [(root, iter(successors[root]))]
        while stack:
            node_id, targets = stack[-1]
            advanced = False
            for target in targets:
                seen = state.get(target)
                if seen == 1:
                    continue
                forward[node_id].append(target)
                if seen is None:
                    state[target] = 1
                    stack.append((target, iter(successors[target])))
                    advanced = True
                    break
            if not advanced:
                state[node_id] = 2
                stack.pop()
    return forward


def _longest_path_layers(
    ids: Sequence[str], forward: dict[str, list[str]], order: dict[str, int]
) -> dict[str, int]:
    indegree = {node_id: 0 for node_id in ids}
    for targets in forward.values():
        for target in targets:
            indegree[target] += 1
    ready = [(order[node_id], node_id) for node_id in ids if indegree[node_id] == 0]
    heapq.heapify(ready)
    layer = {node_id: 0 for node_id in ids}
    while ready:
        _, node_id = heapq.heappop(ready)
        for target in forward[node_id]:
            layer[target] = max(layer[target], layer[node_id] + 1)
            indegree[target] -= 1
            if indegree[target] == 0:
                heapq.heappush(ready, (order[target], target))
    return layer


def resolve_geometry(specs: Sequence[NodeSpec], edges: Sequence[tuple[str, str]]) -> dict[str, Box]:
    """Absolute boxes for every node; parents must exist and form no cycle."""
    by_id = {spec.id: spec for spec in specs}
    children: dict[str | None, list[str]] = {None: []}
    for spec in specs:
        if spec.parent_id is not None and spec.parent_id not in by_id:
            raise WorkflowError(f"node {quote_input(spec.id)} names a parent that does not exist")
        children.setdefault(spec.parent_id, []).append(spec.id)
    _check_parent_cycles(by_id)
    anchored = _anchored(specs, by_id)

    sizes: dict[str, Point] = {}
    relative: dict[str, Point] = {}
    for container in _post_order(children):
        _layout_container(container, children, by_id, anchored, edges, sizes, relative)

    boxes: dict[str, Box] = {}
    pending: list[str | None] = [None]
    while pending:
        container = pending.pop()
        origin = (0.0, 0.0) if container is None else (boxes[container].x, boxes[container].y)
        for node_id in children.get(container, []):
            spec = by_id[node_id]
            if node_id in anchored and spec.absolute is not None:
                x, y = spec.absolute
            elif node_id in anchored and spec.relative is not None:
                x, y = origin[0] + spec.relative[0], origin[1] + spec.relative[1]
            else:
                x, y = origin[0] + relative[node_id][0], origin[1] + relative[node_id][1]
            boxes[node_id] = Box(x, y, *sizes[node_id])
            pending.append(node_id)
    return boxes


def _check_parent_cycles(by_id: dict[str, NodeSpec]) -> None:
    done: set[str] = set()
    for start in by_id:
        path: list[str] = []
        on_path: set[str] = set()
        current: str | None = start
        while current is not None and current not in done:
            if current in on_path:
                raise WorkflowError(
                    f"node {quote_input(current)} is its own ancestor (a parentId cycle)"
                )
            path.append(current)
            on_path.add(current)
            current = by_id[current].parent_id
        done.update(path)


def _anchored(specs: Sequence[NodeSpec], by_id: dict[str, NodeSpec]) -> set[str]:
    """Nodes that, with all their ancestors, carry exported positions."""
    memo: dict[str, bool] = {}
    for spec in specs:
        chain: list[str] = []
        current: str | None = spec.id
        while current is not None and current not in memo:
            chain.append(current)
            current = by_id[current].parent_id
        verdict = True if current is None else memo[current]
        for node_id in reversed(chain):
            node = by_id[node_id]
            verdict = verdict and (node.absolute is not None or node.relative is not None)
            memo[node_id] = verdict
    return {node_id for node_id, verdict in memo.items() if verdict}


def _post_order(children: dict[str | None, list[str]]) -> list[str | None]:
    """Containers deepest first, the canvas (``None``) last."""
    order: list[str | None] = []
    stack: list[tuple[str | None, bool]] = [(None, False)]
    while stack:
        container, expanded = stack.pop()
        if expanded:
            order.append(container)
            continue
        stack.append((container, True))
        stack.extend((child, False) for child in children.get(container, []) if child in children)
    return order


def _layout_container(
    container: str | None,
    children: dict[str | None, list[str]],
    by_id: dict[str, NodeSpec],
    anchored: set[str],
    edges: Sequence[tuple[str, str]],
    sizes: dict[str, Point],
    relative: dict[str, Point],
) -> None:
    members = children.get(container, [])
    for node_id in members:
        if node_id not in sizes:
            spec = by_id[node_id]
            sizes[node_id] = (spec.width or DEFAULT_WIDTH, spec.height or DEFAULT_HEIGHT)
    free = [node_id for node_id in members if node_id not in anchored]
    if not free:
        return
    member_set = set(free)
    local = [(s, t) for s, t in edges if s in member_set and t in member_set]
    placed = layered_positions(free, sizes, local)
    if container is None:
        offset = _below_anchored(members, by_id, anchored, sizes)
    else:  # inside an iteration: below its children that keep their exported place
        bottoms = [
            point[1] + sizes[node_id][1]
            for node_id in members
            if node_id in anchored and (point := by_id[node_id].relative) is not None
        ]
        offset = (CONTAINER_PAD_X, max([CONTAINER_PAD_TOP, *(b + ROW_GAP for b in bottoms)]))
    for node_id, (x, y) in placed.items():
        relative[node_id] = (x + offset[0], y + offset[1])
    if container is not None:
        needed_w = max(relative[n][0] + sizes[n][0] for n in free) + CONTAINER_PAD_X
        needed_h = max(relative[n][1] + sizes[n][1] for n in free) + CONTAINER_PAD_BOTTOM
        spec = by_id[container]
        width = max(spec.width or 0.0, needed_w)
        height = max(spec.height or 0.0, needed_h)
        sizes[container] = (width, height)


def _below_anchored(
    members: Sequence[str],
    by_id: dict[str, NodeSpec],
    anchored: set[str],
    sizes: dict[str, Point],
) -> Point:
    """Origin for laid-out top-level nodes: under the exported ones, or (0, 0)."""
    corners = []
    for node_id in members:
        if node_id in anchored:
            spec = by_id[node_id]
            point = spec.absolute if spec.absolute is not None else spec.relative
            assert point is not None
            corners.append((point[0], point[1] + sizes[node_id][1]))
    if not corners:
        return (0.0, 0.0)
    return (min(x for x, _ in corners), max(y for _, y in corners) + 2 * ROW_GAP)
