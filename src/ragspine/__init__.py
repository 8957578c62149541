"""RAGSpine: question answering over business reports that never invents a number.

The public names are imported on first use, so that a process needing one module (the ingest's
analysis worker, a quick CLI command) does not import every part of the package.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragspine.answer.options import AnswerOptions
    from ragspine.answer.types import Answer as NarrativeAnswer
    from ragspine.errors import RagSpineError
    from ragspine.narrative.filters.expr import Filter, parse_filter
    from ragspine.narrative.retrieve.options import SearchOptions
    from ragspine.narrative.retrieve.snippets import Snippet
    from ragspine.security import Principal, Sensitivity, visible
    from ragspine.structured.query import MetricResult, MetricStatus
    from ragspine.workspace import Workspace

_EXPORTS = {
    "AnswerOptions": ("ragspine.answer.options", "AnswerOptions"),
    "Filter": ("ragspine.narrative.filters.expr", "Filter"),
    "MetricResult": ("ragspine.structured.query", "MetricResult"),
    "MetricStatus": ("ragspine.structured.query", "MetricStatus"),
    "NarrativeAnswer": ("ragspine.answer.types", "Answer"),
    "Principal": ("ragspine.security", "Principal"),
    "RagSpineError": ("ragspine.errors", "RagSpineError"),
    "SearchOptions": ("ragspine.narrative.retrieve.options", "SearchOptions"),
    "Sensitivity": ("ragspine.security", "Sensitivity"),
    "Snippet": ("ragspine.narrative.retrieve.snippets", "Snippet"),
    "Workspace": ("ragspine.workspace", "Workspace"),
    "parse_filter": ("ragspine.narrative.filters.expr", "parse_filter"),
    "visible": ("ragspine.security", "visible"),
}

__all__ = [
    "AnswerOptions",
    "Filter",
    "MetricResult",
    "MetricStatus",
    "NarrativeAnswer",
    "Principal",
    "RagSpineError",
    "SearchOptions",
    "Sensitivity",
    "Snippet",
    "Workspace",
    "parse_filter",
    "visible",
]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    found = _EXPORTS.get(name)
    if found is None:
        raise AttributeError(f"module 'ragspine' has no attribute {name!r}")
    value = getattr(importlib.import_module(found[0]), found[1])
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
