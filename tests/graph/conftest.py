"""Workspaces with documents for the relation-graph tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ragspine.workspace import Workspace

PUBLIC_TEXT = (
    "ACME Corp revenue grew 5% online. Net income fell at ACME China.\n\n"
    "Headcount rose at ACME Group."
)
CONFIDENTIAL_TEXT = "ACME revenue and EBIT were restated. Turnover in stores was flat."
RESTRICTED_TEXT = "ACME China headcount and net profit are under review. E-commerce sales fell."


def write_docs(folder: Path, docs: dict[str, tuple[str, str | None]]) -> Path:
    """Write ``name -> (text, sensitivity)`` as files with sidecars into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, (text, level) in docs.items():
        (folder / name).write_text(text, encoding="utf-8")
        if level is not None:
            (folder / f"{name}.meta.json").write_text(f'{{"sensitivity": "{level}"}}')
    return folder


@pytest.fixture()
def docs(tmp_path: Path) -> dict[str, Path]:
    return {
        "public": write_docs(tmp_path / "public", {"a.txt": (PUBLIC_TEXT, None)}),
        "hidden": write_docs(
            tmp_path / "hidden",
            {
                "b.txt": (CONFIDENTIAL_TEXT, "confidential"),
                "c.txt": (RESTRICTED_TEXT, "restricted"),
            },
        ),
    }


def open_workspace(path: Path) -> Workspace:
    return Workspace.init(path)


@pytest.fixture()
def ws(tmp_path: Path, docs: dict[str, Path]) -> Iterator[Workspace]:
    """A workspace with the public document and the hidden ones, hidden first."""
    with open_workspace(tmp_path / "with") as workspace:
        workspace.ingest_documents([docs["hidden"]], library="lib")
        workspace.ingest_documents([docs["public"]], library="lib")
        yield workspace
