"""Pictures of graph results: any nodes and edges as Graphviz DOT text or a self-contained SVG.

Derivation trees use it, and so can neighbourhoods: the input is a plain :class:`Picture`. The
SVG follows the workflow preview's style (:mod:`ragspine.workflows.svg`): no scripts, no external
references, every string escaped, numbers printed with one decimal so output is byte-stable.
Layout: nodes in columns by their distance from a root (a node no edge points at), left to right;
within a column, leaves take consecutive rows and a parent sits at the middle of its children.
"""

from __future__ import annotations

import unicodedata
from collections import deque
from dataclasses import dataclass

from ragspine.workflows.svg import CHAR_WIDTH, escape_xml, fit_text


@dataclass(frozen=True, slots=True)
class PictureNode:
    """A box: ``kind`` picks its colour and is printed small above ``label``; ``detail`` (e.g. a
    locator) is printed small below it."""

    id: str
    label: str
    kind: str = ""
    detail: str = ""


@dataclass(frozen=True, slots=True)
class PictureEdge:
    """An arrow from ``src`` to ``dst`` with an optional label."""

    src: str
    dst: str
    label: str = ""


@dataclass(frozen=True, slots=True)
class Picture:
    nodes: tuple[PictureNode, ...]
    edges: tuple[PictureEdge, ...]
    title: str = ""


MARGIN = 40.0
NODE_HEIGHT = 58.0
ROW_GAP = 18.0
COLUMN_GAP = 70.0
MIN_WIDTH = 120.0
MAX_WIDTH = 300.0

FILLS = {
    "derived": "#ede9fe",
    "fact": "#dcfce7",
    "missing": "#fee2e2",
    "operator": "#fef3c7",
    "constant": "#f1f5f9",
    "metric": "#e0f2fe",
    "entity": "#e0e7ff",
    "channel": "#e0e7ff",
    "document": "#f8fafc",
    "chunk": "#f8fafc",
}
DEFAULT_FILL = "#ffffff"
_STYLE = (
    "text{font-family:Helvetica,Arial,'Noto Sans CJK SC',sans-serif}"
    ".kind{font-size:11px;fill:#64748b}.title{font-size:13px;font-weight:bold;fill:#0f172a}"
    ".detail{font-size:10px;fill:#64748b}.box{stroke:#94a3b8;stroke-width:1.2}"
    ".edge{fill:none;stroke:#64748b;stroke-width:1.5}"
    ".label{font-size:11px;font-weight:bold;fill:#b45309}.label-bg{fill:#fffbeb;stroke:#f59e0b}"
)


@dataclass(frozen=True, slots=True)
class _Box:
    x: float
    y: float
    width: float


def _num(value: float) -> str:
    text = f"{value:.1f}"
    text = text[:-2] if text.endswith(".0") else text
    return "0" if text == "-0" else text


def _text_units(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in {"W", "F"} else 1 for ch in text)


def _width(node: PictureNode) -> float:
    longest = max(_text_units(node.label) * 1.1, _text_units(node.detail) * 0.8, 8.0)
    return min(max(longest * CHAR_WIDTH + 20, MIN_WIDTH), MAX_WIDTH)


def layout(picture: Picture) -> dict[str, _Box]:
    """Where each node goes (see the module docstring); edges to unknown ids are ignored."""
    ids = [node.id for node in picture.nodes]
    known = set(ids)
    successors: dict[str, list[str]] = {node_id: [] for node_id in ids}
    has_parent: set[str] = set()
    for edge in picture.edges:
        if edge.src in known and edge.dst in known:
            successors[edge.src].append(edge.dst)
            has_parent.add(edge.dst)
    column: dict[str, int] = {}
    tree_children: dict[str, list[str]] = {node_id: [] for node_id in ids}
    roots: list[str] = []
    for start in [i for i in ids if i not in has_parent] + ids:  # cycles: first unplaced node
        if start in column:
            continue
        roots.append(start)
        column[start] = 0
        queue = deque([start])
        while queue:
            current = queue.popleft()
            for nxt in successors[current]:
                if nxt not in column:
                    column[nxt] = column[current] + 1
                    tree_children[current].append(nxt)
                    queue.append(nxt)
    row: dict[str, float] = {}
    next_row = 0.0
    for root in roots:  # leaves in depth-first order take rows 0, 1, 2, ...; parents centre
        stack: list[tuple[str, bool]] = [(root, False)]
        while stack:
            current, children_done = stack.pop()
            kids = tree_children[current]
            if not kids:
                row[current] = next_row
                next_row += 1
            elif children_done:
                row[current] = (row[kids[0]] + row[kids[-1]]) / 2
            else:
                stack.append((current, True))
                stack.extend((kid, False) for kid in reversed(kids))
    widths = {node.id: _width(node) for node in picture.nodes}
    column_width: dict[int, float] = {}
    for node_id, col in column.items():
        column_width[col] = max(column_width.get(col, 0.0), widths[node_id])
    column_x: dict[int, float] = {}
    x = 0.0
    for col in sorted(column_width):
        column_x[col] = x
        x += column_width[col] + COLUMN_GAP
    return {
        node_id: _Box(
            column_x[column[node_id]], row[node_id] * (NODE_HEIGHT + ROW_GAP), widths[node_id]
        )
        for node_id in ids
    }


def _node_svg(node: PictureNode, box: _Box) -> str:
    fill = FILLS.get(node.kind, DEFAULT_FILL)
    inner = box.width - 16
    parts = [
        f'<g class="node" data-id="{escape_xml(node.id)}">',
        f'<rect class="box" x="{_num(box.x)}" y="{_num(box.y)}" width="{_num(box.width)}" '
        f'height="{_num(NODE_HEIGHT)}" rx="8" fill="{fill}"/>',
        f'<text class="kind" x="{_num(box.x + 8)}" y="{_num(box.y + 15)}">'
        f"{escape_xml(fit_text(node.kind, inner))}</text>",
        f'<text class="title" x="{_num(box.x + 8)}" y="{_num(box.y + 32)}">'
        f"{escape_xml(fit_text(node.label, inner * 0.9))}</text>",
    ]
    if node.detail:
        parts.append(
            f'<text class="detail" x="{_num(box.x + 8)}" y="{_num(box.y + 48)}">'
            f"{escape_xml(fit_text(node.detail, inner * 1.2))}</text>"
        )
    parts.append("</g>")
    return "".join(parts)


def _edge_svg(index: int, edge: PictureEdge, source: _Box, target: _Box) -> str:
    sx, sy = source.x + source.width, source.y + NODE_HEIGHT / 2
    tx, ty = target.x, target.y + NODE_HEIGHT / 2
    bend = max(40.0, abs(tx - sx) / 2)
    path = (
        f"M{_num(sx)} {_num(sy)} C{_num(sx + bend)} {_num(sy)} "
        f"{_num(tx - bend)} {_num(ty)} {_num(tx)} {_num(ty)}"
    )
    parts = [
        f'<g class="link" data-id="e{index}">',
        f'<path class="edge" d="{path}" marker-end="url(#arrow)"/>',
    ]
    if edge.label:
        label = fit_text(edge.label, 200)
        mx, my = (sx + tx) / 2, (sy + ty) / 2
        width = _text_units(label) * CHAR_WIDTH + 10
        parts.append(
            f'<rect class="label-bg" x="{_num(mx - width / 2)}" y="{_num(my - 9)}" '
            f'width="{_num(width)}" height="16" rx="3"/>'
            f'<text class="label" x="{_num(mx)}" y="{_num(my + 3)}" text-anchor="middle">'
            f"{escape_xml(label)}</text>"
        )
    parts.append("</g>")
    return "".join(parts)


def to_svg(picture: Picture) -> str:
    """The picture as one SVG document (edges first, boxes over them)."""
    boxes = layout(picture)
    if boxes:
        left = min(b.x for b in boxes.values()) - MARGIN
        top = min(b.y for b in boxes.values()) - MARGIN
        right = max(b.x + b.width for b in boxes.values()) + MARGIN
        bottom = max(b.y + NODE_HEIGHT for b in boxes.values()) + MARGIN
    else:
        left, top, right, bottom = 0.0, 0.0, 2 * MARGIN, 2 * MARGIN
    width, height = right - left, bottom - top
    out = [
        '<svg xmlns="http://www.w3.org/2000/svg" '
        f'viewBox="{_num(left)} {_num(top)} {_num(width)} {_num(height)}" '
        f'width="{_num(width)}" height="{_num(height)}">',
        f"<title>{escape_xml(picture.title)}</title>",
        f"<style>{_STYLE}</style>",
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" '
        'markerHeight="8" orient="auto-start-reverse"><path d="M0 0L10 5L0 10z" fill="#64748b"/>'
        "</marker></defs>",
        f'<rect x="{_num(left)}" y="{_num(top)}" width="{_num(width)}" height="{_num(height)}" '
        'fill="#ffffff"/>',
    ]
    out.extend(
        _edge_svg(index, edge, boxes[edge.src], boxes[edge.dst])
        for index, edge in enumerate(picture.edges)
        if edge.src in boxes and edge.dst in boxes
    )
    out.extend(_node_svg(node, boxes[node.id]) for node in picture.nodes)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _dot_string(text: str) -> str:
    """A DOT double-quoted string: backslash and quote escaped, line breaks as ``\\n``, other
    control characters dropped."""
    out = []
    for ch in text:
        if ch in '\\"':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif unicodedata.category(ch) in {"Cc", "Cs"}:
            out.append(" ")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def to_dot(picture: Picture) -> str:
    """The picture as Graphviz DOT text (``dot -Tpng``), left to right, same colours."""
    lines = [
        "digraph ragspine {",
        "  graph [rankdir=LR, labelloc=t, fontname=Helvetica, "
        f"label={_dot_string(picture.title)}];",
        '  node [shape=box, style="rounded,filled", fontname=Helvetica, fontsize=11];',
        "  edge [fontname=Helvetica, fontsize=10];",
    ]
    known = {node.id for node in picture.nodes}
    for node in picture.nodes:
        text = "\n".join(part for part in (node.kind, node.label, node.detail) if part)
        fill = FILLS.get(node.kind, DEFAULT_FILL)
        lines.append(f'  {_dot_string(node.id)} [label={_dot_string(text)}, fillcolor="{fill}"];')
    for edge in picture.edges:
        if edge.src in known and edge.dst in known:
            label = f" [label={_dot_string(edge.label)}]" if edge.label else ""
            lines.append(f"  {_dot_string(edge.src)} -> {_dot_string(edge.dst)}{label};")
    lines.append("}")
    return "\n".join(lines) + "\n"
