"""Workflow preview v1: load a Dify export safely and project it to a redacted picture."""

from __future__ import annotations

import json
import warnings
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from ragspine.workflows.dsl import load_dsl
from ragspine.workflows.graph import project_graph, screen_title
from ragspine.workflows.limits import DEFAULT_LIMITS, PreviewLimits
from ragspine.workflows.model import WorkflowPreview

SCHEMA_RESOURCE = "preview_v1.schema.json"


class WorkflowVersionWarning(UserWarning):
    """The export's DSL version is newer than the newest this preview knows."""


def preview(
    source: str | bytes | Path, *, limits: PreviewLimits = DEFAULT_LIMITS, warn: bool = True
) -> WorkflowPreview:
    """Preview a Dify workflow export (a path, YAML/JSON ``bytes``, or text).

    A ``str`` is the document itself when it contains a line break or starts with ``{``;
    otherwise it is a file path. Raises :class:`~ragspine.errors.WorkflowError` for an unsafe,
    unsupported or inconsistent export; a newer DSL version only warns: through the
    :mod:`warnings` module as a :class:`WorkflowVersionWarning`, and always in the result's
    ``warnings`` (``warn=False`` leaves reporting them to the caller).
    """
    document = load_dsl(source, limits=limits)
    if warn:
        for message in document.warnings:
            warnings.warn(message, WorkflowVersionWarning, stacklevel=2)
    nodes, edges = project_graph(document.nodes, document.edges, limits)
    return WorkflowPreview(
        app_name=screen_title(document.app_name, limits, "app.name"),
        mode=document.mode,
        nodes=nodes,
        edges=edges,
        dsl_version=document.version,
        warnings=document.warnings,
    )


@cache
def _schema_text() -> str:
    return resources.files("ragspine.workflows").joinpath(SCHEMA_RESOURCE).read_text("utf-8")


def preview_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the preview v1 object, as shipped in the package."""
    schema: dict[str, Any] = json.loads(_schema_text())
    return schema
