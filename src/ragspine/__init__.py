"""RAGSpine: question answering over business reports that never invents a number."""

from ragspine.errors import RagSpineError
from ragspine.security import Principal, Sensitivity, visible
from ragspine.workspace import Workspace

__all__ = [
    "Principal",
    "RagSpineError",
    "Sensitivity",
    "Workspace",
    "visible",
]
__version__ = "0.1.0"
