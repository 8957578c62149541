"""Trees from the glossary's ``parent`` keys (entities, channels) and the one cycle finder.

The glossary is public, so a tree says nothing about stored facts: who may see which fact is
decided only when facts are read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ragspine.errors import QueryError, quote_input


def find_cycle(edges: Mapping[str, Iterable[str]]) -> list[str] | None:
    """A cycle in the directed graph ``edges`` (node -> successors) as ``[a, b, ..., a]``, or
    ``None``. Iterative (deep hierarchies never hit the recursion limit); nodes are visited in
    sorted order so the cycle reported is always the same one."""
    done: set[str] = set()
    for start in sorted(edges):
        if start in done:
            continue
        path: list[str] = []
        on_path: dict[str, int] = {}
        stack: list[tuple[str, list[str]]] = [(start, sorted(edges.get(start, ())))]
        path.append(start)
        on_path[start] = 0
        while stack:
            node, successors = stack[-1]
            if successors:
                nxt = successors.pop(0)
                if nxt in on_path:
                    return [*path[on_path[nxt] :], nxt]
                if nxt not in done:
                    on_path[nxt] = len(path)
                    path.append(nxt)
                    stack.append((nxt, sorted(edges.get(nxt, ()))))
            else:
                stack.pop()
                done.add(node)
                del on_path[path.pop()]
    return None


@dataclass(frozen=True, slots=True)
class Hierarchy:
    """A forest: each code's parent and its children (sorted by code)."""

    kind: str  # "entity" or "channel", for messages
    parents: Mapping[str, str | None]
    children: Mapping[str, tuple[str, ...]] = field(repr=False)

    @classmethod
    def of(cls, kind: str, parents: Mapping[str, str | None]) -> Hierarchy:
        """The tree of ``parents`` (code -> parent code or ``None``); the caller has checked
        that every parent is known and that there is no cycle (the glossary does at load)."""
        children: dict[str, list[str]] = {code: [] for code in parents}
        for code in sorted(parents):
            parent = parents[code]
            if parent is not None:
                children[parent].append(code)
        return cls(kind, dict(parents), {code: tuple(kids) for code, kids in children.items()})

    def check(self, code: str) -> None:
        """Raise a :class:`~ragspine.errors.QueryError` unless ``code`` is in the tree."""
        if code not in self.parents:
            raise QueryError(f"{self.kind} {quote_input(code)} is not in the glossary")

    def roots(self) -> tuple[str, ...]:
        return tuple(sorted(code for code, parent in self.parents.items() if parent is None))

    def leaves_under(self, code: str) -> tuple[str, ...]:
        """The leaves of the subtree at ``code`` in depth-first order (``code`` itself when it
        has no children)."""
        self.check(code)
        leaves: list[str] = []
        stack = [code]
        while stack:
            node = stack.pop()
            kids = self.children[node]
            if kids:
                stack.extend(reversed(kids))
            else:
                leaves.append(node)
        return tuple(leaves)

    def subtree(self, code: str) -> tuple[str, ...]:
        """``code`` and every node below it, depth-first, parents before children."""
        self.check(code)
        nodes: list[str] = []
        stack = [code]
        while stack:
            node = stack.pop()
            nodes.append(node)
            stack.extend(reversed(self.children[node]))
        return tuple(nodes)

    def path_to_root(self, code: str) -> tuple[str, ...]:
        """``code``, its parent, ... up to its root."""
        self.check(code)
        path = [code]
        parent = self.parents[code]
        while parent is not None:
            path.append(parent)
            parent = self.parents[parent]
        return tuple(path)
