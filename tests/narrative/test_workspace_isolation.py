"""End to end: restricted text never reaches a snippet, prompt_text, answer or trace.

One document has a public section and a confidential one (``section_sensitivity`` in its
sidecar); another is restricted as a whole. Libraries are chunked both as sentence groups
(parent expansion) and as sentence windows. A deliberately leaky chunk source (a parent built
from the whole document, as a stored section text would be) shows the check can fail.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from ragspine import Principal, Workspace
from ragspine.narrative.retrieve import retriever
from ragspine.narrative.retrieve.chunk_source import StoreChunkSource
from ragspine.narrative.retrieve.expansion import ParentSection, Passage
from ragspine.security import Sensitivity

SECRET_SECTION = "ZEBRA7731"
SECRET_DOC = "OKAPI4410"
QUESTIONS = ("salary plan budget 2024", "budget plan", "salary", "merger plan")


def _leaks(payload: object) -> list[str]:
    text = json.dumps(payload, ensure_ascii=False, default=str)
    return [token for token in (SECRET_SECTION, SECRET_DOC) if token in text]


def _ws(workspace_dir: Path, tmp_path: Path) -> Workspace:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "plan.md").write_text(
        "# Plan\n\n## Overview\n\nThe budget plan for 2024 is 12 million. "
        "The salary plan follows next year.\n\n"
        "## Compensation\n\n"
        f"The salary plan {SECRET_SECTION} raises pay by 7%. Budget plan details stay here.\n",
        encoding="utf-8",
    )
    (docs / "plan.md.meta.json").write_text(
        json.dumps({"section_sensitivity": {"Compensation": "confidential"}})
    )
    (docs / "deal.txt").write_text(f"The merger plan {SECRET_DOC} and its salary budget.\n")
    (docs / "deal.txt.meta.json").write_text(json.dumps({"sensitivity": "restricted"}))
    ws = Workspace.open(workspace_dir)
    ws.ingest_documents([docs], library="groups")
    ws.ingest_documents([docs], library="windows", window=1)
    return ws


def _everything(ws: Workspace, principal: Principal) -> list[object]:
    outputs: list[object] = []
    for question in QUESTIONS:
        for library in ("groups", "windows"):
            result = ws.search(question, libraries=[library], top_k=20, principal=principal)
            outputs.append(result.to_dict())
            answer = ws.answer_narrative(
                question, libraries=[library], top_k=20, principal=principal
            )
            outputs.append(answer.to_dict())
            outputs.append(answer.render())
        outputs.append(ws.search(question, top_k=20, principal=principal).to_dict())
    return outputs


def test_restricted_text_never_leaks(workspace_dir: Path, tmp_path: Path) -> None:
    ws = _ws(workspace_dir, tmp_path)
    public = _everything(ws, Principal.of("public"))
    assert _leaks(public) == []
    # the same public snippets still carry their visible parent / window text
    result = ws.search("budget plan", libraries=["windows"], top_k=20)
    assert any(s.prompt_text != s.text for s in result.snippets)
    assert all(s.sensitivity == 0 for s in result.snippets)
    # the check is meaningful: cleared principals do see the restricted text
    assert _leaks(_everything(ws, Principal.of("confidential"))) == [SECRET_SECTION]
    # restricted material needs a group grant, which chunks do not carry: nobody sees it here
    assert _leaks(_everything(ws, Principal.of("restricted"))) == [SECRET_SECTION]


def test_a_leaky_index_is_caught_by_the_recheck(
    workspace_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    ws = _ws(workspace_dir, tmp_path)
    monkeypatch.setattr(retriever, "max_visible_level", lambda principal: Sensitivity.RESTRICTED)
    with caplog.at_level(logging.WARNING, logger="ragspine.narrative"):
        result = ws.search("salary plan", libraries=["groups"], top_k=20)
    assert _leaks(result.to_dict()) == []
    # the confidential section's chunk (restricted ones are never indexed) is withheld, and
    # the operator is told the backend leaked
    assert "re-check withheld 1 search hits" in caplog.text


def test_a_leaky_chunk_source_is_caught(
    workspace_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reverse proof: a parent built from the document's whole text marked public leaks, and
    the leak check sees it."""
    ws = _ws(workspace_dir, tmp_path)
    store = ws.chunks

    def leaky_parents(self: StoreChunkSource, parent_ids: Sequence[str]) -> Mapping[str, object]:
        parents = {}
        for parent_id in parent_ids:
            doc_id = parent_id.split(":", 1)[1].split("#", 1)[0]
            chunks = store.chunks_where("doc_id", [doc_id])
            text = " ".join(c.text for c in chunks)
            parents[parent_id] = ParentSection(parent_id, "", (Passage(text, 0),), 0)
        return parents

    monkeypatch.setattr(StoreChunkSource, "get_parents", leaky_parents)
    assert _leaks(_everything(ws, Principal.of("public"))) == [SECRET_SECTION]


def test_routing_only_uses_text_the_asker_may_see(workspace_dir: Path, tmp_path: Path) -> None:
    ws = Workspace.open(workspace_dir)
    for name, text, level in (
        ("vault", "The okapi acquisition closes in May.", "confidential"),
        ("news", "The weather was mild and sunny.", "public"),
    ):
        folder = tmp_path / name
        folder.mkdir()
        (folder / f"{name}.txt").write_text(text + "\n")
        ws.ingest_documents([folder], library=name, sensitivity=level)
    public = ws.search("okapi acquisition").trace.routing
    assert public is not None and public.cause == "router_empty" and public.fallback
    cleared = ws.search("okapi acquisition", principal=Principal.of("confidential"))
    assert cleared.trace.routing is not None and cleared.trace.routing.libraries == ("vault",)
    assert [s.library_id for s in cleared.snippets] == ["vault"]
