"""Isolation before construction, end to end, against a deliberately leaky backend.

The search stub ignores visibility and the chunk source hands out restricted chunks, parents and
windows. Restricted text must still never reach a snippet, a prompt, an answer or a trace. The
reverse proof disables the visibility check and shows the same assertions then fail.
"""

from __future__ import annotations

import json
import logging

import pytest
from narrative_fixtures import CHUNKS, CONFIDENTIAL, SECRET, LeakySource, leaky_search

import ragspine.narrative.retrieve.expansion as expansion
from ragspine.answer import answer_from_snippets
from ragspine.narrative.filters.expr import parse_filter
from ragspine.narrative.retrieve.expansion import ExpansionMode
from ragspine.narrative.retrieve.multi_index import MultiIndexRetriever
from ragspine.narrative.retrieve.pipeline import SnippetResult, retrieve_snippets
from ragspine.security import Principal

PRINCIPALS = [
    Principal.of("public"),
    Principal.of("internal", groups=["finance"]),
    Principal.of("confidential", groups=["finance"]),
    Principal.of("restricted", groups=["finance"]),  # even the highest clearance never sees it
]
QUESTION = "What are the revenue plans and targets for 2025?"


def run(principal: Principal, mode: ExpansionMode) -> tuple[SnippetResult, object]:
    retriever = MultiIndexRetriever(leaky_search, ["reports", "policies"])
    result = retrieve_snippets(
        QUESTION, retriever=retriever, source=LeakySource(), principal=principal, mode=mode
    )
    answer = answer_from_snippets(QUESTION, result.snippets, trace=result.trace)
    return result, answer


def leaked_texts(result: SnippetResult, answer: object, forbidden: str) -> list[str]:
    """Every place ``forbidden`` shows up in the outputs."""
    places = []
    for snippet in result.snippets:
        for name in ("text", "prompt_text"):
            if forbidden in getattr(snippet, name):
                places.append(f"snippet {snippet.chunk_id}.{name}")
    if forbidden in answer.text:  # type: ignore[attr-defined]
        places.append("answer text")
    if forbidden in repr(answer) or forbidden in repr(result):
        places.append("repr")
    if forbidden in json.dumps(result.trace.to_dict()):
        places.append("trace")
    return places


@pytest.mark.parametrize("principal", PRINCIPALS, ids=lambda p: p.clearance.label)
@pytest.mark.parametrize("mode", list(ExpansionMode))
def test_restricted_text_never_reaches_snippets_prompts_answers_or_traces(
    principal: Principal, mode: ExpansionMode, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="ragspine.narrative"):
        result, answer = run(principal, mode)
    assert leaked_texts(result, answer, SECRET) == []
    assert all(s.chunk_id != "c2" for s in result.snippets)
    # the re-check fired: the operator hears of the leaky backend, the asker does not
    assert "re-check withheld" in caplog.text


def test_confidential_text_only_reaches_cleared_principals() -> None:
    public_result, public_answer = run(PRINCIPALS[0], ExpansionMode.PARENT)
    assert leaked_texts(public_result, public_answer, CONFIDENTIAL) == []
    cleared, _ = run(PRINCIPALS[2], ExpansionMode.PARENT)
    assert any(CONFIDENTIAL in s.prompt_text for s in cleared.snippets)


def test_the_recheck_counts_only_what_the_asker_may_see(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="ragspine.narrative"):
        result, _ = run(PRINCIPALS[0], ExpansionMode.PARENT)
    # c2 restricted, c3 confidential, c5 internal + finance group: withheld, and not counted
    recheck = result.trace.stage("recheck")
    assert (recheck.candidates_in, recheck.candidates_out) == (2, 2)
    expand = result.trace.stage("expand:parent")
    assert (expand.candidates_in, expand.candidates_out) == (2, 2)
    assert "visibility" not in json.dumps(result.trace.to_dict())
    assert "re-check withheld 3 search hits" in caplog.text


def test_reverse_proof_a_boundary_that_lets_everything_through_is_caught(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(expansion, "visible", lambda *args, **kwargs: True)
    result, answer = run(PRINCIPALS[0], ExpansionMode.PARENT)
    assert leaked_texts(result, answer, SECRET) != []


def test_filter_recheck_drops_rows_a_backend_failed_to_filter() -> None:
    retriever = MultiIndexRetriever(leaky_search, ["reports", "policies"])
    result = retrieve_snippets(
        QUESTION,
        retriever=retriever,
        source=LeakySource(),
        principal=PRINCIPALS[2],
        flt=parse_filter(["region in [APAC]", "year>=2022"]),
    )
    assert [s.chunk_id for s in result.snippets] == ["c4"]
    assert result.trace.stage("recheck").dropped_by_filter == 3  # c1, c3, c5
    assert result.trace.filter == '(region in ["APAC"] and year gte 2022)'


def test_every_snippet_is_a_known_child_chunk() -> None:
    known = {(c.library_id, c.chunk_id): c for c in CHUNKS}
    result, answer = run(PRINCIPALS[2], ExpansionMode.WINDOW)
    for snippet in result.snippets:
        chunk = known[(snippet.library_id, snippet.chunk_id)]
        assert (snippet.text, snippet.source_locator, snippet.doc_id) == (
            chunk.text,
            chunk.source_locator,
            chunk.doc_id,
        )
    for source in answer.sources:  # type: ignore[attr-defined]
        assert (source.library_id, source.chunk_id) in known
