"""End to end through ``Workspace.search``: filter pushdown, order, routing and its fallback."""

from __future__ import annotations

from pathlib import Path

import pytest
from files import write_beir_corpus

from ragspine import Workspace, parse_filter
from ragspine.errors import QueryError
from ragspine.narrative.retrieve.profile_router import ProfileRouter
from ragspine.stores.sqlite.chunks import SQLiteChunkStore


def _selective_ws(workspace_dir: Path, tmp_path: Path) -> Workspace:
    """500 documents; 5 (1%) are from APAC and mention the query term less than the rest."""
    records = []
    for i in range(500):
        apac = i % 100 == 7
        text = "pricing update" if apac else "pricing pricing pricing memo"
        records.append(
            {
                "_id": f"d{i:03d}",
                "title": "",
                "text": f"{text} number {i}",
                "metadata": {"region": "APAC" if apac else "EMEA", "year": 2015 + i % 10},
            }
        )
    ws = Workspace.open(workspace_dir)
    ws.ingest_beir(write_beir_corpus(tmp_path / "corpus", records), library="memos")
    return ws


def test_a_filter_matching_one_percent_still_fills_top_k(
    workspace_dir: Path, tmp_path: Path
) -> None:
    ws = _selective_ws(workspace_dir, tmp_path)
    result = ws.search("pricing", top_k=5, filters="region=APAC")
    assert [s.doc_id for s in result.snippets] == ["d007", "d107", "d207", "d307", "d407"]
    assert all(s.metadata["region"] == "APAC" for s in result.snippets)
    stage = result.trace.stage("search:memos")
    assert stage.dropped_by_filter == 495  # counted in the index, before top-k
    assert result.trace.stage("recheck").dropped_by_filter == 0
    assert result.trace.filter == 'region eq "APAC"'


def test_post_filtering_would_under_fill(
    workspace_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A deliberately broken store (no filter pushdown) loses every slot to the re-check."""
    ws = _selective_ws(workspace_dir, tmp_path)
    monkeypatch.setattr(SQLiteChunkStore, "filtered_keys", lambda self, library_id, flt: None)
    result = ws.search("pricing", top_k=5, filters="region=APAC")
    assert len(result.snippets) < 5
    assert result.trace.stage("recheck").dropped_by_filter > 0


@pytest.mark.parametrize(
    "spec",
    [
        "year>=2020",
        {"region": {"in": ["APAC"]}},
        {"or": [{"year": {"lt": 2017}}, {"region": "APAC"}]},
        ["year between [2016,2018]", "region != APAC"],
        "missing_field=1",
    ],
)
def test_filters_never_widen_and_keep_order(
    workspace_dir: Path, tmp_path: Path, spec: object
) -> None:
    ws = _selective_ws(workspace_dir, tmp_path)
    everything = ws.search("pricing memo update", top_k=500).snippets
    assert len(everything) == 500
    flt = parse_filter(spec)
    expected = [s.chunk_id for s in everything if flt.matches(s.metadata)]
    got = [s.chunk_id for s in ws.search("pricing memo update", top_k=500, filters=spec).snippets]
    assert got == expected
    assert set(got) <= {s.chunk_id for s in everything}


def test_a_bad_filter_names_the_valid_forms(workspace_dir: Path, tmp_path: Path) -> None:
    ws = _selective_ws(workspace_dir, tmp_path)
    with pytest.raises(QueryError):
        ws.search("pricing", filters={"year": {"about": 2020}})


def _three_libraries(workspace_dir: Path, tmp_path: Path) -> Workspace:
    ws = Workspace.open(workspace_dir)
    topics = {
        "pets": ("Dogs, cats and their care", "dog cat puppy kitten veterinarian"),
        "finance": ("Budgets, revenue and costs", "revenue budget cost margin invoice"),
        "travel": ("Trips, flights and hotels", "flight hotel airport luggage passport"),
    }
    for name, (description, words) in topics.items():
        ws.create_library(name, description=description)
        folder = tmp_path / name
        folder.mkdir()
        for i, word in enumerate(words.split()):
            (folder / f"{name}{i}.txt").write_text(f"A note about the {word} and shared topics.\n")
        ws.ingest_documents([folder], library=name)
    return ws


def test_routing_picks_the_library_by_content(workspace_dir: Path, tmp_path: Path) -> None:
    ws = _three_libraries(workspace_dir, tmp_path)
    result = ws.search("which veterinarian treats a puppy")
    routing = result.trace.routing
    assert routing is not None and routing.libraries == ("pets",) and routing.cause == "routed"
    assert {s.library_id for s in result.snippets} == {"pets"}
    named = ws.search("puppy", libraries=["travel", "pets"]).trace.routing
    assert named is not None and named.cause == "explicit"
    assert named.libraries == ("pets", "travel")
    unrouted = ws.search("shared topics", route=False)
    assert unrouted.trace.routing is not None and unrouted.trace.routing.cause == "no_router"
    assert {s.library_id for s in unrouted.snippets} == {"pets", "finance", "travel"}


@pytest.mark.parametrize(
    ("behaviour", "cause"),
    [("raise", "router_failed"), ("empty", "router_empty"), ("ghost", "router_unknown")],
)
def test_routing_failure_searches_every_library(
    workspace_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    behaviour: str,
    cause: str,
) -> None:
    ws = _three_libraries(workspace_dir, tmp_path)

    def broken(self: ProfileRouter, question: str) -> list[str]:
        if behaviour == "raise":
            raise RuntimeError("router down")
        return [] if behaviour == "empty" else ["ghost"]

    monkeypatch.setattr(ProfileRouter, "route", broken)
    result = ws.search("which veterinarian treats a puppy and books a flight", top_k=20)
    routing = result.trace.routing
    assert routing is not None and routing.fallback and routing.cause == cause
    assert routing.libraries == ("finance", "pets", "travel")
    assert "searching every library" in routing.reason
    assert {s.library_id for s in result.snippets} == {"pets", "travel"}
    names = result.trace.stage_names
    assert {"search:finance", "search:pets", "search:travel"} <= set(names)


def test_every_hit_is_tagged_and_fused_by_rrf(workspace_dir: Path, tmp_path: Path) -> None:
    ws = _three_libraries(workspace_dir, tmp_path)
    result = ws.search("shared topics", route=False, top_k=3)
    assert [s.library_id for s in result.snippets] == ["finance", "pets", "travel"]
    assert all(s.score == pytest.approx(1 / 61) for s in result.snippets)


def test_command_line_metadata_numbers_filter_as_numbers() -> None:
    from ragspine.narrative.ingest.ingestor import parse_meta_pairs

    meta = parse_meta_pairs(["year=2024", "ratio=3.5", "code=007", "region=EMEA", "big=1e3"])
    assert meta == {"year": 2024, "ratio": 3.5, "code": "007", "region": "EMEA", "big": "1e3"}
    assert parse_filter("year>=2020").matches(meta)


def test_filter_extraction_from_the_question_is_opt_in(workspace_dir: Path, tmp_path: Path) -> None:
    ws = Workspace.open(workspace_dir)
    ws.glossary_path.write_text(
        '[entities.acme]\nlabel = "ACME Corp"\naliases = ["ACME"]\n\n'
        '[entities.acme_cn]\nlabel = "ACME China"\naliases = ["ACME CN"]\n',
        encoding="utf-8",
    )
    records = [
        {"_id": "global", "text": "Revenue grew in every market.", "metadata": {"entity": "acme"}},
        {"_id": "china", "text": "Revenue grew in China.", "metadata": {"entity": "acme_cn"}},
    ]
    ws.ingest_beir(write_beir_corpus(tmp_path / "corpus", records), library="notes")
    question = "How did ACME China revenue grow?"
    assert {s.doc_id for s in ws.search(question).snippets} == {"global", "china"}
    result = ws.search(question, extract_filters=True)
    assert [s.doc_id for s in result.snippets] == ["china"]
    assert result.trace.filter == 'entity eq "acme_cn"'
    assert 'filter taken from the question: entity eq "acme_cn"' in result.trace.notes
    answer = ws.answer_narrative(question, extract_filters=True)
    assert [s.doc_id for s in answer.sources] == ["china"]


def test_library_profiles_follow_ingest_incrementally(workspace_dir: Path, tmp_path: Path) -> None:
    from ragspine.stores.sqlite import profiles

    ws = Workspace.open(workspace_dir)
    doc = tmp_path / "d.txt"
    doc.write_text("Alpha particles and alpha decay.\n")
    (tmp_path / "e.txt").write_text("Gamma rays.\n")
    ws.ingest_documents([doc, tmp_path / "e.txt"], library="physics")
    store = ws.chunks
    assert store.term_counts("physics", 3)["alpha"] == 2
    doc.write_text("Beta decay only.\n")
    ws.ingest_documents([doc], library="physics")  # replaced in one transaction
    incremental = store.term_counts("physics", 3)
    assert "alpha" not in incremental and incremental["beta"] == 1 and incremental["gamma"] == 1
    db = store._db  # rebuilding from the chunks gives the same counts
    db.execute("DELETE FROM narrative_meta WHERE key = ?", (profiles.PROFILE_META_KEY,))
    profiles.backfill(db)
    assert store.term_counts("physics", 3) == incremental
