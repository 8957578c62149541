"""SearchOptions / AnswerOptions: checked once, passed whole from API and CLI to the retriever."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

import pytest

from ragspine import AnswerOptions, SearchOptions, Workspace
from ragspine.cli import main
from ragspine.errors import ConfigError, QueryError
from ragspine.narrative.filters.expr import Filter, parse_filter
from ragspine.narrative.retrieve.expansion import ExpansionMode
from ragspine.narrative.retrieve.modes import RetrievalMode
from ragspine.narrative.retrieve.options import MAX_TOP_K, option_names
from ragspine.narrative.retrieve.retriever import Retriever


@pytest.fixture()
def ws(workspace_dir: Path, tmp_path: Path) -> Workspace:
    docs = tmp_path / "docs"
    docs.mkdir()
    europe = " ".join(["Revenue grew in Europe."] + [f"Quarter note {i}." for i in range(150)])
    asia = " ".join(["Costs fell in Asia."] + [f"Cost note {i}." for i in range(150)])
    (docs / "a.md").write_text(f"# Revenue\n\n{europe}\n\n{asia}\n", encoding="utf-8")
    (docs / "b.md").write_text("# Revenue\n\nRevenue fell in Asia.\n", encoding="utf-8")
    workspace = Workspace.open(workspace_dir)
    workspace.ingest_documents([docs / "a.md"], library="one")
    workspace.ingest_documents([docs / "b.md"], library="two")
    return workspace


def test_defaults_match_the_documented_ones() -> None:
    search, answer = SearchOptions(), AnswerOptions()
    assert (search.top_k, answer.top_k) == (10, 5)
    assert search.mode is RetrievalMode.BM25 and search.expansion is ExpansionMode.AUTO
    assert search.route and not search.extract_filters
    assert (search.lexical_weight, search.vector_weight, search.rrf_k) == (1.0, 1.0, 60)
    assert search.libraries is search.filters is search.weights is None
    assert search.postprocessor() is None
    assert answer.max_sentences == 3
    assert option_names(AnswerOptions) == [*option_names(SearchOptions), "max_sentences"]


def test_values_are_normalised_once() -> None:
    options = SearchOptions(
        libraries=["one", "two"], mode=" Hybrid ", filters="year>=2020", expansion="window"
    )
    assert options.libraries == ("one", "two")
    assert options.mode is RetrievalMode.HYBRID
    assert isinstance(options.filters, Filter)
    assert options.filters == parse_filter("year>=2020")
    assert options.expansion is ExpansionMode.WINDOW
    assert SearchOptions(libraries="one").libraries == ("one",)
    assert dict(SearchOptions(weights={"one": 2}).weights or {}) == {"one": 2.0}
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.top_k = 3  # type: ignore[misc]


@pytest.mark.parametrize(
    ("changes", "error", "message"),
    [
        ({"top_k": 0}, QueryError, f"top_k must be between 1 and {MAX_TOP_K}, got 0"),
        ({"top_k": MAX_TOP_K + 1}, QueryError, "top_k must be between"),
        ({"top_k": True}, QueryError, "top_k must be between"),
        ({"top_k": "5"}, QueryError, "top_k must be between"),
        ({"mode": "fast"}, ConfigError, "unknown retrieval mode 'fast': use one of economy"),
        ({"lexical_weight": -1.0}, QueryError, "lexical_weight must be a finite number >= 0"),
        ({"vector_weight": math.inf}, QueryError, "vector_weight must be a finite number >= 0"),
        ({"vector_weight": math.nan}, QueryError, "vector_weight must be a finite number >= 0"),
        ({"near_duplicates": 1.5}, ConfigError, r"near_duplicates must be in \(0, 1\]"),
        ({"near_duplicates": 0.0}, ConfigError, r"near_duplicates must be in \(0, 1\]"),
        ({"diversity": -0.1}, ConfigError, "diversity must be between 0 and 1"),
        ({"expansion": "pages"}, ConfigError, "unknown expansion mode 'pages'"),
        ({"rrf_k": 0}, QueryError, "RRF k must be a positive number"),
        ({"weights": {"one": -1.0}}, QueryError, "RRF weights must be finite and non-negative"),
        ({"filters": {"year": {"about": 2020}}}, QueryError, "about"),
    ],
)
def test_every_value_is_checked_when_the_options_are_made(
    changes: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        SearchOptions(**changes)
    with pytest.raises(error, match=message):
        SearchOptions().with_changes(changes)


def test_answer_options_check_max_sentences() -> None:
    with pytest.raises(QueryError, match="max_sentences must be a whole number >= 1"):
        AnswerOptions(max_sentences=0)


def test_keywords_change_the_options_and_an_unknown_name_lists_the_valid_ones(
    ws: Workspace,
) -> None:
    given = SearchOptions(mode="lexical", top_k=1)
    assert len(ws.search("revenue", given).snippets) == 1
    assert len(ws.search("revenue", given, top_k=2).snippets) == 2
    assert given.top_k == 1  # the caller's options are never changed
    with pytest.raises(QueryError, match="unknown option 'topk': use one of libraries, mode"):
        ws.search("revenue", topk=3)
    with pytest.raises(QueryError, match="max_sentences"):
        ws.search("revenue", max_sentences=2)  # an answer option, not a search one
    with pytest.raises(QueryError, match="options must be SearchOptions, got dict"):
        ws.search("revenue", {"top_k": 3})  # type: ignore[arg-type]


def test_the_options_reach_the_retriever_unchanged(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[object] = []
    real_search = Retriever.search

    def spy(self: Retriever, question: str, options: Any = None, **kwargs: Any) -> Any:
        seen.append(options)
        return real_search(self, question, options, **kwargs)

    monkeypatch.setattr(Retriever, "search", spy)
    given = SearchOptions(mode="lexical", top_k=2)
    ws.search("revenue", given)
    assert seen[-1] is given
    answer_options = AnswerOptions(mode="lexical")
    ws.answer_narrative("revenue?", answer_options)
    assert seen[-1] is answer_options
    ws.answer_narrative("revenue?")
    assert seen[-1] == AnswerOptions()
    ws.answer_narrative("revenue?", SearchOptions())  # plain search options keep their top_k
    assert isinstance(seen[-1], AnswerOptions) and seen[-1].top_k == 10


def test_answer_max_sentences_limits_the_answer(ws: Workspace) -> None:
    one = ws.answer_narrative("revenue costs Europe Asia", max_sentences=1, route=False)
    assert len(one.sources) == 1


def test_options_once_unreachable_now_change_the_search(ws: Workspace) -> None:
    plain = ws.search("revenue", route=False)
    assert {s.library_id for s in plain.snippets} == {"one", "two"}
    child_only = ws.search("revenue europe", expansion="none", libraries=["one"])
    assert all(s.prompt_text == s.text for s in child_only.snippets)
    parent = ws.search("revenue europe", expansion="parent", libraries=["one"])
    assert any(s.prompt_text != s.text for s in parent.snippets)
    first = plain.snippets[0].library_id
    other = "two" if first == "one" else "one"
    weighted = ws.search("revenue", route=False, weights={first: 0.0, other: 1.0})
    assert weighted.snippets[0].library_id == other
    assert ws.search("revenue", route=False, rrf_k=1).snippets
    with pytest.raises(ConfigError, match="weights name unknown libraries"):
        ws.search("revenue", route=False, weights={"ghost": 1.0})


def test_the_cli_reports_bad_options_without_a_traceback(
    ws: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv in (
        ["search", "revenue", "--top-k", "0"],
        ["ask", "revenue?", "--top-k", "100000"],
        ["search", "revenue", "--diversity", "2"],
        ["search", "revenue", "--mode", "fast"],
    ):
        code = main(["--workspace", str(ws.path), *argv])
        _, err = capsys.readouterr()
        assert code != 0
        assert "Traceback" not in err and err.startswith("ragspine: error:"), err
