"""Reciprocal-rank fusion against hand-computed values, tie rules and validation."""

from __future__ import annotations

import pytest

from ragspine.errors import QueryError
from ragspine.narrative.retrieve.fusion import reciprocal_rank_fusion
from ragspine.narrative.retrieve.snippets import LibraryHit


def hits(*ids: str) -> list[LibraryHit]:
    return [LibraryHit(chunk_id=i, score=10.0 - n) for n, i in enumerate(ids)]


def test_scores_match_hand_computed_values() -> None:
    fused = reciprocal_rank_fusion([hits("a", "b", "c"), hits("b", "d")], list_order=["lib", "lib"])
    got = {f.chunk_id: f.score for f in fused}
    assert got["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert got["a"] == pytest.approx(1 / 61)
    assert got["d"] == pytest.approx(1 / 62)
    assert got["c"] == pytest.approx(1 / 63)
    assert [f.chunk_id for f in fused] == ["b", "a", "d", "c"]
    assert fused[0].ranks == ((0, 2), (1, 1))


def test_weights_and_k() -> None:
    fused = reciprocal_rank_fusion(
        [hits("a"), hits("b")], k=1, weights=[1.0, 3.0], list_order=["x", "y"]
    )
    assert [(f.chunk_id, f.library_id, f.score) for f in fused] == [
        ("b", "y", pytest.approx(1.5)),
        ("a", "x", pytest.approx(0.5)),
    ]


def test_ties_break_by_library_order_then_chunk_id() -> None:
    fused = reciprocal_rank_fusion(
        [hits("z1", "b2"), hits("a1", "a2"), hits("m1", "b1")],
        list_order=["zeta", "alpha", "zeta"],
    )
    # equal scores at rank 1: zeta lists come first in list_order, so z1 and m1 (by id) lead
    assert [(f.library_id, f.chunk_id) for f in fused] == [
        ("zeta", "m1"),
        ("zeta", "z1"),
        ("alpha", "a1"),
        ("zeta", "b1"),
        ("zeta", "b2"),
        ("alpha", "a2"),
    ]


def test_every_hit_is_tagged_with_its_library_and_libraries_do_not_merge() -> None:
    fused = reciprocal_rank_fusion([hits("same"), hits("same")], list_order=["one", "two"])
    assert [(f.library_id, f.chunk_id) for f in fused] == [("one", "same"), ("two", "same")]
    untagged = reciprocal_rank_fusion([[LibraryHit("c", 1.0, library_id="own")]])
    assert untagged[0].library_id == "own"


def test_duplicates_inside_one_list_count_once() -> None:
    fused = reciprocal_rank_fusion([hits("a", "a", "b")], list_order=["l"])
    assert [(f.chunk_id, f.score) for f in fused] == [
        ("a", pytest.approx(1 / 61)),
        ("b", pytest.approx(1 / 63)),
    ]


def test_empty_input() -> None:
    assert reciprocal_rank_fusion([]) == []
    assert reciprocal_rank_fusion([[], []], list_order=["a", "b"]) == []


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"k": 0}, "positive"),
        ({"k": -5}, "positive"),
        ({"k": float("inf")}, "positive"),
        ({"weights": [1.0]}, "one weight per list"),
        ({"weights": [1.0, -1.0]}, "non-negative"),
        ({"weights": [1.0, float("nan")]}, "non-negative"),
        ({"list_order": ["a"]}, "every list"),
    ],
)
def test_validation(kwargs: dict[str, object], fragment: str) -> None:
    with pytest.raises(QueryError, match=fragment):
        reciprocal_rank_fusion([hits("a"), hits("b")], **kwargs)  # type: ignore[arg-type]
