"""Documented limits that bound how much work one workflow export can cause."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PreviewLimits:
    """Upper bounds applied while loading and projecting a Dify export.

    Exceeding any limit is a :class:`~ragspine.errors.WorkflowError`, except ``max_title_chars``,
    which shortens titles and app names in the preview (after credential screening).
    """

    max_bytes: int = 10 * 1024 * 1024
    """Largest accepted file, in bytes (a 71-node export is about 100 kB)."""
    max_depth: int = 64
    """Deepest nesting of mappings and sequences."""
    max_aliases: int = 100
    """Most YAML alias references (``*name``) in one file."""
    max_alias_expansion: int = 10_000
    """Most values that aliases may add when expanded (defeats "billion laughs")."""
    max_scalar_chars: int = 1_000_000
    """Longest single string in the file."""
    max_nodes: int = 10_000
    """Most nodes in the graph."""
    max_edges: int = 50_000
    """Most edges in the graph."""
    max_id_chars: int = 256
    """Longest node or edge id."""
    max_title_chars: int = 200
    """Titles and the app name are cut to this many characters in the preview."""
    max_coordinate: float = 10_000_000.0
    """Largest absolute value of a coordinate, width or height."""


DEFAULT_LIMITS = PreviewLimits()
