"""No restricted-text leak and no oracle, end to end (contracts 4, 10 and 11).

Each test runs the leak detector (``leak_detector.py``) over one group of reading surfaces for a
principal who may not see the planted secret. The reverse proofs at the end put one screening
step back to its leaky form and show the same detector then fails.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from leak_detector import Runs, assert_no_leak, build_runs

from ragspine import Principal
from ragspine.narrative import catalog, labels
from ragspine.narrative.index.lexical.engine import LexicalIndex
from ragspine.narrative.ingest import ingestor as ingest
from ragspine.narrative.ingest import loaders
from ragspine.narrative.retrieve import retriever
from ragspine.security import Sensitivity
from ragspine.stores.chunks import Library
from ragspine.stores.sqlite.chunks import SQLiteChunkStore

PRINCIPALS = [Principal.of("public"), Principal.of("internal", groups=["finance"])]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    return build_runs(tmp_path_factory.mktemp("leaks"))


def _starts(*prefixes: str):  # type: ignore[no-untyped-def]
    return lambda label: label.startswith(prefixes)


@pytest.mark.parametrize("principal", PRINCIPALS, ids=lambda p: p.clearance.label)
def test_search_results_and_traces_leak_nothing(runs: Runs, principal: Principal) -> None:
    assert assert_no_leak(runs, principal, only=_starts("search ")) >= 100


@pytest.mark.parametrize("principal", PRINCIPALS, ids=lambda p: p.clearance.label)
def test_answers_leak_nothing(runs: Runs, principal: Principal) -> None:
    assert assert_no_leak(runs, principal, only=_starts("ask ")) >= 9


@pytest.mark.parametrize("principal", PRINCIPALS, ids=lambda p: p.clearance.label)
def test_libraries_and_descriptions_leak_nothing(runs: Runs, principal: Principal) -> None:
    assert assert_no_leak(runs, principal, only=_starts("libraries", "describe ")) == 5


@pytest.mark.parametrize("principal", PRINCIPALS, ids=lambda p: p.clearance.label)
def test_cli_output_leaks_nothing(runs: Runs, principal: Principal) -> None:
    assert assert_no_leak(runs, principal, only=_starts("cli ")) >= 20


def test_the_detector_sees_the_secret_when_it_is_visible(runs: Runs) -> None:
    """Meaningful: a confidential reader sees the confidential heading and its text."""
    with pytest.raises(AssertionError, match="the secret leaks"):
        assert_no_leak(runs, Principal.of("confidential"), only=_starts("search "))


def test_a_public_chunk_keeps_its_own_visible_heading(runs: Runs) -> None:
    from ragspine import Workspace

    ws = Workspace.open(runs.present / "ws", create=False)
    (snippet, *_) = ws.search("travel costs online", libraries=["reports"]).snippets
    assert snippet.doc_id == "plan.md"
    assert snippet.heading == "Budget overview"
    assert snippet.title == "plan"  # the restricted first H1 is not its title
    assert snippet.source_locator["heading_path"] == ["Budget overview"]  # type: ignore[index]
    ws.close()


# -- reverse proofs: the same detector catches each screening step put back to its leaky form --

PUBLIC = Principal.of("public")


def test_titles_unscreened_at_ingest_are_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A restricted first H1 kept as the title of public chunks (the snippet screen still
    hides the string, but search finds the chunk by the hidden word)."""
    monkeypatch.setattr(ingest, "screen_title", lambda title, *args: title)
    with pytest.raises(AssertionError, match="search 'Zebra7731'"):
        assert_no_leak(build_runs(tmp_path), PUBLIC, only=_starts("search "))


def test_headings_matched_by_split_path_are_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The old level rule (any heading on a path split at " > ", restricted names ignored
    when the chunk sits elsewhere) is fine here, but names kept for every reader are not."""
    monkeypatch.setattr(ingest, "screen_path", lambda path, levels, may_see: list(path))
    monkeypatch.setattr(ingest, "path_level", lambda path, base, levels: Sensitivity(base))
    with pytest.raises(AssertionError, match="the secret leaks"):
        assert_no_leak(build_runs(tmp_path), PUBLIC, only=_starts("search ", "ask "))


def _old_name_rule(name: str) -> str:
    """Section names compared before ``match_key``: NFKC and case folding only, so
    invisible characters count."""
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())


def test_section_names_matched_with_invisible_characters_are_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The old matching rule, with unmatched keys ignored: a key holding a soft hyphen no longer
    names its heading and the restricted section is public."""
    monkeypatch.setattr(labels, "normalize_name", _old_name_rule)
    monkeypatch.setattr(ingest, "check_section_names", lambda source: None)
    with pytest.raises(AssertionError, match=r"(?s)the secret leaks.*board pay Zebra7731"):
        assert_no_leak(build_runs(tmp_path), PUBLIC, only=_starts("search 'Zebra7731' bm25"))


def test_markdown_headings_kept_with_markup_are_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Headings stored as written, with unmatched keys ignored: ``**Merger** plan`` no longer
    matches its key and the restricted section is public."""
    monkeypatch.setattr(loaders, "markdown_heading", str.strip)
    monkeypatch.setattr(ingest, "check_section_names", lambda source: None)
    with pytest.raises(AssertionError, match=r"(?s)the secret leaks.*merger plan Zebra7731"):
        assert_no_leak(build_runs(tmp_path), PUBLIC, only=_starts("search 'Zebra7731' bm25"))


def test_statistics_over_every_level_are_caught(
    runs: Runs, monkeypatch: pytest.MonkeyPatch
) -> None:
    """BM25 idf and average length over every level: visible scores then move with hidden
    text, although no hidden chunk is returned."""
    real = LexicalIndex.search

    def all_levels(self, query, top_k, *, max_level, allowed=None, stats=None):  # type: ignore[no-untyped-def]
        hits = real(self, query, 10_000, max_level=3, allowed=allowed, stats=stats)
        view = self._state()
        level_of = dict(zip(view.keys.tolist(), view.levels.tolist(), strict=True))
        return [(k, s) for k, s in hits if level_of[k] <= max_level][:top_k]

    monkeypatch.setattr(LexicalIndex, "search", all_levels)
    with pytest.raises(AssertionError, match="depends on content public may not see"):
        assert_no_leak(runs, PUBLIC, only=_starts("search "))


def test_a_backend_that_counts_hidden_matches_is_caught(
    runs: Runs, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search that returns hidden hits: the re-check withholds them, but the trace's stage
    counts (and the slots they took) still tell."""
    monkeypatch.setattr(retriever, "max_visible_level", lambda principal: Sensitivity.RESTRICTED)
    with pytest.raises(AssertionError, match="depends on content public may not see"):
        assert_no_leak(runs, PUBLIC, only=_starts("search "))


def test_library_counts_over_every_level_are_caught(
    runs: Runs, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = SQLiteChunkStore.visible_counts
    monkeypatch.setattr(
        SQLiteChunkStore,
        "visible_counts",
        lambda self, library_id, max_level: real(self, library_id, 3),
    )
    with pytest.raises(AssertionError, match="depends on content public may not see"):
        assert_no_leak(runs, PUBLIC, only=_starts("libraries", "describe "))


def test_listing_every_library_is_caught(runs: Runs, monkeypatch: pytest.MonkeyPatch) -> None:
    """Listing a library the asker may not know of tells them it exists."""
    monkeypatch.setattr(catalog, "sees_library", lambda store, library, principal: True)
    with pytest.raises(AssertionError, match="libraries: depends on content public may not see"):
        assert_no_leak(runs, PUBLIC, only=_starts("libraries", "cli libraries"))


def test_descriptions_above_the_askers_level_are_caught(
    runs: Runs, monkeypatch: pytest.MonkeyPatch
) -> None:
    def every_description(library: Library, principal: Principal) -> str:
        return library.description

    monkeypatch.setattr(catalog, "description_for", every_description)
    monkeypatch.setattr(retriever, "description_for", every_description)
    with pytest.raises(AssertionError, match="the secret leaks"):
        assert_no_leak(runs, PUBLIC, only=_starts("describe minutes"))
    with pytest.raises(AssertionError, match="search 'Zebra7731' bm25 None: depends on"):
        assert_no_leak(runs, PUBLIC, only=_starts("search "))  # routing now follows it
