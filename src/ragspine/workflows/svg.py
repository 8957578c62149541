"""Deterministic, self-contained SVG drawing of a workflow preview.

No scripts, no external references, no fonts to fetch. Every string goes through
:func:`escape_xml`; numbers are printed with one decimal so output is byte-stable.
"""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ragspine.workflows.model import PreviewEdge, PreviewNode, WorkflowPreview

MARGIN = 40.0
CHAR_WIDTH = 7.0
_FILL = {
    "start": "#e0f2fe",
    "end": "#fee2e2",
    "answer": "#fee2e2",
    "llm": "#ede9fe",
    "if-else": "#fef3c7",
    "question-classifier": "#fef3c7",
    "knowledge-retrieval": "#dcfce7",
    "tool": "#e0e7ff",
    "code": "#f1f5f9",
    "http-request": "#f1f5f9",
    "iteration": "#f8fafc",
    "loop": "#f8fafc",
    "note": "#fefce8",
}
_DEFAULT_FILL = "#ffffff"
_STYLE = (
    "text{font-family:Helvetica,Arial,'Noto Sans CJK SC',sans-serif}"
    ".type{font-size:11px;fill:#64748b}.title{font-size:13px;font-weight:bold;fill:#0f172a}"
    ".box{stroke:#94a3b8;stroke-width:1.2}.container{stroke-dasharray:6 3}"
    ".edge{fill:none;stroke:#64748b;stroke-width:1.5}"
    ".label{font-size:11px;font-weight:bold;fill:#b45309}.label-bg{fill:#fffbeb;stroke:#f59e0b}"
)


def escape_xml(text: str) -> str:
    """Text safe inside an XML element or a double-quoted attribute."""
    out: list[str] = []
    for ch in text:
        if ch == "&":
            out.append("&amp;")
        elif ch == "<":
            out.append("&lt;")
        elif ch == ">":
            out.append("&gt;")
        elif ch == '"':
            out.append("&quot;")
        elif ch == "'":
            out.append("&#39;")
        elif unicodedata.category(ch) in {"Cc", "Cs"} or ch in "\ufffe\uffff":
            out.append(" ")
        else:
            out.append(ch)
    return "".join(out)


def _num(value: float) -> str:
    text = f"{value:.1f}"
    text = text[:-2] if text.endswith(".0") else text
    return "0" if text == "-0" else text


def _units(ch: str) -> int:
    return 2 if unicodedata.east_asian_width(ch) in {"W", "F"} else 1


def fit_text(text: str, width: float) -> str:
    """Shorten ``text`` with an ellipsis so it fits ``width`` pixels at the label font."""
    budget = max(int(width / CHAR_WIDTH), 1)
    used = 0
    for index, ch in enumerate(text):
        used += _units(ch)
        if used > budget:
            return text[: max(index - 1, 0)] + "…"
    return text


def _depths(nodes: tuple[PreviewNode, ...]) -> dict[str, int]:
    parents = {node.id: node.parent_id for node in nodes}
    depths: dict[str, int] = {}
    for node in nodes:
        depth, current, seen = 0, node.parent_id, 0
        while current is not None and seen <= len(nodes):
            depth, current, seen = depth + 1, parents.get(current), seen + 1
        depths[node.id] = depth
    return depths


def _node_svg(node: PreviewNode, is_container: bool) -> str:
    fill = _FILL.get(node.type, _DEFAULT_FILL)
    classes = "box container" if is_container else "box"
    parts = [
        f'<g class="node" data-id="{escape_xml(node.id)}">',
        f'<rect class="{classes}" x="{_num(node.x)}" y="{_num(node.y)}" '
        f'width="{_num(node.width)}" height="{_num(node.height)}" rx="8" fill="{fill}"/>',
    ]
    inner = node.width - 16
    parts.append(
        f'<text class="type" x="{_num(node.x + 8)}" y="{_num(node.y + 15)}">'
        f"{escape_xml(fit_text(node.type, inner))}</text>"
    )
    if node.title and node.height >= 32:
        parts.append(
            f'<text class="title" x="{_num(node.x + 8)}" y="{_num(node.y + 32)}">'
            f"{escape_xml(fit_text(node.title, inner * 0.9))}</text>"
        )
    parts.append("</g>")
    return "".join(parts)


def _edge_svg(edge: PreviewEdge, source: PreviewNode, target: PreviewNode) -> str:
    sx, sy = source.x + source.width, source.y + source.height / 2
    tx, ty = target.x, target.y + target.height / 2
    bend = max(40.0, abs(tx - sx) / 2)
    path = (
        f"M{_num(sx)} {_num(sy)} C{_num(sx + bend)} {_num(sy)} "
        f"{_num(tx - bend)} {_num(ty)} {_num(tx)} {_num(ty)}"
    )
    parts = [
        f'<g class="link" data-id="{escape_xml(edge.id)}">',
        f'<path class="edge" d="{path}" marker-end="url(#arrow)"/>',
    ]
    if edge.label:
        mx, my = (sx + tx) / 2, (sy + ty) / 2
        width = len(edge.label) * CHAR_WIDTH + 10
        parts.append(
            f'<rect class="label-bg" x="{_num(mx - width / 2)}" y="{_num(my - 9)}" '
            f'width="{_num(width)}" height="16" rx="3"/>'
            f'<text class="label" x="{_num(mx)}" y="{_num(my + 3)}" text-anchor="middle">'
            f"{escape_xml(edge.label)}</text>"
        )
    parts.append("</g>")
    return "".join(parts)


def render_svg(preview: WorkflowPreview) -> str:
    """Draw containers, then edges, then the other nodes (children above their parents)."""
    nodes = preview.nodes
    if nodes:
        left = min(node.x for node in nodes) - MARGIN
        top = min(node.y for node in nodes) - MARGIN
        right = max(node.x + node.width for node in nodes) + MARGIN
        bottom = max(node.y + node.height for node in nodes) + MARGIN
    else:
        left, top, right, bottom = 0.0, 0.0, 2 * MARGIN, 2 * MARGIN
    width, height = right - left, bottom - top
    by_id = {node.id: node for node in nodes}
    parents = {node.parent_id for node in nodes if node.parent_id is not None}
    depths = _depths(nodes)
    order = sorted(range(len(nodes)), key=lambda i: (depths[nodes[i].id], i))

    out = [
        '<svg xmlns="http://www.w3.org/2000/svg" '
        f'viewBox="{_num(left)} {_num(top)} {_num(width)} {_num(height)}" '
        f'width="{_num(width)}" height="{_num(height)}">',
        f"<title>{escape_xml(preview.app_name)} ({escape_xml(preview.mode.value)})</title>",
        f"<style>{_STYLE}</style>",
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" '
        'markerHeight="8" orient="auto-start-reverse"><path d="M0 0L10 5L0 10z" fill="#64748b"/>'
        "</marker></defs>",
        f'<rect x="{_num(left)}" y="{_num(top)}" width="{_num(width)}" height="{_num(height)}" '
        'fill="#ffffff"/>',
    ]
    out.extend(_node_svg(nodes[i], True) for i in order if nodes[i].id in parents)
    out.extend(
        _edge_svg(edge, by_id[edge.source], by_id[edge.target])
        for edge in preview.edges
        if edge.source in by_id and edge.target in by_id
    )
    out.extend(_node_svg(nodes[i], False) for i in order if nodes[i].id not in parents)
    out.append("</svg>")
    return "\n".join(out) + "\n"
