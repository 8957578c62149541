"""The relation store follows ingest: edges land, change and go with their documents."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from graph.conftest import PUBLIC_TEXT, open_workspace, write_docs
from ragspine.errors import QueryError
from ragspine.graph.extract import ChunkText, ExtractedRelation
from ragspine.graph.relations import EdgeKind, EdgeQuery, Origin
from ragspine.graph.upkeep import RelationUpkeep
from ragspine.security import Principal
from ragspine.workspace import Workspace

EVERYTHING = 3


def stored(ws: Workspace) -> list[tuple[str, str, str, str]]:
    """Every stored edge as (kind, source, target, document), sorted."""
    return sorted(
        (e.kind.value, e.source, e.target, e.lineage.doc_id)
        for e in ws.relations.store.edges(EdgeQuery(), max_level=EVERYTHING)
    )


def test_re_ingest_replaces_a_documents_edges(tmp_path: Path) -> None:
    folder = write_docs(tmp_path / "docs", {"a.txt": (PUBLIC_TEXT, None)})
    with open_workspace(tmp_path / "ws") as ws:
        ws.ingest_documents([folder], library="lib")
        first = stored(ws)
        assert ("mentions", "document:lib:a.txt", "metric:net_income", "a.txt") in first
        ws.ingest_documents([folder], library="lib")  # unchanged: a no-op
        assert stored(ws) == first
        (folder / "a.txt").write_text(
            "Revenue at ACME Corp fell. Revenue online rose.", encoding="utf-8"
        )
        ws.ingest_documents([folder], library="lib")
        after = stored(ws)
        assert len(after) == len(set(after))
        assert [e for e in after if e[3] == "a.txt"] == [
            ("co_occurs", "channel:online", "metric:revenue", "a.txt"),
            ("co_occurs", "entity:acme", "metric:revenue", "a.txt"),
            ("mentions", "document:lib:a.txt", "channel:online", "a.txt"),
            ("mentions", "document:lib:a.txt", "entity:acme", "a.txt"),
            ("mentions", "document:lib:a.txt", "metric:revenue", "a.txt"),
        ]
        revenue = ws.relations.edges(
            principal=Principal(), node="metric:revenue", kind="mentions"
        ).edges
        assert [e.weight for e in revenue] == [2]


def test_deleting_documents_and_libraries_deletes_their_edges(
    tmp_path: Path, docs: dict[str, Path]
) -> None:
    with open_workspace(tmp_path / "ws") as ws:
        ws.ingest_documents([docs["hidden"]], library="lib")
        ws.ingest_documents([docs["public"]], library="other")
        ws.ingest_documents([docs["public"]], library="lib")
        ws.delete_documents("lib", ["b.txt"])
        assert {e[3] for e in stored(ws)} == {"a.txt", "glossary"}
        ws.delete_library("lib")
        libraries = {
            e.lineage.library_id
            for e in ws.relations.store.edges(EdgeQuery(), max_level=EVERYTHING)
        }
        assert libraries == {"other", ""}


def test_a_failed_write_leaves_neither_chunks_nor_edges(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = write_docs(tmp_path / "docs", {"a.txt": (PUBLIC_TEXT, None)})
    with open_workspace(tmp_path / "ws") as ws:
        ws.ingest_documents([folder], library="lib")
        before = stored(ws)
        (folder / "a.txt").write_text("Revenue changed at ACME Corp.", encoding="utf-8")

        def fail(*args: object) -> int:
            raise RuntimeError("disk full")

        monkeypatch.setattr(ws.relations.store, "add_edges", fail)
        with pytest.raises(RuntimeError):
            ws.ingest_documents([folder], library="lib")
        monkeypatch.undo()
        assert stored(ws) == before
        assert ws.chunks.document("lib", "a.txt") is not None
        chunk = ws.chunks.chunks_where("doc_id", ["a.txt"])[0]
        assert chunk.text.startswith("ACME Corp revenue grew")


def test_two_writers_at_once_keep_the_tables_whole(tmp_path: Path) -> None:
    texts = {
        f"d{i}.txt": (f"ACME Corp revenue {i}. Headcount at ACME China.", None) for i in range(12)
    }
    folders = [write_docs(tmp_path / f"docs{n}", texts) for n in range(2)]
    with open_workspace(tmp_path / "ws") as ws:
        errors: list[BaseException] = []

        def ingest(folder: Path, library: str) -> None:
            try:
                for _ in range(2):
                    ws.ingest_documents([folder], library=library)
                    (folder / "d0.txt").write_text(
                        f"Net income at ACME in {library} {_}.", encoding="utf-8"
                    )
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [
            threading.Thread(target=ingest, args=(folders[0], "lib")),
            threading.Thread(target=ingest, args=(folders[1], "lib")),
            threading.Thread(target=ingest, args=(folders[0], "other")),
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        edges = ws.relations.store.edges(EdgeQuery(), max_level=EVERYTHING)
        assert len({e.edge_id for e in edges}) == len(edges)
        for library in ("lib", "other"):
            chunk_docs = {
                c.doc_id
                for c in ws.chunks.chunks_where("doc_id", list(texts))
                if c.library_id == library
            }
            edge_docs = {e.lineage.doc_id for e in edges if e.lineage.library_id == library}
            assert edge_docs == chunk_docs
            for doc_id in chunk_docs:
                text = ws.chunks.chunks_where("doc_id", [doc_id])
                mentions = {
                    e.target
                    for e in edges
                    if e.lineage.library_id == library
                    and e.lineage.doc_id == doc_id
                    and e.kind is EdgeKind.MENTIONS
                }
                words = " ".join(c.text for c in text if c.library_id == library)
                assert ("metric:net_income" in mentions) == ("Net income" in words)


class Proposer:
    """A stand-in model: proposes that every chunk's document relates to ACME."""

    origin = Origin.MODEL_DERIVED

    def __init__(self) -> None:
        self.seen: list[str] = []

    def extract(self, chunk: ChunkText) -> list[ExtractedRelation]:
        self.seen.append(chunk.chunk_id)
        return [ExtractedRelation(chunk.document, "entity:acme", EdgeKind.MENTIONS)]


def test_an_extractor_reads_only_what_its_caller_may_see(
    tmp_path: Path, docs: dict[str, Path]
) -> None:
    with open_workspace(tmp_path / "ws") as ws:
        ws.ingest_documents([docs["hidden"], docs["public"]], library="lib")
        model = Proposer()
        added = ws.extract_relations("lib", model, principal=Principal(), run_id="run-7")
        assert model.seen == ["lib:a.txt#0"] and added == 1
        edge = ws.relations.edges(principal=Principal(), origin="model-derived").edges[0]
        assert not edge.verified and edge.lineage.run_id == "run-7"
        assert edge.lineage.chunk_id == "lib:a.txt#0"
        again = Proposer()
        assert ws.extract_relations("lib", again, principal=Principal(), run_id="run-8") == 0
        confidential = Proposer()
        ws.extract_relations(
            "lib", confidential, principal=Principal.of("confidential"), run_id="r"
        )
        assert sorted(confidential.seen) == ["lib:a.txt#0", "lib:b.txt#0"]
        hidden = [
            e for e in ws.relations.store.edges(EdgeQuery(origin=Origin.MODEL_DERIVED), max_level=3)
        ]
        assert {e.sensitivity.label for e in hidden} == {"public", "confidential"}


def test_an_extraction_from_a_library_the_asker_cannot_see_is_unknown(
    tmp_path: Path, docs: dict[str, Path]
) -> None:
    """A review: a public asker naming a missing library was told every library's name (a
    confidential one's too), and naming the confidential one ran (0 new edges)."""
    with open_workspace(tmp_path / "ws") as ws:
        ws.ingest_documents([docs["public"]], library="pubs")
        ws.create_library("topsecret", default_sensitivity="confidential")
        ws.ingest_documents([docs["hidden"]], library="topsecret")
        errors = []
        for name in ("nosuch", "topsecret"):
            with pytest.raises(QueryError) as caught:
                ws.extract_relations(name, Proposer(), principal=Principal(), run_id="r")
            errors.append(str(caught.value).replace(name, "NAME"))
        assert errors[0] == errors[1] and "topsecret" not in errors[0] and "pubs" in errors[0]
        seen = Proposer()
        ws.extract_relations("topsecret", seen, principal=Principal.of("confidential"), run_id="r")
        assert seen.seen


@pytest.mark.parametrize(
    ("source", "target", "named"),
    [
        ("entity:ghost", "entity:acme", "entity:ghost"),  # a node of the extractor's making
        ("document:topsecret:secret.md", "entity:acme", "document:topsecret:secret.md"),
        ("entity:acme", "entity:acme", "to itself"),
    ],
)
def test_an_extractor_can_link_only_glossary_terms_and_its_own_document(
    tmp_path: Path, docs: dict[str, Path], source: str, target: str, named: str
) -> None:
    """A review: whatever an extractor returned was stored, so a public asker saw a made-up
    node, and a hidden document's name on a public chunk's edge."""

    class Odd(Proposer):
        def extract(self, chunk: ChunkText) -> list[ExtractedRelation]:
            return [ExtractedRelation(source, target, EdgeKind.MENTIONS)]

    with open_workspace(tmp_path / "ws") as ws:
        ws.ingest_documents([docs["public"]], library="lib")
        with pytest.raises(QueryError, match=named):
            ws.extract_relations("lib", Odd(), principal=Principal(), run_id="r")
        assert not ws.relations.edges(principal=Principal(), origin="model-derived").edges


def test_the_reverse_proof_of_the_extraction_gate(
    tmp_path: Path, docs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the gate open, the public run would read the confidential chunk: the test above
    would catch it."""
    from ragspine.graph import extract

    monkeypatch.setattr(extract, "visible", lambda *args: True)
    with open_workspace(tmp_path / "ws") as ws:
        ws.ingest_documents([docs["hidden"], docs["public"]], library="lib")
        model = Proposer()
        ws.extract_relations("lib", model, principal=Principal(), run_id="run-7")
        assert model.seen != ["lib:a.txt#0"]


def test_glossary_derivations_have_their_place(tmp_path: Path) -> None:
    with open_workspace(tmp_path / "ws") as ws:
        parts = ws._parts()
        upkeep = RelationUpkeep(
            parts.relation_store,
            lambda: ws.glossary,
            derivations=lambda g: {"gross_margin": ["revenue", "net_income"]},
        )
        assert upkeep.sync_glossary()
        derived = ws.relations.store.edges(EdgeQuery(kind=EdgeKind.DERIVES_FROM), max_level=0)
        assert [(e.source, e.target) for e in derived] == [
            ("metric:gross_margin", "metric:net_income"),
            ("metric:gross_margin", "metric:revenue"),
        ]


def test_rebuild_gives_what_ingest_gives_and_follows_the_glossary(
    tmp_path: Path, docs: dict[str, Path]
) -> None:
    with open_workspace(tmp_path / "ingested") as ws:
        ws.ingest_documents([docs["hidden"], docs["public"]], library="lib")
        ingested = {e.edge_id for e in ws.relations.store.edges(EdgeQuery(), max_level=3)}
    with open_workspace(tmp_path / "old") as ws:
        ws.library_writer._ingestor._relations = None  # as before the relation graph
        ws.ingest_documents([docs["hidden"], docs["public"]], library="lib")
        assert ws.relations.store.edges(EdgeQuery(kind=EdgeKind.MENTIONS), max_level=3) == []
        model = Proposer()
        ws.extract_relations("lib", model, principal=Principal(), run_id="m")
        assert ws.rebuild_relations("lib") > 0
        edges = ws.relations.store.edges(EdgeQuery(), max_level=3)
        deterministic = {e.edge_id for e in edges if e.origin is Origin.DETERMINISTIC}
        assert deterministic == ingested
        assert sum(e.origin is Origin.MODEL_DERIVED for e in edges) == 1
        ws.glossary_path.write_text(
            ws.glossary_path.read_text(encoding="utf-8").replace('"stores", ', ""),
            encoding="utf-8",
        )
        ws._set_glossary(None)
        ws.rebuild_relations("lib")
        targets = {e.target for e in ws.relations.store.edges(EdgeQuery(), max_level=3)}
        assert "channel:retail" not in targets  # only "stores" named it
        with pytest.raises(QueryError, match="unknown library"):
            ws.rebuild_relations("nope")


def test_two_processes_ingesting_at_once(tmp_path: Path) -> None:
    """Two ``ragspine ingest docs`` processes into one library (the write lock takes turns)."""
    import os
    import subprocess
    import sys

    texts = {f"d{i}.txt": (f"ACME Corp revenue {i}. EBIT at ACME China.", None) for i in range(8)}
    folders = [write_docs(tmp_path / f"docs{n}", texts) for n in range(2)]
    (folders[1] / "d0.txt").write_text("Net income online.", encoding="utf-8")
    workspace = tmp_path / "ws"
    open_workspace(workspace).close()
    src = Path(__file__).resolve().parents[2] / "src"
    env = {**os.environ, "PYTHONPATH": str(src)}
    command = [sys.executable, "-m", "ragspine.cli", "--workspace", str(workspace), "ingest"]
    runs = [
        subprocess.Popen(
            [*command, "docs", str(folder), "--library", "lib", "--quiet"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for folder in folders
    ]
    for run in runs:
        _, err = run.communicate(timeout=120)
        assert run.returncode == 0, err
    with Workspace.open(workspace) as ws:
        edges = ws.relations.store.edges(EdgeQuery(), max_level=EVERYTHING)
        assert len({e.edge_id for e in edges}) == len(edges)
        for doc_id in texts:
            chunk = ws.chunks.chunks_where("doc_id", [doc_id])
            mentions = {
                e.target
                for e in edges
                if e.lineage.doc_id == doc_id and e.kind is EdgeKind.MENTIONS
            }
            assert len(chunk) == 1
            expected = (
                {"metric:net_income", "channel:online"}
                if chunk[0].text.startswith("Net income")
                else {"entity:acme", "entity:acme_cn", "metric:revenue", "metric:operating_income"}
            )
            assert mentions == expected


def test_the_glossary_derivation_keys_become_derives_from_edges(tmp_path: Path) -> None:
    """Without a caller's derivations, the edges come from the glossary's ``derivation`` keys."""
    with open_workspace(tmp_path / "ws") as ws:
        (ws.path / "glossary.toml").write_text(
            (ws.path / "glossary.toml").read_text(encoding="utf-8")
            + '\n[metrics.gross_profit]\nlabel = "Gross profit"\nunit = "USD"\n'
            'derivation = "revenue - cogs"\n[metrics.cogs]\nlabel = "COGS"\nunit = "USD"\n',
            encoding="utf-8",
        )
    with Workspace.open(tmp_path / "ws", create=False) as ws:
        ws.sync_relations()
        derived = ws.relations.store.edges(EdgeQuery(kind=EdgeKind.DERIVES_FROM), max_level=0)
        assert [(e.source, e.target) for e in derived] == [
            ("metric:gross_profit", "metric:cogs"),
            ("metric:gross_profit", "metric:revenue"),
        ]
