"""Dify workflow exports: safe loading with limits, a redacted preview v1, and SVG rendering."""

from ragspine.workflows.dsl import AppMode
from ragspine.workflows.limits import DEFAULT_LIMITS, PreviewLimits
from ragspine.workflows.model import PreviewEdge, PreviewNode, WorkflowPreview
from ragspine.workflows.preview import WorkflowVersionWarning, preview, preview_schema

__all__ = [
    "DEFAULT_LIMITS",
    "AppMode",
    "PreviewEdge",
    "PreviewLimits",
    "PreviewNode",
    "WorkflowPreview",
    "WorkflowVersionWarning",
    "preview",
    "preview_schema",
]
