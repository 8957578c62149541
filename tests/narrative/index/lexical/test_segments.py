"""Segment building: documents added together make the segment their postings define."""

from __future__ import annotations

from collections import Counter

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ragspine.narrative.index.lexical.segments import Segment, SegmentBuilder, TermBatch

DOCS = st.lists(st.lists(st.sampled_from("abcdefgh"), max_size=12), max_size=12)


def _postings(segment: Segment) -> dict[str, list[tuple[int, int]]]:
    return {
        term: list(zip(*(a.tolist() for a in segment.postings(term)), strict=True))
        for term in segment.terms
    }


@settings(max_examples=200, deadline=None)
@given(first=DOCS, second=DOCS)
def test_extend_builds_the_postings_of_its_documents(
    first: list[list[str]], second: list[list[str]]
) -> None:
    docs = first + second
    builder = SegmentBuilder()
    builder.extend(list(range(len(first))), first, 1)
    builder.extend(list(range(len(first), len(docs))), second, 1)
    segment = builder.build()
    expected: dict[str, list[tuple[int, int]]] = {}
    for row, tokens in enumerate(docs):
        for term, tf in Counter(tokens).items():
            expected.setdefault(term, []).append((row, tf))
    assert _postings(segment) == expected
    assert segment.terms == list(expected)  # numbered in order of first use
    assert segment.keys.tolist() == list(range(len(docs)))
    assert segment.lengths.tolist() == [len(tokens) for tokens in docs]
    assert segment.level == (1 if docs else 0)

    one_by_one = SegmentBuilder()
    for row, tokens in enumerate(docs):
        one_by_one.add(row, tokens, 1)
    same = one_by_one.build()
    for name in ("keys", "lengths", "levels", "term_ptr", "post_docs", "post_tf"):
        assert np.array_equal(getattr(same, name), getattr(segment, name)), name
    assert same.terms == segment.terms


@settings(max_examples=200, deadline=None)
@given(docs=DOCS, picks=st.lists(st.booleans(), min_size=12, max_size=12))
def test_a_subset_is_the_batch_of_the_documents_picked(
    docs: list[list[str]], picks: list[bool]
) -> None:
    rows = np.asarray(picks[: len(docs)], dtype=bool)
    subset = TermBatch.of(docs).subset(rows)
    expected = TermBatch.of([tokens for tokens, pick in zip(docs, rows, strict=True) if pick])
    assert subset.terms == expected.terms
    assert subset.term_ids.tolist() == expected.term_ids.tolist()
    assert subset.lengths.tolist() == expected.lengths.tolist()
