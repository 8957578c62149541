"""RAGSpine: question answering over business reports that never invents a number."""

from ragspine.errors import RagSpineError
from ragspine.security import Principal, Sensitivity, visible
from ragspine.structured.query import MetricResult, MetricStatus
from ragspine.workspace import Workspace

__all__ = [
    "MetricResult",
    "MetricStatus",
    "Principal",
    "RagSpineError",
    "Sensitivity",
    "Workspace",
    "visible",
]
__version__ = "0.1.0"
