"""The deterministic extractor: glossary mentions and terms named in one sentence."""

from __future__ import annotations

import json
import tomllib
from importlib import resources
from pathlib import Path

import pytest

from conftest import shared_data
from ragspine.glossary import Glossary, Term, TermType, parse_glossary
from ragspine.graph.extract import (
    ChunkText,
    GlossaryExtractor,
    edges_from,
    extract_edges,
    visible_chunks,
)
from ragspine.graph.relations import EdgeKind, EdgeQuery, Origin, term_node
from ragspine.narrative.ingest.sentences import split_sentences
from ragspine.security import Principal, Sensitivity
from ragspine.workspace import Workspace, example_glossary_text


@pytest.fixture(scope="module")
def glossary() -> Glossary:
    return parse_glossary(tomllib.loads(example_glossary_text()))


def chunk(text: str, level: Sensitivity = Sensitivity.PUBLIC) -> ChunkText:
    return ChunkText("lib", "doc", "lib:doc#0", text, {"paragraph": 0}, level)


def test_mentions_count_and_pairs_carry_their_sentence(glossary: Glossary) -> None:
    text = "ACME Corp sales rose. ACME China net profit fell; ACME China hired. The total rose."
    found = GlossaryExtractor(glossary).extract(chunk(text))
    mentions = {(r.target, r.weight) for r in found if r.kind is EdgeKind.MENTIONS}
    assert mentions == {
        ("entity:acme", 1), ("entity:acme_cn", 2), ("metric:revenue", 1),
        ("metric:net_income", 1),
    }  # fmt: skip
    pairs = [(r.source, r.target, dict(r.locator)) for r in found if r.kind is EdgeKind.CO_OCCURS]
    assert pairs == [
        ("entity:acme", "metric:revenue", {"sentence": 1}),
        ("entity:acme_cn", "metric:net_income", {"sentence": 2}),
    ]
    assert all(r.source == "document:lib:doc" for r in found if r.kind is EdgeKind.MENTIONS)


def test_word_boundaries_and_the_total_channel(glossary: Glossary) -> None:
    extractor = GlossaryExtractor(glossary)
    assert extractor.extract(chunk("A concern about the total, overall.")) == []
    assert extractor.extract(chunk("")) == []


def test_a_glossary_of_only_the_total_channel_searches_no_chunk(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With nothing but the implicit ``total`` channel, every hit would be dropped: no
    chunk is searched or split into sentences. Any other term is searched for."""
    bare = Glossary.from_terms([])
    searched: list[str] = []
    find_terms = Glossary.find_terms

    def spy(self: Glossary, text: str) -> object:
        searched.append(text)
        return find_terms(self, text)

    monkeypatch.setattr(Glossary, "find_terms", spy)
    text = "The total rose. Overall, all channels grew. ACME sales rose."
    assert GlossaryExtractor(bare).extract(chunk(text)) == []
    assert searched == []
    named = Glossary.from_terms([Term(TermType.CHANNEL, "retail", "Retail", ("acme sales",))])
    found = GlossaryExtractor(named).extract(chunk(text))
    assert searched and [r.target for r in found] == ["channel:retail"]


def test_edges_inherit_the_chunk_and_model_edges_are_unverified(glossary: Glossary) -> None:
    secret = chunk("ACME sales rose.", Sensitivity.CONFIDENTIAL)
    found = GlossaryExtractor(glossary).extract(secret)
    edges = edges_from(secret, found, origin=Origin.DETERMINISTIC, run_id="r1")
    assert {e.sensitivity for e in edges} == {Sensitivity.CONFIDENTIAL}
    assert all(e.stored_verified and e.lineage.chunk_id == "lib:doc#0" for e in edges)
    pair = next(e for e in edges if e.kind is EdgeKind.CO_OCCURS)
    assert dict(pair.lineage.locator) == {"paragraph": 0, "sentence": 1}
    model = edges_from(secret, found, origin=Origin.MODEL_DERIVED, run_id="r2")
    assert not any(e.stored_verified for e in model)


def test_extraction_reads_only_visible_chunks(glossary: Glossary) -> None:
    chunks = [
        chunk("ACME sales rose."),
        chunk("ACME China sales.", Sensitivity.CONFIDENTIAL),
        chunk("EBIT at ACME.", Sensitivity.RESTRICTED),
    ]
    assert list(visible_chunks(chunks, Principal())) == chunks[:1]
    assert list(visible_chunks(chunks, Principal.of("confidential"))) == chunks[:2]
    targets = {
        e.target
        for e in extract_edges(
            chunks, GlossaryExtractor(glossary), principal=Principal(), run_id="r"
        )
    }
    assert targets == {"entity:acme", "metric:revenue"}


def check_pairs_against_their_sentences(ws: Workspace, library: str) -> int:
    """Every ``co_occurs`` edge of ``library`` names two terms its sentence names; returns
    how many were checked."""
    edges = ws.relations.store.edges(EdgeQuery(kind=EdgeKind.CO_OCCURS), max_level=0)
    keys = ws.chunks.keys_of([e.lineage.chunk_id for e in edges])
    chunks = ws.chunks.chunks_by_key(list(keys.values()))
    checked = 0
    for edge in edges:
        if edge.lineage.library_id != library:
            continue
        text = chunks[keys[edge.lineage.chunk_id]].text
        sentence = split_sentences(text)[edge.lineage.locator["sentence"] - 1]
        named = {term_node(h.type, h.code) for h in ws.glossary.find_terms(sentence)}
        assert {edge.source, edge.target} <= named, (edge, sentence)
        checked += 1
    return checked


def test_real_filings_from_the_bundled_sample(tmp_path: Path) -> None:
    """The demo's ConvFinQA filings (real text, MIT): facts give the glossary, text the edges."""
    sample = resources.files("ragspine").joinpath("data/convfinqa_sample.json")
    with resources.as_file(sample) as path, Workspace.init(tmp_path / "ws") as ws:
        ws.ingest_convfinqa(Path(path), library="filings")
        revenue = ws.relations.edges(principal=Principal(), node="metric:revenue", kind="mentions")
        assert revenue.total >= 3
        assert all(e.lineage.chunk_id.startswith("filings:") for e in revenue.edges)
        assert check_pairs_against_their_sentences(ws, "filings") >= 5


def test_real_convfinqa_dev_text(tmp_path: Path) -> None:
    """60 ConvFinQA dev filings from ../shared/data, the same way."""
    source = shared_data("convfinqa") / "convfinqa_dev.json"
    records = json.loads(source.read_text(encoding="utf-8"))["dev"][:60]
    part = tmp_path / "dev60.json"
    part.write_text(json.dumps({"dev": records}), encoding="utf-8")
    with Workspace.init(tmp_path / "ws") as ws:
        ws.ingest_convfinqa(part, library="dev")
        assert check_pairs_against_their_sentences(ws, "dev") >= 20


def test_one_pass_over_a_chunk_finds_what_a_pass_per_sentence_finds(tmp_path: Path) -> None:
    """The joined-sentences pass against the plain one (``find_terms`` per sentence) on the
    bundled filings with their own glossary."""
    sample = resources.files("ragspine").joinpath("data/convfinqa_sample.json")
    with resources.as_file(sample) as path, Workspace.init(tmp_path / "ws") as ws:
        result, _, _ = ws.ingest_convfinqa(Path(path), library=None)
        fast, plain = GlossaryExtractor(ws.glossary), GlossaryExtractor(ws.glossary)
        plain._one_pass = False
        found = 0
        for item in result.texts:
            text = "\n\n".join(item.paragraphs) + " ACME | sales. Ünïcode ﬁ ACME\u200b Corp."
            one = fast.extract(ChunkText("f", item.document, "c", text))
            assert one == plain.extract(ChunkText("f", item.document, "c", text))
            found += len(one)
        assert found > 50
