"""The persistent incremental BM25 index: scoring, persistence, masks, errors."""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from pathlib import Path

import pytest

from ragspine import files as files_module
from ragspine.analysis import Analyzer
from ragspine.errors import ConfigError, IngestError, QueryError, StoreError
from ragspine.narrative.index.lexical.engine import MANIFEST, LexicalIndex

PLAIN = Analyzer(language=None)
DOCS = {
    1: "quarterly revenue grew in europe",
    2: "revenue fell in asia while costs grew",
    3: "the board approved a dividend",
    4: "revenue revenue revenue and more revenue",
    5: "costs in europe were flat",
}


def brute_force_bm25(
    docs: dict[int, str], query: str, k1: float, b: float, analyzer: Analyzer = PLAIN
) -> dict[int, float]:
    """Reference scores straight from the formula, one document at a time."""
    tokens = {key: analyzer.tokens(text) for key, text in docs.items()}
    n = len(docs)
    avgdl = sum(len(t) for t in tokens.values()) / n
    scores: dict[int, float] = {}
    for term, qtf in Counter(analyzer.tokens(query)).items():
        df = sum(1 for t in tokens.values() if term in t)
        if df == 0:
            continue
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        for key, toks in tokens.items():
            tf = toks.count(term)
            if tf:
                norm = k1 * (1 - b + b * len(toks) / avgdl)
                scores[key] = scores.get(key, 0.0) + qtf * idf * tf / (tf + norm)
    return scores


def make_index(
    folder: Path, docs: dict[int, str], levels: dict[int, int] | None = None, **options: float
) -> LexicalIndex:
    index = LexicalIndex.open(folder, analyzer=PLAIN, **options)
    keys = list(docs)
    index.add(keys, [docs[k] for k in keys], [(levels or {}).get(k, 0) for k in keys])
    return index


@pytest.mark.parametrize(("k1", "b"), [(0.9, 0.4), (1.2, 0.75), (0.0, 0.0), (2.0, 1.0)])
def test_scores_follow_the_bm25_formula(tmp_path: Path, k1: float, b: float) -> None:
    index = make_index(tmp_path, DOCS, k1=k1, b=b)
    for query in ["revenue", "revenue europe", "costs grew grew", "dividend board"]:
        expected = brute_force_bm25(DOCS, query, k1, b)
        got = dict(index.search(query, 10, max_level=3))
        assert got.keys() == expected.keys()
        for key, score in expected.items():
            assert got[key] == pytest.approx(score, rel=1e-12)


def test_results_sort_by_score_then_key_and_skip_non_matching(tmp_path: Path) -> None:
    docs = {7: "alpha beta", 3: "alpha beta", 5: "alpha beta", 9: "gamma"}
    index = make_index(tmp_path, docs)
    results = index.search("alpha", 10, max_level=0)
    assert [key for key, _ in results] == [3, 5, 7]
    assert index.search("alpha", 2, max_level=0) == results[:2]
    assert index.search("nothing here", 10, max_level=0) == []
    assert index.search("alpha", 0, max_level=0) == []


def test_commit_persists_and_reopen_gives_identical_results(tmp_path: Path) -> None:
    index = make_index(tmp_path, DOCS)
    assert index.generation == 0
    before = index.search("revenue costs europe", 10, max_level=3)
    index.commit(7)
    reopened = LexicalIndex.open(tmp_path)
    assert reopened.generation == 7
    assert len(reopened) == len(DOCS)
    assert reopened.analyzer == PLAIN
    assert reopened.search("revenue costs europe", 10, max_level=3) == before
    manifest = json.loads((tmp_path / MANIFEST).read_text())
    assert manifest["k1"] == 0.9 and manifest["b"] == 0.4 and manifest["version"] == 2


def test_files_are_loadable_without_pickle(tmp_path: Path) -> None:
    import numpy as np

    make_index(tmp_path, DOCS).commit(1)
    for path in tmp_path.glob("seg-*.npz"):
        with np.load(path, allow_pickle=False) as data:
            assert all(data[name].dtype != object for name in data.files)


def test_removed_keys_disappear_and_statistics_follow(tmp_path: Path) -> None:
    index = make_index(tmp_path, DOCS)
    index.commit(1)
    assert index.remove([4, 99]) == 1
    assert 4 not in index and 1 in index
    remaining = {k: v for k, v in DOCS.items() if k != 4}
    got = dict(index.search("revenue", 10, max_level=3))
    assert got == pytest.approx(brute_force_bm25(remaining, "revenue", 0.9, 0.4), rel=1e-12)
    index.commit(2)
    reopened = LexicalIndex.open(tmp_path, analyzer=PLAIN)
    assert dict(reopened.search("revenue", 10, max_level=3)) == got
    reopened.add([4], ["a new text about revenue"], [0])
    assert 4 in reopened


def test_rebuild_replaces_everything_and_cleans_old_files(tmp_path: Path) -> None:
    index = make_index(tmp_path, DOCS)
    index.commit(1)
    old_files = {p.name for p in tmp_path.glob("seg-*")}
    with pytest.raises(IngestError):
        index.rebuild([10, 10], ["fresh revenue", "fresh costs"], [0, 0])
    assert len(index) == len(DOCS)
    index.rebuild([10, 11], ["fresh revenue", "fresh costs"], [0, 0])
    index.commit(2)
    reopened = LexicalIndex.open(tmp_path)
    assert len(reopened) == 2
    assert [k for k, _ in reopened.search("revenue", 10, max_level=0)] == [10]
    assert not old_files & {p.name for p in tmp_path.iterdir()}


def hidden_outscore_visible(folder: Path, cls: type[LexicalIndex] = LexicalIndex) -> LexicalIndex:
    """Hidden documents score highest for "secret report"; visible ones must still fill slots."""
    docs = {k: "secret " * 5 + "report" for k in range(20)}
    docs.update({k: "report " + "filler " * 10 for k in range(100, 110)})
    index = cls.open(folder, analyzer=PLAIN)
    index.add(list(docs), list(docs.values()), [3 if k < 10 else 2 if k < 20 else 0 for k in docs])
    return index


def check_masks(index: LexicalIndex) -> None:
    public = index.search("secret report", 5, max_level=0)
    assert len(public) == 5 and all(k >= 100 for k, _ in public)
    confidential = index.search("secret report", 15, max_level=2)
    assert len(confidential) == 15 and all(k >= 10 for k, _ in confidential)
    got = index.search("secret report", 10, max_level=2, allowed={101, 105, 3, 12, 999})
    assert [k for k, _ in got] == [12, 101, 105]
    assert index.search("report", 10, max_level=3, allowed=[]) == []


def test_levels_and_allowed_filter_before_top_k(tmp_path: Path) -> None:
    check_masks(hidden_outscore_visible(tmp_path))


def test_a_post_filtering_search_is_caught(tmp_path: Path) -> None:
    """check_masks fails for an index that drops hidden keys after the top-k cut."""

    class PostFiltering(LexicalIndex):
        def search(self, query, top_k, *, max_level, allowed=None):
            hits = super().search(query, top_k, max_level=3)
            level = {k: 3 if k < 10 else 2 if k < 20 else 0 for k, _ in hits}
            return [
                (k, s)
                for k, s in hits
                if level[k] <= max_level and (allowed is None or k in allowed)
            ]

    with pytest.raises(AssertionError):
        check_masks(hidden_outscore_visible(tmp_path, PostFiltering))


MIXED = {
    **DOCS,
    10: "revenue plans in europe stay confidential",
    11: "revenue revenue targets",
    12: "restricted revenue merger in asia",
}
MIXED_LEVELS = {10: 2, 11: 1, 12: 3}


def check_visible_statistics(index: LexicalIndex) -> None:
    """Each level's scores are BM25 over the documents at or below it, as if the others were
    never indexed: the hidden ones change no visible score."""
    query = "revenue in europe asia"
    for level in range(4):
        visible = {k: t for k, t in MIXED.items() if MIXED_LEVELS.get(k, 0) <= level}
        want = brute_force_bm25(visible, query, index.k1, index.b)
        got = dict(index.search(query, 20, max_level=level))
        assert got.keys() == want.keys()
        for key, score in want.items():
            assert got[key] == pytest.approx(score, rel=1e-9)


def test_bm25_statistics_cover_only_what_the_asker_may_see(tmp_path: Path) -> None:
    index = make_index(tmp_path / "one", MIXED, MIXED_LEVELS)
    check_visible_statistics(index)
    index.commit(1)
    reopened = LexicalIndex.open(tmp_path / "one")
    check_visible_statistics(reopened)
    assert reopened.segment_count == 4  # one segment per level
    incremental = LexicalIndex.open(tmp_path / "inc", analyzer=PLAIN)
    for generation, key in enumerate(MIXED, start=1):
        incremental.add([key], [MIXED[key]], [MIXED_LEVELS.get(key, 0)])
        incremental.commit(generation)
    incremental.remove([3])
    incremental.add([3], [MIXED[3]], [0])
    check_visible_statistics(incremental)


def test_statistics_over_every_level_are_caught(tmp_path: Path) -> None:
    """Reverse proof: an index that counts every level in its statistics (and only masks the
    results) gives visible documents scores that depend on hidden ones."""

    class AllLevelStatistics(LexicalIndex):
        def search(self, query, top_k, *, max_level, allowed=None, stats=None):  # type: ignore[no-untyped-def]
            level = {**dict.fromkeys(MIXED, 0), **MIXED_LEVELS}
            hits = super().search(query, 1000, max_level=3)
            return [(k, s) for k, s in hits if level[k] <= max_level][:top_k]

    index = make_index(tmp_path, MIXED, MIXED_LEVELS)
    index.__class__ = AllLevelStatistics
    with pytest.raises(AssertionError):
        check_visible_statistics(index)


def test_incremental_segments_give_the_same_scores_as_one_build(tmp_path: Path) -> None:
    incremental = LexicalIndex.open(tmp_path / "inc", analyzer=PLAIN)
    for generation, (key, text) in enumerate(DOCS.items(), start=1):
        incremental.add([key], [text], [0])
        incremental.commit(generation)
    incremental.remove([2])
    incremental.add([2], [DOCS[2] + " again"], [0])
    incremental.commit(99)
    fresh = make_index(tmp_path / "fresh", {**DOCS, 2: DOCS[2] + " again"})
    reopened = LexicalIndex.open(tmp_path / "inc")
    for query in ["revenue", "costs grew europe", "dividend again"]:
        expected = fresh.search(query, 10, max_level=0)
        assert incremental.search(query, 10, max_level=0) == expected
        assert reopened.search(query, 10, max_level=0) == expected


def test_segments_merge_as_they_accumulate(tmp_path: Path) -> None:
    index = LexicalIndex.open(tmp_path, analyzer=PLAIN)
    for key in range(64):
        index.add([key], [f"word{key % 7} common"], [0])
        index.commit(key + 1)
    assert index.segment_count <= 6
    assert len(list(tmp_path.glob("seg-*.npz"))) == index.segment_count
    assert len(LexicalIndex.open(tmp_path).search("common", 100, max_level=0)) == 64


def test_failed_commit_leaves_the_previous_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = make_index(tmp_path, DOCS)
    index.commit(1)
    committed = index.search("revenue costs", 10, max_level=0)
    index.remove([1, 4])
    index.add([50], ["revenue costs revenue"], [0])
    real_replace = os.replace

    def crash_on_manifest(src: str | Path, dst: str | Path) -> None:
        if Path(dst).name == MANIFEST:
            raise OSError("disk full")
        real_replace(src, dst)

    monkeypatch.setattr(files_module.os, "replace", crash_on_manifest)
    with pytest.raises(OSError, match="disk full"):
        index.commit(2)
    after_crash = LexicalIndex.open(tmp_path)
    assert after_crash.generation == 1
    assert after_crash.search("revenue costs", 10, max_level=0) == committed

    monkeypatch.setattr(files_module.os, "replace", real_replace)
    pending = index.search("revenue costs", 10, max_level=0)
    index.commit(2)
    recovered = LexicalIndex.open(tmp_path)
    assert recovered.generation == 2
    assert recovered.search("revenue costs", 10, max_level=0) == pending
    assert not list(tmp_path.glob("*.tmp"))


def test_crash_while_writing_a_segment_leaves_the_previous_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = make_index(tmp_path, DOCS)
    index.commit(1)
    committed = index.search("revenue", 10, max_level=0)
    index.add([60], ["revenue"], [0])

    def broken_write(segment: object, out: object) -> None:
        raise OSError("killed mid-write")

    monkeypatch.setattr("ragspine.narrative.index.lexical.engine.write_segment", broken_write)
    with pytest.raises(OSError, match="killed"):
        index.commit(2)
    reopened = LexicalIndex.open(tmp_path)
    assert reopened.generation == 1
    assert reopened.search("revenue", 10, max_level=0) == committed


def test_opening_with_other_params_or_version_says_how_to_rebuild(tmp_path: Path) -> None:
    make_index(tmp_path, DOCS).commit(3)
    with pytest.raises(StoreError, match=r"k1=0\.9.*rebuild"):
        LexicalIndex.open(tmp_path, k1=1.2)
    with pytest.raises(StoreError, match="analyzer"):
        LexicalIndex.open(tmp_path, analyzer=Analyzer())
    manifest = json.loads((tmp_path / MANIFEST).read_text())
    (tmp_path / MANIFEST).write_text(json.dumps({**manifest, "version": 0}))
    with pytest.raises(StoreError, match=r"format version 0.*recreate_if_incompatible"):
        LexicalIndex.open(tmp_path)
    fresh = LexicalIndex.open(tmp_path, recreate_if_incompatible=True)
    assert fresh.generation == 0 and len(fresh) == 0
    fresh.add([1], ["new"], [0])
    fresh.commit(1)
    assert len(LexicalIndex.open(tmp_path)) == 1
    assert len(list(tmp_path.glob("seg-*.npz"))) == 1


def test_damaged_files_raise_store_error(tmp_path: Path) -> None:
    make_index(tmp_path, DOCS).commit(1)
    next(tmp_path.glob("seg-*.npz")).write_bytes(b"not numpy")
    with pytest.raises(StoreError, match="rebuild"):
        LexicalIndex.open(tmp_path)
    (tmp_path / MANIFEST).write_text("{broken")
    with pytest.raises(StoreError, match="rebuild"):
        LexicalIndex.open(tmp_path)


@pytest.mark.parametrize(("k1", "b"), [(-1, 0.4), (0.9, 1.5), (float("nan"), 0.4), ("1", 0.4)])
def test_invalid_bm25_parameters_are_rejected(tmp_path: Path, k1: float, b: float) -> None:
    with pytest.raises(ConfigError, match="BM25"):
        LexicalIndex.open(tmp_path, k1=k1, b=b)


def test_bad_input_is_rejected_with_the_offending_key(tmp_path: Path) -> None:
    index = make_index(tmp_path, DOCS)
    with pytest.raises(IngestError, match="already in the lexical index"):
        index.add([1], ["again"], [0])
    with pytest.raises(IngestError, match="more than once"):
        index.add([8, 8], ["a", "b"], [0, 0])
    with pytest.raises(IngestError, match="key 9"):
        index.add([9], ["x"], [7])
    with pytest.raises(IngestError, match="key 11 must be a string"):
        index.add([10, 11], ["fine", None], [0, 0])  # type: ignore[list-item]
    assert 10 not in index
    with pytest.raises(IngestError, match="as many"):
        index.add([10], ["x", "y"], [0])
    with pytest.raises(QueryError, match="top_k"):
        index.search("revenue", -1, max_level=0)
    with pytest.raises(QueryError, match="allowed must hold integer"):
        index.search("revenue", 5, max_level=0, allowed=["a"])  # type: ignore[list-item]
    with pytest.raises(StoreError, match="generation"):
        index.commit(-1)


def test_adding_tokens_equals_adding_the_texts_they_come_from(tmp_path: Path) -> None:
    by_text = make_index(tmp_path / "text", DOCS, {3: 2})
    by_tokens = LexicalIndex.open(tmp_path / "tokens", analyzer=PLAIN)
    keys = list(DOCS)
    by_tokens.add_tokens(
        keys, [PLAIN.tokens(DOCS[k]) for k in keys], [2 if k == 3 else 0 for k in keys]
    )
    for query in ("revenue", "costs grew europe", "dividend board"):
        for level in (0, 2):
            assert by_tokens.search(query, 5, max_level=level) == by_text.search(
                query, 5, max_level=level
            )
    with pytest.raises(IngestError, match="already in the lexical index"):
        by_tokens.add_tokens([1], [["revenue"]], [0])
    with pytest.raises(IngestError, match="as many keys"):
        by_tokens.add_tokens([9], [], [0])
