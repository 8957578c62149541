"""RAGSpine: question answering over business reports that never invents a number."""

from ragspine.answer.options import AnswerOptions
from ragspine.answer.types import Answer as NarrativeAnswer
from ragspine.errors import RagSpineError
from ragspine.narrative.filters.expr import Filter, parse_filter
from ragspine.narrative.retrieve.options import SearchOptions
from ragspine.narrative.retrieve.snippets import Snippet
from ragspine.security import Principal, Sensitivity, visible
from ragspine.structured.query import MetricResult, MetricStatus
from ragspine.workspace import Workspace

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
